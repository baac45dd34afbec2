"""The ``multiple_choice`` type: a list of options goes in, a choice of one or several comes out."""

from __future__ import annotations

from collections.abc import Iterator

from quizgym.model import MultipleChoice
from quizgym.types.base import Loc, QuestionType, choice_fields
from quizgym.types.interactions import ChoiceInteraction


class MultipleChoiceType(QuestionType[MultipleChoice]):
    """Choose one correct option, or several with ``multiple: true`` (partial credit)."""

    name = "multiple_choice"
    model = MultipleChoice

    def interaction(self, question: MultipleChoice) -> ChoiceInteraction:
        return ChoiceInteraction(
            tuple(question.choices), multiple=question.multiple, shuffle=question.shuffle
        )

    def text_fields(self, question: MultipleChoice, base: Loc) -> Iterator[tuple[Loc, str]]:
        return choice_fields(question.choices, base)


TYPE = MultipleChoiceType()
