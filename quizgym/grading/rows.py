"""The rules a submission row must pass, and the one place each rejection reason is worded.

Every reader (wide and long CSV, JSON Lines, Parquet, Canvas and Moodle exports), in memory or in
chunks, rejects a row through these functions, so a teacher reads the same reason for the same
problem whichever format or engine met it. A rejected row is never dropped: it becomes a
:class:`~quizgym.grading.table.Rejection` with its file, line and reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

__all__ = [
    "NO_STUDENT",
    "UNDECODABLE",
    "Origin",
    "Seen",
    "clean_id",
    "duplicate_answer",
    "duplicate_student",
    "read_seed",
    "row_problem",
    "seed_conflict",
    "undecodable",
    "unknown_question",
]

Origin = tuple[str, int]
"""Where a row was read: (file, line)."""

UNDECODABLE = "undecodable bytes (the file is not UTF-8)"
NO_STUDENT = "no student id"

_BAD_BYTES = re.compile("[\udc80-\udcff]")


def undecodable(cells: Sequence[str]) -> bool:
    """Whether some cell holds bytes that were not UTF-8 (kept as lone surrogates)."""
    return _BAD_BYTES.search("".join(cells)) is not None


def clean_id(raw: str) -> str:
    """A student id as a rejection shows it: stripped, undecodable bytes replaced by U+FFFD."""
    return raw.encode("utf-8", "surrogateescape").decode("utf-8", "replace").strip()


def row_problem(cells: Sequence[str], width: int, *, fewer_ok: bool = False) -> str | None:
    """Why a row cannot be read at all (undecodable bytes, or not as many cells as the header).

    Args:
        cells: the row's cells.
        width: the header's number of cells.
        fewer_ok: a short row is fine (LMS exports end rows early): only too many cells is wrong.
    """
    if undecodable(cells):
        return UNDECODABLE
    if len(cells) == width or (fewer_ok and len(cells) < width):
        return None
    many = "too many" if len(cells) > width else "too few"
    return f"{many} cells: {len(cells)}, the header has {width}"


def read_seed(text: str | None) -> int | None | str:
    """A seed cell: the whole number, None when empty, or the reason it is not one."""
    if text is None or not str(text).strip():
        return None
    try:
        return int(str(text).strip())
    except ValueError:
        return f"seed {text!r} is not a whole number"


def duplicate_student(student: str, first: Origin) -> str:
    """A student named again in a one-row-per-student format."""
    return f"duplicate student {student} (first at {first[0]}:{first[1]})"


def duplicate_answer(student: str, question: str, line: int) -> str:
    """A long file's second answer of a student to one slot."""
    return f"duplicate answer of {student} to {question} (first at line {line})"


def seed_conflict(seed: int, student: str, earlier: int) -> str:
    """A long file's row giving a student another seed than an earlier row."""
    return f"seed {seed} differs from {student}'s seed {earlier}"


def unknown_question(name: str, slots: Sequence[str], *, what: str = "question") -> str:
    """A column or answer that names no slot of the bank (with the parts, when it names a
    question that has parts)."""
    parts = [s for s in slots if s.startswith(name + ".")]
    hint = f" (it has parts: {', '.join(parts)})" if parts else ""
    return f"unknown {what} {name!r}{hint}"


class Seen:
    """The students read so far, and the rule for a student named twice.

    One ``Seen`` spans whatever is read together: a file, a class of several files, or every
    piece of a chunked run (the first occurrence wins; later ones are rejected).
    """

    def __init__(self, earlier: Callable[[str], Origin | None] = lambda _: None) -> None:
        """Start with the students ``earlier`` knows (e.g. a class's rows read before)."""
        self._earlier = earlier
        self._new: dict[str, Origin] = {}

    def claim(self, student: str, origin: Origin) -> str | None:
        """Record a student at ``origin``; if read before, the reason to reject this row."""
        first = self._new.get(student) or self._earlier(student)
        if first is not None:
            return duplicate_student(student, first)
        self._new[student] = origin
        return None

    def __contains__(self, student: object) -> bool:
        return isinstance(student, str) and (
            student in self._new or self._earlier(student) is not None
        )
