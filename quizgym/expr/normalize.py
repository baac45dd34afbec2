"""Raw text in, text in the language's own characters out (superscripts, Unicode signs, NFKC), with
each character's offset in the raw text."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from typing import TYPE_CHECKING

from quizgym.errors import AnswerParseError
from quizgym.expr.base import _MAX_NORMALIZED, MAX_LENGTH

if TYPE_CHECKING:
    pass


_SUPERSCRIPTS = {
    **{chr(0x2070 + d): str(d) for d in (0, 4, 5, 6, 7, 8, 9)},
    "\u00b9": "1",
    "\u00b2": "2",
    "\u00b3": "3",
    "\u207a": "+",
    "\u207b": "-",
    "\u207d": "(",
    "\u207e": ")",
}
_CHAR_MAP = {
    **dict.fromkeys("\u2212\u2010\u2011\u2012\u2013\u2014\ufe63\uff0d", "-"),
    **dict.fromkeys("\u00d7\u00b7\u22c5\u2219\u2217", "*"),
    **dict.fromkeys("\u00f7\u2215\u2044", "/"),
    **dict.fromkeys("\t\n\r\f\v", " "),
    "\u03c0": "pi",
    # unit symbols, as the units library spells them (NFKC has already made µ into μ, the
    # ohm sign into Ω and the angstrom sign into Å)
    "\u03bc": "u",
    "\u00b0": "deg",
    "\u03a9": "ohm",
    "\u00c5": "angstrom",
}
_PREFIX_RE = re.compile(r" *(?:[A-Za-z_][A-Za-z0-9_]* *)?[=\u2248~] *")
# "1.5 x 10^-3": a letter x between a number and a power of ten is a multiplication sign.
_TIMES_TEN_RE = re.compile(r"(?<=[0-9.]) ?[xX] ?(?=10 ?\^)")


def _normalize(source: str, names: Collection[str] = ()) -> tuple[str, list[int]]:
    """Map raw text to ASCII, keeping for each output character the source offset it came from.

    ``1.5 x 10^-3`` reads as ``1.5 * 10^-3``, unless ``x`` is one of ``names`` (a parameter
    called x: ``3 x 10^2`` is then 3·x·10²)."""
    if len(source) > MAX_LENGTH:
        raise AnswerParseError(
            f"The text is too long ({len(source)} characters; at most {MAX_LENGTH}).", MAX_LENGTH
        )
    if source.isascii() and source.isprintable():
        # Printable ASCII, most answers: each character folds to itself (a test holds it).
        text, where = source, list(range(len(source)))
    else:
        text, where = _fold(source)
    times_ten = () if "x" in names or "X" in names else _TIMES_TEN_RE.finditer(text)
    for match in reversed(list(times_ten)):
        a, b = match.span()
        text = text[:a] + "*" + text[b:]
        where[a:b] = [where[a]]
    start, end = 0, len(text)
    prefix = _PREFIX_RE.match(text)
    if prefix:  # "≈ 2.30", "L = 2.30", "L_MLM ≈ 2.3026"
        start = prefix.end()
    while start < end and text[start] == " ":
        start += 1
    while end > start and text[end - 1] == " ":
        end -= 1
    if start == end:
        raise AnswerParseError("There is no number or expression to read.", None)
    text, offsets = text[start:end], where[start:end]
    for k, ch in enumerate(text):
        if not " " <= ch <= "~":
            raise AnswerParseError(
                f"The character {ch!r} (U+{ord(ch):04X}) is not allowed.", offsets[k]
            )
    return text, offsets


def _fold(source: str) -> tuple[str, list[int]]:
    """Superscripts, NFKC and the character map: the text in ASCII, with each character's
    offset in the source.

    Raises:
        AnswerParseError: a mixed number written with a vulgar fraction; text that grows past
            twice the longest answer.
    """
    chars: list[str] = []
    where: list[int] = []

    def emit(text: str, offset: int) -> None:
        chars.extend(text)
        where.extend([offset] * len(text))

    i = 0
    while i < len(source):
        if source[i] in _SUPERSCRIPTS:
            # Before NFKC, which would silently turn "2³" into "23" and "10⁻³" into "10-3".
            start = i
            while i < len(source) and source[i] in _SUPERSCRIPTS:
                i += 1
            emit("^(", start)
            for k in range(start, i):
                emit(_SUPERSCRIPTS[source[k]], k)
            emit(")", i - 1)
            continue
        folded = unicodedata.normalize("NFKC", source[i])
        if len(folded) > 1 and "\u2044" in folded:  # a vulgar fraction, "½" → "(1/2)"
            if chars and chars[-1].isdigit():
                raise AnswerParseError("Write a mixed number such as 1½ as 1 + 1/2.", i)
            folded = "(" + folded + ")"
        for ch in folded:
            emit(_CHAR_MAP.get(ch, ch), i)
        i += 1
        if len(chars) > _MAX_NORMALIZED:
            raise AnswerParseError(f"The text is too long (at most {MAX_LENGTH} characters).", i)
    return "".join(chars), where
