"""Matching questions answered in Canvas's and Moodle's quiz response reports: each report, written
as the LMS writes it, maps back onto the items' slots by their texts and grades as the wide CSV
of the same answers does, with and without the export's issue manifest."""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import pytest

from quizgym.export import export_bank
from quizgym.grading.run import grade_submissions
from quizgym.loader import load_bank
from quizgym.model import Matching, MultipleChoice

LAB = """
bank: lab-reports
title: Laboratory methods
questions:
  - id: symbols
    type: matching
    prompt: Pair each element with its chemical symbol.
    shuffle: true
    pairs:
      - {id: na, item: Sodium, answer: Na}
      - {id: k, item: Potassium, answer: K, feedback: K is from the Latin kalium.}
      - {id: fe, item: "Iron (ferrum, in Latin)", answer: Fe}
    distractors: [Ir, So]
  - id: tests
    type: matching
    prompt: Pair each test with what it is used for.
    pairs:
      - {id: t, item: "t test", answer: "compares two means, one sample each"}
      - {id: w, item: "Wilcoxon => ranks", answer: "compares ranks; no normal curve needed"}
      - {id: chi, item: chi-squared test, answer: counts in categories -> expected counts}
  - id: flame
    type: multiple_choice
    prompt: Which element colours a flame lilac?
    choices:
      - {text: Potassium, correct: true}
      - {text: Sodium}
"""

MATCHING = ("symbols", "tests")


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    path = tmp_path / "lab.yaml"
    path.write_text(LAB, encoding="utf-8")
    return path


def _class(lab: Path, size: int = 40) -> list[dict[str, str | None]]:
    """Each student's answer text to every slot (None: unanswered), drawn at random."""
    bank = load_bank(lab)
    rng = random.Random(2028)
    out = []
    for n in range(size):
        row: dict[str, str | None] = {"student": str(5000 + n)}
        for question in bank.questions:
            if isinstance(question, Matching):
                for pair in question.pairs:
                    pick = rng.choice([*question.answers, None, pair.answer])
                    row[f"{question.id}.{pair.id}"] = pick
            else:
                assert isinstance(question, MultipleChoice)
                row[question.id] = rng.choice([c.text for c in question.choices])
        out.append(row)
    return out


def _wide(rows: list[dict[str, str | None]], path: Path) -> Path:
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({k: v or "" for k, v in row.items()} for row in rows)
    return path


def _canvas_cell(question: Matching, row: dict[str, str | None]) -> str:
    """Canvas's ``to_csv`` for a ``matching_question`` (Quizzes::QuizStatistics::StudentAnalysis):
    every answer (item) in the question's order as ``left=>right`` (a missing match: ``left=>``),
    ``=>`` within a text written ``\\=>``, each pair's ``,`` written ``\\,``, joined by ``,``;
    then ``html_to_text`` (spaces squeezed, the cell stripped)."""
    pieces = []
    for pair in question.pairs:
        sides = [pair.item, row[f"{question.id}.{pair.id}"] or ""]
        piece = "=>".join(side.replace("=>", "\\=>") for side in sides)
        pieces.append(piece.replace(",", "\\,"))
    return " ".join(",".join(pieces).split())


def canvas_report(lab: Path, rows: list[dict[str, str | None]]) -> str:
    """A Canvas "Student Analysis" CSV: ``"<id>: <question text>"`` and a points column each."""
    bank = load_bank(lab)
    header = ["name", "id", "sis_id", "section", "section_id", "section_sis_id", "submitted"]
    for k, question in enumerate(bank.questions):
        header += [f"{800 + k}: <p>{question.prompt}</p>", "1.0"]
    header += ["n correct", "n incorrect", "score"]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    for row in rows:
        cells = [f"Student {row['student']}", str(row["student"]), "", "A", "1", "", "2026-12-02"]
        for question in bank.questions:
            if isinstance(question, Matching):
                cells += [_canvas_cell(question, row), "0.5"]
            else:
                cells += [row[question.id] or "", "0"]
        writer.writerow([*cells, "0", "0", "0"])
    return out.getvalue()


def _moodle_cell(question: Matching, row: dict[str, str | None], stems: list[int]) -> str:
    """qtype_match's ``summarise_response``: the answered stems, in the order shown, as
    ``stem -> choice`` joined by ``; `` (nothing answered: the report shows ``-``)."""
    pairs = [question.pairs[k] for k in stems]
    shown = [
        f"{p.item} -> {row[f'{question.id}.{p.id}']}" for p in pairs if row[f"{question.id}.{p.id}"]
    ]
    return "; ".join(shown) or "-"


def _moodle_summary(question: Matching, stems: list[int]) -> str:
    """qtype_match's ``get_question_summary``: ``text {stem; …} -> {choice; …}``."""
    items = "; ".join(question.pairs[k].item for k in stems)
    return f"{question.prompt} {{{items}}} -> {{{'; '.join(question.answers)}}}"


def moodle_report(lab: Path, rows: list[dict[str, str | None]], *, with_text: bool = True) -> str:
    """A Moodle quiz "Responses" CSV (each student shown the stems in their own order; the
    ``Question N`` columns when downloaded with the question text)."""
    bank = load_bank(lab)
    header = ["Surname", "First name", "ID number", "State", "Grade/10.00"]
    for n in range(1, len(bank.questions) + 1):
        header += ([f"Question {n}"] if with_text else []) + [f"Response {n}"]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    rng = random.Random(7)
    for row in rows:
        cells = ["Student", str(row["student"]), str(row["student"]), "Finished", "5.00"]
        for question in bank.questions:
            if isinstance(question, Matching):
                stems = list(range(len(question.pairs)))
                rng.shuffle(stems)
                text, response = (
                    _moodle_summary(question, stems),
                    _moodle_cell(question, row, stems),
                )
            else:
                assert isinstance(question, MultipleChoice)
                choices = "; ".join(c.text for c in question.choices)
                text, response = f"{question.prompt}: {choices}", row[question.id] or "-"
            cells += ([text] if with_text else []) + [response]
        writer.writerow(cells)
    writer.writerow(["Overall average", "", "", "", "5.00"] + [""] * (len(header) - 5))
    return out.getvalue()


def graded(
    lab: Path, report: Path, out: Path, **how: object
) -> dict[tuple[str, str], tuple[str, str, str]]:
    """(student, slot) → (verdict, score, read as) of ``quizgym grade`` (read as: the text
    picked, without the letter the version the run assumed shows it under)."""
    run = grade_submissions(lab, [report], out_dir=out, **how)  # type: ignore[arg-type]
    assert [r for r in run.rejected if not r.is_column] == []
    with (out / "responses.csv").open(encoding="utf-8") as stream:
        return {
            (r["student"], r["question"]): (r["verdict"], r["score"], r["read_as"][3:])
            for r in csv.DictReader(stream)
        }


def test_canvas_and_moodle_reports_grade_each_item_as_the_wide_csv_does(
    lab: Path, tmp_path: Path
) -> None:
    rows = _class(lab)
    wide = graded(lab, _wide(rows, tmp_path / "wide.csv"), tmp_path / "w", seed=1)
    assert len(wide) == 40 * 7
    verdicts = {v for (_, slot), (v, _, _) in wide.items() if slot.startswith(MATCHING)}
    assert verdicts == {"correct", "incorrect", "blank"}
    canvas = tmp_path / "canvas.csv"
    canvas.write_text(canvas_report(lab, rows), encoding="utf-8")
    assert graded(lab, canvas, tmp_path / "c") == wide
    moodle = tmp_path / "moodle.csv"
    moodle.write_text(moodle_report(lab, rows), encoding="utf-8")
    assert graded(lab, moodle, tmp_path / "m") == wide


@pytest.mark.parametrize(("fmt", "suffix"), [("qti12", ".zip"), ("moodle", ".xml")])
def test_with_the_export_manifest_each_item_is_found_by_identity(
    lab: Path, tmp_path: Path, fmt: str, suffix: str
) -> None:
    rows = _class(lab, 25)
    wide = graded(lab, _wide(rows, tmp_path / "wide.csv"), tmp_path / "w", seed=1)
    exported = export_bank(lab, to=fmt, output=tmp_path / f"lab{suffix}")
    assert exported.issued is not None
    items = json.loads(exported.issued.read_text(encoding="utf-8"))["items"]
    assert [(i["question"], i["part"]) for i in items] == [
        ("symbols", None),
        ("tests", None),
        ("flame", None),
    ]
    report = tmp_path / "report.csv"
    if fmt == "qti12":
        report.write_text(canvas_report(lab, rows), encoding="utf-8")
    else:  # Moodle's default download has no question texts: the manifest gives the order
        report.write_text(moodle_report(lab, rows, with_text=False), encoding="utf-8")
    assert graded(lab, report, tmp_path / "g", issued=exported.issued) == wide


def test_a_cell_whose_items_cannot_be_told_is_graded_unreadable_never_guessed(
    lab: Path, tmp_path: Path
) -> None:
    rows = _class(lab, 3)
    report = moodle_report(lab, rows).splitlines()
    header = next(csv.reader([report[0]]))
    response = header.index("Response 1")
    broken = []
    for k, cells in enumerate(csv.reader(report[1:4])):
        cells[response] = [
            "Sodium -> Na; Sodium -> K",  # an item named twice
            "Sodium -> Na; Neon -> Ne",  # an item the question does not have
            "Na, K, Fe",  # no items at all
        ][k]
        broken.append(cells)
    path = tmp_path / "broken.csv"
    with path.open("w", newline="", encoding="utf-8") as stream:
        csv.writer(stream).writerows([header, *broken])
    found = graded(lab, path, tmp_path / "g")
    for student in ("5000", "5001", "5002"):
        assert {found[(student, f"symbols.{i}")][0] for i in ("na", "k", "fe")} == {"invalid"}
    # an answer text the LMS changed is that item's unreadable answer; the others are read
    cells = broken[0]
    cells[response] = "Potassium -> Kalium; Sodium -> Na"
    with path.open("w", newline="", encoding="utf-8") as stream:
        csv.writer(stream).writerows([header, cells])
    found = graded(lab, path, tmp_path / "h")
    assert [found[("5000", f"symbols.{i}")][0] for i in ("na", "k", "fe")] == [
        "correct",
        "invalid",
        "blank",
    ]


def test_a_cell_that_names_no_item_is_not_read_as_every_items_answer(
    lab: Path, tmp_path: Path
) -> None:
    report = moodle_report(lab, _class(lab, 1)).splitlines()
    header = next(csv.reader([report[0]]))
    cells = next(csv.reader([report[1]]))
    cells[header.index("Response 1")] = "K"  # one answer, no item: not Potassium's by luck
    path = tmp_path / "bare.csv"
    with path.open("w", newline="", encoding="utf-8") as stream:
        csv.writer(stream).writerows([header, cells])
    found = graded(lab, path, tmp_path / "g")
    assert [found[("5000", f"symbols.{i}")][0] for i in ("na", "k", "fe")] == ["invalid"] * 3
