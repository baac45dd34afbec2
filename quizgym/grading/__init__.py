"""Grading: one response to a verdict, submission ingest, and the vectorized batch grader."""

from quizgym.grading.verdict import Status, Verdict, grade_question, grade_response

__all__ = ["Status", "Verdict", "grade_question", "grade_response"]
