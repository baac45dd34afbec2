"""Submission files in pieces that read their own rows: a plan of at most ``chunk_rows``
students each, found in one pass over the files.

:func:`plan_run` (memory bounded by the number of students) splits each file into pieces and
finds what only a look at the whole class can tell: which slots are graded (the union of the
files' columns) and which rows repeat a student already read (rejected, as the in-memory reader
rejects them). Wide CSV and wide Parquet files (one row per student) are :class:`FilePiece` s (a
byte range of a CSV file, row groups of a Parquet file); long files, JSON Lines and LMS exports
(class-sized by nature) are read whole and then split into pieces. A student's answers must all
be in one file: a later file's rows for the same student are rejected as duplicates. Parquet rows
are numbered as the lines of the same table written as CSV (the header is line 1, the first row
line 2), so a rejection names the same line in both formats.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from quizgym.arrays import arrow_call, arrow_compute
from quizgym.errors import QuizgymError, SubmissionError
from quizgym.grading.census import Census, count_csv, counted
from quizgym.grading.pieces import CHUNK_ROWS, Piece, Plan, split_whole
from quizgym.grading.readers.layout import layout_of
from quizgym.grading.readers.long import read_long
from quizgym.grading.readers.submissions import read_submissions, recognised
from quizgym.grading.readers.text import Head, Record, csv_head, csv_records
from quizgym.grading.readers.whole import answer_columns, item_slots, split_wholes
from quizgym.grading.readers.wide import WideHeader, read_wide
from quizgym.grading.rows import ROSTER, Seen, column_of_type, duplicate_student, strip_id
from quizgym.grading.rows import kind_of as _kind
from quizgym.grading.scale.parquet import (
    column_kind,
    count_parquet,
    describe,
    open_parquet,
    parquet_rows,
)
from quizgym.grading.table import ClassAnswers, Rejection
from quizgym.issued import Issued
from quizgym.model import Bank

__all__ = ["FilePiece", "plan_run"]


@dataclass(frozen=True)
class FilePiece(Piece):
    """At most ``chunk_rows`` students of one wide or long CSV or Parquet file, read by whoever
    grades it."""

    header: tuple[str, ...] = ()
    """The header cells (Parquet: the columns read)."""
    header_line: int = 1
    offset: int = 0
    """CSV: byte offset of the piece's first record."""
    line: int = 0
    """CSV: the line at ``offset``; Parquet: the line of the first row (row index + 2)."""
    rows: int = 0
    """Records (CSV) or rows (Parquet) in the piece."""
    row_groups: tuple[int, ...] = ()
    """Parquet: the row groups holding the piece's rows."""
    skip: int = 0
    """Parquet: rows of the first row group before the piece."""
    bad_bytes: bool = True
    """Wide CSV: whether the file holds undecodable bytes (every row is then checked)."""
    delimiter: str = ","
    """CSV: the cell delimiter."""
    encoding: str = "utf-8"
    """CSV: the file's encoding."""

    def read(self, bank: Bank, columns: Sequence[str] | None = None) -> ClassAnswers:
        """The piece's rows read from its file (Parquet: only ``columns``, when given)."""
        answers = ClassAnswers(answer_columns(bank))
        rows: Iterator[Record]
        if self.kind == "csv":
            found = csv_records(
                Path(self.source),
                offset=self.offset,
                line=self.line,
                delimiter=self.delimiter,
                encoding=self.encoding,
                width=len(self.header),
            )
            rows = (r for _, r in zip(range(self.rows), found, strict=False))
            header = list(self.header)
        else:
            header = list(columns if columns is not None else self.header)
            rows = parquet_rows(
                Path(self.source),
                row_groups=self.row_groups,
                skip=self.skip,
                rows=self.rows,
                line=self.line,
                columns=header,
                batch_rows=max(1, min(self.rows, CHUNK_ROWS)),
            )
        if self.layout == "long":
            names = [h.casefold() for h in header]
            read_long(
                answers,
                self.source,
                names,
                rows,
                header_line=self.header_line,
                drops=dict(self.drops),
            )
        else:
            read_wide(
                answers, self.source, self.header_line, header, rows, bad_bytes=self.bad_bytes
            )
        split_wholes(bank, answers)
        # Column-level rejections are the file's (``head``), reported once, not once per piece.
        answers.rejected = [r for r in answers.rejected if not r.is_column]
        return answers

    def in_order(self, rows: list[Rejection]) -> list[Rejection]:
        """The file's own rejections (header: the smallest line) and the rows', in file order."""
        return sorted([*self.head, *rows], key=lambda r: r.line)


def plan_run(
    bank: Bank,
    submissions: Sequence[Path | str],
    *,
    chunk_rows: int,
    issued: Issued | None = None,
) -> Plan:
    """Split the input into pieces; find the graded slots and the repeated students.

    Args:
        bank: the bank.
        submissions: the files, in order.
        chunk_rows: the most students (rows) in a piece.
        issued: the issue manifest, for LMS response exports (see :func:`read_submissions`).

    Returns:
        The plan.

    Raises:
        SubmissionError: a file cannot be read at all.
    """
    if chunk_rows < 1:
        raise QuizgymError(f"--chunk-rows must be at least 1, not {chunk_rows}")
    seen = Seen()
    has_seeds = False
    seeds: Counter[int] = Counter()
    by_text: set[str] = set()
    typed: set[str] = set()
    first_line: dict[tuple[str, str], int] = {}  # long files: (file, student) → first line
    present: set[str] = set()
    roster: set[str] = set()
    pieces: list[Piece] = []
    census: dict[str, Census] = {}
    skipped: dict[str, int] = {}
    notes: list[str] = []
    for name in submissions:
        path = Path(name)
        if not path.is_file():
            raise SubmissionError(path, "no such file")
        suffix = path.suffix.lower()
        csv = suffix not in {".parquet", ".jsonl", ".ndjson"}
        head = _head(path) if csv else None  # a survey of the whole file's bytes: once
        if suffix == ".parquet":
            found = _plan_parquet(bank, path, chunk_rows, len(pieces))
            counted(census, str(path), count_parquet(path))
        elif head is None or _streamed(head.cells) is None:
            whole = read_submissions(bank, [path], issued=issued)
            for source, count in whole.census.items():
                counted(census, source, count)
            for source, rows in whole.skipped.items():
                skipped[source] = skipped.get(source, 0) + rows
            notes += whole.notes
            roster |= set(whole.roster)
            found = split_whole(whole, str(path), chunk_rows, len(pieces))
        else:
            if head.survey.note:
                notes.append(head.survey.note)
            counted(census, str(path), count_csv(path, delimiter=head.delimiter))
            found = _plan_csv(bank, path, chunk_rows, len(pieces), head)
        for piece in found:
            answers = piece.read(bank, _scan_columns(piece))
            drops = []
            for student, origin in zip(answers.students, answers.origins, strict=True):
                if piece.layout == "long" and (piece.source, student) in first_line:
                    raise SubmissionError(
                        path,
                        f"the rows of student {student} are not together (first at line "
                        f"{first_line[piece.source, student]}): sort a long file by student to "
                        "grade it in "
                        "chunks, or grade without --chunk-rows and --engine",
                        origin[1],
                    )
                reason = seen.claim(student, origin)
                if reason is not None:
                    drops.append((origin[1], reason))
                elif piece.layout == "long":
                    first_line[piece.source, student] = origin[1]
            # A row the piece itself found a duplicate names the first row of the run, as the
            # in-memory reader does (the piece's first may be a row an earlier piece had).
            for rejection in answers.rejected:
                first = seen.first(rejection.student)
                if _kind(rejection.reason) == "duplicate student" and first is not None:
                    again = duplicate_student(rejection.student, first)
                    if again != rejection.reason:
                        drops.append((rejection.line, again))
            if drops:
                piece = replace(piece, drops=tuple(drops))
                if piece.layout == "long":  # the rows of its dropped students answer nothing
                    answers = piece.read(bank)
            slots = _header_slots(bank, piece)
            present |= answers.present | slots
            roster |= set(answers.roster)
            has_seeds = has_seeds or any(s is not None for s in answers.seeds)
            seeds.update(s for s in answers.seeds if s is not None)
            by_text |= answers.by_text
            typed |= answers.typed | slots
            pieces.append(piece)
    return Plan(
        present=[s for s in bank.slot_ids() if s in present],
        pieces=pieces,
        sources=[str(Path(s)) for s in submissions],
        has_seeds=has_seeds,
        seeds=seeds,
        by_text=by_text - typed,
        roster=[r for r in ROSTER if r in roster],
        census=census,
        skipped=skipped,
        notes=notes,
    )


def _header_slots(bank: Bank, piece: Piece) -> set[str]:
    """The slots a wide piece's header has columns for (graded even if no row answers)."""
    if not isinstance(piece, FilePiece) or piece.layout != "wide" or not piece.header:
        return set()
    header = WideHeader.of(piece.header, answer_columns(bank))
    return item_slots(bank, (slot for _, slot in header.columns))


def _scan_columns(piece: Piece) -> list[str] | None:
    """Wide Parquet: the planning pass reads only the identity and roster columns (answers never
    reject a row; the roster columns are the run's, in every piece's part files)."""
    if not isinstance(piece, FilePiece) or piece.kind != "parquet" or piece.layout == "long":
        return None
    wanted = {"student", "seed", *ROSTER}
    return [h for h in piece.header if h.casefold() in wanted]


def _streamed(header: Sequence[str]) -> Literal["wide", "long"] | None:
    """Wide and long tables are read in pieces; the other layouts (LMS exports) whole."""
    kind = layout_of(header)
    return kind if kind in ("wide", "long") else None


def _head(path: Path) -> Head:
    return csv_head(path, recognised=recognised)


def _head_rejections(
    bank: Bank, source: str, header: list[str], line: int
) -> tuple[Rejection, ...]:
    probe = ClassAnswers(answer_columns(bank))
    read_wide(probe, source, line, header, iter(()), bad_bytes=False)
    return tuple(probe.rejected)


def _plan_csv(bank: Bank, path: Path, chunk_rows: int, first: int, head: Head) -> list[Piece]:
    layout = _streamed(head.cells)
    assert layout is not None
    header = head.cells
    source = str(path)
    starts: list[tuple[int, int, int]] = []  # (offset, its line, records)
    at = [h.casefold() for h in header].index("student")
    cut = _Cutter(layout, chunk_rows)
    offset, line = head.offset, head.next_line  # blank lines may come first
    records = csv_records(
        path,
        offset=offset,
        line=line,
        delimiter=head.delimiter,
        encoding=head.survey.encoding,
        width=len(header),
    )
    for record in records:
        cells = record.cells if record.cells is not None else record.first
        if cut(strip_id(cells[at]) if at < len(cells) else ""):
            starts.append((offset, line, 0))
        starts[-1] = (starts[-1][0], starts[-1][1], starts[-1][2] + 1)
        offset, line = record.after, record.end + 1
    if not starts:
        starts.append((offset, line, 0))
    return [
        FilePiece(
            index=first + k,
            source=source,
            kind="csv",
            layout=layout,
            header=tuple(header),
            header_line=head.line,
            offset=start,
            line=line,
            rows=count,
            bad_bytes=head.survey.bad_bytes,
            delimiter=head.delimiter,
            encoding=head.survey.encoding,
            head=_head_rejections(bank, source, header, head.line)
            if k == 0 and layout == "wide"
            else (),
        )
        for k, (start, line, count) in enumerate(starts)
    ]


def _plan_parquet(bank: Bank, path: Path, chunk_rows: int, first: int) -> list[Piece]:
    handle = open_parquet(path)
    schema = handle.schema_arrow
    source = str(path)
    header: list[str] = []
    unread: list[Rejection] = []
    binary = False
    for field_ in schema:
        name = str(field_.name).strip()
        kind = column_kind(field_.type)
        identity = name.casefold() in {"student", "seed", "question"}
        if kind is None or (identity and kind == "list"):
            if identity:
                raise SubmissionError(
                    path, f"the {name!r} column holds {describe(field_.type)} values, not text", 1
                )
            unread.append(Rejection(source, 1, "", column_of_type(name, describe(field_.type)), 0))
            continue
        binary = binary or kind == "binary"
        header.append(name)
    names = [h.casefold() for h in header]
    if "student" not in names:
        raise SubmissionError(
            path,
            "no 'student' column: expected wide (student, seed, question ids…) or long "
            "(student, question, answer) columns",
            1,
        )
    layout = _streamed(header) or "wide"
    pieces: list[Piece] = []
    sizes = [handle.metadata.row_group(g).num_rows for g in range(handle.num_row_groups)]
    row = 0
    starts = [sum(sizes[:g]) for g in range(len(sizes))]
    bounds = list(range(0, max(1, sum(sizes)), chunk_rows))
    if layout == "long":
        bounds = _student_changes(handle, header[names.index("student")], chunk_rows)
    for start, stop in zip(bounds, [*bounds[1:], sum(sizes)], strict=True):
        groups = tuple(g for g, s in enumerate(starts) if s < stop and s + sizes[g] > start)
        skip = start - starts[groups[0]] if groups else 0
        head: tuple[Rejection, ...] = ()
        if not pieces:
            head = tuple(unread)
            if layout == "wide":
                head += _head_rejections(bank, source, header, 1)
        pieces.append(
            FilePiece(
                index=first + len(pieces),
                source=source,
                kind="parquet",
                layout=layout,
                header=tuple(header),
                header_line=1,
                line=start + 2,
                rows=stop - start,
                row_groups=groups,
                skip=skip,
                bad_bytes=binary,
                head=head,
            )
        )
        row = stop
    assert row == sum(sizes)
    return pieces


class _Cutter:
    """Whether a row (by its student cell) starts a new piece.

    Wide: every ``chunk_rows`` rows. Long: at the first row of a student once the piece holds
    ``chunk_rows`` students, so a student's consecutive rows stay in one piece.
    """

    def __init__(self, layout: str, chunk_rows: int) -> None:
        self.layout, self.chunk_rows = layout, chunk_rows
        self.rows = self.students = 0
        self.last: str | None = None

    def __call__(self, student: str) -> bool:
        self.rows += 1
        if self.layout == "wide":
            return (self.rows - 1) % self.chunk_rows == 0
        if self.rows > 1 and student == self.last:
            return False
        self.last = student
        if self.rows == 1 or self.students == self.chunk_rows:
            self.students = 1
            return True
        self.students += 1
        return False


def _student_changes(handle: Any, column: str, chunk_rows: int) -> list[int]:
    """Long Parquet: the rows where pieces start (see :class:`_Cutter`)."""
    import pyarrow as pa

    to_text = arrow_compute().CastOptions.safe(pa.string())
    cut = _Cutter("long", chunk_rows)
    starts: list[int] = []
    row = 0
    for batch in handle.iter_batches(batch_size=CHUNK_ROWS, columns=[column]):
        values = arrow_call(
            "utf8_trim_whitespace", arrow_call("cast", batch.column(0), options=to_text)
        )
        for student in values.to_pylist():
            if cut(student or ""):
                starts.append(row)
            row += 1
    return starts or [0]
