"""Wide tables: a ``student`` column (optional ``seed``), then one column per answer slot.

One reader with one set of row rules (:mod:`quizgym.grading.rows`). Rows reach it as records of
a CSV file read whole or from a byte range of one (a chunk), or from Parquet row groups. Two fast
paths take a file only when nothing in it will be rejected, and then fill whole columns at once:
pyarrow reading a clean CSV straight into coded columns, and the standard library's rows zipped
into columns. Either returns False, having changed nothing, for anything else, and the careful
path reads row by row. A test holds all three to the same class.

Header cells are matched without regard to case (``Student``, ``SEED``, ``TF-Bert``); ``name``,
``email`` and ``section`` are roster columns (carried into the gradebooks); any other column is
reported once, on the header line, and ignored.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from quizgym.grading.census import Census
from quizgym.grading.readers.arrow import ArrowTable, arrow_readable, start_arrow_read
from quizgym.grading.readers.text import Head, Record
from quizgym.grading.rows import (
    MAX_CELL,
    ROSTER,
    Origin,
    Seen,
    bad_id,
    cell_problem,
    clean_id,
    duplicate_column,
    id_problem,
    look_of,
    read_seed,
    row_problem,
    second_header,
    strip_id,
    unknown_question,
)
from quizgym.grading.table import ClassAnswers, Coded

__all__ = [
    "ArrowRead",
    "WideHeader",
    "abandon",
    "read_wide",
    "read_wide_arrow",
    "slot_named",
    "start_wide_arrow",
]


def slot_named(name: str, slots: Sequence[str]) -> str | None:
    """The slot a header cell or answer key names, in any case (an exact name wins; two slots
    that differ only in case are told apart by exact names alone)."""
    if name in slots:
        return name
    return _folded(tuple(slots)).get(name.casefold())


@functools.lru_cache(maxsize=8)
def _folded(slots: tuple[str, ...]) -> dict[str, str]:
    """A bank's slots by their casefolded ids (ids that fold alike are left out), once per bank."""
    found: dict[str, list[str]] = {}
    for slot in slots:
        found.setdefault(slot.casefold(), []).append(slot)
    return {folded: same[0] for folded, same in found.items() if len(same) == 1}


@dataclass(frozen=True, kw_only=True)
class WideHeader:
    """What a wide header says: where the student and seed are, and which columns are slots."""

    width: int
    student: int
    seed: int | None
    columns: tuple[tuple[int, str], ...]
    """(index, slot) of every graded column."""
    roster: tuple[tuple[int, str], ...] = ()
    """(index, field) of every roster column (``name``, ``email``, ``section``)."""
    ignored: tuple[str, ...] = ()
    """Why other columns are ignored, one reason each (reported on the header line)."""
    header_student: str = "student"
    """The header's student cell, casefolded (a row that repeats it is a second header)."""

    @classmethod
    def of(cls, header: Sequence[str], slots: Sequence[str]) -> WideHeader:
        """Read a header (cells stripped). An unknown column is ignored, and so is a repeated one
        (the first of the same name is graded): each is reported, never dropped silently."""
        names = [h.casefold() for h in header]
        student = names.index("student")
        seed = names.index("seed") if "seed" in names else None
        columns: list[tuple[int, str]] = []
        roster: list[tuple[int, str]] = []
        ignored: list[str] = []
        first: dict[str, int] = {"student": student}
        if seed is not None:
            first["seed"] = seed
        for index, name in enumerate(header):
            if index in (student, seed):
                continue
            slot = slot_named(name, slots)
            key = slot or names[index]
            if key in first:
                ignored.append(duplicate_column(name, index, first[key]))
                continue
            first[key] = index
            if slot is not None:
                columns.append((index, slot))
            elif names[index] in ROSTER:
                roster.append((index, names[index]))
            else:
                ignored.append(unknown_question(name, slots, what="question column"))
        return cls(
            width=len(header),
            student=student,
            seed=seed,
            columns=tuple(columns),
            roster=tuple(roster),
            ignored=tuple(ignored),
            header_student=names[student],
        )

    def repeats_header(self, student: str) -> bool:
        """Whether a row's (stripped) student cell is the header's: a second header."""
        return student.lstrip("\ufeff").casefold() == self.header_student


def read_wide(
    answers: ClassAnswers,
    source: str,
    header_line: int,
    header: list[str],
    rows: Iterable[Record],
    *,
    bad_bytes: bool = True,
) -> None:
    """Read wide rows into ``answers``, rejecting each row that breaks a rule.

    Args:
        answers: the class being read (students already in it count for duplicates).
        source: the file's name, for rejections and origins.
        header_line: the line of the header (its ignored columns are reported there).
        header: the header's cells, stripped.
        rows: the data records.
        bad_bytes: whether some row may hold undecodable bytes (every row is then checked).
    """
    spec = WideHeader.of(header, answers.slots)
    for reason in spec.ignored:
        answers.ignore_column(source, header_line, reason)
    answers.typed.update(name for _, name in spec.columns)
    for _, name in spec.roster:
        answers.mark_roster(name)
    listed = list(rows)
    if not bad_bytes and _read_clean_wide(answers, source, listed, spec):
        return
    seen = Seen(answers.origin_of)
    accepted: list[list[str]] = []
    students: list[str] = []
    seeds: list[int | None] = []
    origins: list[Origin] = []
    for record in listed:
        line = record.start
        if record.cells is None:
            assert record.problem is not None
            first = record.first
            who = clean_id(first[spec.student]) if spec.student < len(first) else ""
            answers.reject(source, line, who, record.problem)
            continue
        row = record.cells
        problem = row_problem(row, spec.width, bad_bytes=bad_bytes, size=record.size)
        if problem is not None:
            student = clean_id(row[spec.student]) if spec.student < len(row) else ""
            answers.reject(source, line, student, problem)
            continue
        student = strip_id(row[spec.student])
        if spec.repeats_header(student):
            answers.reject(source, line, "", second_header(header_line))
            continue
        seed = read_seed(row[spec.seed]) if spec.seed is not None else None
        if isinstance(seed, str):
            answers.reject(source, line, clean_id(student), seed)
            continue
        problem = id_problem(student)
        if problem is not None:
            answers.reject(source, line, clean_id(student), problem)
            continue
        duplicate = seen.claim(student, (source, line))
        if duplicate is not None:
            answers.reject(source, line, student, duplicate)
            continue
        students.append(student)
        seeds.append(seed)
        origins.append((source, line))
        accepted.append(row)
    cells = list(zip(*accepted, strict=True)) if accepted else [()] * spec.width
    answers.extend(
        students,
        seeds,
        origins,
        {name: [c or None for c in cells[index]] for index, name in spec.columns},
        {name: [c.strip() or None for c in cells[index]] for index, name in spec.roster},
    )


def _read_clean_wide(
    answers: ClassAnswers, source: str, rows: list[Record], spec: WideHeader
) -> bool:
    """The standard library's fast path: whole columns at once, when no row will be rejected."""
    if any(r.cells is None or len(r.cells) != spec.width for r in rows):
        return False
    table = [r.cells for r in rows if r.cells is not None]
    if any(cell_problem(row) is not None for row in table):
        return False
    students = [strip_id(row[spec.student]) for row in table]
    raw_seeds = None if spec.seed is None else [row[spec.seed] for row in table]
    seeds = _clean_rows(answers, students, raw_seeds, spec)
    if seeds is None:
        return False
    cells = list(zip(*table, strict=True)) if table else [()] * spec.width
    answers.extend(
        students,
        seeds,
        [(source, r.start) for r in rows],
        {name: [c or None for c in cells[index]] for index, name in spec.columns},
        {name: [c.strip() or None for c in cells[index]] for index, name in spec.roster},
    )
    return True


def _clean_rows(
    answers: ClassAnswers,
    students: list[str],
    raw_seeds: list[str] | None,
    spec: WideHeader,
    *,
    named_once: bool | None = None,
) -> list[int | None] | None:
    """The seeds of a fast-path file, or None when some row needs the careful path.

    The rules of :func:`read_wide`, checked for whole columns: every student present, new,
    named once (``named_once``, when pyarrow has counted them already), with no control
    character and not the header's own word, and every seed a whole number or blank.
    """
    if named_once is None:
        distinct = dict.fromkeys(students)
        named_once = len(distinct) == len(students) and "" not in distinct
    if not named_once or answers.knows_any(students):
        return None
    joined = "\n".join(students)
    printable = joined.isascii() and joined.replace("\n", "").isprintable()
    if not printable and any(map(bad_id, students)):
        return None
    if not joined.isascii() and len(set(map(look_of, students))) != len(students):
        return None  # ids that print alike: the careful path names them
    # No id holds a line break now: the header's word between two of them is an id that is it.
    if f"\n{spec.header_student}\n" in f"\n{joined}\n".casefold():
        return None
    if raw_seeds is None:
        return [None] * len(students)
    seeds = [read_seed(s) for s in raw_seeds]
    if any(isinstance(s, str) for s in seeds):
        return None
    return [s for s in seeds if not isinstance(s, str)]


@dataclass
class ArrowRead:
    """pyarrow reading a wide CSV in a thread of its own (:func:`start_wide_arrow`), while the
    caller counts its records; :func:`read_wide_arrow` takes the result."""

    spec: WideHeader
    plain: frozenset[int]
    """The columns read as plain strings (the others are dictionary-encoded)."""
    table: Future[ArrowTable]


def start_wide_arrow(answers: ClassAnswers, path: Path, head: Head) -> ArrowRead | None:
    """Start reading a wide CSV with pyarrow, or return None when its header already says the
    fast path cannot take it (or pyarrow is not installed).

    pyarrow does not hold the GIL while it reads, so the census of the file
    (:func:`~quizgym.grading.census.count_csv`) runs meanwhile. Whoever starts a read must end
    it with :func:`read_wide_arrow` or :func:`abandon`.
    """
    if not arrow_readable(head):
        return None
    spec = WideHeader.of(head.cells, answers.slots)
    plain = frozenset(
        k for k in (spec.student, spec.seed, *(k for k, _ in spec.roster)) if k is not None
    )
    table = start_arrow_read(path, head, plain, spec.student)
    return None if table is None else ArrowRead(spec, plain, table)


def abandon(read: ArrowRead | None) -> None:
    """Wait for a read that is not wanted (no thread outlives its reader)."""
    if read is not None:
        wait([read.table])


def read_wide_arrow(
    answers: ClassAnswers, source: str, head: Head, census: Census, read: ArrowRead
) -> bool:
    """Take a clean wide CSV that pyarrow read into coded columns, or return False.

    The fast path for a file with one row per line and nothing to reject: valid UTF-8, its
    header on line 1 and every other line a row (``census`` says so, and pyarrow must read as
    many). Returns False, having changed nothing, whenever the file is anything else;
    :func:`read_wide` then reads it.
    """
    return _read_wide_arrow(answers, source, head, census, read)


def _read_wide_arrow(
    answers: ClassAnswers, source: str, head: Head, census: Census, read: ArrowRead
) -> bool:
    import pyarrow as pa

    spec = read.spec
    if not census.simple:
        abandon(read)  # what pyarrow read is not taken
        return False
    try:
        found = read.table.result()
    except (pa.ArrowException, ValueError, OSError):  # pyarrow could not: the careful reader
        return False
    table = found.table  # one dictionary per column across the reader's chunks
    if table.num_rows != census.records:  # pyarrow read otherwise than the census counts
        return False
    if max(found.longest, default=0) > MAX_CELL:  # no cell longer than a cell may be
        return False
    students = found.students.to_pylist()
    raw_seeds = None if spec.seed is None else table.column(spec.seed).to_pylist()
    seeds = _clean_rows(answers, students, raw_seeds, spec, named_once=found.named_once)
    if seeds is None:
        return False
    for reason in spec.ignored:
        answers.ignore_column(source, 1, reason)
    answers.typed.update(name for _, name in spec.columns)
    lines = [(source, line) for line in range(2, 2 + len(students))]  # a student a line
    answers.extend(
        students,
        seeds,
        lines,
        {name: _coded(table.column(index)) for index, name in spec.columns},
        {
            name: [v.strip() or None for v in table.column(index).to_pylist()]
            for index, name in spec.roster
        },
    )
    return True


def _coded(column: Any) -> Coded:
    """A dictionary-typed pyarrow column (one dictionary) as a :class:`Coded` column.

    An empty cell is None. The codes are read from the index buffers: ``to_numpy()`` would
    import pandas (0.4 s) when it is installed.
    """
    if not column.num_chunks:
        return Coded([], np.zeros(0, dtype=np.int64))
    texts: list[str | None] = [t or None for t in column.chunk(0).dictionary.to_pylist()]
    codes = []
    for chunk in column.chunks:
        indices = chunk.indices
        assert indices.null_count == 0
        width = indices.type.bit_width // 8
        buffer = indices.buffers()[1]
        codes.append(
            np.frombuffer(
                buffer, dtype=f"<i{width}", count=len(indices), offset=indices.offset * width
            )
        )
    return Coded(texts, np.concatenate(codes).astype(np.int64))
