"""The ``matching`` type: items, their answers and distractors go in, one choice of an answer
per item comes out (each item an answer slot ``question.item``)."""

from __future__ import annotations

from collections.abc import Iterator

from quizgym.model import Defaults, Matching
from quizgym.types.base import Loc, QuestionType
from quizgym.types.interactions import PairingInteraction


class MatchingType(QuestionType[Matching]):
    """Pair each item with one of a list of answers (more answers than items allowed)."""

    name = "matching"
    model = Matching

    def interaction(self, question: Matching) -> PairingInteraction:
        return PairingInteraction(
            tuple(question.pairs),
            tuple(question.answers),
            shuffle=question.shuffle,
            one_to_one=question.one_to_one,
        )

    def slots(self, question: Matching, defaults: Defaults) -> list[tuple[str | None, float, Loc]]:
        return [
            (pair.id, question.item_points(pair, defaults), ("pairs", k))
            for k, pair in enumerate(question.pairs)
        ]

    def text_fields(self, question: Matching, base: Loc) -> Iterator[tuple[Loc, str]]:
        for k, pair in enumerate(question.pairs):
            yield (*base, "pairs", k, "item"), pair.item
            yield (*base, "pairs", k, "answer"), pair.answer
            if pair.feedback:
                yield (*base, "pairs", k, "feedback"), pair.feedback
        for k, text in enumerate(question.distractors):
            yield (*base, "distractors", k), text


TYPE = MatchingType()
