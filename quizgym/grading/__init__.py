"""Grading a class: submission ingest, the vectorized batch grader and ``quizgym grade``'s run.

One response is graded by the answer engine, :mod:`quizgym.answers`; its entry points are
re-exported here because ``from quizgym.grading import grade_response`` is how the README and
earlier releases spell it.
"""

from quizgym.answers import Status, Verdict, grade_question, grade_response

__all__ = ["Status", "Verdict", "grade_question", "grade_response"]
