"""The base of a question type: a question of that type goes in, what the rest of quizgym asks
of it (its interaction, the texts it shows beside the prompt, its bank fields) comes out."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import ClassVar, Generic, TypeVar

from quizgym.model import Choice, Defaults, QuestionBase, points_of
from quizgym.types.interactions import Interaction

Q = TypeVar("Q", bound=QuestionBase)

Loc = tuple[str | int, ...]


class QuestionType(Generic[Q]):
    """One question type: what is specific to it, asked by the rest of quizgym.

    A subclass names its ``type:`` (``name``) and its model, maps a question onto an
    interaction, and overrides the presentation hooks it needs; the defaults suit a type that
    shows nothing beyond its prompt.
    """

    name: ClassVar[str]
    """The value of ``type:`` in a bank."""
    model: ClassVar[type[QuestionBase]]
    """The Pydantic model of its questions (in :mod:`quizgym.model`)."""

    def interaction(self, question: Q) -> Interaction:
        """The answer box the question is: how answers are read, judged, drawn and exported."""
        raise NotImplementedError

    def slots(self, question: Q, defaults: Defaults) -> list[tuple[str | None, float, Loc]]:
        """Each answer slot of the question: its part id (None: the whole question), its
        points, and where it is written under the question (numeric slots are the solver's)."""
        return [(None, points_of(question, defaults), ())]

    def statement(self, question: Q) -> str | None:
        """A text quoted above the prompt (the flawed statement of a spot-the-error)."""
        return None

    def correction(self, question: Q) -> str | None:
        """What is actually true, shown once the question is answered."""
        return None

    def answer_lines(self, question: Q) -> int:
        """Blank lines a worksheet leaves for a written answer (0: the answer goes in a box)."""
        return 0

    def text_fields(self, question: Q, base: Loc) -> Iterator[tuple[Loc, str]]:
        """The bank text (Markdown) of its own fields, with each field's path under ``base``."""
        return iter(())


def choice_fields(choices: Sequence[Choice], base: Loc) -> Iterator[tuple[Loc, str]]:
    """Each option's text and feedback, with their paths (``choices``, i, ``text``)."""
    for i, choice in enumerate(choices):
        yield (*base, "choices", i, "text"), choice.text
        if choice.feedback:
            yield (*base, "choices", i, "feedback"), choice.feedback
