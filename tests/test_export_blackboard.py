"""Blackboard "Upload Questions" files: the format's own rules, then the bank, row by row."""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from pathlib import Path

import pytest
from export_checkers import SPECIAL, expected_slots, plain, said, strip_tags

from quizgym.answers import grade_response
from quizgym.errors import ExportError
from quizgym.export import exporter
from quizgym.loader import load_bank
from quizgym.model import FreeText, MultipleChoice, Numeric, SpotTheError, TrueFalse
from quizgym.solver import slots

FIELDS = {"TF": 3, "ESS": 3, "NUM": 4}
FIELD = Path(__file__).resolve().parent / "data" / "field" / "stats-mechanics.yaml"


def _inward(end: Decimal, rounding: str) -> str:
    """A band's end as a student types it, at 6 figures, rounded into the band."""
    if end == 0:
        return "0"
    quantum = Decimal(1).scaleb(end.adjusted() - 5)
    return str(end.quantize(quantum, rounding=rounding))


@pytest.mark.parametrize("source", ["bert-mlm", str(SPECIAL), str(FIELD)])
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
                low = Decimal(answer) - Decimal(tolerance)
                high = Decimal(answer) + Decimal(tolerance)
                assert float(answer) == pytest.approx(slot.key)
                # one symmetric band: within what quizgym accepts, and no mistake in it
                # (its ends half a 12-figure step past the last accepted decimal)
                slack = Decimal("1e-11") * max(abs(low), abs(high))
                assert Decimal(slot.low) - slack <= low <= Decimal(answer)
                assert Decimal(answer) <= high <= Decimal(slot.high) + slack
                assert all(not low <= Decimal(value) <= high for value, _, _ in slot.mistakes)
                # every answer the band holds quizgym accepts, and its ends at 6 figures too
                ends = [_inward(low, ROUND_CEILING), _inward(high, ROUND_FLOOR), answer]
                units = dict(slots(question))[slot.part].units
                for typed in ends:
                    verdict = grade_response(bank, question, typed, part=slot.part)
                    if verdict.doubt == "no unit given":  # require_units: typed as asked
                        verdict = grade_response(bank, question, f"{typed} {units}", part=slot.part)
                    assert verdict.score == verdict.max_score, (question.id, slot.part, typed)
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


def test_a_numeric_line_accepts_no_answer_quizgym_refuses() -> None:
    """ln 4 = 1.3863 within auto's 0.1 %: quizgym refuses 1.384 and 1.389; so must Blackboard
    (the widest interval auto allows took 1.3826 to 1.39)."""
    bank = load_bank("bert-mlm")
    job = exporter("blackboard", bank)
    rows = [line.split("\t") for line in job.to_bytes().decode("utf-8").splitlines()]
    question = next(q for q in bank.questions if q.id == "num-two-sentences")
    sentence2 = next(r for r in rows if r[0] == "NUM" and r[2].startswith("1.386"))
    low = Decimal(sentence2[2]) - Decimal(sentence2[3])
    high = Decimal(sentence2[2]) + Decimal(sentence2[3])
    for typed, inside in [("1.384", False), ("1.389", False), ("1.3863", True), ("1.3876", True)]:
        verdict = grade_response(bank, question, typed, part="sentence2")
        assert (verdict.score == verdict.max_score) is inside, typed
        assert (low <= Decimal(typed) <= high) is inside, typed
    # 1.39, the key to 3 figures, is right in quizgym and cannot be on the same line: said
    assert (
        "warning: num-two-sentences.sentence2: Blackboard refuses 1.39, which quizgym accepts "
        "(one answer and one tolerance per question: 1.38629436112 ± 0.001386295365)"
    ) in job.warnings


def test_a_required_unit_blackboard_cannot_ask_for_is_said() -> None:
    # Blackboard takes the number alone: "5" gets full credit there, half in quizgym.
    job = exporter("blackboard", load_bank(FIELD))
    job.to_bytes()
    about_units = [w for w in job.warnings if "unit" in w]
    assert about_units == [
        "warning: speed-required-units: Blackboard gives full credit to a number without its "
        "unit (m/s), which quizgym requires"
    ]
