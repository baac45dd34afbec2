"""The per-student version check on a chemistry class: a typo in a seed cell is flagged with both
fits (review.csv, report.html, the summary), no score moves, honest weak students are not
flagged, and a seed cell that contradicts ``--issued`` is reported."""

from __future__ import annotations

import csv
import random
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizgym.cli import cli
from quizgym.grading.run import grade_submissions
from quizgym.grading.wrong_seed import (
    SeedEvidence,
    common_seeds,
    near_misses,
    poisson_binomial_tail,
)
from quizgym.loader import load_bank
from quizgym.model import LETTERS, MultipleChoice
from quizgym.solver import CompiledBank, compile_bank

CHEMISTRY = """\
bank: chem-basics
title: Chemistry basics
version: 1
defaults: {points: 1, tolerance: auto}
questions:
  - id: molarity
    type: numeric
    prompt: "{n} mol of NaCl is dissolved to make {v} L of solution. What is its molarity?"
    params:
      n: {choices: [0.5, 0.75, 1.2, 2]}
      v: {choices: [0.25, 0.4, 2.5]}
    answer: n / v
    units: mol/L
    mistakes:
      - {answer: v / n, feedback: "Molarity is moles over litres.", tag: inverted}
  - id: dilution
    type: numeric
    prompt: "{v1} mL of a {c1} M stock is diluted to {v2} mL. What is the new concentration?"
    params:
      c1: {choices: [6, 12, 18]}
      v1: {choices: [10, 25, 40]}
      v2: {choices: [250, 500]}
    answer: c1 * v1 / v2
    units: mol/L
  - id: moles
    type: numeric
    prompt: "How many moles are in {m} g of a compound of molar mass {mm} g/mol?"
    params:
      m: {choices: [9, 18, 27, 45]}
      mm: {choices: [18, 44, 58.5]}
    answer: m / mm
    units: mol
    mistakes:
      - {answer: m * mm, feedback: "Divide the mass by the molar mass.", tag: inverted}
  - id: gas
    type: numeric
    prompt: "{n} mol of an ideal gas at {t} K and {p} kPa (R = 8.314)."
    params:
      n: {choices: [1, 2, 3]}
      t: {choices: [273, 298, 350]}
      p: {choices: [100, 150]}
    parts:
      - id: volume
        prompt: Its volume in litres
        answer: n * 8.314 * t / p
        units: L
      - id: doubled
        prompt: Its volume at twice the temperature
        answer: 2 * n * 8.314 * t / p
        units: L
  - id: acid
    type: multiple_choice
    prompt: Which of these is a strong acid?
    shuffle: true
    choices:
      - {text: HCl, correct: true}
      - {text: CH3COOH}
      - {text: H2CO3}
      - {text: HF}
"""


@pytest.fixture(scope="module")
def bank_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bank") / "chem.yaml"
    path.write_text(CHEMISTRY, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def book(bank_path: Path) -> CompiledBank:
    return compile_bank(load_bank(bank_path))


def _right(book: CompiledBank, slot_id: str, student: str | None, seed: int) -> str:
    """The right answer of one slot for a student's version under ``seed``, as typed."""
    slot = book.slot(slot_id)
    variant = book.variant(slot.question, student=student, seed=seed)
    if slot.is_numeric:
        return f"{book.key(slot, variant).number:.6g}"
    question = slot.question
    assert isinstance(question, MultipleChoice)
    return next(LETTERS[k] for k, i in enumerate(variant.order) if question.choices[i].correct)


def _wrong(
    book: CompiledBank, slot_id: str, student: str | None, seed: int, rng: random.Random
) -> str:
    """A wrong answer as weak students give them: a known mistake, a slip of a factor, a
    guess, a blank, a non-answer, another letter."""
    slot = book.slot(slot_id)
    variant = book.variant(slot.question, student=student, seed=seed)
    if not slot.is_numeric:
        right = _right(book, slot_id, student, seed)
        return rng.choice([c for c in "ABCD" if c != right])
    key = book.key(slot, variant).number
    mistakes = [m.value for m in book.mistakes(slot, variant)]
    roll = rng.random()
    if roll < 0.3 and mistakes:
        return f"{rng.choice(mistakes):.4g}"
    if roll < 0.6:
        return f"{key * rng.choice([0.1, 0.5, 2, 10, 1000, 0.001]):.4g}"
    if roll < 0.85:
        return f"{rng.uniform(0, 3 * key):.3g}"
    return rng.choice(["", "idk", "?"])


def _write_class(
    path: Path,
    book: CompiledBank,
    students: Sequence[tuple[str, int, int, float]],
    rng: random.Random,
    *,
    one_sheet: bool = False,
) -> None:
    """A wide CSV: (student, seed cell, seed their sheet was drawn with, skill) per row
    (``one_sheet``: the sheet is the class's, drawn without a student)."""
    slots = book.slot_ids()
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["student", "seed", *slots])
        for student, cell, sheet, skill in students:
            row = [student, str(cell)]
            holder = None if one_sheet else student
            for slot in slots:
                if rng.random() < skill:
                    row.append(_right(book, slot, holder, sheet))
                else:
                    row.append(_wrong(book, slot, holder, sheet, rng))
            writer.writerow(row)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _class_with_a_typo(tmp_path: Path, book: CompiledBank) -> Path:
    rng = random.Random(7)
    students = [(f"u{k:03d}", 3, 3, rng.uniform(0.2, 0.95)) for k in range(1, 31)]
    students[1] = ("u002", 4, 3, 1.0)  # sheet of seed 3, typed 4 in the seed cell
    path = tmp_path / "class.csv"
    _write_class(path, book, students, rng)
    return path


def test_a_seed_typo_is_flagged_with_both_fits_and_no_score_moves(
    tmp_path: Path, bank_path: Path, book: CompiledBank, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _class_with_a_typo(tmp_path, book)
    out = tmp_path / "graded"
    result = CliRunner().invoke(cli, ["grade", str(bank_path), str(data), "-o", str(out)])
    # exit 0 as before the check: a flag asks for review, it is no rejected row nor warning
    assert result.exit_code == 0, result.output
    # u002 answered every slot right for seed 3; those where seed 4's key is another tell
    differ = [
        s for s in book.slot_ids() if _right(book, s, "u002", 3) != _right(book, s, "u002", 4)
    ]
    assert len(differ) >= 4
    line = f"u002: fits seed 3 on {len(differ)} slots, own seed 4 on 0"
    assert f"flagged: {line}\n" in result.stderr
    assert result.stdout.startswith(f"graded 30 students (180 responses) → {out}/; ")
    assert result.stdout.endswith(
        "; 1 student flagged: answers fit another seed, or the seed cell contradicts the "
        "manifest (see review.csv)\n"
    )
    flagged = [r for r in _rows(out / "review.csv") if r["question"] == "(student)"]
    assert flagged == [
        {
            "question": "(student)",
            "version": "own seed 4",
            "answer": "",
            "count": "1",
            "students": "u002",
            "reason": f"{line}: no score changed: a typo in the seed cell? correct it and "
            "grade again",
            "read_as": "seed 3",
            "verdict": "version check",
            "suggested": "",
            "max_score": "",
            "expected": "",
            "group": "",
            "score": "",
            "comment": "",
            "fingerprint": "",
        }
    ]
    report = (out / "report.html").read_text(encoding="utf-8")
    assert f"<li>{line} (in review.csv; no score was changed)</li>" in report
    # u002 still scores as graded against seed 4 (the slots where both keys agree), and every
    # score is what the run gives without the check
    grades = {r["student"]: r for r in _rows(out / "grades.csv")}
    assert float(grades["u002"]["score"]) == len(book.slot_ids()) - len(differ)
    import quizgym.grading.pieces as pieces

    monkeypatch.setattr(pieces, "seed_evidence", lambda *a, **k: SeedEvidence())
    plain = tmp_path / "plain"
    again = CliRunner().invoke(cli, ["grade", str(bank_path), str(data), "-o", str(plain)])
    assert again.exit_code == 0 and "flagged:" not in again.output
    for name in ("grades.csv", "responses.csv"):
        assert (plain / name).read_bytes() == (out / name).read_bytes()


def test_the_flag_is_the_same_in_pieces_and_a_review_file_keeps_working(
    tmp_path: Path, bank_path: Path, book: CompiledBank
) -> None:
    data = _class_with_a_typo(tmp_path, book)
    whole, pieces = tmp_path / "whole", tmp_path / "pieces"
    assert (
        CliRunner().invoke(cli, ["grade", str(bank_path), str(data), "-o", str(whole)]).exit_code
        == 0
    )
    chunked = CliRunner().invoke(
        cli, ["grade", str(bank_path), str(data), "-o", str(pieces), "--chunk-rows", "7"]
    )
    assert chunked.exit_code == 0, chunked.output
    assert (pieces / "review.csv").read_bytes() == (whole / "review.csv").read_bytes()
    # the review file graded again as it is: the student's row is no decision
    again = CliRunner().invoke(
        cli,
        ["grade", str(bank_path), str(data), "-o", str(tmp_path / "again"), "--review",
         str(whole / "review.csv")],
    )  # fmt: skip
    assert again.exit_code == 0, again.output
    # a score on it is refused, with its line
    rows = (whole / "review.csv").read_text(encoding="utf-8").splitlines()
    cells = next(csv.reader([rows[1]]))
    cells[12] = "1"
    edited = tmp_path / "edited.csv"
    edited.write_text("\n".join([rows[0], ",".join(f'"{c}"' for c in cells), *rows[2:]]) + "\n")
    refused = CliRunner().invoke(
        cli,
        ["grade", str(bank_path), str(data), "-o", str(tmp_path / "r"), "--review", str(edited)],
    )
    assert refused.exit_code != 0
    assert (
        f"{edited}:2: a version check takes no score: correct the student's seed cell (or the "
        "manifest) and grade again, or leave the row's score empty"
    ) in refused.output


def test_honest_weak_students_are_not_flagged_and_typos_are(
    tmp_path: Path, bank_path: Path, book: CompiledBank
) -> None:
    """Six simulated classes of 50, most of them weak (facility 0–60 %), whose wrong answers
    often are another version's key (a factor of 2 or 10 off, where the parameters differ by
    that factor): no honest student is flagged; of the students with a typo in their seed cell
    (a near miss of the class's seed) who answer 90 % right for the sheet they held, most are."""
    honest = flagged_honest = typos = caught = 0
    for k in range(6):
        rng = random.Random(100 + k)
        seed = 11 + 7 * k
        students: list[tuple[str, int, int, float]] = []
        slips: set[str] = set()
        for n in range(50):
            student = f"c{k}s{n:02d}"
            if n % 10 == 3:  # a typo: one of the seed's near misses
                students.append((student, rng.choice(near_misses(seed)), seed, 0.9))
                slips.add(student)
            else:
                students.append((student, seed, seed, rng.uniform(0.0, 0.6)))
        data = tmp_path / f"class{k}.csv"
        _write_class(data, book, students, rng)
        run = grade_submissions(book, [data], out_dir=tmp_path / f"g{k}")
        named = {line.split(":", 1)[0] for line in run.flags}
        honest += 50 - len(slips)
        flagged_honest += len(named - slips)
        typos += len(slips)
        caught += len(named & slips)
        assert run.students + len(run.rejected) == 50
    assert flagged_honest == 0
    assert caught >= 0.8 * typos, (caught, typos)


def test_a_seed_cell_that_contradicts_the_manifest_is_reported(
    tmp_path: Path, bank_path: Path, book: CompiledBank
) -> None:
    roster = tmp_path / "roster.csv"
    names = [f"u{k:03d}" for k in range(1, 13)]
    roster.write_text("student\n" + "\n".join(names) + "\n", encoding="utf-8")
    sheets = tmp_path / "sheets"
    made = CliRunner().invoke(
        cli,
        ["render", str(bank_path), "--roster", str(roster), "--seed", "3", "--format", "md",
         "-o", str(sheets)],
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    rng = random.Random(3)
    students = [(name, 3, 3, rng.uniform(0.3, 0.9)) for name in names]
    students[1] = ("u002", 4, 3, 1.0)  # the sheet issued, a wrong seed cell
    students[4] = ("u005", 8, 8, 1.0)  # answers of seed 8's sheet: the manifest says 3
    data = tmp_path / "class.csv"
    _write_class(data, book, students, rng)
    out = tmp_path / "graded"
    result = CliRunner().invoke(
        cli,
        ["grade", str(bank_path), str(data), "-o", str(out), "--issued",
         str(sheets / "issued.json")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    two = "u002: the seed cell says 4, the manifest issued seed 3 to this student"
    five = (
        "u005: the seed cell says 8, the manifest issued seed 3 to this student; fits seed 8 "
        "(the seed cell) on 6 slots, the issued versions on 0"
    )
    assert f"flagged: {two}\nflagged: {five}\n" in result.stderr
    flagged = [r for r in _rows(out / "review.csv") if r["question"] == "(student)"]
    advice = (
        "graded as issued, no score changed: check the seed cell and the manifest (grade with "
        "the right one)"
    )
    assert [(r["students"], r["reason"], r["read_as"]) for r in flagged] == [
        ("u002", f"{two}: {advice}", ""),
        ("u005", f"{five}: {advice}", "seed 8 (the seed cell)"),
    ]
    report = (out / "report.html").read_text(encoding="utf-8")
    assert f"<li>{two} (in review.csv; no score was changed)</li>" in report


def test_a_seed_cell_against_a_one_sheet_manifest(
    tmp_path: Path, bank_path: Path, book: CompiledBank
) -> None:
    sheets = tmp_path / "sheet"
    made = CliRunner().invoke(
        cli, ["render", str(bank_path), "--seed", "3", "--format", "md", "-o", str(sheets)]
    )
    assert made.exit_code == 0, made.output
    rng = random.Random(5)
    students = [(f"u{k:03d}", 3, 3, rng.uniform(0.3, 0.9)) for k in range(1, 11)]
    students[3] = ("u004", 5, 3, 0.9)  # the class's sheet, another seed in the cell
    data = tmp_path / "class.csv"
    _write_class(data, book, students, rng, one_sheet=True)
    out = tmp_path / "graded"
    result = CliRunner().invoke(
        cli,
        ["grade", str(bank_path), str(data), "-o", str(out), "--issued",
         str(sheets / "issued.json")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    # the seed cells that are the class seed say what the sheet was drawn with: no flag
    assert [line for line in result.stderr.splitlines() if line.startswith("flagged:")] == [
        "flagged: u004: the seed cell says 5, the manifest issued seed 3 (one sheet for everyone)"
    ]


@pytest.mark.parametrize(
    ("seed", "expected"),
    [
        (3, (2, 4, 33)),
        (12, (11, 13, 22, 21, 2, 112, 1, 122)),
        (0, (1, 9)),
    ],
)
def test_near_misses_are_one_slip_away(seed: int, expected: tuple[int, ...]) -> None:
    assert near_misses(seed) == expected


def test_common_seeds_are_those_of_two_rows_and_one_in_a_hundred() -> None:
    from collections import Counter

    assert common_seeds(Counter({3: 40, 4: 1, 7: 2, 9: 2})) == (3, 7, 9)
    # two students' same typo among 300 is no class seed; a section's seed is
    assert common_seeds(Counter({3: 200, 5: 96, 4: 2, 8: 2})) == (3, 5)


def test_the_binomial_tail_is_exact() -> None:
    assert poisson_binomial_tail([0.5, 0.5], 1) == pytest.approx(0.75)
    assert poisson_binomial_tail([0.1, 0.2, 0.3], 3) == pytest.approx(0.006)
    assert poisson_binomial_tail([0.1], 0) == 1.0
