"""The bank model: strictness, round trips and its place at the bottom of the import graph."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import ValidationError

from quizgym import model
from quizgym.loader import load_bank
from quizgym.model import Bank

SMALL = """
bank: demo
title: Demo
packs: [machine-learning]
questions:
  - {id: tf-a, type: true_false, prompt: "Is it?", answer: true, tags: [t]}
  - id: mc-a
    type: multiple_choice
    prompt: Which?
    choices: [{text: A}, {text: B, correct: true, feedback: yes}]
  - id: ste-a
    type: spot_the_error
    statement: "X because Y."
    correction: Not Y.
    choices: [{text: Y is wrong, correct: true}, {text: X is wrong}]
  - id: why-a
    type: free_text
    prompt: Why?
    model_answer: Because.
    rubric: [{criterion: reason, any_of: [because]}]
  - id: num-a
    type: numeric
    prompt: "L for {p}?"
    params: {p: {choices: [0.5, 0.25]}, n: {min: 10, max: 20, step: 5}}
    answer: nsp_loss(p)
    tolerance: {rel: 0.01}
    mistakes: [{answer: nsp_loss(p) / ln(10), feedback: base 10, tag: log-base}]
  - id: num-b
    type: numeric
    prompt: Parts.
    parts:
      - {id: a, prompt: First., answer: ln(2), tolerance: {sigfigs: 3}}
      - {id: b, prompt: Second., answer: 2 * a, tolerance: {decimals: 2}}
  - id: match-a
    type: matching
    prompt: Pair them.
    pairs:
      - {id: cls, item: "[CLS]", answer: classifies, feedback: its state feeds NSP, tag: roles}
      - {id: sep, item: "[SEP]", answer: separates}
    distractors: [masks]
  - id: cloze-a
    type: cloze
    prompt: "BERT masks {{share}} of the tokens with {{token}}, the {{word}} token."
    blanks:
      share: {answer: 15, units: "%", tolerance: {abs: 0.5}, points: 2}
      token: {choices: ["[CLS]", "[MASK]"], answer: "[MASK]", feedback: not the classifier}
      word: {accept: [mask, masking], tag: roles}
"""


def test_every_type_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "demo.yaml"
    path.write_text(SMALL, encoding="utf-8")
    bank = load_bank(path)
    again = Bank.model_validate_json(bank.model_dump_json())
    assert again.model_dump() == bank.model_dump()
    assert again.question("mc-a").choices[1].feedback == "yes"  # type: ignore[union-attr]
    assert {q.type for q in bank.questions} == set(model.QUESTION_TYPES)


def test_models_are_frozen_and_forbid_extra_fields() -> None:
    bank = Bank.model_validate(
        {
            "bank": "x",
            "title": "X",
            "questions": [{"id": "tf-a", "type": "true_false", "prompt": "?", "answer": True}],
        }
    )
    with pytest.raises(ValidationError):
        bank.questions[0].prompt = "changed"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="extra_forbidden|Extra inputs"):
        Bank.model_validate(
            {
                "bank": "x",
                "title": "X",
                "colour": "red",
                "questions": [{"id": "tf-a", "type": "true_false", "prompt": "?", "answer": True}],
            }
        )


def test_model_imports_nothing_else_from_quizgym() -> None:
    tree = ast.parse(Path(model.__file__).read_text(encoding="utf-8"))
    imported = [
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    ] + [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    ]
    assert not [m for m in imported if m.startswith("quizgym")]


def test_braces_that_are_not_names_stay_literal() -> None:
    assert model.placeholders("M = {3, 5} and {p1}") == ["p1"]


def test_json_schema_has_every_question_type() -> None:
    from quizgym.schema import bank_json_schema

    text = bank_json_schema()
    for name in model.QUESTION_TYPES:
        assert f'"const": "{name}"' in text


@pytest.mark.parametrize("field", ["hint", "explanation"])
def test_an_unknown_placeholder_in_any_text_of_a_numeric_question_is_an_error(field: str) -> None:
    with pytest.raises(ValidationError, match=r"placeholder \{q\} names no parameter"):
        Bank.model_validate(
            {
                "bank": "x",
                "title": "X",
                "questions": [
                    {
                        "id": "num-a",
                        "type": "numeric",
                        "prompt": "{p}?",
                        "params": {"p": 0.5},
                        "answer": "nsp_loss(p)",
                        field: "About {q}.",
                    }
                ],
            }
        )


def test_keys_may_be_plain_yaml_numbers_and_numbers_must_be_finite() -> None:
    base = {"id": "num-a", "type": "numeric", "prompt": "?"}
    bank = Bank.model_validate({"bank": "x", "title": "X", "questions": [{**base, "answer": 15}]})
    assert bank.questions[0].answer == "15"  # type: ignore[union-attr]
    with pytest.raises(ValidationError, match="finite"):
        Bank.model_validate(
            {
                "bank": "x",
                "title": "X",
                "questions": [{**base, "answer": "1", "points": float("inf")}],
            }
        )
