"""Blackboard "Upload Questions" files: the format's own rules, then the bank, row by row."""

from __future__ import annotations

import pytest
from export_checkers import SPECIAL, expected_slots, plain, said, strip_tags

from quizgym.errors import ExportError
from quizgym.export import exporter
from quizgym.loader import load_bank
from quizgym.model import FreeText, MultipleChoice, Numeric, SpotTheError, TrueFalse

FIELDS = {"TF": 3, "ESS": 3, "NUM": 4}


@pytest.mark.parametrize("source", ["bert-mlm", str(SPECIAL)])
def test_rows_follow_the_format_and_the_bank(source: str) -> None:
    bank = load_bank(source)
    text = exporter("blackboard", bank).to_bytes().decode("utf-8")
    assert text.endswith("\n") and "\n\n" not in text and "\r" not in text
    rows = [line.split("\t") for line in text.splitlines()]
    assert len(rows) <= 250
    for row in rows:
        assert row[0] in {"TF", "MC", "MA", "ESS", "NUM"}
        if row[0] in FIELDS:
            assert len(row) == FIELDS[row[0]], row
        else:
            assert len(row) % 2 == 0 and set(row[3::2]) <= {"correct", "incorrect"}, row
    position = 0
    for question in bank.questions:
        if isinstance(question, Numeric):
            for slot in expected_slots(bank, question):
                kind, _, answer, tolerance = rows[position]
                assert kind == "NUM"
                low = float(answer) - float(tolerance)
                high = float(answer) + float(tolerance)
                assert float(answer) == pytest.approx(slot.key)
                # one symmetric band: it holds everything quizgym accepts, and no mistake
                assert low <= slot.low and high >= slot.high
                assert all(not low <= value <= high for value, _, _ in slot.mistakes)
                position += 1
            continue
        row = rows[position]
        position += 1
        if isinstance(question, TrueFalse):
            assert row == ["TF", row[1], "true" if question.answer else "false"]
            assert plain(strip_tags(row[1])) == said(question.prompt)
        elif isinstance(question, MultipleChoice | SpotTheError):
            multiple = isinstance(question, MultipleChoice) and question.multiple
            assert row[0] == ("MA" if multiple else "MC")
            assert [strip_tags(t) for t in row[2::2]] == [
                said(c.text.replace("\t", " ")) for c in question.choices
            ]
            assert row[3::2] == ["correct" if c.correct else "incorrect" for c in question.choices]
        elif isinstance(question, FreeText):
            assert row[0] == "ESS"
            assert plain(strip_tags(row[2])) == said(question.model_answer)
    assert position == len(rows)


def test_variants_are_refused_with_a_reason() -> None:
    with pytest.raises(ExportError, match="no question pools"):
        exporter("blackboard", load_bank(SPECIAL), variants=2).to_bytes()
