"""Regrading: which students' scores changed since a previous run, and why.

After a key or tolerance change, ``quizgym grade … --compare PREVIOUS_DIR`` reads the previous
run's ``grades.csv`` and ``responses.csv`` and lists, for every student whose total changed, each
answer whose score changed: the old and new verdict and score, how the answer is read now and
the new feedback. Students graded only in one of the runs are listed too.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from quizgym.errors import SubmissionError
from quizgym.grading.batch import GradedPartition
from quizgym.grading.outputs import fmt, undefuse, write_rows

__all__ = ["Change", "compare_runs", "write_changes"]


@dataclass(frozen=True)
class Change:
    """A changed answer of a student whose total changed (or a student in one run only)."""

    student: str
    old_total: str
    new_total: str
    question: str
    old_verdict: str
    new_verdict: str
    old_score: str
    new_score: str
    reason: str

    def __str__(self) -> str:
        return f"{self.student}: {self.old_total} → {self.new_total}: {self.reason}"


def _read(path: Path) -> list[dict[str, str]]:
    try:
        with path.open(encoding="utf-8-sig", newline="") as stream:
            return [
                {key: undefuse(value) for key, value in row.items()}
                for row in csv.DictReader(stream)
            ]
    except OSError as exc:
        raise SubmissionError(path, f"cannot read the previous run: {exc.strerror}") from exc


def compare_runs(previous: Path, parts: Sequence[GradedPartition]) -> list[Change]:
    """Compare a previous output folder with this run.

    Raises:
        SubmissionError: the previous folder has no readable grades.csv / responses.csv.
    """
    old_totals = {row["student"]: row["score"] for row in _read(previous / "grades.csv")}
    new_rows: dict[str, tuple[GradedPartition, int]] = {}
    new_totals: dict[str, str] = {}
    for part in parts:
        totals = part.scores.sum(axis=1) if part.slots else [0.0] * len(part.answers)
        for row, student in enumerate(part.answers.students):
            new_rows[student] = (part, row)
            new_totals[student] = fmt(float(totals[row]))
    changed = {
        s for s in old_totals.keys() | new_totals.keys() if old_totals.get(s) != new_totals.get(s)
    }
    old_answers: dict[tuple[str, str], dict[str, str]] = {}
    if changed:
        for record in _read(previous / "responses.csv"):
            if record["student"] in changed:
                old_answers[record["student"], record["question"]] = record
    changes: list[Change] = []
    for student in sorted(changed):
        old_t, new_t = old_totals.get(student, ""), new_totals.get(student, "")
        if student not in new_rows:
            changes.append(Change(student, old_t, "", "", "", "", "", "", "not in this run"))
            continue
        if student not in old_totals:
            changes.append(
                Change(student, "", new_t, "", "", "", "", "", "not in the previous run")
            )
            continue
        part, row = new_rows[student]
        found = False
        for graded in part.slots:
            verdict = graded.verdict(row)
            old = old_answers.get((student, graded.slot.id))
            new_score = fmt(verdict.score)
            if old is not None and old["score"] == new_score:
                continue
            found = True
            old_v = old["verdict"] if old else "(none)"
            old_s = old["score"] if old else ""
            why = f"{graded.slot.id}: {old_v} ({old_s}) → {verdict.status.value} ({new_score})"
            if verdict.read_as:
                why += f"; read as {verdict.read_as}"
            if verdict.feedback:
                why += f"; {verdict.feedback}"
            elif verdict.status.value != "correct" and verdict.expected:
                why += f"; expected {verdict.expected}"
            changes.append(
                Change(
                    student,
                    old_t,
                    new_t,
                    graded.slot.id,
                    old_v,
                    verdict.status.value,
                    old_s,
                    new_score,
                    why,
                )
            )
        if not found:
            changes.append(
                Change(student, old_t, new_t, "", "", "", "", "", "points per question changed")
            )
    return changes


def write_changes(path: Path, changes: Sequence[Change]) -> None:
    """``changes.csv``: one row per changed answer."""

    header = (
        "student",
        "old_total",
        "new_total",
        "question",
        "old_verdict",
        "new_verdict",
        "old_score",
        "new_score",
        "reason",
    )
    rows = [[getattr(c, h) for h in header] for c in changes]
    write_rows(path, header, rows)
