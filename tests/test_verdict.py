"""One response → one verdict, for every question type (the single-answer path)."""

from __future__ import annotations

import pytest

from quizgym.answers import mistakes_for
from quizgym.grading import Status, grade_question, grade_response
from quizgym.loader import parse_bank
from quizgym.model import LETTERS, Numeric
from quizgym.solver import keys_of, variant_of
from quizgym.types import choice_weights

BANK = parse_bank(
    """
bank: demo
title: Demo
packs: [machine-learning]
questions:
  - {id: tf-a, type: true_false, prompt: "BERT generates left-to-right.", answer: false}
  - id: mc-a
    type: multiple_choice
    prompt: Which model is causal?
    choices:
      - {text: BERT, feedback: BERT is bidirectional., tag: bert-causal}
      - {text: GPT, correct: true}
      - {text: The T5 encoder}
  - id: mc-many
    type: multiple_choice
    multiple: true
    prompt: Which are bidirectional?
    choices: [{text: BERT, correct: true}, {text: GPT}, {text: T5 encoder, correct: true}]
  - id: mc-shuffled
    type: multiple_choice
    shuffle: true
    prompt: Pick the right one.
    choices: [{text: right, correct: true}, {text: wrong 1}, {text: wrong 2}, {text: wrong 3}]
  - id: ste-a
    type: spot_the_error
    statement: GPT can't use bidirectional attention because it is smaller than BERT.
    correction: Size is irrelevant; GPT is autoregressive.
    choices:
      - {text: Size is irrelevant; GPT must not see the future., correct: true}
      - {text: Nothing is wrong., feedback: Size has nothing to do with it.}
  - id: why-a
    type: free_text
    prompt: Why not replace 100% of the selected tokens with [MASK]?
    model_answer: "[MASK] never appears during fine-tuning: a train-test mismatch."
    points: 2
    rubric:
      - {criterion: train-test mismatch, any_of: [mismatch, never appears]}
      - {criterion: fine-tuning, any_of: [fine-tuning, fine tuning, downstream]}
  - id: num-a
    type: numeric
    prompt: "L_MLM for P = {p1} and P = {p2}?"
    params: {p1: {choices: [0.2, 0.1, 0.25]}, p2: {choices: [0.5, 0.8]}}
    answer: mlm_loss(p1, p2)
    units: nats
    mistakes:
      - {answer: "mlm_loss(p1, p2) / 2", feedback: That is the mean., tag: mean-vs-sum, credit: 0.5}
  - id: num-parts
    type: numeric
    prompt: Two sentences.
    parts:
      - {id: s1, prompt: Sentence 1., answer: "mlm_loss(0.5, 0.25, 0.125)"}
      - {id: s2, prompt: Sentence 2., answer: "mlm_loss(0.5, 0.5)"}
      - {id: total, prompt: Total., answer: s1 + s2}
""",
    path="demo.yaml",
)


def grade(qid: str, text: str | None, **kwargs: object) -> tuple[Status, float]:
    verdict = grade_response(BANK, BANK.question(qid), text, **kwargs)  # type: ignore[arg-type]
    return verdict.status, verdict.score


TRUE_FALSE = [
    ("false", Status.CORRECT),
    ("F", Status.CORRECT),
    ("no", Status.CORRECT),
    ("0", Status.CORRECT),
    ("FALSE.", Status.CORRECT),
    ("true", Status.INCORRECT),
    ("Yes", Status.INCORRECT),
    ("1", Status.INCORRECT),
    ("maybe", Status.INVALID),
    ("", Status.BLANK),
    (None, Status.BLANK),
]


@pytest.mark.parametrize(("text", "status"), TRUE_FALSE)
def test_true_false_forms(text: str | None, status: Status) -> None:
    assert grade("tf-a", text)[0] is status


CHOICES = [
    ("B", Status.CORRECT),
    ("b", Status.CORRECT),
    ("2", Status.CORRECT),
    ("gpt", Status.CORRECT),
    (" GPT ", Status.CORRECT),
    ("A", Status.INCORRECT),
    ("the t5 encoder", Status.INCORRECT),
    ("D", Status.INVALID),
    ("4", Status.INVALID),
    ("A, B", Status.INVALID),
    ("", Status.BLANK),
]


@pytest.mark.parametrize(("text", "status"), CHOICES)
def test_single_choice_forms(text: str, status: Status) -> None:
    assert grade("mc-a", text)[0] is status


def test_wrong_choice_carries_its_feedback_and_tag() -> None:
    verdict = grade_response(BANK, BANK.question("mc-a"), "A")
    assert verdict.feedback == "BERT is bidirectional."
    assert verdict.tag == "bert-causal"
    assert verdict.read_as == "A: BERT"
    assert verdict.expected == "B: GPT"


MULTIPLE = [
    ("A, C", 1.0),
    ("c a", 1.0),
    ("1;3", 1.0),
    ("A", 0.5),
    ("A B", 0.0),
    ("A B C", 0.5),
    ("B", 0.0),
]


@pytest.mark.parametrize(("text", "score"), MULTIPLE)
def test_multiple_choice_partial_credit(text: str, score: float) -> None:
    assert grade("mc-many", text)[1] == pytest.approx(score)


def test_shuffled_letters_refer_to_the_order_the_student_saw() -> None:
    question = BANK.question("mc-shuffled")
    orders = {variant_of(BANK, question, student=f"s{i:03}", seed=7).order for i in range(30)}
    assert len(orders) > 3, "shuffling should give students different orders"
    for i in range(30):
        variant = variant_of(BANK, question, student=f"s{i:03}", seed=7)
        letter = "ABCD"[variant.order.index(0)]  # where the right choice landed for this student
        assert grade("mc-shuffled", letter, student=f"s{i:03}", seed=7)[0] is Status.CORRECT
        other = "ABCD"[(variant.order.index(0) + 1) % 4]
        assert grade("mc-shuffled", other, student=f"s{i:03}", seed=7)[0] is Status.INCORRECT


def test_unshuffled_default_order_for_everyone() -> None:
    question = BANK.question("mc-shuffled")
    assert variant_of(BANK, question).order == (0, 1, 2, 3)


def test_spot_the_error_is_graded_by_diagnosis() -> None:
    assert grade("ste-a", "A")[0] is Status.CORRECT
    verdict = grade_response(BANK, BANK.question("ste-a"), "B")
    assert (verdict.status, verdict.feedback) == (
        Status.INCORRECT,
        "Size has nothing to do with it.",
    )


RUBRIC = [
    ("It never appears when fine-tuning, a MISMATCH!", Status.CORRECT, 2.0),
    ("Downstream tasks use clean text.", Status.PARTIAL, 1.0),
    ("train-test mismatch", Status.PARTIAL, 1.0),
    ("Because masks are fun", Status.INCORRECT, 0.0),
    ("fine-tuningmismatch", Status.INCORRECT, 0.0),  # phrases match whole words only
    ("Mismatches: it is unseen when fine-tuned", Status.CORRECT, 2.0),  # word forms
    ("[MASK] never appears downstream.", Status.CORRECT, 2.0),  # "never" is the phrase's
    ("There is no mismatch; it has nothing to do with fine-tuning", Status.INCORRECT, 0.0),
]


@pytest.mark.parametrize(("text", "status", "score"), RUBRIC)
def test_free_text_rubric(text: str, status: Status, score: float) -> None:
    verdict = grade_response(BANK, BANK.question("why-a"), text)
    assert (verdict.status, verdict.score) == (status, score)
    assert verdict.needs_review


# Reference §6: key −ln(0.2) − ln(0.5) = ln 10 ≈ 2.302585.
NUMERIC = [
    ("2.30", Status.CORRECT, None, "2.30"),
    ("2.3026", Status.CORRECT, None, "2.3026"),
    ("ln 10", Status.CORRECT, None, "ln(10) ≈ 2.302585"),
    ("-log(0.2) - log(0.5)", Status.CORRECT, None, None),
    ("≈ 2.30 nats", Status.CORRECT, None, "2.30 nats"),
    ("2,30", Status.CORRECT, None, "2.30"),
    ("2.31", Status.INCORRECT, None, None),
    ("2.3", Status.INCORRECT, None, None),
    ("1.0", Status.INCORRECT, "log-base", None),
    ("3.32", Status.INCORRECT, "log-base", None),
    ("-2.30", Status.INCORRECT, "sign", None),
    ("1.15", Status.PARTIAL, "mean-vs-sum", None),
    ("1.151", Status.PARTIAL, "mean-vs-sum", None),
    ("1,000", Status.INVALID, None, ""),
    ("__import__('os').system('id')", Status.INVALID, None, ""),
    ("  ", Status.BLANK, None, ""),
]


@pytest.mark.parametrize(("text", "status", "tag", "read_as"), NUMERIC)
def test_numeric_verdicts(text: str, status: Status, tag: str | None, read_as: str | None) -> None:
    verdict = grade_response(BANK, BANK.question("num-a"), text)
    assert (verdict.status, verdict.tag) == (status, tag), verdict.feedback
    if read_as is not None:
        assert verdict.read_as == read_as
    assert verdict.expected == "ln 10 ≈ 2.3026 nats"


def test_too_few_significant_figures_gets_a_hint() -> None:
    verdict = grade_response(BANK, BANK.question("num-a"), "2.3")
    assert "significant figures" in verdict.feedback


def test_invalid_answer_says_why_in_the_students_terms() -> None:
    verdict = grade_response(BANK, BANK.question("num-a"), "1,000")
    assert "ambiguous" in verdict.feedback.lower()
    assert verdict.score == 0


def test_partial_credit_from_a_mistake() -> None:
    assert grade("num-a", "1.15") == (Status.PARTIAL, 0.5)


def test_variants_are_deterministic_and_varied() -> None:
    question = BANK.question("num-a")
    assert isinstance(question, Numeric)
    a = variant_of(BANK, question, student="s001", seed=3)
    assert a == variant_of(BANK, question, student="s001", seed=3)
    drawn = {
        tuple(variant_of(BANK, question, student=f"s{i}", seed=3).params.items()) for i in range(40)
    }
    assert len(drawn) >= 4
    student_key = keys_of(BANK, question, a)[0]
    verdict = grade_response(BANK, question, f"{student_key.number:.4f}", student="s001", seed=3)
    assert verdict.status is Status.CORRECT
    default = variant_of(BANK, question).params
    assert {k: float(v) for k, v in default.items()} == {"p1": 0.2, "p2": 0.5}


def test_prompt_shows_the_students_numbers() -> None:
    question = BANK.question("num-a")
    variant = variant_of(BANK, question, student="s002", seed=1)
    text = variant.fill(question.prompt)
    assert "{" not in text
    assert text.startswith("L_MLM for P = 0.")


def test_error_carried_forward_credits_a_consistent_total() -> None:
    question = BANK.question("num-parts")
    verdicts = grade_question(BANK, question, {"s1": "4.0", "s2": "1.3863", "total": "5.3863"})
    assert [v.status for v in verdicts] == [Status.INCORRECT, Status.CORRECT, Status.CORRECT]
    assert "error carried forward" in verdicts[2].feedback
    assert [v.question for v in verdicts] == ["num-parts.s1", "num-parts.s2", "num-parts.total"]


def test_error_carried_forward_does_not_rescue_an_inconsistent_total() -> None:
    question = BANK.question("num-parts")
    verdicts = grade_question(BANK, question, {"s1": "4.0", "s2": "1.3863", "total": "7"})
    assert verdicts[2].status is Status.INCORRECT


def test_a_part_graded_alone_uses_the_earlier_answers_given() -> None:
    question = BANK.question("num-parts")
    verdict = grade_response(
        BANK, question, "5.3863", part="total", earlier={"s1": "4", "s2": "1.3863"}
    )
    assert verdict.status is Status.CORRECT


def test_derived_mistakes_only_where_the_author_did_not_cover_the_value() -> None:
    # The bank's own mistake (mean, credit 0.5) wins over the derived mean-vs-sum.
    assert grade("num-a", "1.1513")[0] is Status.PARTIAL
    verdict = grade_response(BANK, BANK.question("num-a"), "1.000")
    assert "log base 10" in verdict.feedback


def test_free_text_is_worth_its_rubric_unless_points_are_set() -> None:
    bank = parse_bank(
        "bank: demo\ntitle: Demo\nquestions:\n"
        "  - id: why-b\n    type: free_text\n    prompt: Why?\n    model_answer: Because.\n"
        "    rubric:\n      - {criterion: one, any_of: [alpha], points: 2}\n"
        "      - {criterion: two, any_of: [beta]}\n"
    )
    verdict = grade_response(bank, bank.question("why-b"), "alpha only")
    assert (verdict.score, verdict.max_score) == (2.0, 3.0)


@pytest.mark.parametrize(
    ("text", "score"),
    [("BERT, T5 encoder", 1.0), ("t5 encoder;bert", 1.0), ("BERT,GPT", 0.0), ("BERT", 0.5)],
)
def test_multiple_answers_by_their_texts(text: str, score: float) -> None:
    assert grade("mc-many", text) == (
        Status.CORRECT if score == 1 else Status.PARTIAL if score else Status.INCORRECT,
        score,
    )


ROUNDING = parse_bank(
    """
bank: rounding
title: Rounding
questions:
  - id: num-split
    type: numeric
    prompt: "Of {n} tokens, how many are masked on average?"
    params: {n: {choices: [50, 10]}}
    answer: 0.15 * n
    mistakes:
      - {answer: round(0.55 * n), feedback: Took the wrong share and rounded., tag: rounded}
      - {answer: 0.15 * n / 2, feedback: Halved., tag: halved}
"""
)


@pytest.mark.parametrize(("n", "rounded"), [(50, 28), (10, 6)])
def test_mistake_values_rounding_is_exact_at_a_half(n: int, rounded: int) -> None:
    # 0.55 * 50 is exactly 27.5 and rounds half up to 28; at 30 binary-rounded digits it lands
    # just below 27.5 and would round to 27, so a mistake that rounds is solved exactly.
    question = ROUNDING.question("num-split")
    variant = next(
        v
        for s in range(200)
        if (v := variant_of(ROUNDING, question, student=f"s{s}")).params["n"] == n
    )
    resolved = mistakes_for(ROUNDING, question, variant, 0)
    assert [(m.tag, m.value) for m in resolved if not m.derived] == [
        ("rounded", rounded),
        ("halved", pytest.approx(0.075 * n, rel=1e-15)),
    ]
    verdict = grade_response(ROUNDING, question, str(rounded), variant=variant)
    assert verdict.tag == "rounded"


@pytest.mark.parametrize("qid", ["mc-a", "mc-many", "ste-a"])
def test_exported_choice_weights_are_the_graders(qid: str) -> None:
    # The weights LMS exports write for each choice are what the grader gives for picking it.
    question = BANK.question(qid)
    weights = choice_weights(question)
    for index, weight in enumerate(weights):
        verdict = grade_response(BANK, question, LETTERS[index])
        assert verdict.score / verdict.max_score == pytest.approx(max(0.0, weight))
    right = [LETTERS[i] for i, c in enumerate(question.choices) if c.correct]
    if len(right) > 1:
        assert sum(w for w in weights if w > 0) == pytest.approx(1.0)
        verdict = grade_response(BANK, question, " ".join(right))
        assert verdict.score == verdict.max_score
