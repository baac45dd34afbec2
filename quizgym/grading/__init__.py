"""Grading a class: submission ingest, the vectorized batch grader and ``quizgym grade``'s run.

One response is graded by the answer engine, :mod:`quizgym.answers`; its entry points are
re-exported here because ``from quizgym.grading import grade_response`` is how the README and
earlier releases spell it. A whole class is graded by :func:`grade_submissions`
(:mod:`quizgym.grading.run`), loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from quizgym.answers import Status, Verdict, grade_question, grade_response

if TYPE_CHECKING:
    from quizgym.grading.run import GradeRun, grade_submissions

__all__ = ["GradeRun", "Status", "Verdict", "grade_question", "grade_response", "grade_submissions"]


def __getattr__(name: str) -> Any:
    if name in {"GradeRun", "grade_submissions"}:
        from quizgym.grading import run

        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
