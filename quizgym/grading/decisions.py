"""A teacher's decisions from an edited ``review.csv``: read, checked whole, applied to verdicts.

Each row of ``review.csv`` (:mod:`quizgym.grading.review`) carries a fingerprint
``q<question>-a<answer>``: a hash of the question's content, and a hash of the slot, version and
answer text the row is about. The fingerprint, not the ``answer`` cell, says which answer a
decision is on, so a spreadsheet that reformats an answer on saving (``1:6`` read as a time,
``2,400`` as a number) changes nothing. A decision scores every response to its slot and version
with exactly that text.

A review file is applied whole or not at all. Refused, each with its line, before anything is
graded: a question the bank no longer has, a question edited since the review was written
(unless ``--accept-changes``), a score that is not a number or lies outside 0 … the slot's
points, a comment without a score, one answer decided twice; after grading and before anything is
written: a decision on an answer nobody gave in this run (:meth:`Decisions.check_used`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from quizgym.answers import Status, Verdict
from quizgym.errors import QuizgymError
from quizgym.grading.cells import fmt, undefuse
from quizgym.issued import question_hash
from quizgym.model import LETTERS, AnyQuestion
from quizgym.solver import CompiledBank
from quizgym.types import ChoiceInteraction, choices_of

__all__ = [
    "Decision",
    "Decisions",
    "ReviewError",
    "answer_fingerprint",
    "apply",
    "fingerprint",
    "question_fingerprint",
    "read_decisions",
    "variant_label",
]

COLUMNS = ("question", "version", "answer", "score", "comment", "fingerprint")
"""The columns a review file must keep for its decisions to be read."""
_PRINT = re.compile(r"q([0-9a-f]{10})-a([0-9a-f]{12})")
TEACHER_NOTE = "Scored by your teacher."
STUDENT_ROW = "(student)"
"""The ``question`` of a row about a whole student (:mod:`~quizgym.grading.wrong_seed`): it
takes no score."""
"""Feedback of a decision without a comment."""


class ReviewError(QuizgymError):
    """A review file cannot be applied; names every bad line at once."""


def variant_label(
    question: AnyQuestion,
    label: str,
    text: str,
    *,
    varies: bool,
    earlier: Sequence[tuple[str, str | None]] = (),
) -> str:
    """The variant a decision on ``text`` depends on, as ``review.csv``'s ``version`` column names
    it ('' for all).

    An answer's meaning depends on the student's variant when their numbers differ, or when it
    names a choice by its position (``B``, ``2``, ``AC``) in a shuffled order; ``ture`` or a
    misspelt choice's text mean the same in every variant, so one decision covers them all.
    A part whose key names earlier parts (error carried forward) is judged against the
    student's own answers to them: those are part of the version (``earlier``, (part, answer)
    in the slot's order), so one decision covers only the students who answered them alike.
    """
    own = ", ".join(f"{name}: {'(blank)' if t is None else t}" for name, t in earlier)
    options = choices_of(question)
    by_text = options is not None and options.lettered and not _positional(options, text)
    base = label if varies and not by_text else ""
    if not own:
        return base
    return f"{base}; with {own}" if base else f"with {own}"


def _positional(options: ChoiceInteraction, text: str) -> bool:
    letters = LETTERS[: len(options.choices)].casefold()
    folded = text.casefold()
    tokens = [t for t in re.split(r"[\s,;/&+().]+", folded) if t]
    if any((len(t) == 1 and t.isalpha()) or t.isdigit() for t in tokens):
        return True
    return bool(tokens) and all(c in letters for c in "".join(tokens))


def question_fingerprint(question: AnyQuestion, book: CompiledBank | None = None) -> str:
    """The question half of a fingerprint: changes whenever the question's content does
    (``book``: the compiled bank the question is from, which keeps its hash, as an issue
    manifest does: the hash dumps the question through pydantic, whose serializer is built on
    first use, 15 ms)."""
    if book is None:
        return question_hash(question)[:10]
    return book.memo("question_hash", question.id, lambda: question_hash(question))[:10]


def answer_fingerprint(slot: str, version: str, answer: str) -> str:
    """The answer half of a fingerprint: the slot, the version ('' when the question does not
    vary) and the exact answer text."""
    text = "\x1f".join((slot, version, answer))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def fingerprint(question: AnyQuestion, slot: str, version: str, answer: str) -> str:
    """``q…-a…``: what a decision was made on. Starts with a letter, so spreadsheets keep it as
    text."""
    return f"q{question_fingerprint(question)}-a{answer_fingerprint(slot, version, answer)}"


@dataclass(frozen=True, kw_only=True)
class Decision:
    """A teacher's score (and comment) for one answer to one slot and version."""

    score: float
    comment: str
    line: int
    slot: str
    answer: str
    """The answer as the file shows it (for messages; the fingerprint decides)."""


@dataclass(frozen=True)
class Decisions:
    """The decisions of one review file, by slot and then by :func:`answer_fingerprint`."""

    source: str
    by_slot: Mapping[str, Mapping[str, Decision]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    """What applying them assumed (decisions kept across a bank edit)."""

    def __len__(self) -> int:
        return sum(len(d) for d in self.by_slot.values())

    def of(self, slot: str) -> Mapping[str, Decision]:
        """The decisions on one slot, by answer print."""
        return self.by_slot.get(slot, {})

    def check_used(self, used: Iterable[tuple[str, str]]) -> None:
        """Refuse decisions on answers nobody gave in this run (the submissions changed since).

        Args:
            used: (slot, answer print) of every decision that scored some response.

        Raises:
            ReviewError: every unused decision, with its line.
        """
        done = set(used)
        stale = sorted(
            (
                d
                for slot, decided in self.by_slot.items()
                for p, d in decided.items()
                if (slot, p) not in done
            ),
            key=lambda d: d.line,
        )
        if stale:
            raise ReviewError(
                "\n".join(
                    f"{self.source}:{d.line}: stale: nobody answered {d.slot} with "
                    f"{d.answer!r} in this run (the submissions changed since the review was "
                    "written): delete the row's score, or grade the submissions it was made on"
                    for d in stale
                )
            )


def read_decisions(path: Path, bank: CompiledBank, *, accept_changes: bool = False) -> Decisions:
    """The decisions of an edited ``review.csv`` (rows with a score); refuse it whole if any row
    is bad.

    The file may have been saved by a spreadsheet: UTF-8 (with or without a BOM) or Windows-1252,
    separated by commas, semicolons or tabs, scores written ``1.5`` or ``1,5``.

    Args:
        path: the review file.
        bank: the bank being graded.
        accept_changes: keep decisions on questions edited since the review was written (noted
            in the report) instead of refusing them.

    Raises:
        ReviewError: the file cannot be read, or rows are stale or bad (every one listed).
    """
    rows = _read_rows(path)
    header = [h.strip().casefold() for h in rows[0]]
    missing = [h for h in COLUMNS if h not in header]
    if missing:
        raise ReviewError(
            f"{path}:1: not a review file: no {', '.join(missing)} column "
            "(give the review.csv a grade run wrote, with its columns kept)"
        )
    at = {h: header.index(h) for h in COLUMNS}
    by_slot: dict[str, dict[str, Decision]] = {}
    problems: list[str] = []
    edited: set[str] = set()
    prints: dict[str, str] = {}
    for line, raw in enumerate(rows[1:], start=2):
        cells = [undefuse(c) for c in raw] + [""] * (len(header) - len(raw))
        score_text, comment = cells[at["score"]].strip(), cells[at["comment"]].strip()
        if not score_text and not comment:
            continue  # not decided
        slot_id = cells[at["question"]].strip()
        where = f"{path}:{line}"
        if slot_id == STUDENT_ROW:
            if score_text:
                problems.append(
                    f"{where}: a version check takes no score: correct the student's seed cell "
                    "(or the manifest) and grade again, or leave the row's score empty"
                )
            continue
        try:
            slot = bank.slot(slot_id)
        except KeyError:
            problems.append(f"{where}: {slot_id!r} is no question of this bank")
            continue
        found = _PRINT.fullmatch(cells[at["fingerprint"]].strip())
        if found is None:
            problems.append(
                f"{where}: the fingerprint {cells[at['fingerprint']].strip()!r} is not one "
                "quizgym wrote: keep the column as it was"
            )
            continue
        if slot.question.id not in prints:
            prints[slot.question.id] = question_fingerprint(slot.question, bank)
        if found[1] != prints[slot.question.id]:
            if not accept_changes:
                problems.append(
                    f"{where}: stale: {slot.question.id} was edited in the bank since this "
                    "review was written; grade with --accept-changes to keep the decisions on it"
                )
                continue
            edited.add(slot.question.id)
        if not score_text:
            problems.append(f"{where}: a comment without a score: give the score too")
            continue
        score = _number(score_text)
        if score is None:
            problems.append(f"{where}: the score {score_text!r} is not a number")
            continue
        if not 0 <= score <= slot.points:
            problems.append(f"{where}: the score {score_text} is outside 0 … {fmt(slot.points)}")
            continue
        decided = by_slot.setdefault(slot.id, {})
        if (first := decided.get(found[2])) is not None:
            problems.append(f"{where}: the same answer decided twice (first on line {first.line})")
            continue
        decided[found[2]] = Decision(
            score=score,
            comment=comment,
            line=line,
            slot=slot.id,
            answer=cells[at["answer"]],
        )
    if problems:
        raise ReviewError("\n".join(problems))
    notes: tuple[str, ...] = ()
    if edited:
        notes = (
            "decisions from the review kept on questions edited since it was written: "
            + ", ".join(sorted(edited)),
        )
    return Decisions(str(path), by_slot, notes)


def _read_rows(path: Path) -> list[list[str]]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ReviewError(f"{path}: cannot read: {exc.strerror}") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    first = text.split("\n", 1)[0]
    if not first.strip():
        raise ReviewError(f"{path}:1: empty: expected the review.csv a grade run wrote")
    delimiter = max((",", ";", "\t"), key=first.count)
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    return [rows[0], *(r for r in rows[1:] if any(c.strip() for c in r))]


def _number(text: str) -> float | None:
    """A score as a person or a spreadsheet writes it (``1.5``, ``1,5``)."""
    if "," in text and "." not in text:
        text = text.replace(",", ".")
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def apply(verdict: Verdict, decision: Decision) -> Verdict:
    """A machine's verdict with a teacher's decision applied (the machine's kept in ``machine``)."""
    points = verdict.max_score
    if decision.score >= points:
        status = Status.CORRECT
    elif decision.score > 0:
        status = Status.PARTIAL
    else:
        status = Status.INCORRECT
    return Verdict(
        question=verdict.question,
        status=status,
        score=decision.score,
        max_score=points,
        read_as=verdict.read_as,
        feedback=decision.comment or TEACHER_NOTE,
        tag=verdict.tag,
        expected=verdict.expected,
        needs_review=False,
        value=verdict.value,
        machine=verdict,
    )
