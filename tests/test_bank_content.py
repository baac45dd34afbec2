"""Content tests of the bundled BERT bank: it must encode every item of its two seed documents.

``tests/data/seed_items.txt`` is the checklist (one seed item per line, ``<source>\\t<quote>``);
the bank is held to it, and to the conventions the bank format leaves to authors (id prefixes,
topic and kind tags, keys written as expressions).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from quizgym.loader import load_bank
from quizgym.model import Bank, FreeText, Numeric, SpotTheError, TrueFalse, placeholders

ROOT = Path(__file__).resolve().parents[1]
BANK_PATH = ROOT / "banks" / "bert-mlm.yaml"
SEED_ITEMS_PATH = ROOT / "tests" / "data" / "seed_items.txt"

SOURCE_PATTERN = re.compile(r"^(exercises|misconceptions)/[a-z0-9]+(?:-[a-z0-9]+)*$")
NUMBER_LITERAL = re.compile(r"^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$")

TOPICS = {
    "objectives",
    "masking",
    "loss",
    "nsp",
    "embeddings",
    "softmax",
    "attention",
    "fine-tuning",
    "tokenization",
    "architecture",
    "notation",
}
KINDS = {
    "true-false",
    "spot-the-error",
    "why",
    "edge-case",
    "exercise",
    "definition",
    "recall",
    "misconception",
}
ID_PREFIXES = {
    "tf": {"true_false"},
    "ste": {"spot_the_error"},
    "mc": {"multiple_choice"},
    "num": {"numeric"},
    "why": {"free_text", "multiple_choice"},
    "edge": {"free_text", "multiple_choice", "numeric", "true_false"},
    "recall": {"free_text"},
}

# The nine true/false statements of the misconception bank: a distinctive substring of each
# statement, and the truth value the seed gives it.
SEED_TRUE_FALSE = {
    "can generate text left-to-right like GPT": False,
    "Masking 100% of selected tokens with [MASK]": False,
    "from 15% to 50% will always help": False,
    "summed only over the masked positions": True,
    "attend to itself and read off its own answer": False,
    "fixed sine/cosine curves": False,
    'The 10% "keep unchanged" tokens are still counted in the loss': True,
    "destroys BERT's ability to do the MLM task": False,
    "The softmax in the output layer runs over the masked positions": False,
}


def read_seed_items() -> dict[str, str]:
    """Parse the checklist: source -> quote. Blank lines and ``#`` comments are skipped."""
    items: dict[str, str] = {}
    for number, line in enumerate(SEED_ITEMS_PATH.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        assert len(fields) == 2, f"seed_items.txt:{number}: expected <source>TAB<quote>"
        source, quote = fields
        assert SOURCE_PATTERN.match(source), f"seed_items.txt:{number}: bad source {source!r}"
        assert quote.strip(), f"seed_items.txt:{number}: empty quote"
        assert source not in items, f"seed_items.txt:{number}: {source} listed twice"
        items[source] = quote
    return items


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    data = yaml.safe_load(BANK_PATH.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def bank() -> Bank:
    return load_bank(BANK_PATH)


@pytest.fixture(scope="module")
def seed_items() -> dict[str, str]:
    return read_seed_items()


def test_bank_validates_with_the_model(raw: dict[str, Any]) -> None:
    model = Bank.model_validate(raw)
    assert model.bank == "bert-mlm"
    assert model.title == "Masked language modeling (BERT)"
    assert model.description


def test_bank_file_starts_with_a_comment_not_a_schema_line() -> None:
    first = BANK_PATH.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# ")
    assert "yaml-language-server" not in first


def test_bank_has_at_least_40_questions(bank: Bank) -> None:
    assert len(bank.questions) >= 40


def test_seed_checklist_covers_both_documents(seed_items: dict[str, str]) -> None:
    docs = Counter(source.split("/")[0] for source in seed_items)
    assert docs["exercises"] >= 15
    assert docs["misconceptions"] >= 35
    kinds = Counter(
        source.removeprefix("misconceptions/").rsplit("-", 1)[0]
        for source in seed_items
        if source.startswith("misconceptions/")
    )
    assert kinds["tf"] == 9
    assert kinds["ste"] == 7
    assert kinds["why"] == 6
    assert kinds["edge"] == 9
    assert kinds["recall"] == 1


def test_every_seed_item_is_encoded(bank: Bank, seed_items: dict[str, str]) -> None:
    used = {q.source for q in bank.questions}
    missing = [f"{source}  ({quote})" for source, quote in seed_items.items() if source not in used]
    assert not missing, "seed items with no question:\n" + "\n".join(missing)


def test_every_question_names_a_listed_source(bank: Bank, seed_items: dict[str, str]) -> None:
    unknown = [f"{q.id}: {q.source!r}" for q in bank.questions if q.source not in seed_items]
    assert not unknown, "questions whose source is not in seed_items.txt:\n" + "\n".join(unknown)


@pytest.mark.parametrize(("fragment", "truth"), list(SEED_TRUE_FALSE.items()))
def test_seed_true_false_statement_present(bank: Bank, fragment: str, truth: bool) -> None:
    matches = [q for q in bank.questions if isinstance(q, TrueFalse) and fragment in q.prompt]
    assert len(matches) == 1, f"expected one true/false question containing {fragment!r}"
    question = matches[0]
    assert question.answer is truth, f"{question.id}: the seed says {truth}"
    assert question.source is not None
    assert question.source.startswith("misconceptions/tf-")
    verdict = "True." if truth else "False."
    assert question.explanation is not None
    assert question.explanation.startswith(verdict), f"{question.id}: justify as the seed does"


def test_numeric_keys_are_expressions(bank: Bank) -> None:
    literal = []
    for q in bank.questions:
        if not isinstance(q, Numeric):
            continue
        keys = [(q.id, q.answer)] + [(f"{q.id}.{p.id}", p.answer) for p in q.parts]
        literal += [f"{where}: {key!r}" for where, key in keys if key and NUMBER_LITERAL.match(key)]
    assert not literal, "numeric keys typed as numbers, not expressions:\n" + "\n".join(literal)


def test_numeric_exercises_state_the_seed_value(bank: Bank) -> None:
    unstated = []
    for q in bank.questions:
        if isinstance(q, Numeric):
            values = [q.value] if not q.parts else [p.value for p in q.parts]
            if any(v is None for v in values):
                unstated.append(q.id)
    assert not unstated, f"numeric questions without the seed's value: {unstated}"


def test_variant_parameters_are_used_in_the_prompt(bank: Bank) -> None:
    for q in bank.questions:
        if isinstance(q, Numeric):
            texts = q.prompt + "".join(p.prompt for p in q.parts)
            for name in q.params:
                assert "{" + name + "}" in texts, f"{q.id}: parameter {name} is never shown"


def test_no_stray_placeholders(raw: dict[str, Any]) -> None:
    # Text such as w_{x_i} reads as a {name} placeholder; only parameters may appear in braces.
    for question in raw["questions"]:
        params = set(question.get("params", {}))
        stray = {name for text in strings(question) for name in placeholders(text)} - params
        assert not stray, f"{question['id']}: {sorted(stray)} in braces but not a parameter"


def test_mistakes_differ_from_the_key_text(bank: Bank) -> None:
    for q in bank.questions:
        if isinstance(q, Numeric):
            for key, mistakes in [(q.answer, q.mistakes)] + [
                (p.answer, p.mistakes) for p in q.parts
            ]:
                for mistake in mistakes:
                    assert mistake.answer.replace(" ", "") != (key or "").replace(" ", "")
                    assert mistake.tag, f"{q.id}: mistake {mistake.answer!r} has no tag"


def test_every_question_has_a_topic_and_a_kind(bank: Bank) -> None:
    bad = [
        f"{q.id}: {q.tags}"
        for q in bank.questions
        if not (set(q.tags) & TOPICS and set(q.tags) & KINDS)
    ]
    assert not bad, "questions missing a topic or a kind tag:\n" + "\n".join(bad)


def test_ids_are_unique(raw: dict[str, Any]) -> None:
    ids = [q["id"] for q in raw["questions"]]
    dupes = sorted(i for i, n in Counter(ids).items() if n > 1)
    assert not dupes, f"duplicate ids: {dupes}"


def test_id_prefix_matches_question_type(bank: Bank) -> None:
    for q in bank.questions:
        prefix = q.id.split("-", 1)[0]
        assert prefix in ID_PREFIXES, f"{q.id}: unknown id prefix {prefix!r}"
        assert q.type in ID_PREFIXES[prefix], f"{q.id}: a {q.type} question"


def test_every_question_explains_itself(bank: Bank) -> None:
    for q in bank.questions:
        if isinstance(q, SpotTheError):
            assert q.correction
        elif isinstance(q, FreeText):
            assert q.model_answer
        else:
            assert q.explanation, f"{q.id}: no explanation"


def test_spot_the_error_questions_vary_the_correct_position(bank: Bank) -> None:
    questions = [q for q in bank.questions if isinstance(q, SpotTheError)]
    assert len(questions) == 7
    positions = [next(i for i, c in enumerate(q.choices) if c.correct) for q in questions]
    assert len(set(positions)) >= 3, f"correct choice positions: {positions}"
    for q in questions:
        wrong = [c for c in q.choices if not c.correct]
        assert 2 <= len(wrong) <= 3, f"{q.id}: want 2-3 wrong diagnoses"
        assert all(c.feedback for c in wrong), f"{q.id}: every wrong diagnosis needs feedback"


def test_free_text_rubrics(bank: Bank) -> None:
    for q in bank.questions:
        if isinstance(q, FreeText):
            assert 2 <= len(q.rubric) <= 3, f"{q.id}: want 2-3 rubric criteria"
            for criterion in q.rubric:
                assert len(criterion.any_of) >= 2, f"{q.id}: {criterion.criterion}"
                for phrase in criterion.any_of:
                    assert phrase == phrase.lower(), f"{q.id}: {phrase!r} is not lowercase"


def test_loss_answers_carry_units(bank: Bank) -> None:
    loss_functions = ("mlm_loss", "nsp_loss", "uniform_loss")
    for q in bank.questions:
        if not isinstance(q, Numeric):
            continue
        if q.answer and q.answer.startswith(loss_functions):
            assert q.units == "nats", q.id
        for part in q.parts:
            if part.answer.startswith(loss_functions):
                assert part.units == "nats", f"{q.id}.{part.id}"


def strings(node: Any) -> list[str]:
    """Every string value in a YAML tree."""
    if isinstance(node, dict):
        return [s for value in node.values() for s in strings(value)]
    if isinstance(node, list):
        return [s for item in node for s in strings(item)]
    return [node] if isinstance(node, str) else []


def test_no_text_is_cut_off_by_a_yaml_comment(raw: dict[str, Any]) -> None:
    # " #" inside an unquoted value starts a comment and silently drops the rest of the text.
    lines = BANK_PATH.read_text(encoding="utf-8").splitlines()
    in_file = sum(line.count("#") for line in lines if not line.lstrip().startswith("#"))
    in_data = sum(text.count("#") for text in strings(raw))
    assert in_file == in_data, "a '#' in the bank file is not in the loaded text"


def test_special_tokens_survive_as_text(bank: Bank) -> None:
    text = "\n".join(q.model_dump_json() for q in bank.questions)
    for token in ("[MASK]", "[CLS]", "[SEP]", "##ing"):
        assert token in text, f"{token} was lost"
    edge = bank.question("edge-wordpiece-piece")
    assert "play ##ing" in edge.prompt
