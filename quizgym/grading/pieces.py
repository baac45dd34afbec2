"""A class's students in pieces, a job saying what each piece does, and each piece graded
into a result that :func:`quizgym.grading.run.assemble` writes out.

A run read whole is planned by :func:`plan_loaded` as one piece; :func:`grade_piece` reads a
piece (:meth:`Piece.read`), grades it with :func:`~quizgym.grading.batch.grade_partition` and
returns a :class:`PieceResult` holding the graded partition, its
:class:`~quizgym.analysis.Sums` and its rejected rows. Pieces that read their own rows from the
files (chunked, Parquet and Dask runs) are planned in :mod:`quizgym.grading.scale`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from quizgym.analysis import Sums
from quizgym.grading.batch import SEEDS, GradedPartition, grade_partition, partitions
from quizgym.grading.census import Census
from quizgym.grading.compare import seeds_of
from quizgym.grading.decisions import Decisions
from quizgym.grading.review import Review, review_of
from quizgym.grading.rows import ROSTER
from quizgym.grading.sums import partial_sums
from quizgym.grading.table import ClassAnswers, Rejection
from quizgym.grading.variants import Variants, rejections
from quizgym.grading.wrong_seed import SeedEvidence, seed_evidence
from quizgym.grading.wrong_version import VersionCounts, version_counts
from quizgym.model import Bank
from quizgym.solver import CompiledBank, compiled

__all__ = [
    "CHUNK_ROWS",
    "Job",
    "Piece",
    "PieceResult",
    "Plan",
    "Progress",
    "grade_piece",
    "plan_loaded",
    "read_piece",
    "split_whole",
    "ticks",
]

CHUNK_ROWS = 25_000

Progress = Callable[[int, int], None]
"""Called with (slots graded, slots to grade) as the run goes."""


def ticks(progress: Progress | None, total: int) -> Callable[[str], None]:
    """What :func:`grade_piece` calls after each slot: ``progress`` told (done, ``total``)."""
    done = 0

    def tick(_: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    return tick


@dataclass(frozen=True)
class Piece:
    """A unit of work: some students of a class already read whole.

    Pieces that read their rows from a file themselves
    (:class:`quizgym.grading.scale.plan.FilePiece`) add where the rows are and how to read them.
    """

    index: int
    source: str
    kind: str = "loaded"
    """``loaded`` (a class read whole), or how a file piece reads its rows (``csv``,
    ``parquet``)."""
    layout: str = "wide"
    """One row per student (``wide``), or one row per answer (``long``)."""
    loaded: ClassAnswers | None = None
    """A class read whole: this piece's students."""
    drops: tuple[tuple[int, str], ...] = ()
    """(line, reason) of rows that repeat a student read earlier."""
    head: tuple[Rejection, ...] = ()
    """Rejections that belong to the file rather than a row (reported with its first piece)."""

    def read(self, bank: Bank, columns: Sequence[str] | None = None) -> ClassAnswers:
        """The piece's students and answers, with its rows' rejections."""
        assert self.loaded is not None
        loaded = self.loaded.take(range(len(self.loaded)))
        loaded.rejected = list(self.loaded.rejected)
        return loaded

    def in_order(self, rows: list[Rejection]) -> list[Rejection]:
        """The head's rejections and the rows', in the order they are reported: a class read
        whole keeps the order it was read in (its head spans every file)."""
        return [*self.head, *rows]


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
    """Where a chunked run's pieces write their part files (:mod:`quizgym.grading.scale.parts`);
    None: a run in memory, whose graded partitions are written whole."""
    gradebook: str | None = None
    """Also write this LMS's gradebook rows."""
    feedback: bool = False
    """Also write each student's feedback file."""
    variants: Variants = SEEDS
    """How each student's variant of each question is known."""
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
    """A chunked run's part files by table name (with ``Job.parts_dir``)."""
    graded: GradedPartition | None = None
    """The graded partition itself (None once written to part files)."""
    feedback: list[str] = field(default_factory=list)
    """With feedback: each student's base file name (``feedback_name``), in order."""
    seeds: dict[str, int] = field(default_factory=dict)
    """The students given a seed, and their seed (``--compare`` shows their own keys)."""
    version_counts: VersionCounts = field(default_factory=VersionCounts)
    """How the piece's answers fit other variants than their own."""
    seed_evidence: SeedEvidence = field(default_factory=SeedEvidence)
    """The piece's students whose answers fit another seed's variants (or whose seed cell the
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
    variants: Variants = SEEDS,
    roster: Sequence[str] = (),
) -> ClassAnswers:
    """A piece's students and answers, with the rejections of its rows (sorted by line).

    Args:
        bank: the bank.
        piece: the piece (from a plan).
        present: the slots graded in this run (every piece grades the same slots).
        variants: the run's rule for variants: rows it cannot place are rejected here.
        roster: the run's roster fields (every piece carries the same ones).

    Returns:
        The piece as a class; ``rejected`` holds its rows' rejections and the file's head ones.
    """
    answers = piece.read(bank)
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
    unplaced = dict(rejections(answers, variants))
    if unplaced:
        kept = answers.take([k for k in range(len(answers)) if k not in unplaced])
        kept.rejected = answers.rejected + [
            Rejection(*answers.origins[k], answers.students[k], why, answers.records[k])
            for k, why in unplaced.items()
        ]
        answers = kept
    answers.rejected = piece.in_order(answers.rejected)
    for slot in present:
        answers.keep_present(slot)
    for name in roster:
        answers.mark_roster(name)
    return answers


def plan_loaded(
    answers: ClassAnswers, sources: Sequence[Path | str], *, chunk_rows: int = CHUNK_ROWS
) -> Plan:
    """The plan of a class already read whole (from ``sources``, in order), in this process.

    Its rejections, in the order they were read, go with the first piece.
    """
    has_seeds = answers.seeds.count(None) != len(answers.seeds)
    census, skipped, notes = dict(answers.census), dict(answers.skipped), list(answers.notes)
    roster = [r for r in ROSTER if r in answers.roster]
    pieces = split_whole(answers, "", chunk_rows, 0, order=tuple(answers.rejected))
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


def split_whole(
    answers: ClassAnswers,
    source: str,
    chunk_rows: int,
    first: int,
    *,
    order: tuple[Rejection, ...] | None = None,
) -> list[Piece]:
    """A class read whole (from ``source``) as pieces of at most ``chunk_rows`` students,
    numbered from ``first``; its rejections (``order``, else by line) go with the first."""
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
    """Read, grade and summarise one piece.

    Args:
        bank: the bank (compiled here when it is not yet, as on a Dask worker).
        piece: the piece.
        job: what the run's pieces do.
        progress: called with each slot's id once it is graded.

    Returns:
        The piece's sums, rejections and graded partition.
    """
    book = compiled(bank)
    answers = read_piece(
        book.bank, piece, present=job.present, variants=job.variants, roster=job.roster
    )
    graded = grade_partition(
        book,
        answers,
        variants=job.variants,
        decisions=job.decisions,
        progress=progress,
    )
    return PieceResult(
        index=piece.index,
        students=len(answers),
        sums=partial_sums(graded),
        rejected=answers.rejected,
        seeds=seeds_of(answers),
        version_counts=version_counts(book, graded, job.variants),
        seed_evidence=seed_evidence(book, graded, job.variants, seeds=job.seeds),
        review=review_of(book, graded),
        records=_records(answers),
        right=full_marks(graded) if job.irt else None,
        graded=graded,
    )
