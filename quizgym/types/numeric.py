"""The ``numeric`` type: key expressions, parameters and parts go in, numeric answer slots (one
per part) come out; the solver compiles their keys and variants."""

from __future__ import annotations

from collections.abc import Iterator

from quizgym.model import Numeric
from quizgym.types.base import Loc, QuestionType
from quizgym.types.interactions import NumericInteraction


class NumericType(QuestionType[Numeric]):
    """A number computed from a key expression, optionally in several parts, with variants."""

    name = "numeric"
    model = Numeric

    def interaction(self, question: Numeric) -> NumericInteraction:
        return NumericInteraction(question)

    def text_fields(self, question: Numeric, base: Loc) -> Iterator[tuple[Loc, str]]:
        if question.units:
            yield (*base, "units"), question.units
        for i, mistake in enumerate(question.mistakes):
            yield (*base, "mistakes", i, "feedback"), mistake.feedback
        for p, part in enumerate(question.parts):
            at = (*base, "parts", p)
            yield (*at, "prompt"), part.prompt
            for name in ("hint", "explanation", "units"):
                value = getattr(part, name)
                if value:
                    yield (*at, name), value
            for i, mistake in enumerate(part.mistakes):
                yield (*at, "mistakes", i, "feedback"), mistake.feedback


TYPE = NumericType()
