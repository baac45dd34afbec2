"""Grading a class: submission ingest, the vectorized batch grader and ``quizgym grade``'s run.

One response is graded by the answer engine, :mod:`quizgym.answers`; its entry points are
re-exported here because ``from quizgym.grading import grade_response`` is how the README and
earlier releases spell it. A whole class is graded by :func:`grade_submissions`
(:mod:`quizgym.grading.run`). Each is loaded on first use, so that the package's light modules
(the census, the text readers) are imported without the answer engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from quizgym.lazy import names_from

if TYPE_CHECKING:
    from quizgym.answers import Status, Verdict, grade_question, grade_response
    from quizgym.grading.run import GradeRun, grade_submissions

__all__ = ["GradeRun", "Status", "Verdict", "grade_question", "grade_response", "grade_submissions"]


__getattr__ = names_from(
    __name__,
    {
        **dict.fromkeys(["GradeRun", "grade_submissions"], "run"),
        **dict.fromkeys(
            ["Status", "Verdict", "grade_question", "grade_response"], "quizgym.answers"
        ),
    },
)
