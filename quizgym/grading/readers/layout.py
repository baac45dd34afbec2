"""Which format a submissions table is in, from its header alone."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from quizgym.grading.rows import ROSTER

__all__ = ["CANVAS_QUESTION", "MOODLE_RESPONSE", "Layout", "layout_of"]

CANVAS_QUESTION = re.compile(r"^(\d+): ?(.*)$", re.DOTALL)
"""A Canvas "Student Analysis" question column: ``<n>: <question text>``."""
MOODLE_RESPONSE = re.compile(r"^Response (\d+)$")
"""A Moodle "Responses" answer column."""
_LONG = frozenset({"student", "question", "answer"})
_LONG_MAY = _LONG | {"seed", *ROSTER}


Layout = Literal["wide", "long", "canvas", "moodle"]


def layout_of(header: Sequence[str]) -> Layout | None:
    """How a table with this header is laid out, or None when it is no submissions table.

    Moodle's "Responses" export has ``Response N`` columns; Canvas's "Student Analysis" has ``id``
    and ``"<n>: <question text>"`` columns; a long table has exactly ``student, question,
    answer`` (and optionally ``seed`` and the roster columns ``name``, ``email``, ``section``);
    any other table with a ``student`` column is wide. Case does not matter.
    """
    header = [h.strip() for h in header]
    names = {h.casefold() for h in header}
    if any(MOODLE_RESPONSE.match(h) for h in header):
        return "moodle"
    if "id" in names and any(CANVAS_QUESTION.match(h) for h in header):
        return "canvas"
    if _LONG <= names <= _LONG_MAY:
        return "long"
    return "wide" if "student" in names else None
