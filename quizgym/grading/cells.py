"""The cells of quizgym's CSV files: numbers as people write them, text a spreadsheet will not run.

Below the grading modules that read or write CSV (outputs, compare, the review file), so each can
use them without importing the others.
"""

from __future__ import annotations

import functools
import math
import re

__all__ = ["FORMULA_START", "defuse", "fmt", "undefuse"]


@functools.lru_cache(maxsize=8192)
def fmt(value: float | None, digits: int = 4) -> str:
    """A number as people write it: ``1``, ``0.5``, ``0.3333``; empty for None or NaN (memoized:
    a class's scores take few distinct values)."""
    if value is None or not math.isfinite(value):
        return ""
    text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in {"-0", ""} else text


FORMULA_START = frozenset("=@+-\t\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def defuse(text: str) -> str:
    """Keep a spreadsheet from running a cell as a formula (CSV injection).

    Student text such as ``=HYPERLINK(…)`` or ``-ln(0.2)`` would be evaluated by Excel or
    LibreOffice when a teacher opens the file; a leading apostrophe makes it plain text. Plain
    numbers (``-2.30``) and a lone ``-`` (a student's "no answer", which no spreadsheet runs)
    are left alone.
    """
    if text and text[0] in FORMULA_START and not _NUMBER.fullmatch(text) and text != "-":
        return "'" + text
    return text


def undefuse(text: str) -> str:
    """The inverse of :func:`defuse`, for reading quizgym's own CSV files back."""
    if text.startswith("'") and defuse(text[1:]) == text:
        return text[1:]
    return text
