"""The question types: a question goes in, its type's module (and through it, its interaction)
comes out; this table is the only place the rest of quizgym learns which types exist.

A type is one module of this package with a ``TYPE``, a :class:`~quizgym.types.base.QuestionType`
(see docs/types.md); its model lives in :mod:`quizgym.model`, the bank format's one definition.
"""

from __future__ import annotations

from typing import Any

from quizgym.model import QUESTION_TYPES, AnyQuestion
from quizgym.types import (
    cloze,
    free_text,
    matching,
    multiple_choice,
    numeric,
    spot_the_error,
    true_false,
)
from quizgym.types.base import QuestionType
from quizgym.types.interactions import (
    BlanksInteraction,
    ChoiceInteraction,
    Interaction,
    NumericInteraction,
    PairingInteraction,
    TextInteraction,
    WordInteraction,
)

TYPES: dict[str, QuestionType[Any]] = {
    module.TYPE.name: module.TYPE
    for module in (true_false, multiple_choice, spot_the_error, free_text, numeric, matching, cloze)
}
"""``type:`` → its question type, in the order the bank format lists them."""

assert {name: t.model for name, t in TYPES.items()} == QUESTION_TYPES, "a type without a module"


def type_of(question: AnyQuestion) -> QuestionType[Any]:
    """The question type of a question."""
    return TYPES[question.type]


def interaction_of(question: AnyQuestion) -> Interaction:
    """The interaction a question maps onto."""
    return type_of(question).interaction(question)


def choices_of(question: AnyQuestion, part: str | None = None) -> ChoiceInteraction | None:
    """The options a student picks among for the question, or for one of its slots (``part``:
    a matching item, a cloze blank); None for an answer that is not a pick."""
    found = interaction_of(question)
    if isinstance(found, PairingInteraction):
        return found.slot(part) if part is not None else None
    if isinstance(found, BlanksInteraction):
        picks = found.slot(part) if part is not None else None
        return picks if isinstance(picks, ChoiceInteraction) else None
    return found if isinstance(found, ChoiceInteraction) else None


def blanks_of(question: AnyQuestion) -> BlanksInteraction | None:
    """The question's text and blanks, when a student fills them in (None otherwise)."""
    found = interaction_of(question)
    return found if isinstance(found, BlanksInteraction) else None


def word_of(question: AnyQuestion, part: str | None) -> WordInteraction | None:
    """The accepted spellings of a slot answered with a short word (None otherwise)."""
    found = blanks_of(question)
    if found is None or part is None:
        return None
    word = found.slot(part)
    return word if isinstance(word, WordInteraction) else None


def pairing_of(question: AnyQuestion) -> PairingInteraction | None:
    """The question's items and answers, when a student pairs them (None otherwise)."""
    found = interaction_of(question)
    return found if isinstance(found, PairingInteraction) else None


def numeric_of(question: AnyQuestion) -> NumericInteraction | None:
    """The question's numeric answers, when it is answered with numbers (None otherwise)."""
    found = interaction_of(question)
    return found if isinstance(found, NumericInteraction) else None


def text_of(question: AnyQuestion) -> TextInteraction | None:
    """The question's rubric and model answer, when it is answered in words (None otherwise)."""
    found = interaction_of(question)
    return found if isinstance(found, TextInteraction) else None


def choice_weights(question: AnyQuestion) -> list[float]:
    """Each option's share of full credit when picked (see :attr:`ChoiceInteraction.weights`).

    Raises:
        ValueError: the question has no options.
    """
    choice = choices_of(question)
    if choice is None:
        msg = f"{question.id}: a {question.type} question has no options"
        raise ValueError(msg)
    return choice.weights


def param_names(question: AnyQuestion) -> frozenset[str]:
    """The names of the question's variant parameters (none for a question without numbers)."""
    numeric = numeric_of(question)
    return frozenset(numeric.question.params) if numeric is not None else frozenset()


def is_multiple(question: AnyQuestion) -> bool:
    """Whether a student picks several options."""
    choice = choices_of(question)
    return choice is not None and choice.multiple


def drawn_prompt(question: AnyQuestion, prompt: str) -> str:
    """A prompt (with its variant's numbers) as a worksheet or the drill shows it: a cloze's
    blanks drawn as numbered lines (see :meth:`BlanksInteraction.drawn`), any other as is."""
    blanks = blanks_of(question)
    return blanks.drawn(prompt) if blanks is not None else prompt


def statement_of(question: AnyQuestion) -> str | None:
    """A text quoted above the prompt (None: the question has none)."""
    return type_of(question).statement(question)


def correction_of(question: AnyQuestion) -> str | None:
    """What is actually true, shown once the question is answered (None: nothing)."""
    return type_of(question).correction(question)


__all__ = [
    "TYPES",
    "BlanksInteraction",
    "ChoiceInteraction",
    "Interaction",
    "NumericInteraction",
    "PairingInteraction",
    "QuestionType",
    "TextInteraction",
    "WordInteraction",
    "blanks_of",
    "choice_weights",
    "choices_of",
    "correction_of",
    "drawn_prompt",
    "interaction_of",
    "is_multiple",
    "numeric_of",
    "pairing_of",
    "param_names",
    "statement_of",
    "text_of",
    "type_of",
    "word_of",
]
