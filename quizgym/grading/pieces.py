"""A grading run in pieces: plan them, read and grade each one anywhere, with the same code.

A run (:mod:`quizgym.grading.run`) has three stages, and every engine runs the same functions:

1. **plan** — :func:`plan_run` (one pass over the input on the client, memory bounded by the
   number of students) splits each file into :class:`Piece` s of at most ``chunk_rows`` rows and
   finds what only a look at the whole class can tell: which slots are graded (the union of the
   files' columns) and which rows repeat a student already read (rejected, as the in-memory reader
   rejects them). :func:`plan_loaded` does the same for a class already read whole, in memory.
2. **grade** — :func:`grade_piece` (in this process, or on a Dask worker) reads one piece itself
   (a byte range of a CSV file, row groups of a Parquet file, or a slice of a class read whole),
   grades it with :func:`~quizgym.grading.batch.grade_partition`, and either keeps the graded
   partition (a run in this process's memory) or writes its rows of every per-student table to
   part files; it returns a :class:`PieceResult` with the :class:`~quizgym.analysis.Sums` and
   the rejected rows.
3. **assemble** — :func:`quizgym.grading.run.assemble` writes the output folder once.

Wide CSV and wide Parquet files (one row per student) are streamed; long files, JSON Lines and
LMS exports (class-sized by nature) are read whole and then split into pieces. A student's answers
must all be in one file: a later file's rows for the same student are rejected as duplicates.
Parquet rows are numbered as the lines of the same table written as CSV (the header is line 1,
the first row line 2), so a rejection names the same line in both formats.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from quizgym.analysis import Sums
from quizgym.arrays import arrow_call, arrow_compute
from quizgym.errors import QuizgymError, SubmissionError
from quizgym.grading.batch import SEEDS, GradedPartition, grade_partition, partitions
from quizgym.grading.census import Census, count_csv, count_parquet, counted
from quizgym.grading.compare import seeds_of
from quizgym.grading.decisions import Decisions
from quizgym.grading.outputs import feedback_name, tables, write_feedback
from quizgym.grading.readers.layout import layout_of
from quizgym.grading.readers.long import read_long
from quizgym.grading.readers.parquet import column_kind, describe, open_parquet, parquet_rows
from quizgym.grading.readers.submissions import read_submissions, recognised
from quizgym.grading.readers.text import Head, Record, csv_head, csv_records
from quizgym.grading.readers.whole import answer_columns, item_slots, split_wholes
from quizgym.grading.readers.wide import WideHeader, read_wide
from quizgym.grading.review import Review, review_of
from quizgym.grading.rows import ROSTER, Seen, column_of_type, duplicate_student, strip_id
from quizgym.grading.rows import kind_of as _kind
from quizgym.grading.sums import partial_sums
from quizgym.grading.table import ClassAnswers, Rejection
from quizgym.grading.versions import Versions, rejections
from quizgym.grading.wrong_seed import SeedEvidence, seed_evidence
from quizgym.grading.wrong_version import VersionCounts, version_counts
from quizgym.issued import Issued
from quizgym.model import Bank
from quizgym.solver import CompiledBank, compiled

__all__ = [
    "CHUNK_ROWS",
    "Job",
    "Piece",
    "PieceResult",
    "Plan",
    "grade_piece",
    "plan_loaded",
    "plan_run",
    "read_piece",
]

CHUNK_ROWS = 25_000


@dataclass(frozen=True)
class Piece:
    """A unit of work: at most ``chunk_rows`` students of one file, read by whoever grades it."""

    index: int
    source: str
    kind: Literal["csv", "parquet", "loaded"]
    layout: Literal["wide", "long"] = "wide"
    """One row per student, or one row per answer (``student, question, answer``)."""
    header: tuple[str, ...] = ()
    """Wide CSV: the header cells."""
    header_line: int = 1
    offset: int = 0
    """Wide CSV: byte offset of the piece's first record."""
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
    loaded: ClassAnswers | None = None
    """A file read whole: this piece's students."""
    drops: tuple[tuple[int, str], ...] = ()
    """(line, reason) of rows that repeat a student read earlier."""
    head: tuple[Rejection, ...] = ()
    """Rejections that belong to the file rather than a row (reported with its first piece)."""


@dataclass
class Plan:
    """The pieces of a run and the slots graded."""

    present: list[str]
    pieces: list[Piece] = field(default_factory=list)
    streamed: bool = True
    """Whether the pieces read their own rows from the files (False: a class read whole)."""
    sources: list[str] = field(default_factory=list)
    """The files, in the order given: rejections are reported in this order, then by line."""
    has_seeds: bool = False
    """Whether some row of the input has a seed."""
    seeds: Counter[int] = field(default_factory=Counter)
    """How many rows of the input have each seed."""
    by_text: set[str] = field(default_factory=set)
    """Choice slots answered only with choice texts (LMS exports), in every file."""
    roster: list[str] = field(default_factory=list)
    """The roster fields some file has (``name``, ``email``, ``section``)."""
    census: dict[str, Census] = field(default_factory=dict)
    """Per file: its records, counted apart from its reader (checked at the end of the run)."""
    skipped: dict[str, int] = field(default_factory=dict)
    """Per file: records that are no student (an LMS's summary rows)."""
    notes: list[str] = field(default_factory=list)
    """How files were read that a teacher should know (a file read as cp1252)."""


@dataclass(frozen=True, kw_only=True)
class Job:
    """What every piece of a run does, whichever engine grades it."""

    present: tuple[str, ...]
    """The slots graded in this run (every piece grades the same ones)."""
    parts_dir: Path | None
    """Where pieces write their part files; None: keep each graded partition in memory."""
    gradebook: str | None = None
    """Also write this LMS's gradebook rows."""
    feedback: bool = False
    """Also write each student's feedback file."""
    versions: Versions = SEEDS
    """How each student's version of each question is known."""
    decisions: Decisions | None = None
    """A teacher's decisions from a review file (``grade --review``)."""
    roster: tuple[str, ...] = ()
    """The roster fields of the run (every piece carries the same ones)."""
    seeds: tuple[int, ...] = ()
    """The class's seeds every student's answers are held against
    (:func:`~quizgym.grading.wrong_seed.common_seeds`)."""
    irt: bool = False
    """Keep each student's right/wrong answers for the IRT fit (``grade --irt``)."""


@dataclass
class PieceResult:
    """What grading one piece produced (small unless it keeps its graded partition)."""

    index: int
    students: int
    sums: Sums
    rejected: list[Rejection]
    files: dict[str, Path] = field(default_factory=dict)
    """Part files by table name (with ``Job.parts_dir``)."""
    graded: GradedPartition | None = None
    """The graded partition itself (without ``Job.parts_dir``)."""
    feedback: list[str] = field(default_factory=list)
    """With feedback: each student's base file name (``feedback_name``), in order."""
    seeds: dict[str, int] = field(default_factory=dict)
    """The students given a seed, and their seed (``--compare`` shows their own keys)."""
    version_counts: VersionCounts = field(default_factory=VersionCounts)
    """How the piece's answers fit other versions than their own."""
    seed_evidence: SeedEvidence = field(default_factory=SeedEvidence)
    """The piece's students whose answers fit another seed's versions (or whose seed cell the
    manifest contradicts)."""
    review: Review = field(default_factory=Review)
    """The piece's answers a teacher should decide (or did)."""
    records: dict[str, int] = field(default_factory=dict)
    """Per file: the input records its graded students came from."""
    right: tuple[list[str], npt.NDArray[np.int8]] | None = None
    """With ``Job.irt``: the students, and per student and slot 1 for full marks, else 0."""


# --- reading --------------------------------------------------------------------------------------


def read_piece(
    bank: Bank,
    piece: Piece,
    *,
    present: Sequence[str],
    versions: Versions = SEEDS,
    roster: Sequence[str] = (),
) -> ClassAnswers:
    """A piece's students and answers, with the rejections of its rows (sorted by line).

    Args:
        bank: the bank.
        piece: the piece (from :func:`plan_run`).
        present: the slots graded in this run (every piece grades the same slots).
        versions: the run's rule for versions: rows it cannot place are rejected here.
        roster: the run's roster fields (every piece carries the same ones).

    Returns:
        The piece as a class; ``rejected`` holds its rows' rejections and the file's head ones.
    """
    answers = _read_piece(bank, piece)
    if piece.drops and piece.layout == "wide":  # a long piece's reader rejected each of its rows
        dropped = dict(piece.drops)
        keep = [k for k, origin in enumerate(answers.origins) if origin[1] not in dropped]
        kept = answers.take(keep)
        kept.rejected = [
            replace(r, reason=dropped[r.line]) if r.line in dropped else r for r in answers.rejected
        ] + [
            Rejection(piece.source, line, answers.students[k], dropped[line], answers.records[k])
            for k, (_, line) in enumerate(answers.origins)
            if line in dropped
        ]
        answers = kept
    unplaced = dict(rejections(answers, versions))
    if unplaced:
        kept = answers.take([k for k in range(len(answers)) if k not in unplaced])
        kept.rejected = answers.rejected + [
            Rejection(*answers.origins[k], answers.students[k], why, answers.records[k])
            for k, why in unplaced.items()
        ]
        answers = kept
    # The file's own rejections (header: the smallest line) and the rows', in file order; a
    # class read whole keeps the order it was read in (its head spans every file).
    if piece.kind == "loaded":
        answers.rejected = [*piece.head, *answers.rejected]
    else:
        answers.rejected = sorted([*piece.head, *answers.rejected], key=lambda r: r.line)
    for slot in present:
        answers.keep_present(slot)
    for name in roster:
        answers.mark_roster(name)
    return answers


def _read_piece(bank: Bank, piece: Piece, columns: Sequence[str] | None = None) -> ClassAnswers:
    if piece.kind == "loaded":
        assert piece.loaded is not None
        loaded = piece.loaded.take(range(len(piece.loaded)))
        loaded.rejected = list(piece.loaded.rejected)
        return loaded
    answers = ClassAnswers(answer_columns(bank))
    rows: Iterator[Record]
    if piece.kind == "csv":
        found = csv_records(
            Path(piece.source),
            offset=piece.offset,
            line=piece.line,
            delimiter=piece.delimiter,
            encoding=piece.encoding,
            width=len(piece.header),
        )
        rows = (r for _, r in zip(range(piece.rows), found, strict=False))
        header = list(piece.header)
    else:
        header = list(columns if columns is not None else piece.header)
        rows = parquet_rows(
            Path(piece.source),
            row_groups=piece.row_groups,
            skip=piece.skip,
            rows=piece.rows,
            line=piece.line,
            columns=header,
            batch_rows=max(1, min(piece.rows, CHUNK_ROWS)),
        )
    if piece.layout == "long":
        names = [h.casefold() for h in header]
        read_long(
            answers,
            piece.source,
            names,
            rows,
            header_line=piece.header_line,
            drops=dict(piece.drops),
        )
    else:
        read_wide(answers, piece.source, piece.header_line, header, rows, bad_bytes=piece.bad_bytes)
    split_wholes(bank, answers)
    # Column-level rejections are the file's (``head``), reported once, not once per piece.
    answers.rejected = [r for r in answers.rejected if not r.is_column]
    return answers


# --- planning -------------------------------------------------------------------------------------


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
            found = _split_whole(whole, str(path), chunk_rows, len(pieces))
        else:
            if head.survey.note:
                notes.append(head.survey.note)
            counted(census, str(path), count_csv(path, delimiter=head.delimiter))
            found = _plan_csv(bank, path, chunk_rows, len(pieces), head)
        for piece in found:
            answers = _read_piece(bank, piece, _scan_columns(piece))
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
                    answers = _read_piece(bank, piece)
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
    if piece.kind == "loaded" or piece.layout != "wide" or not piece.header:
        return set()
    header = WideHeader.of(piece.header, answer_columns(bank))
    return item_slots(bank, (slot for _, slot in header.columns))


def _scan_columns(piece: Piece) -> list[str] | None:
    """Wide Parquet: the planning pass reads only the identity and roster columns (answers never
    reject a row; the roster columns are the run's, in every piece's part files)."""
    if piece.kind != "parquet" or piece.layout == "long":
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
        Piece(
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
            Piece(
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


def plan_loaded(
    answers: ClassAnswers, sources: Sequence[Path | str], *, chunk_rows: int = CHUNK_ROWS
) -> Plan:
    """The plan of a class already read whole (from ``sources``, in order), in this process.

    Its rejections, in the order they were read, go with the first piece.
    """
    has_seeds = answers.seeds.count(None) != len(answers.seeds)
    census, skipped, notes = dict(answers.census), dict(answers.skipped), list(answers.notes)
    roster = [r for r in ROSTER if r in answers.roster]
    pieces = _split_whole(answers, "", chunk_rows, 0, order=tuple(answers.rejected))
    present = [s for s in answers.slots if s in answers.present]
    return Plan(
        present=present,
        pieces=pieces,
        streamed=False,
        sources=[str(Path(s)) for s in sources],
        has_seeds=has_seeds,
        seeds=Counter(s for s in answers.seeds if s is not None),
        by_text=answers.by_text - answers.typed,
        roster=roster,
        census=census,
        skipped=skipped,
        notes=notes,
    )


def _split_whole(
    answers: ClassAnswers,
    source: str,
    chunk_rows: int,
    first: int,
    *,
    order: tuple[Rejection, ...] | None = None,
) -> list[Piece]:
    head = order if order is not None else tuple(sorted(answers.rejected, key=lambda r: r.line))
    answers.rejected = []
    present = answers.present
    pieces = []
    for k, part in enumerate(partitions(answers, size=chunk_rows)):
        for slot in present:
            part.keep_present(slot)
        part.rejected = []
        pieces.append(
            Piece(
                index=first + k,
                source=source,
                kind="loaded",
                loaded=part,
                head=head if k == 0 else (),
            )
        )
    return pieces


# --- grading a piece ------------------------------------------------------------------------------


def _records(answers: ClassAnswers) -> dict[str, int]:
    """Per file: the input records the students of a piece came from."""
    if answers.records.count(1) == len(answers.records):  # a record each: counted at C speed
        return answers.origins.sources()
    records: dict[str, int] = {}
    for (source, _), count in zip(answers.origins, answers.records, strict=True):
        records[source] = records.get(source, 0) + count
    return records


def full_marks(graded: GradedPartition) -> tuple[list[str], npt.NDArray[np.int8]]:
    """The students of a graded partition, and per student and slot 1 where they earned the
    slot's full points (after a teacher's decisions), else 0."""
    scores = graded.scores
    right = (scores >= graded.max_scores[None, :] - 1e-9).astype(np.int8)
    return list(graded.answers.students), right


def grade_piece(
    bank: Bank | CompiledBank,
    piece: Piece,
    job: Job,
    *,
    progress: Callable[[str], None] | None = None,
) -> PieceResult:
    """Read, grade and summarise one piece; keep it, or write its rows to part files.

    Args:
        bank: the bank (compiled here when it is not yet, as on a Dask worker).
        piece: the piece.
        job: what the run's pieces do.
        progress: called with each slot's id once it is graded.

    Returns:
        The piece's sums and rejections, and its graded partition or part files.
    """
    book = compiled(bank)
    answers = read_piece(
        book.bank, piece, present=job.present, versions=job.versions, roster=job.roster
    )
    graded = grade_partition(
        book,
        answers,
        versions=job.versions,
        decisions=job.decisions,
        progress=progress,
    )
    result = PieceResult(
        index=piece.index,
        students=len(answers),
        sums=partial_sums(graded),
        rejected=answers.rejected,
        seeds=seeds_of(answers),
        version_counts=version_counts(book, graded, job.versions),
        seed_evidence=seed_evidence(book, graded, job.versions, seeds=job.seeds),
        review=review_of(book, graded),
        records=_records(answers),
        right=full_marks(graded) if job.irt else None,
    )
    if job.parts_dir is None:
        result.graded = graded
        return result
    stem = f"{piece.index:06d}"
    for table in tables(gradebook=job.gradebook):
        result.files[table.name] = job.parts_dir / f"{stem}-{table.name}"
        table.write(result.files[table.name], book.bank, [graded])
    # The queue goes to a part file too: a class in many pieces holds it once, when merged.
    result.files["review"] = job.parts_dir / f"{stem}-review.jsonl"
    result.review.write_part(result.files["review"])
    result.review = Review(used=result.review.used)
    if job.feedback:
        result.files["feedback"] = job.parts_dir / f"{stem}-feedback"
        write_feedback(result.files["feedback"], book.bank, [graded])
        result.feedback = [feedback_name(s) for s in answers.students]
    return result
