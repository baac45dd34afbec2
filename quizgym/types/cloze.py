"""The ``cloze`` type: a text with named blanks goes in, one answer slot per blank comes out
(``question.blank``: a number, a dropdown choice or a short word)."""

from __future__ import annotations

from collections.abc import Iterator

from quizgym.model import Cloze, Defaults
from quizgym.types.base import Loc, QuestionType
from quizgym.types.interactions import BlanksInteraction


class ClozeType(QuestionType[Cloze]):
    """Fill in the blanks: each blank a number, a choice of its options or a word."""

    name = "cloze"
    model = Cloze

    def interaction(self, question: Cloze) -> BlanksInteraction:
        return BlanksInteraction(question)

    def slots(self, question: Cloze, defaults: Defaults) -> list[tuple[str | None, float, Loc]]:
        return [
            (name, question.blank_points(name, defaults), ("blanks", name))
            for name in question.order
        ]

    def text_fields(self, question: Cloze, base: Loc) -> Iterator[tuple[Loc, str]]:
        for name, blank in question.blanks.items():
            at = (*base, "blanks", name)
            for k, text in enumerate(blank.choices):
                yield (*at, "choices", k), text
            if blank.units:
                yield (*at, "units"), blank.units
            if blank.feedback:
                yield (*at, "feedback"), blank.feedback
            for k, mistake in enumerate(blank.mistakes):
                yield (*at, "mistakes", k, "feedback"), mistake.feedback


TYPE = ClozeType()
