"""A held-out cloze bank (chemistry) and a class of 200 students typed the way students type
(``18 g/mol``, ``15 %``, misspellings, blanks left empty, ``idk``), graded from a wide and a long
CSV: every verdict is held to an independent computation written here, and the batch path to
the single-answer path on every response (and on answers drawn by a property test)."""

from __future__ import annotations

import csv
import math
import random
import re
import unicodedata
from pathlib import Path

import pytest
from grading_helpers import single_verdict
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quizgym.answers import grade_response
from quizgym.grading.batch import grade_partition
from quizgym.grading.run import grade_submissions
from quizgym.grading.table import ClassAnswers
from quizgym.loader import load_bank, parse_bank
from quizgym.solver import compile_bank

BANK = """
bank: acids
title: Acids and moles
questions:
  - id: molar
    type: cloze
    prompt: "The molar mass of water is {{water}} and the pH of 0.01 M HCl is {{ph}}."
    blanks:
      water: {answer: 2*1.008 + 15.999, units: g/mol, tolerance: {abs: 0.1}, points: 2}
      ph: {answer: -log10(0.01), tolerance: {abs: 0.05}}
  - id: acid
    type: cloze
    prompt: >-
      HCl is a {{strength}} acid; in water it gives {{ion}} ions, and a solution of pH 3 holds
      {{share}} of the hydrogen ions of one at pH 1.
    blanks:
      strength: {choices: [weak, strong, neutral], answer: strong}
      ion: {accept: [hydronium, H3O+, oxonium]}
      share: {answer: 10^(-3) / 10^(-1) * 100, units: "%", tolerance: {rel: 0.01}}
"""

# The keys as a chemist computes them, independently of the solver.
WATER, PH, SHARE = 2 * 1.008 + 15.999, 2.0, 1.0
NON_ANSWERS = {"", "idk", "?", "-", "n/a", "dont know", "no idea"}


def _number(text: str, unit: str | None, scale: dict[str, float]) -> float | str | None:
    """A typed number in the blank's unit: a float, 'blank', 'invalid', or None when its unit
    cannot be the blank's (read, but wrong)."""
    if text.strip().casefold() in NON_ANSWERS:
        return "blank"
    found = re.fullmatch(r"([-+]?\d+(?:\.\d+)?)\s*(\S*)", text.strip())
    if found is None:
        return "invalid"
    value, rest = float(found[1]), found[2]
    if not rest:
        return value
    if rest not in scale:
        return None
    return value * scale[rest]


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


def expected(slot: str, text: str) -> tuple[str, float]:
    """(verdict, score) of one answer, computed from the chemistry, not by quizgym."""
    if slot == "molar.water":
        read = _number(text, "g/mol", {"g/mol": 1.0, "kg/mol": 1000.0})
        key, tol, points = WATER, 0.1, 2.0
    elif slot == "molar.ph":
        read = _number(text, None, {})
        key, tol, points = PH, 0.05, 1.0
    elif slot == "acid.share":
        read = _number(text, "%", {"%": 1.0})
        key, tol, points = SHARE, 0.01 * SHARE, 1.0
    elif slot == "acid.strength":
        folded = _fold(text)
        options = ["weak", "strong", "neutral"]
        if folded in NON_ANSWERS:
            return "blank", 0.0
        if folded in options:
            pick = options.index(folded)
        elif folded.rstrip(".") in ("a", "b", "c"):
            pick = "abc".index(folded.rstrip("."))
        elif folded in ("1", "2", "3"):
            pick = int(folded) - 1
        else:
            return "invalid", 0.0
        return ("correct", 1.0) if pick == 1 else ("incorrect", 0.0)
    else:
        assert slot == "acid.ion"
        folded = _fold(text)
        if folded in NON_ANSWERS:
            return "blank", 0.0
        right = folded in {"hydronium", "h3o+", "oxonium"}
        return ("correct", 1.0) if right else ("incorrect", 0.0)
    if read in ("blank", "invalid"):
        return str(read), 0.0
    if read is None:
        return "incorrect", 0.0
    assert isinstance(read, float)
    right = math.isfinite(read) and abs(read - key) <= tol + 1e-12
    return ("correct", points) if right else ("incorrect", 0.0)


def _typed(rng: random.Random, slot: str) -> str:
    """How a student types one blank: right or wrong, with or without units, misspelt, or not
    at all."""
    pools = {
        "molar.water": ["18", "18.0", "18 g/mol", "18.02 g/mol", "0.018 kg/mol", "16", "18g/mol",
                        "17.5", "20 g/mol", "18.015"],
        "molar.ph": ["2", "2.0", "2.03", "1.9", "1", "-2", "12", "two"],
        "acid.share": ["1", "1 %", "1%", "1.0 %", "10 %", "0.01", "100", "0.99%", "one"],
        "acid.strength": ["strong", "Strong", "B", "b.", "2", "weak", "A", "neutral", "D",
                          "stong", "strongest"],
        "acid.ion": ["hydronium", "Hydronium", "H3O+", "h3o+", " oxonium ", "hydronim",
                     "hydroxide", "H+", "hydrogen"],
    }  # fmt: skip
    style = rng.random()
    if style < 0.08:
        return rng.choice(["", "idk", "?", "n/a", "dont know"])
    return rng.choice(pools[slot])


SLOTS = ["molar.water", "molar.ph", "acid.strength", "acid.ion", "acid.share"]


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> object:
    path = tmp_path_factory.mktemp("acids") / "acids.yaml"
    path.write_text(BANK, encoding="utf-8")
    return compile_bank(load_bank(path))


def _class(seed: int) -> list[dict[str, str]]:
    rng = random.Random(seed)
    return [
        {"student": f"s{n:03d}", **{slot: _typed(rng, slot) for slot in SLOTS}} for n in range(200)
    ]


def test_a_class_from_a_wide_csv_gets_the_chemists_verdicts(book: object, tmp_path: Path) -> None:
    rows = _class(28)
    path = tmp_path / "wide.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["student", *SLOTS])
        writer.writeheader()
        writer.writerows(rows)
    out = tmp_path / "out"
    grade_submissions(book, [path], out_dir=out)  # type: ignore[arg-type]
    with (out / "responses.csv").open(encoding="utf-8") as handle:
        graded = list(csv.DictReader(handle))
    assert len(graded) == 200 * len(SLOTS)
    typed = {(r["student"], slot): r[slot] for r in rows for slot in SLOTS}
    seen = set()
    for r in graded:
        text = typed[(r["student"], r["question"])]
        assert r["answer"] == text.strip() or r["answer"] == text, r
        assert (r["verdict"], float(r["score"])) == expected(r["question"], text), r
        qid, part = r["question"].split(".")
        single = grade_response(book, book.bank.question(qid), text, part=part)  # type: ignore[attr-defined]
        assert (single.status.value, single.score) == (r["verdict"], float(r["score"])), r
        seen.add(r["verdict"])
    assert seen == {"correct", "incorrect", "blank", "invalid"}
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        totals = {g["student"]: float(g["score"]) for g in csv.DictReader(handle)}
    for row in rows:
        assert totals[row["student"]] == pytest.approx(
            sum(expected(slot, row[slot])[1] for slot in SLOTS)
        )
    with (out / "items.csv").open(encoding="utf-8") as handle:
        items = {r["question"]: r for r in csv.DictReader(handle)}
    assert set(items) >= set(SLOTS)  # item analysis per blank
    assert items["acid.strength"]["random_guess"] == "33.33"
    assert items["molar.water"]["max_score"] == "2"
    with (out / "review.csv").open(encoding="utf-8") as handle:
        review = {(r["question"], r["answer"]): r["reason"] for r in csv.DictReader(handle)}
    assert review[("acid.ion", "hydronim")] == (
        "read, but worth a look: close to the accepted spelling 'hydronium'"
    )
    assert review[("acid.strength", "D")].startswith("could not be read")
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "<strong>(2) ion</strong> hydronium / H3O+ / oxonium" in report


def test_a_long_csv_gives_one_row_per_blank_and_the_same_verdicts(
    book: object, tmp_path: Path
) -> None:
    rows = _class(7)
    path = tmp_path / "long.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "question", "answer"])
        for row in rows:
            for slot in SLOTS:
                writer.writerow([row["student"], slot, row[slot]])
    out = tmp_path / "out"
    grade_submissions(book, [path], out_dir=out)  # type: ignore[arg-type]
    with (out / "responses.csv").open(encoding="utf-8") as handle:
        graded = {(r["student"], r["question"]): r for r in csv.DictReader(handle)}
    for row in rows:
        for slot in SLOTS:
            r = graded[(row["student"], slot)]
            assert (r["verdict"], float(r["score"])) == expected(slot, row[slot]), r


POOL = [
    "18", "18 g/mol", "0.018 kg/mol", "18 kg", "2", "2.0", "1 %", "1", "0.01", "10 %", "strong",
    "B", "b", "2", "weak", "hydronium", "H3O+", "hydronim", "", "idk", "n/a", "x", "1e400",
    "nan", "=2", "Strong ", "A and B", "3 %", "1.01%", "-", "18,0",
]  # fmt: skip


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(POOL), min_size=5 * 6, max_size=5 * 6), st.booleans())
def test_the_batch_gives_every_answer_the_single_answer_path_s_verdict(
    cells: list[str], seeded: bool
) -> None:
    bank = compile_bank(parse_bank(BANK, path="acids.yaml"))
    answers = ClassAnswers(bank.slot_ids())
    n = 6
    for k in range(n):
        answers.add_student(f"s{k}", k if seeded else None, ("test", k))
    for j, slot in enumerate(bank.slot_ids()):
        answers.mark_present(slot)[:] = cells[j * n : (j + 1) * n]
    graded = grade_partition(bank, answers)
    for g in graded.slots:
        for row in range(n):
            assert g.verdict(row) == single_verdict(bank, answers, g.slot, row)
