"""Wide tables: a ``student`` column (optional ``seed``), then one column per answer slot.

One reader with one set of row rules (:mod:`quizgym.grading.rows`). Rows reach it from a CSV
file read whole, from a byte range of one (a chunk), or from Parquet row groups. Two fast paths
take a file only when nothing in it will be rejected, and then fill whole columns at once: pyarrow
reading a clean CSV straight into coded columns, and the standard library's rows zipped into
columns. Either returns False, having changed nothing, for anything else, and the careful path
reads row by row. A test holds all three to the same class.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np

from quizgym.grading.readers.layout import layout_of
from quizgym.grading.rows import (
    NO_STUDENT,
    Origin,
    Seen,
    clean_id,
    read_seed,
    row_problem,
    unknown_question,
)
from quizgym.grading.table import ClassAnswers, Coded

__all__ = ["WideHeader", "read_wide", "read_wide_text"]


@dataclass(frozen=True, kw_only=True)
class WideHeader:
    """What a wide header says: where the student and seed are, and which columns are slots."""

    width: int
    student: int
    seed: int | None
    columns: tuple[tuple[int, str], ...]
    """(index, slot) of every graded column."""
    ignored: tuple[str, ...]
    """Why other columns are ignored, one reason each (reported on the header line)."""

    @classmethod
    def of(cls, header: Sequence[str], slots: Sequence[str]) -> WideHeader:
        """Read a header (cells stripped). An unknown column is ignored, and so is a repeated one
        (the first of the same name is graded): each is reported, never dropped silently."""
        names = [h.lower() for h in header]
        student = names.index("student")
        seed = names.index("seed") if "seed" in names else None
        known = set(slots)
        columns: list[tuple[int, str]] = []
        ignored: list[str] = []
        first: dict[str, int] = {}
        for index, name in enumerate(header):
            if index in (student, seed):
                continue
            if name in first:
                ignored.append(
                    f"duplicate column {name!r} (column {index + 1}; the first is column "
                    f"{first[name] + 1}); column ignored"
                )
            elif name in known:
                columns.append((index, name))
                first[name] = index
            else:
                ignored.append(
                    f"{unknown_question(name, slots, what='question column')}; column ignored"
                )
                first[name] = index
        return cls(
            width=len(header),
            student=student,
            seed=seed,
            columns=tuple(columns),
            ignored=tuple(ignored),
        )


def read_wide(
    answers: ClassAnswers,
    source: str,
    header_line: int,
    header: list[str],
    rows: Iterator[tuple[int, list[str]]],
    *,
    bad_bytes: bool = True,
) -> None:
    """Read wide rows into ``answers``, rejecting each row that breaks a rule.

    Args:
        answers: the class being read (students already in it count for duplicates).
        source: the file's name, for rejections and origins.
        header_line: the line of the header (its ignored columns are rejected there).
        header: the header's cells, stripped.
        rows: (line, cells) of each data row.
        bad_bytes: whether some row may hold undecodable bytes (every row is then checked).
    """
    spec = WideHeader.of(header, answers.slots)
    for reason in spec.ignored:
        answers.reject(source, header_line, "", reason)
    answers.typed.update(name for _, name in spec.columns)
    listed = list(rows)
    if not bad_bytes and _read_clean_wide(answers, source, listed, spec):
        return
    seen = Seen(answers.origin_of)
    accepted: list[list[str]] = []
    students: list[str] = []
    seeds: list[int | None] = []
    origins: list[Origin] = []
    for line, row in listed:
        problem = row_problem(row, spec.width)
        if problem is not None:
            student = clean_id(row[spec.student]) if spec.student < len(row) else ""
            answers.reject(source, line, student, problem)
            continue
        student = row[spec.student].strip()
        seed = read_seed(row[spec.seed]) if spec.seed is not None else None
        if isinstance(seed, str):
            answers.reject(source, line, student, seed)
            continue
        if not student:
            answers.reject(source, line, "", NO_STUDENT)
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
    )


def _read_clean_wide(
    answers: ClassAnswers, source: str, rows: list[tuple[int, list[str]]], spec: WideHeader
) -> bool:
    """The standard library's fast path: whole columns at once, when no row will be rejected."""
    if any(len(row) != spec.width for _, row in rows):
        return False
    students = [row[spec.student].strip() for _, row in rows]
    raw_seeds = None if spec.seed is None else [row[spec.seed] for _, row in rows]
    seeds = _clean_rows(answers, students, raw_seeds)
    if seeds is None:
        return False
    cells = list(zip(*(row for _, row in rows), strict=True)) if rows else [()] * spec.width
    answers.extend(
        students,
        seeds,
        [(source, line) for line, _ in rows],
        {name: [c or None for c in cells[index]] for index, name in spec.columns},
    )
    return True


def _clean_rows(
    answers: ClassAnswers, students: list[str], raw_seeds: list[str] | None
) -> list[int | None] | None:
    """The seeds of a fast-path file, or None when some row needs the careful path.

    The rules of :func:`read_wide`, checked for whole columns: every student present, new and
    named once, and every seed a whole number or blank.
    """
    distinct = dict.fromkeys(students)
    if len(distinct) != len(students) or "" in distinct:
        return None
    if answers.knows_any(distinct):
        return None
    if raw_seeds is None:
        return [None] * len(students)
    seeds = [read_seed(s) for s in raw_seeds]
    if any(isinstance(s, str) for s in seeds):
        return None
    return [s for s in seeds if not isinstance(s, str)]


def read_wide_text(answers: ClassAnswers, source: str, text: str) -> bool:
    """Read a clean wide CSV with pyarrow into coded columns, or return False.

    The fast path for a file with one row per line and nothing to reject. The text must be
    valid UTF-8 (the caller knows from decoding it). Returns False, having changed nothing,
    whenever the file is anything else; :func:`read_wide` then reads it.
    """
    return _read_wide_arrow(answers, source, text)


def _read_wide_arrow(answers: ClassAnswers, source: str, text: str) -> bool:
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:  # pragma: no cover - the parquet extra is not installed
        return False
    if "\r" in text and "\r" in text.replace("\r\n", ""):
        return False  # old Mac line endings (lone CR): the standard library path reads them
    first = text.split("\n", 1)[0].rstrip("\r")
    header = [h.strip() for h in next(csv.reader([first]), [])]
    if layout_of(header) != "wide" or len(set(header)) != len(header) or first.count('"') % 2:
        return False
    try:
        table = pacsv.read_csv(
            io.BytesIO(text.encode()),
            read_options=pacsv.ReadOptions(column_names=header, skip_rows=1),
            convert_options=pacsv.ConvertOptions(
                # Answer columns arrive dictionary-encoded (distinct texts + codes) from the
                # reader itself; student and seed stay plain strings.
                column_types={
                    h: pa.string()
                    if h.lower() in {"student", "seed"}
                    else pa.dictionary(pa.int32(), pa.string())
                    for h in header
                },
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, ValueError):
        return False
    table = table.unify_dictionaries()  # one dictionary per column across the reader's chunks
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if table.num_rows != lines - 1:  # a blank line or a value spanning lines: no line numbers
        return False
    spec = WideHeader.of(header, answers.slots)
    students = [s.strip() for s in table.column(spec.student).to_pylist()]
    raw_seeds = None if spec.seed is None else table.column(spec.seed).to_pylist()
    seeds = _clean_rows(answers, students, raw_seeds)
    if seeds is None:
        return False
    for reason in spec.ignored:
        answers.reject(source, 1, "", reason)
    answers.typed.update(name for _, name in spec.columns)
    answers.extend(
        students,
        seeds,
        list(zip(repeat(source), range(2, len(students) + 2))),
        {name: _coded(table.column(index)) for index, name in spec.columns},
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
