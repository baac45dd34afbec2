"""The ``spot_the_error`` type: a flawed statement and its diagnoses go in, a choice of one comes
out."""

from __future__ import annotations

from collections.abc import Iterator

from quizgym.model import SpotTheError
from quizgym.types.base import Loc, QuestionType, choice_fields
from quizgym.types.interactions import ChoiceInteraction


class SpotTheErrorType(QuestionType[SpotTheError]):
    """A flawed statement, quoted above the prompt; the student chooses the right diagnosis."""

    name = "spot_the_error"
    model = SpotTheError

    def interaction(self, question: SpotTheError) -> ChoiceInteraction:
        return ChoiceInteraction(tuple(question.choices), shuffle=question.shuffle)

    def statement(self, question: SpotTheError) -> str:
        return question.statement

    def correction(self, question: SpotTheError) -> str:
        return question.correction

    def text_fields(self, question: SpotTheError, base: Loc) -> Iterator[tuple[Loc, str]]:
        return choice_fields(question.choices, base)


TYPE = SpotTheErrorType()
