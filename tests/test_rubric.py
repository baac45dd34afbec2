"""Free-text rubrics: word forms, synonyms, negation in the clause, and feedback that says why.

The bank is a statistics teacher's (tests/data/rubric/statistics.yaml), not the bundled one.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from pathlib import Path

import pytest

from quizgym.answers import (
    CriterionMatch,
    Status,
    grade_response,
    match_criterion,
    match_rubric,
)
from quizgym.errors import BankError
from quizgym.loader import load_bank, parse_bank
from quizgym.model import FreeText, RubricCriterion
from quizgym.schema import bank_json_schema
from quizgym.words import read_words

BANK = load_bank(Path(__file__).parent / "data" / "rubric" / "statistics.yaml")


def question(qid: str) -> FreeText:
    found = BANK.question(qid)
    assert isinstance(found, FreeText)
    return found


N_MINUS_1 = question("why-n-minus-1")
FREEDOM, BIAS = N_MINUS_1.rubric
SIZE = question("why-standard-error-shrinks").rubric[0]
CAUSATION = question("why-correlation-not-causation").rubric[0]


def match(criterion: RubricCriterion, text: str) -> CriterionMatch:
    return match_criterion(criterion, text)


# --- the two examples ---------------------------------------------------------------


def test_we_lose_one_degree_of_freedom_meets_the_criterion_in_the_words_typed() -> None:
    found = match(FREEDOM, "We lose one degree of freedom.")
    assert found.met
    assert found.quotes == ("lose one degree of freedom",)


def test_nothing_to_do_with_bias_does_not_meet_a_criterion_about_bias() -> None:
    found = match(BIAS, "It has nothing to do with bias.")
    assert not found.met
    assert found.opposite == ("nothing to do with bias",)


def test_the_verdict_names_the_words_for_each_criterion_and_still_asks_for_review() -> None:
    verdict = grade_response(
        BANK, N_MINUS_1, "We lose one degree of freedom; it has nothing to do with bias."
    )
    assert (verdict.status, verdict.score, verdict.max_score) == (Status.PARTIAL, 2.0, 4.0)
    assert verdict.read_as == "rubric 2/4"
    assert verdict.feedback == (
        "Mentions: Estimating the mean from the same data uses up a degree of freedom "
        "(“lose one degree of freedom”). "
        "Not yet: Dividing by n would bias the estimate; n − 1 makes it unbiased "
        "(says the opposite: “nothing to do with bias”). "
        "Suggested score from the rubric; to be reviewed."
    )
    assert verdict.needs_review


def test_a_full_answer_quotes_every_phrase_that_met_a_criterion() -> None:
    verdict = grade_response(BANK, N_MINUS_1, "Dividing by n underestimates; n-1 is unbiased.")
    assert verdict.feedback == (
        "Mentions: Dividing by n would bias the estimate; n − 1 makes it unbiased "
        "(“underestimates”, “unbiased”). "
        "Not yet: Estimating the mean from the same data uses up a degree of freedom. "
        "Suggested score from the rubric; to be reviewed."
    )
    assert verdict.score == 2.0


# --- word forms -----------------------------------------------------------------------------

STEMS = [
    (FREEDOM, "we lose degrees of freedom", True),
    (FREEDOM, "losing a degree of freedom", True),
    (FREEDOM, "it loses its degree of freedom", True),  # a determiner between the words
    (FREEDOM, "n-1 degrees of freedom", True),
    (FREEDOM, "freedom to lose a degree", False),  # a phrase, not a bag of words
    (FREEDOM, "we lose a degree. Of freedom!", False),  # inside one clause
    (FREEDOM, "we lose two degrees of freedom", False),  # "two" is no determiner
    (BIAS, "the estimate is biased", True),
    (BIAS, "it UNDERESTIMATES the variance", True),
    (BIAS, "it is too small otherwise", True),
    (BIAS, "biasedness", False),  # whole words: the stem of biasedness is not bias
    (SIZE, "it depends on the sizes of the samples", False),  # "sample size", in that order
    (SIZE, "the larger the sample size, the smaller", True),
]


@pytest.mark.parametrize(("criterion", "text", "met"), STEMS)
def test_word_forms_match(criterion: RubricCriterion, text: str, met: bool) -> None:
    assert match(criterion, text).met is met


def test_a_numeral_in_the_phrase_is_the_teachers_word() -> None:
    one = RubricCriterion(criterion="one df", any_of=["lose one degree of freedom"])
    assert match(one, "we lose one degree of freedom").met
    assert not match(one, "we lose two degrees of freedom").met


def test_mismatches_meet_mismatch() -> None:
    criterion = RubricCriterion(criterion="train-test mismatch", any_of=["mismatch"])
    assert match(criterion, "Mismatches between pre-training and fine-tuning").quotes == (
        "Mismatches",
    )


# --- synonyms -------------------------------------------------------------------------------

WITHOUT_SYNONYMS = FREEDOM.model_copy(update={"synonyms": {}})


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("We lost one degree of freedom.", "lost one degree of freedom"),
        ("Estimating the mean uses up a degree of freedom", "uses up a degree of freedom"),
        ("it costs us one degree of freedom", None),  # "us" is no determiner
        ("it costs a degree of freedom", "costs a degree of freedom"),
    ],
)
def test_synonyms_stand_in_for_their_word(text: str, quote: str | None) -> None:
    assert match(FREEDOM, text).quotes == ((quote,) if quote else ())
    assert not match(WITHOUT_SYNONYMS, text).met


def test_a_synonym_keeps_the_phrase_in_order() -> None:
    assert not match(FREEDOM, "a degree of freedom is used up").met


def test_a_synonym_may_be_a_phrase_and_stand_for_a_phrase() -> None:
    criterion = RubricCriterion(
        criterion="df",
        any_of=["lose a degree of freedom"],
        synonyms={"degree of freedom": ["df", "dof"], "lose": ["use up"]},
    )
    assert match(criterion, "we use up one df").quotes == ("use up one df",)
    assert match(criterion, "we lose a DOF").met


# --- negation -------------------------------------------------------------------------------

NEGATION = [
    (BIAS, "Dividing by n biases the estimate.", True),
    (BIAS, "It has nothing to do with bias.", False),
    (BIAS, "There is no bias.", False),
    (BIAS, "It isn't biased.", False),
    (BIAS, "It isnt biased", False),  # the apostrophe forgotten
    (BIAS, "it is never biased", False),
    (BIAS, "you can do it without bias", False),
    (BIAS, "it does not have anything to do with bias", False),  # six words back
    (BIAS, "Bias is not the reason.", False),  # a denial after it
    (BIAS, "Bias has nothing to do with it.", False),
    (BIAS, "Bias does not matter here.", False),
    (BIAS, "bias plays no role", False),
    (BIAS, "neither bias nor variance", False),
    (BIAS, "Not the mean but the bias.", True),  # "but" opens a clause
    (BIAS, "It is not about the mean, it is about bias.", True),  # so does a comma
    (BIAS, "not only the bias but also the spread", True),  # "not only" denies nothing
    (BIAS, "There's no doubt: bias.", True),
    (BIAS, "We don't know the true mean, so the estimate would be biased.", True),
    (BIAS, "It's not a big deal and the bias goes away with n - 1", True),  # "and the …"
    (BIAS, "It does not change the mean of the data set at all and bias", True),  # too far
    (SIZE, "Not because of size.", False),
    (SIZE, "not because of the sample size but the spread", False),
    (SIZE, "because of the sample size, not the spread", True),
    (SIZE, "the sample size does not matter", False),
    (SIZE, "the sample size has no effect", False),
    (SIZE, "It is not random when the sample size is large", True),  # "when" opens a clause
    (SIZE, "The error is never zero for a finite sample size", True),  # "for" ends the reach
    (SIZE, "it is not in the sample size", False),  # unless it follows the negator
    (SIZE, "nothing to do with the sample size", False),  # "with" does not end it
]


@pytest.mark.parametrize(("criterion", "text", "met"), NEGATION)
def test_negation_in_the_same_clause(criterion: RubricCriterion, text: str, met: bool) -> None:
    assert match(criterion, text).met is met


def test_a_negator_of_one_criterions_phrase_denies_no_other_criterion() -> None:
    rubric = [
        RubricCriterion(criterion="[MASK] is unseen later", any_of=["never appears"]),
        RubricCriterion(criterion="at fine-tuning", any_of=["downstream", "fine-tuning"]),
    ]
    text = "[MASK] never appears downstream"
    assert [m.met for m in match_rubric(rubric, text)] == [True, True]
    # Without the rubric's "never appears", the second criterion reads a denial.
    assert match_criterion(rubric[1], text).opposite == ("never appears downstream",)


def test_a_negator_among_the_phrases_own_words_denies_nothing() -> None:
    criterion = RubricCriterion(
        criterion="[MASK] is unseen at fine-tuning", any_of=["never appears", "not used"]
    )
    assert match(criterion, "It never appears when fine-tuning").met
    assert match(criterion, "the mask token is not used downstream").met


@pytest.mark.parametrize(
    ("text", "quotes", "opposite"),
    [
        ("Correlation does not prove causation.", ["not prove causation"], []),
        ("correlation is not causation", ["not causation"], []),
        ("We can't conclude that ice cream is to blame", ["can't conclude"], []),
        ("The correlation shows causation.", [], ["causation"]),
        ("so ice cream causes drowning", [], []),  # "causes" is no phrase of it
    ],
)
def test_a_criterion_that_denies_its_phrase_wants_the_denial(
    text: str, quotes: list[str], opposite: list[str]
) -> None:
    # "Correlation alone does not show causation": the phrase "causation" counts when denied;
    # "cannot conclude" carries its own negator and counts as it stands.
    found = match(CAUSATION, text)
    assert (list(found.quotes), list(found.opposite)) == (quotes, opposite)
    assert found.met is bool(quotes)


def test_words_are_spelled_out_with_their_clauses() -> None:
    words = read_words("It doesn't matter, not because of size but bias; p = 0.5")
    assert [(w.text, w.clause, w.negator) for w in words] == [
        ("it", 0, False),
        ("does", 0, False),
        ("not", 0, True),
        ("matter", 0, False),
        ("not", 1, True),
        ("because", 1, False),
        ("of", 1, False),
        ("size", 1, False),
        ("but", 2, False),
        ("bias", 2, False),
        ("p", 3, False),
        ("0", 3, False),  # 0.5 is not cut in two clauses
        ("5", 3, False),
    ]
    words = read_words("it is not because of size")
    assert [w.clause for w in words] == [0, 0, 1, 1, 1, 1]  # "not" goes with "because"


def test_quotes_come_from_the_original_text_even_when_folding_changes_its_length() -> None:
    criterion = RubricCriterion(criterion="tuning", any_of=["fine tuning"])
    assert match(criterion, "Straße: ﬁne-tuning matters").quotes == ("ﬁne-tuning",)


# --- the bank format ------------------------------------------------------------------------


def _bank(rubric: str) -> str:
    return (
        "bank: demo\ntitle: Demo\nquestions:\n  - id: why-a\n    type: free_text\n"
        "    prompt: Why?\n    model_answer: Because.\n    rubric:\n" + rubric
    )


@pytest.mark.parametrize(
    ("rubric", "message"),
    [
        (
            "      - {criterion: df, any_of: [lose a degree], synonyms: {loses: [use up]}}\n",
            "demo.yaml:9:9: questions[0] (why-a).rubric[0]: synonym 'loses' is in none of the "
            "phrases of any_of; write it as a phrase has it",
        ),
        (
            "      - {criterion: df, any_of: [lose], synonyms: {lose: []}}\n",
            "demo.yaml:9:9: questions[0] (why-a).rubric[0]: synonym 'lose' needs alternatives "
            "with words",
        ),
        (
            "      - {criterion: df, any_of: [lose, '--']}\n",
            "demo.yaml:9:9: questions[0] (why-a).rubric[0]: phrase '--' has no words, so it can "
            "never match",
        ),
    ],
)
def test_a_synonym_or_phrase_that_can_never_match_is_a_bank_error(
    rubric: str, message: str
) -> None:
    with pytest.raises(BankError) as error:
        parse_bank(_bank(rubric), path="demo.yaml")
    assert str(error.value) == message


def test_a_rubric_without_synonyms_loads_as_before() -> None:
    bank = parse_bank(_bank("      - {criterion: a, any_of: [alpha]}\n"), path="demo.yaml")
    question = bank.question("why-a")
    assert isinstance(question, FreeText)
    assert question.rubric[0].synonyms == {}


def test_the_schema_documents_synonyms() -> None:
    schema = json.loads(bank_json_schema())
    synonyms = schema["$defs"]["RubricCriterion"]["properties"]["synonyms"]
    assert synonyms["type"] == "object"
    assert synonyms["additionalProperties"] == {"items": {"type": "string"}, "type": "array"}
    assert "use up" in synonyms["description"]


# --- the README's example -------------------------------------------------------------------


def test_the_readme_free_text_example_prints_what_it_shows() -> None:
    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    code = re.search(r"## Free-text answers\n.*?```python\n(.*?)```", readme, flags=re.DOTALL)
    assert code is not None
    source = code.group(1)
    # The output is one line, wrapped in the README over the comment lines after the print.
    shown = " ".join(line.removeprefix("# ") for line in source.splitlines() if line[:2] == "# ")
    out = io.StringIO()
    cwd = os.getcwd()
    try:
        os.chdir(root)
        with contextlib.redirect_stdout(out):
            exec(compile(source, "README.md", "exec"), {})  # noqa: S102 (our own README)
    finally:
        os.chdir(cwd)
    assert out.getvalue() == shown + "\n"
