"""The kinds of answer box a question type maps itself onto: a question's options, its numbers or
its text go in, one interaction (QTI's choiceInteraction, textEntryInteraction, …) comes out.

The grader, the renderers and the exporters handle these few kinds; a question type is one of
them (or several), so a new type needs no new branch there.
"""

from __future__ import annotations

from dataclasses import dataclass

from quizgym.model import Choice, FreeText, MatchPair, Numeric, RubricCriterion


@dataclass(frozen=True)
class ChoiceInteraction:
    """Pick one option, or several with ``multiple`` (QTI's choiceInteraction).

    ``boolean``: the two options are true, then false, and a student types a truth word
    (``t``, ``yes``, ``0``) rather than a letter.
    """

    choices: tuple[Choice, ...]
    multiple: bool = False
    shuffle: bool = False
    boolean: bool = False

    @property
    def kind(self) -> str:
        """``truth`` (true or false) or ``choice``: what a template draws."""
        return "truth" if self.boolean else "choice"

    @property
    def lettered(self) -> bool:
        """Whether its options are shown as a lettered list (in an order a draw may shuffle);
        true and false are two boxes instead."""
        return not self.boolean

    @property
    def right(self) -> list[int]:
        """Indices of the correct options, in bank order."""
        return [i for i, c in enumerate(self.choices) if c.correct]

    @property
    def weights(self) -> list[float]:
        """Each option's share of full credit when it is picked, in bank order.

        One correct option: 1 for it, 0 for the others. Several (``multiple``): each of the k
        correct options earns 1/k and each wrong one costs 1/k, the rule Canvas and Moodle use
        and the grader applies (a score never drops below 0). The exporters write these weights.
        """
        right = len(self.right)
        if self.multiple:
            return [(1 if c.correct else -1) / right for c in self.choices]
        return [1.0 if c.correct else 0.0 for c in self.choices]

    @property
    def options(self) -> list[str]:
        """The options' texts, as item analysis tabulates them (none for several picks)."""
        return [] if self.multiple else [c.text for c in self.choices]

    @property
    def chance(self) -> float | None:
        """The share of right answers a blind guess gets (None for several picks)."""
        return None if self.multiple else len(self.right) / len(self.choices)


@dataclass(frozen=True)
class NumericInteraction:
    """A number for each part, checked against a key (QTI's textEntryInteraction, scored as a
    number); the solver compiles the question into its slots."""

    question: Numeric

    kind = "number"
    """What a template draws."""


@dataclass(frozen=True)
class TextInteraction:
    """A free text, scored by a rubric and marked for review (QTI's extendedTextInteraction)."""

    rubric: tuple[RubricCriterion, ...]
    model_answer: str

    kind = "text"
    """What a template draws."""

    @classmethod
    def of(cls, question: FreeText) -> TextInteraction:
        """The interaction of a free-text question."""
        return cls(tuple(question.rubric), question.model_answer)


@dataclass(frozen=True)
class PairingInteraction:
    """Pair each item with one of a list of answers (QTI's matchInteraction).

    Each item is an answer slot of its own, a choice of one answer: :meth:`slot` is that
    choice, so an item is read, graded, tabulated and drawn as any one-answer choice is. The
    answers are shown lettered, in a seeded order with ``shuffle``, the same for every item.
    """

    items: tuple[MatchPair, ...]
    answers: tuple[str, ...]
    shuffle: bool = False
    one_to_one: bool = True

    kind = "pairing"
    """What a template draws."""

    def item(self, item_id: str) -> MatchPair:
        """The item with this id.

        Raises:
            KeyError: no such item.
        """
        for pair in self.items:
            if pair.id == item_id:
                return pair
        raise KeyError(item_id)

    def slot(self, item_id: str) -> ChoiceInteraction:
        """The choice one item is: its answer right, every other one wrong, with the item's
        feedback and misconception tag.

        Raises:
            KeyError: no such item.
        """
        pair = self.item(item_id)
        # model_construct: texts and feedback of a validated question, valid by construction.
        choices = tuple(
            Choice.model_construct(
                text=answer,
                correct=answer == pair.answer,
                feedback=None if answer == pair.answer else pair.feedback,
                tag=None if answer == pair.answer else pair.tag,
            )
            for answer in self.answers
        )
        return ChoiceInteraction(choices, shuffle=self.shuffle)


Interaction = ChoiceInteraction | NumericInteraction | TextInteraction | PairingInteraction
"""Any interaction kind."""
