"""A class's answers as columns: students × answer slots, plus the rows that were rejected.

Every submission reader (:mod:`quizgym.grading.readers`) fills a :class:`ClassAnswers`; the
batch grader grades it column by column. A column may be a plain list of texts or a
:class:`Coded` column (distinct texts and one code per student), as pyarrow reads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np
import numpy.typing as npt

from quizgym.grading.rows import NO_STUDENT, duplicate_student

__all__ = ["ClassAnswers", "Coded", "Rejection"]


@dataclass(frozen=True)
class Rejection:
    """A row (or header cell) that could not be graded, and why."""

    source: str
    line: int
    student: str
    reason: str

    @property
    def is_column(self) -> bool:
        """A header cell (a column ignored), not a student's row."""
        return self.reason.endswith("; column ignored")


class Coded(Sequence[str | None]):
    """A column held as its distinct texts and one code per student.

    pyarrow's dictionary encoding reads a column of 100,000 answers this way at C speed; the
    grader then grades each distinct text once without ever building the list of 100,000 strings.
    It reads like the list it stands for.
    """

    __slots__ = ("codes", "texts")

    def __init__(self, texts: list[str | None], codes: npt.NDArray[np.int64]) -> None:
        self.texts = texts
        """Distinct texts (None for a blank cell). A slice keeps its column's texts, so some
        may be used by none of its rows."""
        self.codes = codes
        """Per student: index into ``texts``."""

    def __len__(self) -> int:
        return len(self.codes)

    @overload
    def __getitem__(self, index: int) -> str | None: ...

    @overload
    def __getitem__(self, index: slice) -> Coded: ...

    def __getitem__(self, index: int | slice) -> str | None | Coded:
        if isinstance(index, slice):
            return Coded(self.texts, self.codes[index])
        return self.texts[int(self.codes[index])]

    def __iter__(self) -> Iterator[str | None]:
        return map(self.texts.__getitem__, self.codes.tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, like the list it stands for


@dataclass
class ClassAnswers:
    """Every student's answers, one column per answered slot (None = not answered).

    Students appear in the order they were first read; ``answers[slot][k]`` is student ``k``'s
    raw text for that slot. Only slots that some file has a column (or an answer) for have a
    column: those are the slots graded.
    """

    slots: list[str]
    students: list[str] = field(default_factory=list)
    seeds: list[int | None] = field(default_factory=list)
    origins: list[tuple[str, int]] = field(default_factory=list)
    answers: dict[str, Sequence[str | None]] = field(default_factory=dict)
    versions: dict[str, list[int | None]] = field(default_factory=dict)
    """Per slot, each student's version as the file itself says (the LMS item they answered):
    an index into the issue manifest's versions of the question, None where unknown."""
    rejected: list[Rejection] = field(default_factory=list)
    by_text: set[str] = field(default_factory=set)
    """Choice slots an LMS export answered with the choices' texts: the order the choices were
    shown in cannot change how those read."""
    typed: set[str] = field(default_factory=set)
    """Slots a file typed by students answered (wide, long, JSON Lines): letters are possible."""
    _row: dict[str, int] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.students)

    @property
    def present(self) -> set[str]:
        """The slots some file has a column (or an answer) for."""
        return set(self.answers)

    def column(self, slot: str) -> Sequence[str | None]:
        """The answers to a slot, one per student (all None for a slot nobody was asked)."""
        return self.answers.get(slot) or [None] * len(self.students)

    def mark_present(self, slot: str) -> list[str | None]:
        """Make a slot graded; return its column, as a list that can be changed."""
        column = self.answers.get(slot)
        if not isinstance(column, list):
            column = self.answers[slot] = (
                [None] * len(self.students) if column is None else list(column)
            )
        return column

    def add_student(self, student: str, seed: int | None, origin: tuple[str, int]) -> int:
        """Append a student with no answers yet; return their row."""
        row = len(self.students)
        self.students.append(student)
        self.seeds.append(seed)
        self.origins.append(origin)
        self._row[student] = row
        for slot in self.answers:
            self.mark_present(slot).append(None)
        for seen in self.versions.values():
            seen.append(None)
        return row

    def set_version(self, slot: str, row: int, version: int) -> None:
        """Record the version of a slot's question a student answered (see :attr:`versions`)."""
        seen = self.versions.setdefault(slot, [None] * len(self.students))
        seen[row] = version

    def extend(
        self,
        students: list[str],
        seeds: list[int | None],
        origins: list[tuple[str, int]],
        cells: dict[str, Sequence[str | None]],
    ) -> None:
        """Append many students at once with their answers (slots not in ``cells``: None)."""
        before, added = len(self.students), len(students)
        for slot in {**self.answers, **cells}:
            new = cells.get(slot)
            if new is None:
                new = [None] * added
            if before:
                self.mark_present(slot).extend(new)
            else:  # the first rows: columns kept as read (a Coded column stays coded)
                self.answers[slot] = new
        self.students += students
        self.seeds += seeds
        self.origins += origins
        for seen in self.versions.values():
            seen.extend([None] * added)
        self._row.update(zip(students, range(before, before + added), strict=True))

    def row_of(self, student: str) -> int | None:
        """The row of a student already read, or None."""
        return self._row.get(student)

    def knows_any(self, students: Iterable[str]) -> bool:
        """Whether any of these students has been read already."""
        return not self._row.keys().isdisjoint(students)

    def origin_of(self, student: str) -> tuple[str, int] | None:
        """Where a student already read was first read (file, line), or None."""
        row = self._row.get(student)
        return None if row is None else self.origins[row]

    def admit(self, source: str, line: int, student: str, seed: int | None) -> int | None:
        """Add a student of a one-row-per-student format, or reject the row (no id, a
        duplicate); the new student's row, or None."""
        if not student:
            self.reject(source, line, "", NO_STUDENT)
            return None
        first = self.origin_of(student)
        if first is not None:
            self.reject(source, line, student, duplicate_student(student, first))
            return None
        return self.add_student(student, seed, (source, line))

    def reject(self, source: str, line: int, student: str, reason: str) -> None:
        """Record a row that could not be graded."""
        self.rejected.append(Rejection(source, line, student, reason))

    def take(self, rows: Sequence[int]) -> ClassAnswers:
        """A new class holding only these rows (no rejections): a partition."""
        part = ClassAnswers(self.slots, by_text=set(self.by_text), typed=set(self.typed))
        if isinstance(rows, range) and rows.step == 1:  # a run of rows: slices copy at C speed
            run = slice(rows.start, rows.stop)
            part.students, part.seeds = self.students[run], self.seeds[run]
            part.origins = self.origins[run]
            part.answers = {s: col[run] for s, col in self.answers.items()}
            part.versions = {q: seen[run] for q, seen in self.versions.items()}
        else:
            part.students = [self.students[r] for r in rows]
            part.seeds = [self.seeds[r] for r in rows]
            part.origins = [self.origins[r] for r in rows]
            part.answers = {s: [col[r] for r in rows] for s, col in self.answers.items()}
            part.versions = {q: [seen[r] for r in rows] for q, seen in self.versions.items()}
        part._row = {s: k for k, s in enumerate(part.students)}
        return part
