"""The teacher's view of a class: the store's quiz answers and review decisions in; the run of
``quizgym grade`` over them (scores, the report's item analysis, ``review.csv`` and the
gradebooks) out, and a decision checked and kept.

The run is the grading code's own (:func:`~quizgym.grading.run.grade_submissions`) over the
export ``quizgym serve export`` writes and the folder's ``issued.json``; the decisions are
written as the ``review.csv`` that run wrote, with ``score`` and ``comment`` filled in, which is
the file ``quizgym grade --review`` reads. So the page's scores are the ones
``quizgym grade BANK attempts.jsonl --issued issued.json --review decisions.csv`` gives.
"""

from __future__ import annotations

import csv
import io
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from quizgym.errors import QuizgymError
from quizgym.grading.review import HEADER

if TYPE_CHECKING:
    from quizgym.serve.engine import Classroom

__all__ = ["GRADEBOOKS", "Changed", "ClassRun", "DecisionError", "ScoreSink", "Teacher"]

GRADEBOOKS = ("grades.csv", "gradebook-canvas.csv", "gradebook-moodle.csv")
"""The gradebook files the teacher page offers, as ``quizgym grade`` writes them."""
_AT = {name: k for k, name in enumerate(HEADER)}


class DecisionError(QuizgymError):
    """A review decision that cannot be kept (the message says why, as ``grade --review``)."""


@dataclass(frozen=True)
class Changed:
    """A student's quiz score that a decision changed, and what became of it for the LMS."""

    student: str
    old: float
    new: float
    top: float
    key: str | None = None
    """The LMS score queue's row that carries it (None: nothing queued)."""
    why: str = ""
    """Why nothing was queued, when an LMS is registered ("" without one)."""


class ScoreSink(Protocol):
    """Where changed scores go (the LTI score queue, when the LMS is mounted)."""

    def send(self, scores: Mapping[str, float]) -> dict[str, tuple[str | None, str]]:
        """Queue the changed scores; per student, (the row's key, or None and why not)."""
        ...

    def posted(self, keys: Sequence[str]) -> set[str]:
        """Which of the queued rows the LMS has taken."""
        ...


@dataclass(frozen=True, kw_only=True)
class ClassRun:
    """What ``quizgym grade`` gives the quiz's answers as the store holds them now."""

    scores: Mapping[str, tuple[float, float]]
    """Per student graded: (score, max score), the teacher's decisions applied."""
    analysis: str
    """The report's analysis (HTML), as ``report.html`` shows it."""
    review: Sequence[Sequence[str]]
    """``review.csv``'s rows (without its header), the decisions filled in."""
    decisions_csv: str
    """``review.csv`` with the teacher's decisions: the file ``grade --review`` reads."""
    decided: int
    """Rows of ``review`` with a decision."""
    files: dict[str, bytes] = field(default_factory=dict)
    """The gradebooks of :data:`GRADEBOOKS` made so far."""
    summary: str = ""


def _csv(rows: Sequence[Sequence[str]]) -> str:
    """Rows as ``review.csv`` writes them (every cell quoted, ``\\n`` line ends)."""
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return out.getvalue()


class Teacher:
    """A classroom's grading runs, made again only when its answers or decisions change."""

    def __init__(self, room: Classroom, folder: Path) -> None:
        self.room = room
        self.folder = folder
        self._lock = threading.Lock()
        self._state: tuple[object, ...] | None = None
        self._run: ClassRun | None = None
        self.sink: ScoreSink | None = None
        """The LMS's score queue (set when LTI is mounted)."""
        self.changes: list[Changed] = []
        """What the last decision saved changed (shown on the review page)."""

    # --- the store ----------------------------------------------------------------------------

    def _read_state(self) -> tuple[tuple[object, ...], dict[str, tuple[str, str]]]:
        """What the run depends on (the last quiz answer, the decisions), and the decisions."""
        with self.room.db.transaction("read the quiz's answers", write=False) as tx:
            (last, count) = tx.rows(
                "SELECT COALESCE(MAX(id), 0), COUNT(*) FROM attempt WHERE mode = 'quiz'"
            )[0]
            decided = tx.rows("SELECT fingerprint, score, comment FROM decision ORDER BY 1")
        decisions = {str(f): (str(s), str(c)) for f, s, c in decided}
        return (int(last), int(count), tuple(decided)), decisions

    def decide(self, fingerprint: str, score: str, comment: str) -> list[Changed]:
        """Keep (or, with an empty score and comment, drop) a decision on one row of the review
        queue, checked as ``grade --review`` checks it; the quiz scores it changed (the run
        with the decisions before and after), each queued for the LMS when one is mounted.

        Raises:
            DecisionError: no such row in the queue, or a score ``grade --review`` refuses.
        """
        run = self.run()
        if run is None:
            raise DecisionError("There is no answer to review yet.")
        row = next((r for r in run.review if r[_AT["fingerprint"]] == fingerprint), None)
        if row is None or row[_AT["question"]] == "(student)":
            raise DecisionError("That answer is not in the review queue (any more): reload it.")
        score, comment = score.strip(), comment.strip()
        if len(score) > 20 or len(comment) > 2000:
            raise DecisionError("A score is a number, and a comment at most 2,000 characters.")
        if score or comment:
            self._check(row, score, comment)
        now = self.room.clock().isoformat(timespec="seconds")
        with self.room.db.transaction("save the decision") as tx:
            tx.run("DELETE FROM decision WHERE fingerprint = ?", (fingerprint,))
            if score or comment:
                tx.run(
                    "INSERT INTO decision (fingerprint, slot, answer, score, comment, decided_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (fingerprint, row[_AT["question"]], row[_AT["answer"]], score, comment, now),
                )
        after = self.run()
        moved = {} if after is None else _moved(run.scores, after.scores)
        queued: Mapping[str, tuple[str | None, str]] = {}
        if moved and self.sink is not None:
            queued = self.sink.send({s: new for s, (_, new, _) in moved.items()})
        changes = [
            Changed(s, old, new, top, *queued.get(s, (None, "")))
            for s, (old, new, top) in sorted(moved.items())
        ]
        self.changes = changes
        return changes

    def decided_scores(self) -> Mapping[str, float]:
        """The quiz's scores with the decisions applied ({}: no decision kept, or no answer)."""
        with self.room.db.transaction("read the decisions", write=False) as tx:
            if not tx.rows("SELECT 1 FROM decision LIMIT 1"):
                return {}
        run = self.run()
        return {} if run is None else {s: score for s, (score, _) in run.scores.items()}

    def posted(self) -> set[str]:
        """The keys of :attr:`changes` the LMS has taken."""
        keys = [c.key for c in self.changes if c.key is not None]
        return self.sink.posted(keys) if self.sink is not None and keys else set()

    def _check(self, row: Sequence[str], score: str, comment: str) -> None:
        from quizgym.grading.decisions import ReviewError, read_decisions

        quiz = self.room.quiz
        assert quiz is not None
        cells = list(row)
        cells[_AT["score"]], cells[_AT["comment"]] = score, comment
        with tempfile.TemporaryDirectory(prefix="quizgym-decide-") as tmp:
            path = Path(tmp) / "review.csv"
            path.write_text(_csv([HEADER, cells]), encoding="utf-8")
            try:
                read_decisions(path, self.room.books[quiz.bank])
            except ReviewError as exc:
                reason = str(exc).split(": ", 1)[-1]
                raise DecisionError(f"{reason[:1].upper()}{reason[1:]}.") from exc

    # --- the run ------------------------------------------------------------------------------

    def run(self) -> ClassRun | None:
        """The grading run of the quiz's answers now (None: no quiz, or nobody answered yet).

        Raises:
            QuizgymError: the grading run refused the answers (its one-line reason).
        """
        if self.room.quiz is None:
            return None
        with self._lock:
            state, decisions = self._read_state()
            if state[1] == 0:
                return None
            if state != self._state or self._run is None:
                self._run = self._grade(decisions)
                self._state = state
            return self._run

    def gradebook(self, name: str) -> bytes | None:
        """One of :data:`GRADEBOOKS` as ``quizgym grade`` writes it (None: no answers yet)."""
        run = self.run()
        if run is None:
            return None
        with self._lock:
            if name not in run.files:
                lms = name.removeprefix("gradebook-").removesuffix(".csv")
                with tempfile.TemporaryDirectory(prefix="quizgym-teacher-") as tmp:
                    decided = run.decisions_csv if run.decided else None
                    graded = self._once(Path(tmp), decided, gradebook=lms)
                    run.files[name] = (graded.out_dir / name).read_bytes()
            return run.files[name]

    def _once(self, tmp: Path, decisions: str | None, *, gradebook: str | None = None) -> _Graded:
        from quizgym.grading.run import grade_submissions
        from quizgym.serve.folder import write_export

        quiz = self.room.quiz
        assert quiz is not None
        answers = tmp / "attempts.jsonl"
        if not answers.exists():
            write_export(self.room.db, answers)
        review = None
        if decisions is not None:
            review = tmp / "decisions.csv"
            review.write_text(decisions, encoding="utf-8")
        out = tmp / ("decided" if decisions is not None else "graded")
        if gradebook is not None:
            out = tmp / f"gradebook-{gradebook}"
        run = grade_submissions(
            self.room.books[quiz.bank], [answers], out_dir=out, issued=self.folder / "issued.json",
            review=review, gradebook=gradebook,
        )  # fmt: skip
        return _Graded(out, run.report_inputs, run.summary())

    def _grade(self, decisions: Mapping[str, tuple[str, str]]) -> ClassRun:
        from quizgym.render.report import render_report

        with tempfile.TemporaryDirectory(prefix="quizgym-teacher-") as tmp:
            graded = self._once(Path(tmp), None)
            rows = _rows(graded.out_dir / "review.csv")
            kept = 0
            for row in rows:
                found = decisions.get(row[_AT["fingerprint"]])
                if found is not None and row[_AT["question"]] != "(student)":
                    row[_AT["score"]], row[_AT["comment"]] = found
                    kept += 1
            text = _csv([list(HEADER), *rows])
            if kept:  # grade again with the decisions, as grade --review does
                graded = self._once(Path(tmp), text)
            grades = _rows(graded.out_dir / "grades.csv")
            files = {"grades.csv": (graded.out_dir / "grades.csv").read_bytes()}
        analysis = render_report(**graded.inputs, part="analysis")
        scores = {r[0]: (float(r[1]), float(r[2])) for r in grades}
        return ClassRun(
            scores=scores, analysis=analysis, review=rows, decisions_csv=text, decided=kept,
            files=files, summary=graded.summary,
        )  # fmt: skip


def _moved(
    before: Mapping[str, tuple[float, float]], after: Mapping[str, tuple[float, float]]
) -> dict[str, tuple[float, float, float]]:
    """The students whose score differs between two runs: (old, new, maximum)."""
    return {
        s: (before[s][0], new, top)
        for s, (new, top) in after.items()
        if s in before and abs(before[s][0] - new) > 1e-9
    }


@dataclass(frozen=True)
class _Graded:
    out_dir: Path
    inputs: Mapping[str, Any]
    summary: str


def _rows(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as stream:
        return list(csv.reader(stream))[1:]
