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

from quizgym.grading.census import Census
from quizgym.grading.rows import Origin, clean_id, duplicate_student, id_problem, look_of

__all__ = ["ClassAnswers", "Coded", "Origin", "Rejection"]


@dataclass(frozen=True)
class Rejection:
    """A row (or header cell) that could not be graded, and why."""

    source: str
    line: int
    student: str
    reason: str
    records: int = 1
    """The input records it stands for: 1 for a row, 0 for a column ignored, a long file's
    rows for a student rejected after they were read (students in = graded + rejected)."""

    @property
    def is_column(self) -> bool:
        """A header cell (a column ignored), not a student's row."""
        return self.records == 0


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

    def at(self, rows: npt.NDArray[np.int64]) -> list[str | None]:
        """The texts of some rows (``[self[r] for r in rows]``, without a lookup per row)."""
        return list(map(self.texts.__getitem__, self.codes[rows].tolist()))

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
    origins: list[Origin] = field(default_factory=list)
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
    records: list[int] = field(default_factory=list)
    """Per student: the input records their answers came from (a long file's rows; else 1)."""
    roster: dict[str, list[str | None]] = field(default_factory=dict)
    """Per roster field some file has (``name``, ``email``, ``section``): each student's value."""
    skipped: dict[str, int] = field(default_factory=dict)
    """Per file: records that are no student (the summary rows an LMS appends)."""
    census: dict[str, Census] = field(default_factory=dict)
    """Per file read: its records as counted apart from its reader (see ``grading.census``)."""
    notes: list[str] = field(default_factory=list)
    """How files were read that a teacher should know (a file read as cp1252)."""
    _row: dict[str, int] | None = field(default_factory=dict, repr=False)
    """Each student's row; None until asked for (a partition is made from students already
    known to be distinct, and is seldom asked)."""

    def _rows(self) -> dict[str, int]:
        """Each student's row, by :func:`~quizgym.grading.rows.look_of` (ids that print alike
        are one student)."""
        if self._row is None:
            students = self.students
            if all(map(str.isascii, students)):  # most classes: the ids are their looks
                self._row = {s: k for k, s in enumerate(students)}
            else:
                self._row = {look_of(s): k for k, s in enumerate(students)}
        return self._row

    def __len__(self) -> int:
        return len(self.students)

    @property
    def present(self) -> set[str]:
        """The slots some file has a column (or an answer) for."""
        return set(self.answers)

    def column(self, slot: str) -> Sequence[str | None]:
        """The answers to a slot, one per student (all None for a slot nobody was asked)."""
        return self.answers.get(slot) or [None] * len(self.students)

    def keep_present(self, slot: str) -> None:
        """Make a slot graded, its column kept as it is (a coded column stays coded); a slot
        without one gets a blank column."""
        if slot not in self.answers:
            self.answers[slot] = [None] * len(self.students)

    def mark_present(self, slot: str) -> list[str | None]:
        """Make a slot graded; return its column, as a list that can be changed."""
        column = self.answers.get(slot)
        if not isinstance(column, list):
            column = self.answers[slot] = (
                [None] * len(self.students) if column is None else list(column)
            )
        return column

    def mark_roster(self, name: str) -> list[str | None]:
        """Make a roster field known; return its column, as a list that can be changed."""
        column = self.roster.get(name)
        if column is None:
            column = self.roster[name] = [None] * len(self.students)
        return column

    def add_student(self, student: str, seed: int | None, origin: tuple[str, int]) -> int:
        """Append a student with no answers yet; return their row."""
        row = len(self.students)
        self.students.append(student)
        self.seeds.append(seed)
        self.origins.append(origin)
        self.records.append(1)
        self._rows()[look_of(student)] = row
        for slot in self.answers:
            self.mark_present(slot).append(None)
        for seen in self.versions.values():
            seen.append(None)
        for column in self.roster.values():
            column.append(None)
        return row

    def set_version(self, slot: str, row: int, version: int) -> None:
        """Record the version of a slot's question a student answered (see :attr:`versions`)."""
        seen = self.versions.setdefault(slot, [None] * len(self.students))
        seen[row] = version

    def extend(
        self,
        students: list[str],
        seeds: list[int | None],
        origins: Iterable[Origin],
        cells: dict[str, Sequence[str | None]],
        roster: dict[str, list[str | None]] | None = None,
    ) -> None:
        """Append many students at once with their answers (slots not in ``cells``: None) and
        roster fields (fields not in ``roster``: None)."""
        before, added = len(self.students), len(students)
        for name in {**self.roster, **(roster or {})}:
            self.mark_roster(name).extend((roster or {}).get(name) or [None] * added)
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
        self.origins.extend(origins)
        self.records += [1] * added
        for seen in self.versions.values():
            seen.extend([None] * added)
        if before or self._row:
            looks = map(look_of, students)
            self._rows().update(zip(looks, range(before, before + added), strict=True))
        else:  # the first students: their index is built when it is first asked for
            self._row = None

    def row_of(self, student: str) -> int | None:
        """The row of a student already read, or None."""
        return self._rows().get(look_of(student))

    def knows_any(self, students: Iterable[str]) -> bool:
        """Whether any of these students has been read already."""
        return not self._rows().keys().isdisjoint(map(look_of, students))

    def origin_of(self, student: str) -> tuple[str, int] | None:
        """Where a student already read was first read (file, line), or None."""
        row = self._rows().get(look_of(student))
        return None if row is None else self.origins[row]

    def admit(self, source: str, line: int, student: str, seed: int | None) -> int | None:
        """Add a student of a one-row-per-student format, or reject the row (no id, an id
        with control characters, a duplicate); the new student's row, or None."""
        problem = id_problem(student)
        if problem is not None:
            self.reject(source, line, clean_id(student), problem)
            return None
        row = self.row_of(student)
        if row is not None:
            first = self.origins[row]
            named = self.students[row]
            self.reject(source, line, student, duplicate_student(student, first, named))
            return None
        return self.add_student(student, seed, (source, line))

    def reject(self, source: str, line: int, student: str, reason: str) -> None:
        """Record a row that could not be graded."""
        self.rejected.append(Rejection(source, line, student, reason))

    def ignore_column(self, source: str, line: int, reason: str) -> None:
        """Record a column that is not graded (reported on the header line)."""
        self.rejected.append(Rejection(source, line, "", reason, records=0))

    def skip(self, source: str) -> None:
        """Count a record that is no student (an LMS's summary row)."""
        self.skipped[source] = self.skipped.get(source, 0) + 1

    def take(self, rows: Sequence[int]) -> ClassAnswers:
        """A new class holding only these rows (no rejections): a partition."""
        part = ClassAnswers(self.slots, by_text=set(self.by_text), typed=set(self.typed))
        if isinstance(rows, range) and rows.step == 1:  # a run of rows: slices copy at C speed
            run = slice(rows.start, rows.stop)
            part.students, part.seeds = self.students[run], self.seeds[run]
            part.origins, part.records = self.origins[run], self.records[run]
            part.answers = {s: col[run] for s, col in self.answers.items()}
            part.versions = {q: seen[run] for q, seen in self.versions.items()}
            part.roster = {n: column[run] for n, column in self.roster.items()}
        else:
            part.students = [self.students[r] for r in rows]
            part.seeds = [self.seeds[r] for r in rows]
            part.origins = [self.origins[r] for r in rows]
            part.records = [self.records[r] for r in rows]
            part.answers = {s: [col[r] for r in rows] for s, col in self.answers.items()}
            part.versions = {q: [seen[r] for r in rows] for q, seen in self.versions.items()}
            part.roster = {n: [column[r] for r in rows] for n, column in self.roster.items()}
        part._row = None
        return part
