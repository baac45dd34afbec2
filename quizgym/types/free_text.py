"""The ``free_text`` type: a model answer and a rubric go in, a text scored for review comes out."""

from __future__ import annotations

from collections.abc import Iterator

from quizgym.model import FreeText
from quizgym.types.base import Loc, QuestionType
from quizgym.types.interactions import TextInteraction


class FreeTextType(QuestionType[FreeText]):
    """A free-text answer scored by a rubric and marked for review."""

    name = "free_text"
    model = FreeText

    def interaction(self, question: FreeText) -> TextInteraction:
        return TextInteraction.of(question)

    def answer_lines(self, question: FreeText) -> int:
        return min(12, 3 + 2 * len(question.rubric))

    def text_fields(self, question: FreeText, base: Loc) -> Iterator[tuple[Loc, str]]:
        for i, criterion in enumerate(question.rubric):
            yield (*base, "rubric", i, "criterion"), criterion.criterion


TYPE = FreeTextType()
