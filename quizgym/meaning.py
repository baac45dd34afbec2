"""An answer the engine could not read, and its slot, in; what the student most likely meant
(``ture``: true; ``ABC``: A, B, C; ``2,400``: 2.4 or 2400; ``O.5``: 0.5; ``1:6``: 1/6), why, and the
verdict that reading earns out."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from quizgym.answers import Status, Verdict, fold_text, grade_response
from quizgym.model import LETTERS, AnyQuestion
from quizgym.solver import CompiledBank, Slot, Variant
from quizgym.tolerance import HINT_DECIMALS, HINT_SIGFIGS, hint_text
from quizgym.types import ChoiceInteraction, choices_of

__all__ = ["Likely", "likely", "spoken", "too_few_figures"]

PRECISION_HINTS = (HINT_SIGFIGS, HINT_DECIMALS)

_Grader = Callable[[str], Verdict]
"""Grades a text as the student's answer to the slot at hand."""


@dataclass(frozen=True, kw_only=True)
class Likely:
    """What an unreadable answer most likely meant."""

    text: str
    """The answer as it was probably meant, in a form the engine reads (``true``, ``A, B, C``,
    ``2.4``, ``1/6``)."""
    cause: str
    """Why the answer as typed could not be read (``a typo of 'true'``, ``letters run
    together``, ``an ambiguous comma (decimal or thousands)``)."""
    note: str
    """How it was read instead (``probably meant 'true'``, ``read as a decimal comma it is the
    key``, ``read as the ratio 1/6``)."""
    verdict: Verdict
    """The verdict of :attr:`text`: its score is the score to suggest."""
    question: str = ""
    """What the drill asks the student (``did you mean true?``); '' when asking would give
    the answer away (a comma read the way that scores)."""
    shown: str = ""
    """How the reading is shown when it is not the verdict's ``read_as`` (a misspelt choice's
    text, the same in every shuffled order, without the letter one order gives it)."""


def likely(
    bank: CompiledBank,
    question: AnyQuestion,
    response: str,
    *,
    variant: Variant,
    part: str | None = None,
    earlier: Mapping[str, str] | None = None,
) -> Likely | None:
    """What an answer that could not be read most likely meant, or None when nothing can be told.

    A likely reading is only ever a suggestion: the answer stays unreadable (scored 0) until a
    teacher decides it in ``review.csv``, where the likely reading's score is the suggested one, and
    the drill asks the student ("did you mean true?") instead of reading it for them.

    Args:
        bank: the compiled bank.
        question: the question answered.
        response: the text the student typed (unreadable as it is).
        variant: the student's version of the question.
        part: the part answered, for a multi-part question.
        earlier: the student's answers to earlier parts (error carried forward).

    Returns:
        The likely reading with the verdict it earns; None when no reading is likely or the
        likely one does not read either.
    """

    def graded(text: str) -> Verdict:
        return grade_response(
            bank, question, text, part=part, earlier=earlier or None, variant=variant
        )

    found: Likely | None
    picks = choices_of(question, part)
    if picks is not None and picks.boolean:
        found = _true_false(response, graded)
    elif picks is not None:
        found = _choices(picks, response, graded)
    elif _slot_of(bank, question, part).is_numeric:
        found = _number(response, graded)
    else:
        found = None
    if found is None or found.verdict.status in {Status.INVALID, Status.BLANK}:
        return None
    return found


def _slot_of(bank: CompiledBank, question: AnyQuestion, part: str | None) -> Slot:
    """The slot answered: the part's (a cloze's blanks differ in kind), else the first."""
    slots = bank.slots_of(question)
    return next((slot for slot in slots if slot.part == part), slots[0])


def too_few_figures(slot: Slot, verdict: Verdict) -> bool:
    """Whether a wrong numeric answer is the key rounded to fewer figures (or decimal places)
    than the slot asks for (``0.17`` for 1/6 when 3 figures are asked): the comparator's
    precision hint, which it gives only when the answer agrees with the key as far as it goes."""
    if verdict.status is not Status.INCORRECT or verdict.tag or slot.tolerance is None:
        return False
    hints = {hint_text(code=code, tolerance=slot.tolerance) for code in PRECISION_HINTS}
    return bool(verdict.feedback) and verdict.feedback in hints


def spoken(letters: str) -> str:
    """Letters as a sentence says them: ``A, B and C``."""
    names = [x.strip() for x in letters.split(",") if x.strip()]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _true_false(response: str, graded: _Grader) -> Likely | None:
    word = fold_text(response)
    close = difflib.get_close_matches(word, ["true", "false"], n=1, cutoff=0.6)
    if not close:
        return None
    meant = close[0]
    return Likely(
        text=meant,
        cause=f"a typo of '{meant}'",
        note=f"probably meant '{meant}'",
        verdict=graded(meant),
        question=f"did you mean {meant}?",
    )


def _choices(question: ChoiceInteraction, response: str, graded: _Grader) -> Likely | None:
    word = fold_text(response)
    letters = LETTERS[: len(question.choices)]
    multiple = question.multiple
    if multiple and len(word) > 1 and all(c in letters.casefold() for c in word):
        meant = ", ".join(dict.fromkeys(word.upper()))
        return Likely(
            text=meant,
            cause="letters run together",
            note=f"probably meant {meant}",
            verdict=graded(meant),
            question=f"did you mean {spoken(meant)}?",
        )
    texts = {fold_text(c.text): c.text for c in question.choices}
    close = difflib.get_close_matches(word, list(texts), n=1, cutoff=0.8)
    if not close:
        return None
    meant = texts[close[0]]
    return Likely(
        text=meant,
        cause="a choice's text, misspelt",
        note=f"probably meant '{meant}'",
        verdict=graded(meant),
        question=f"did you mean '{meant}'?",
        shown=meant,
    )


_COMMA = re.compile(r"(?P<head>\s*[+-]?\d{1,3}),(?P<tail>\d{3}(?!\d)(?![.,]\d).*)", re.DOTALL)
"""One comma and three digits after it (``2,400``, ``-1,500 m``): a decimal comma or a
thousands separator, which the engine refuses to guess."""
_LETTER_O = re.compile(r"\s*[+-]?(?=[0-9.,Oo]*[Oo])(?=[0-9.,Oo]*[0-9.])[0-9.,Oo]+\s*")
"""A number with the letter O for a zero (``O.5``, ``24OO``, ``1o``)."""
_RATIO = re.compile(r"\s*(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)\s*")


def _number(response: str, graded: _Grader) -> Likely | None:
    comma = _COMMA.fullmatch(response)
    if comma is not None:
        return _comma(comma, graded)
    if _LETTER_O.fullmatch(response):
        meant = re.sub("[Oo]", "0", response.strip())
        return Likely(
            text=meant,
            cause="a letter O for a zero",
            note=f"probably meant {meant}",
            verdict=graded(meant),
            question=f"did you mean {meant} (a zero, not the letter O)?",
        )
    ratio = _RATIO.fullmatch(response)
    if ratio is not None:
        meant = f"{ratio[1]}/{ratio[2]}"
        return Likely(
            text=meant,
            cause="written as a ratio",
            note=f"read as the ratio {meant}",
            verdict=graded(meant),
            question=f"read as the ratio {meant}?",
        )
    return None


def _comma(match: re.Match[str], graded: _Grader) -> Likely | None:
    """``2,400``: the reading that earns more, when one does (the key or a known mistake)."""
    head, tail = match["head"], match["tail"]
    point, thousands = f"{head}.{tail}", f"{head}{tail}"
    as_point, as_thousands = graded(point), graded(thousands)
    cause = "an ambiguous comma (decimal or thousands)"
    if as_point.score == as_thousands.score:
        return None  # neither reading earns more: nothing to suggest but the 0 it has
    if as_point.score > as_thousands.score:
        meant, verdict, how = point.strip(), as_point, "as a decimal comma"
    else:
        meant, verdict, how = thousands.strip(), as_thousands, "with a thousands separator"
    what = "the key" if verdict.status is Status.CORRECT else "worth a share of the points"
    if verdict.status is not Status.CORRECT and verdict.tag:
        what = f"a known mistake ({verdict.tag})"
    return Likely(
        text=meant,
        cause=cause,
        note=f"read {how} it is {what}",
        verdict=verdict,
        question="",  # that one reading earns more would give the answer away: not asked
    )
