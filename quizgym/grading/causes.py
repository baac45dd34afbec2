"""Why an answer could not be read, in a few plain words a teacher can act on.

The answer engine refuses ``15%``, ``2,400``, ``ture`` or ``AB`` (for a multiple-answer
question) with a message for the student. A teacher looking at a whole class needs the cause
instead, the same words for the same mistake, so that a report can say "8 of 58 answers could
not be read, most often typed with %" and ``review.csv`` can say what the student probably
meant. :func:`cause_of` gives the cause; :func:`probably` what the answer most likely meant,
when that can be told.
"""

from __future__ import annotations

import difflib
import re

from quizgym.answers import fold_text
from quizgym.grading.batch import FAILED
from quizgym.model import LETTERS, AnyQuestion
from quizgym.types import choices_of

__all__ = ["cause_of", "probably"]

_NUMBER = r"[-+]?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][-+]?\d+)?"
_UNIT = re.compile(rf"\s*{_NUMBER}\s*[^\W\d_][\w/^·*°µΩ%-]*\s*", re.UNICODE)
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?!\d)")
_RATIO = re.compile(rf"\s*{_NUMBER}\s*:\s*{_NUMBER}\s*")
_POWER = re.compile(r"\d\s*(?:[x×*]\s*10\s*(?:\^|\*\*)|[x×]\s*10\s*[-−]?\d)", re.IGNORECASE)
_LETTER_O = re.compile(r"[+-]?(?=[0-9.,Oo]*[Oo])(?=[0-9.,Oo]*[0-9.])[0-9.,Oo]+")
_WORDS = re.compile(r"[^\W\d_][\w\s'’.-]*", re.UNICODE)


def cause_of(
    question: AnyQuestion, text: str, *, feedback: str = "", part: str | None = None
) -> str:
    """Why ``text``, an unreadable answer to ``question``, could not be read (a short phrase).

    Numeric answers (and the parts of a multi-part question) are read as numbers; ``feedback``
    is the verdict's, which says when the engine itself failed on the answer."""
    if feedback.startswith(FAILED):
        return "quizgym failed on it (an error: grade it by hand)"
    word = fold_text(text)
    options = choices_of(question, part)
    if options is not None and options.boolean:
        near = probably(question, text)
        return f"a typo of {near}" if near else "neither true nor false"
    if options is not None:
        multiple = options.multiple
        letters = LETTERS[: len(options.choices)].casefold()
        if multiple and len(word) > 1 and all(c in letters for c in word):
            return "letters run together"
        tokens = [t for t in re.split(r"[\s,;/&+]+|\band\b", word) if t]
        if (
            not multiple
            and len(tokens) > 1
            and all(len(t) == 1 and t in letters or t.isdigit() for t in tokens)
        ):
            return "several choices for a one-answer question"
        if probably(question, text, part=part):
            return "a choice's text, misspelt"
        return "not one of the choices"
    return _numeric_cause(text)


def _numeric_cause(text: str) -> str:
    stripped = text.strip()
    if "%" in stripped:
        return "typed with %"
    if _RATIO.fullmatch(stripped):
        return "written as a ratio"
    if _THOUSANDS.search(stripped) and "." not in stripped:
        return "an ambiguous comma (decimal or thousands)"
    if _LETTER_O.fullmatch(stripped):
        return "a letter O for a zero"
    if _POWER.search(stripped):
        return "written with × 10^n"
    if stripped.count(".") > 1:
        return "more than one decimal point"
    if _UNIT.fullmatch(stripped):
        return "typed with a unit or a word after the number"
    if _WORDS.fullmatch(stripped):
        return "words, not a number"
    return "not a number or expression quizgym reads"


def probably(question: AnyQuestion, text: str, *, part: str | None = None) -> str:
    """What an unreadable answer most likely meant, quoted (``'true'``, ``A, B, C``), or ''.

    Only a suggestion for the teacher's review; the answer stays unreadable.
    """
    word = fold_text(text)
    options = choices_of(question, part)
    if options is not None and options.boolean:
        close = difflib.get_close_matches(word, ["true", "false"], n=1, cutoff=0.6)
        return f"'{close[0]}'" if close else ""
    if options is not None:
        letters = LETTERS[: len(options.choices)]
        if options.multiple and len(word) > 1 and all(c in letters.casefold() for c in word):
            return ", ".join(dict.fromkeys(word.upper()))
        texts = {fold_text(c.text): c.text for c in options.choices}
        close = difflib.get_close_matches(word, list(texts), n=1, cutoff=0.8)
        return f"'{texts[close[0]]}'" if close else ""
    return ""
