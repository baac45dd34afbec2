"""The kinds of answer box a question type maps itself onto: a question's options, its numbers or
its text go in, one interaction (QTI's choiceInteraction, textEntryInteraction, …) comes out.

The grader, the renderers and the exporters handle these few kinds; a question type is one of
them (or several), so a new type needs no new branch there.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

from quizgym.model import (
    BLANK,
    Blank,
    Choice,
    Cloze,
    FreeText,
    MatchPair,
    Numeric,
    Part,
    RubricCriterion,
)


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

    def split(self, text: str) -> dict[str, str] | None:
        """A whole question answered in one text, as each item's answer as typed (an item the
        text does not name is left out); None when the items cannot be told apart.

        Items are named by their number on the sheet (1, 2, … in bank order), their id or their
        text; answers by their letter in the student's order or their text, read later as the
        item's own answer is. Pairs are written number then letter or letter then number
        (``1C 2A``, ``1-C, 2-A``, ``A-2, B-1``, ``1) C``), or one per piece separated by ``,``,
        ``;`` or a line, item then answer (``Sodium: Na; potassium -> K``). An item named twice,
        or one the question does not have, makes the text unreadable: nothing is guessed.
        """
        compact = _COMPACT.fullmatch(text)
        if compact is not None:
            found: list[tuple[str, str]] = []
            for number_first, letter, letter_first, number in _PAIR.findall(text):
                at = int(number_first or number) - 1
                if not 0 <= at < len(self.items):
                    return None
                found.append((self.items[at].id, letter or letter_first))
            return _distinct(found)
        names: dict[str, str] = {}
        for k, pair in enumerate(self.items):
            for name in (str(k + 1), pair.id, pair.item):
                names.setdefault(_fold(name), pair.id)
        for separators in (r"[;,\n]", r"[;\n]"):  # a comma may be in an item's or answer's text
            found = []
            for piece in re.split(separators, text):
                if not piece.strip():
                    continue
                sides = _ARROW.split(piece.strip(), maxsplit=1)
                left = sides[0].strip(" .")
                item = names.get(_fold(left)) or names.get(_fold(left.rstrip(")")))
                if len(sides) != 2:
                    item = None
                if item is None or not sides[1].strip():
                    break
                found.append((item, sides[1].strip()))
            else:
                if found:
                    return _distinct(found)
        return None


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _distinct(found: list[tuple[str, str]]) -> dict[str, str] | None:
    out = dict(found)
    return out if len(out) == len(found) else None


_LINK = r"\s*(?:->|=>|→|[-–—:=.)])?\s*"
_PAIR = re.compile(
    rf"([0-9]{{1,3}}){_LINK}([A-Za-z])(?![A-Za-z0-9])|([A-Za-z]){_LINK}([0-9]{{1,3}})"
)
"""One pair of the compact form: a number and a letter, either way round (``1C``, ``A-2``)."""
_COMPACT = re.compile(
    rf"\s*(?:[0-9]{{1,3}}{_LINK}[A-Za-z]|[A-Za-z]{_LINK}[0-9]{{1,3}})(?![A-Za-z0-9])"
    rf"(?:[\s,;/]+(?:[0-9]{{1,3}}{_LINK}[A-Za-z]|[A-Za-z]{_LINK}[0-9]{{1,3}})(?![A-Za-z0-9]))*"
    r"[\s,;.]*"
)
"""A text of compact pairs only (``1C 2A``, ``A-2, B-1``, ``1:c; 2:a.``)."""
_ARROW = re.compile(r"\s*(?:->|=>|→|:|=|\s-\s|\s–\s|(?<=[0-9])[.)])\s*")
"""What joins an item to its answer in a piece (``Sodium: Na``, ``1 -> K``, ``2) K``)."""


LINE = "\\_" * 10
"""A blank's line on a worksheet, in Markdown (escaped underscores)."""


@dataclass(frozen=True)
class WordInteraction:
    """A short word typed into a blank, right when it is one of the accepted spellings (QTI's
    textEntryInteraction, scored by string match).

    Spellings are compared as :meth:`fold` writes them: Unicode NFKC, runs of whitespace one
    space, no space at either end, and, unless ``case_sensitive``, case folded.
    """

    accept: tuple[str, ...]
    case_sensitive: bool = False
    feedback: str | None = None
    tag: str | None = None

    kind = "word"
    """What a template draws."""

    def fold(self, text: str) -> str:
        """A text as it is compared with the accepted spellings."""
        plain = " ".join(unicodedata.normalize("NFKC", text).split())
        return plain if self.case_sensitive else plain.casefold()

    def accepts(self, text: str) -> bool:
        """Whether a typed text is one of the accepted spellings."""
        return self.fold(text) in {self.fold(a) for a in self.accept}


@dataclass(frozen=True)
class BlanksInteraction:
    """A text with blanks, each an answer slot of its own (QTI's inline textEntryInteraction
    and inlineChoiceInteraction).

    :meth:`slot` is the interaction one blank is: a one-answer :class:`ChoiceInteraction` (a
    dropdown), a :class:`NumericInteraction` (its numbers are those of :attr:`numbers`, compiled
    by the solver) or a :class:`WordInteraction`; so a blank is read, graded, tabulated and
    exported as that kind is.
    """

    question: Cloze

    kind = "blanks"
    """What a template draws."""

    @property
    def names(self) -> list[str]:
        """The blanks' names, in the order the text shows them."""
        return self.question.order

    def blank(self, name: str) -> Blank:
        """The blank with this name.

        Raises:
            KeyError: no such blank.
        """
        return self.question.blanks[name]

    def number(self, name: str) -> int:
        """The blank's 1-based number in the text, as a worksheet labels it."""
        return self.names.index(name) + 1

    @property
    def numbers(self) -> Numeric | None:
        """The number blanks as the parts of a numeric question (None: there are none), for
        the solver to compile: each part is a blank, its id the blank's name."""
        parts = [
            Part.model_construct(
                id=name,
                prompt=self.context(name),
                answer=str(blank.answer),  # a number blank has one (validated)
                tolerance=blank.tolerance,
                units=blank.units,
                require_units=blank.require_units,
                display=blank.display,
                answers=list(blank.answers),
                points=self._points(blank),
                mistakes=list(blank.mistakes),
            )
            for name in self.names
            if (blank := self.blank(name)).kind == "number"
        ]
        if not parts:
            return None
        return Numeric.model_construct(
            id=self.question.id, type="numeric", prompt=self.question.prompt, parts=parts
        )

    def _points(self, blank: Blank) -> float | None:
        """A blank's own points, else its share of the question's (None: the bank default)."""
        if blank.points is not None:
            return blank.points
        total = self.question.points
        return None if total is None else total / len(self.question.blanks)

    def context(self, name: str, mark: str = "___") -> str:
        """The text with this blank as ``mark`` (and a choice's options after it) and each
        other one as its number, ``(2)``: what a slot of it shows on its own."""
        blank = self.blank(name)
        shown = mark + (" (" + " / ".join(blank.choices) + ")" if blank.kind == "choice" else "")
        return BLANK.sub(
            lambda m: shown if m[1] == name else f"({self.number(m[1])})", self.question.prompt
        )

    def drawn(self, text: str, filled: Mapping[str, str] | None = None) -> str:
        """The text (Markdown) as a worksheet prints it: each blank a numbered line, with its
        unit or its options after it; with ``filled`` (a key), each blank's answer in bold."""

        def draw(match: re.Match[str]) -> str:
            name = match[1]
            number = self.number(name)
            if filled is not None:
                return f"**({number}) {filled[name]}**"
            blank = self.blank(name)
            after = ""
            if blank.kind == "choice":
                after = " (" + " / ".join(blank.choices) + ")"
            elif blank.units:
                after = f" {blank.units}"
            return f"**({number})** {LINE}{after}"

        return BLANK.sub(draw, text)

    def slot(self, name: str) -> ChoiceInteraction | NumericInteraction | WordInteraction:
        """The interaction one blank is.

        Raises:
            KeyError: no such blank.
        """
        blank = self.blank(name)
        if blank.kind == "choice":
            # model_construct: texts of a validated blank, valid by construction.
            choices = tuple(
                Choice.model_construct(
                    text=text,
                    correct=text == blank.answer,
                    feedback=None if text == blank.answer else blank.feedback,
                    tag=None if text == blank.answer else blank.tag,
                )
                for text in blank.choices
            )
            return ChoiceInteraction(choices)
        if blank.kind == "word":
            return WordInteraction(
                tuple(blank.accept), blank.case_sensitive, blank.feedback, blank.tag
            )
        numbers = self.numbers
        assert numbers is not None
        return NumericInteraction(numbers)


Interaction = (
    ChoiceInteraction
    | NumericInteraction
    | TextInteraction
    | PairingInteraction
    | BlanksInteraction
)
"""Any interaction kind."""
