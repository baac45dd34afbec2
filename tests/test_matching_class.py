"""A held-out class: a chemistry and statistics bank with matching questions, 200 students typing
the way students type (``A-2, B-1``, ``1C 2A``, ``c)``, answer texts misspelt, blanks), graded by
``quizgym grade`` and every verdict checked against a computation written here; and, on any
typed answers, the batch grader agreeing with the one-answer path.

Each question type brings a typist (:data:`TYPISTS`): how a student types an answer to one of its
questions, and what each slot's verdict must be, worked out here without the grader. A new type
(cloze) adds its questions to the bank and its typist to the table.
"""

from __future__ import annotations

import csv
import random
import tempfile
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from quizgym.answers import UNSPLIT, grade_response
from quizgym.cli import cli
from quizgym.grading.run import grade_submissions
from quizgym.loader import load_bank
from quizgym.model import AnyQuestion, Matching
from quizgym.solver import CompiledBank, compile_bank
from quizgym.types import pairing_of

BANK = """
bank: held-out-matching
title: Chemistry and statistics
defaults: {points: 1}
questions:
  - id: symbols
    type: matching
    prompt: Pair each element with its chemical symbol.
    shuffle: true
    pairs:
      - {id: na, item: Sodium, answer: Na}
      - {id: k, item: Potassium, answer: K, points: 2}
      - {id: fe, item: Iron, answer: Fe}
      - {id: ag, item: Silver, answer: Ag, tag: latin-names}
    distractors: [Ir, So, Si]
  - id: tests
    type: matching
    prompt: Pair each statistical test with what it is used for.
    shuffle: true
    pairs:
      - {id: t, item: t test, answer: "comparing two means"}
      - {id: chi, item: chi-squared test, answer: "counts in categories, observed against expected"}
      - {id: anova, item: ANOVA, answer: comparing three or more means}
      - {id: pearson, item: Pearson's r, answer: a linear association}
    distractors: [the spread of one sample]
"""

SEED = 11
LETTERS = "ABCDEFGHIJ"


def fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@dataclass(frozen=True)
class Typed:
    """One student's answer to one question: the cells written and each slot's verdict."""

    cells: dict[str, str]
    """Column → text (a slot's column, or the question's own for a whole answer)."""
    expected: dict[str, str]
    """Slot → verdict (``correct``, ``incorrect``, ``blank``, ``invalid``)."""


def _misspelt(rng: random.Random, text: str, answers: list[str]) -> str:
    """A text with one slip that makes it no answer's text (nor a letter or a number)."""
    for _ in range(20):
        k = rng.randrange(len(text))
        slip = rng.choice(
            [text[:k] + text[k + 1 :], text[:k] + "x" + text[k:], text + rng.choice("sxe")]
        )
        if len(slip) > 1 and fold(slip) not in {fold(a) for a in answers}:
            return slip
    return text + "zz"


def _one_item(
    rng: random.Random, answers: list[str], order: list[int], pick: int
) -> tuple[str, int | None | str]:
    """How one item's answer is typed, and what it names: an answer (bank index), None (no
    answer) or ``"bad"`` (nothing it can be read as)."""
    shown = order.index(pick)
    style = rng.choice(["letter", "lower", "paren", "number", "text", "cased", "misspelt", "blank"])
    if style == "letter":
        return LETTERS[shown], pick
    if style == "lower":
        return f" {LETTERS[shown].lower()}.", pick
    if style == "paren":
        return f"({LETTERS[shown]})", pick
    if style == "number":
        return str(shown + 1), pick
    if style == "text":
        return answers[pick], pick
    if style == "cased":
        return f"  {answers[pick].upper()} ", pick
    if style == "misspelt":
        return _misspelt(rng, answers[pick], answers), "bad"
    return rng.choice(["", "  ", "idk", "?"]), None


def _verdict(question: Matching, item: int, named: int | None | str) -> str:
    if named is None:
        return "blank"
    if named == "bad":
        return "invalid"
    return "correct" if question.answers[int(named)] == question.pairs[item].answer else "incorrect"


def type_matching(
    rng: random.Random, question: AnyQuestion, order: list[int], skill: float
) -> Typed:
    """A matching question answered item by item, or whole in one cell (``1C 2A``, ``A-2, B-1``,
    ``1) C; 2) A``, ``Sodium: Na; …``), items left out, or whole and unreadable."""
    assert isinstance(question, Matching)
    answers = question.answers
    slots = [f"{question.id}.{p.id}" for p in question.pairs]
    picks = [
        answers.index(p.answer) if rng.random() < skill else rng.randrange(len(answers))
        for p in question.pairs
    ]
    if rng.random() < 0.5:  # a column per item
        cells, expected = {}, {}
        for k, (slot, pick) in enumerate(zip(slots, picks, strict=True)):
            text, named = _one_item(rng, answers, order, pick)
            cells[slot] = text
            expected[slot] = _verdict(question, k, named)
        return Typed(cells, expected)
    given = [k for k in range(len(slots)) if rng.random() < 0.85]  # items left out: blank
    letters = {k: LETTERS[order.index(picks[k])] for k in given}
    style = rng.choice(["compact", "dashed", "letter-first", "paren", "texts", "broken"])
    if style == "compact":
        text = " ".join(f"{k + 1}{letters[k]}" for k in given)
    elif style == "dashed":
        text = ", ".join(f"{k + 1}-{letters[k]}" for k in given)
    elif style == "letter-first":
        text = ", ".join(f"{letters[k]}-{k + 1}" for k in given)
    elif style == "paren":
        text = "; ".join(f"{k + 1}) {letters[k].lower()}" for k in given)
    elif style == "texts":
        text = "; ".join(f"{question.pairs[k].item}: {answers[picks[k]]}" for k in given)
    else:  # an item named twice: which answer is meant cannot be told
        text = f"1{LETTERS[0]} 1{LETTERS[1]}"
        return Typed({question.id: text}, dict.fromkeys(slots, "invalid"))
    if not given:
        return Typed({question.id: ""}, dict.fromkeys(slots, "blank"))
    expected = {
        slot: _verdict(question, k, picks[k] if k in given else None)
        for k, slot in enumerate(slots)
    }
    return Typed({question.id: text}, expected)


TYPISTS: dict[str, Callable[[random.Random, AnyQuestion, list[int], float], Typed]] = {
    "matching": type_matching,
}
"""A question type's name → how a student types an answer to one of its questions."""


def write_bank(folder: Path) -> Path:
    path = folder / "held-out.yaml"
    path.write_text(BANK, encoding="utf-8")
    return path


def _order(book: CompiledBank, question: AnyQuestion, student: str) -> list[int]:
    """The order the student's sheet shows the question's answers in (the draw's, given)."""
    variant = book.variant(question, student=student, seed=SEED)
    pairing = pairing_of(question)
    size = len(pairing.answers) if pairing is not None else 0
    return list(variant.order or range(size))


def make_class(book: CompiledBank, size: int = 200) -> tuple[list[dict[str, str]], dict]:
    rng = random.Random(2028)
    rows: list[dict[str, str]] = []
    expected: dict[tuple[str, str], str] = {}
    for n in range(size):
        student = f"u{n:03d}"
        skill = rng.random()
        row = {"student": student}
        for question in book.bank.questions:
            typed = TYPISTS[question.type](rng, question, _order(book, question, student), skill)
            row.update(typed.cells)
            expected.update({(student, slot): v for slot, v in typed.expected.items()})
        rows.append(row)
    return rows, expected


def write_csv(rows: list[dict[str, str]], path: Path, book: CompiledBank) -> Path:
    columns = ["student"]
    for question in book.bank.questions:
        columns += [question.id] if question.id in {c for r in rows for c in r} else []
        columns += [slot.id for slot in book.slots_of(question)]
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_a_class_of_200_is_graded_as_worked_out_here(tmp_path: Path) -> None:
    bank = write_bank(tmp_path)
    book = compile_bank(load_bank(bank))
    rows, expected = make_class(book)
    answers = write_csv(rows, tmp_path / "class.csv", book)
    out = tmp_path / "graded"
    run = CliRunner().invoke(
        cli, ["grade", str(bank), str(answers), "--seed", str(SEED), "-o", str(out)]
    )
    assert run.exit_code == 0, run.output
    with (out / "responses.csv").open(encoding="utf-8") as stream:
        graded = list(csv.DictReader(stream))
    assert len(graded) == len(expected) == 200 * 8
    points = {slot.id: slot.points for q in book.bank.questions for slot in book.slots_of(q)}
    totals: dict[str, float] = {}
    for row in graded:
        key = (row["student"], row["question"])
        assert row["verdict"] == expected[key], (row, [r for r in rows if r["student"] == key[0]])
        score = points[row["question"]] if expected[key] == "correct" else 0.0
        assert float(row["score"]) == score, row
        totals[row["student"]] = totals.get(row["student"], 0.0) + score
    assert set(expected.values()) == {"correct", "incorrect", "blank", "invalid"}
    assert 150 < sum(q in row for row in rows for q in ("symbols", "tests")) < 250  # whole cells
    with (out / "grades.csv").open(encoding="utf-8") as stream:
        grades = {r["student"]: float(r["score"]) for r in csv.DictReader(stream)}
    assert grades == totals
    with (out / "items.csv").open(encoding="utf-8") as stream:
        items = {r["question"] for r in csv.DictReader(stream)}
    assert set(points) <= items  # item analysis per slot


_TYPED = st.one_of(
    st.sampled_from(["A", "b", " c.", "(D)", "2", "7", "Na", "K", "fe", "Ag", "Ir", "so", "Kx"]),
    st.sampled_from(["", "idk", "?", "n/a", "comparing two means", "A linear association"]),
    st.text(alphabet="ABab12 ,;:-()>", max_size=8),
)
_WHOLE = st.one_of(
    st.lists(
        st.tuples(st.integers(1, 5), st.sampled_from("ABCDEFGH"), st.sampled_from(["", "-", ")"])),
        max_size=4,
    ).map(lambda pairs: " ".join(f"{k}{sep}{letter}" for k, letter, sep in pairs)),
    st.lists(st.tuples(st.sampled_from(["A", "b", "C"]), st.integers(1, 4)), max_size=4).map(
        lambda pairs: ", ".join(f"{letter}-{k}" for letter, k in pairs)
    ),
    st.sampled_from(["Sodium: Na; Iron: Fe", "silver -> Ag, potassium: K", "t test: nothing"]),
    st.text(alphabet="ABC123 -;:", max_size=10),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(cells=[("whole", "", "A"), ("whole", "", "Na")])  # a whole text that names no item
@given(
    cells=st.lists(
        st.tuples(st.sampled_from(["item", "whole"]), _TYPED, _WHOLE), min_size=1, max_size=6
    )
)
def test_the_batch_grader_and_the_one_answer_path_agree_on_any_typed_answer(
    cells: list[tuple[str, str, str]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        bank = write_bank(Path(folder))
        book = compile_bank(load_bank(bank))
        question = book.bank.question("symbols")
        pairing = pairing_of(question)
        assert pairing is not None
        rows = []
        for n, (how, item_text, whole_text) in enumerate(cells):
            row = {"student": f"p{n}"}
            if how == "item":
                row.update({f"symbols.{p.id}": item_text for p in pairing.items})
            else:
                row["symbols"] = whole_text
            rows.append(row)
        path = write_csv(rows, Path(folder) / "class.csv", book)
        grade_submissions(book, [path], out_dir=Path(folder) / "g", seed=SEED)
        with (Path(folder) / "g" / "responses.csv").open(encoding="utf-8") as stream:
            batch = {
                (r["student"], r["question"]): (r["verdict"], float(r["score"]), r["read_as"])
                for r in csv.DictReader(stream)
                if r["question"].startswith("symbols.")
            }
        for n, row in enumerate(rows):
            student = f"p{n}"
            if "symbols" in row:  # one answer for the whole question, split as the reader does
                found = pairing.split(row["symbols"]) if row["symbols"].strip() else {}
                typed = {  # a text that cannot be split is unreadable on every item
                    p.id: (UNSPLIT + row["symbols"] if found is None else found.get(p.id))
                    for p in pairing.items
                }
            else:
                typed = {p.id: row[f"symbols.{p.id}"] for p in pairing.items}
            for item, text in typed.items():
                single = grade_response(
                    book, question, text or None, part=item, student=student, seed=SEED
                )
                got = (single.status.value, single.score, single.read_as)
                assert batch[(student, f"symbols.{item}")] == got, (row, item)
