"""A bank and submission files in, ``quizgym grade``'s output folder out: read → grade → write.

:func:`grade_submissions` is the one grading run: it reads the class whole
(:func:`~quizgym.grading.readers.submissions.read_submissions`), grades it as one piece
(:func:`~quizgym.grading.pieces.grade_piece`), and :func:`assemble` writes every output: the
per-student tables (``grades.csv``, ``responses.csv``, the gradebook, feedback files), then the
statistics, ``items.csv``, ``rejected.csv``, ``review.csv`` and ``report.html``. A chunked,
Parquet or Dask run plans and grades its pieces in :mod:`quizgym.grading.scale` instead, behind
the same plan → pieces → assemble steps; every engine writes the same bytes (a test holds them
to it).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from quizgym.analysis import Statistics, Sums, combine
from quizgym.errors import QuizgymError
from quizgym.grading.batch import grade_partition
from quizgym.grading.compare import Change, check_previous, regrade
from quizgym.grading.decisions import read_decisions
from quizgym.grading.irt import IRT_FILES, check_irt, write_irt
from quizgym.grading.outputs import (
    check_gradebook,
    tables,
    write_feedback,
    write_items,
    write_rejected,
)
from quizgym.grading.pieces import (
    CHUNK_ROWS,
    Job,
    PieceResult,
    Plan,
    Progress,
    grade_piece,
    plan_loaded,
    ticks,
)
from quizgym.grading.readers.submissions import read_submissions
from quizgym.grading.review import Review, agreements, write_review
from quizgym.grading.sums import partial_sums
from quizgym.grading.table import ClassAnswers, Rejection
from quizgym.grading.variants import Variants, resolve
from quizgym.grading.wrong_seed import SeedEvidence, common_seeds
from quizgym.grading.wrong_version import VersionCounts
from quizgym.issued import Issued, bank_hash, read_issued, reconcile
from quizgym.model import Bank
from quizgym.solver import CompiledBank, compile_bank
from quizgym.solver.cache import open_bank, save
from quizgym.version import __version__

__all__ = ["GradeRun", "assemble", "check_accounted", "grade_submissions"]


@dataclass(frozen=True, kw_only=True)
class ReviewCounts:
    """What ``review.csv`` holds: its rows, the answers awaiting a decision, those decided."""

    rows: int = 0
    waiting: int = 0
    decided: int = 0


@dataclass(frozen=True)
class GradeRun:
    """What a grading run did."""

    out_dir: Path
    students: int
    responses: int
    rejected: list[Rejection]
    stats: Statistics
    files: list[Path] = field(default_factory=list)
    changes: list[Change] | None = None
    warnings: list[str] = field(default_factory=list)
    """Grades that may be wrong and why (answers that fit other variants, unreadable columns):
    the command exits 1 when there is one."""
    notes: list[str] = field(default_factory=list)
    """What the run assumed, for the teacher to see (the variants, an edited bank, how a file
    was read)."""
    review: ReviewCounts = field(default_factory=ReviewCounts)
    """What ``review.csv`` holds."""
    flags: list[str] = field(default_factory=list)
    """Students whose answers fit another seed's variants much better than their own, or whose
    seed cell the manifest contradicts (rows of ``review.csv``; no score was changed)."""
    reading: list[str] = field(default_factory=list)
    """The notes on how files were read (a file read as cp1252): also shown on the terminal."""
    report_inputs: Mapping[str, Any] = field(default_factory=dict)
    """What ``report.html`` was rendered from (:func:`~quizgym.render.report.render_report`'s
    arguments), so that another page can show the same analysis (``quizgym serve``)."""

    def summary(self) -> str:
        """One line for the terminal."""
        who = "student" if self.students == 1 else "students"
        answers = "response" if self.responses == 1 else "responses"
        text = f"graded {self.students} {who} ({self.responses} {answers}) → {self.out_dir}/"
        columns = sum(1 for r in self.rejected if r.is_column)
        rows = len(self.rejected) - columns
        if rows:
            text += f"; {rows} {'row' if rows == 1 else 'rows'} rejected"
        if columns:
            text += f"; {columns} {'column' if columns == 1 else 'columns'} ignored"
        if self.rejected:
            text += " (see rejected.csv)"
        if self.changes is not None:
            changed = len({c.student for c in self.changes})
            whose = "student's score" if changed == 1 else "students' scores"
            text += f"; {changed} {whose} changed (see changes.csv)"
        if self.review.waiting:
            waiting = self.review.waiting
            text += f"; {waiting} {'answer' if waiting == 1 else 'answers'} to review"
            text += f" ({self.review.rows} in review.csv)"
        if self.review.decided:
            decided = self.review.decided
            text += f"; {decided} {'answer' if decided == 1 else 'answers'} scored by a teacher"
        if self.flags:
            count = len(self.flags)
            text += (
                f"; {count} {'student' if count == 1 else 'students'} flagged: answers fit "
                "another seed, or the seed cell contradicts the manifest (see review.csv)"
            )
        if self.warnings:
            count = len(self.warnings)
            text += f"; {count} {'warning' if count == 1 else 'warnings'} (see report.html)"
        return text


def grade_submissions(
    bank: Bank | CompiledBank | str | Path,
    submissions: Sequence[Path | str],
    *,
    out_dir: Path = Path("graded"),
    engine: Literal["numpy", "dask"] = "numpy",
    chunk_rows: int | None = None,
    scheduler: str | None = None,
    workers: int = 2,
    feedback: bool = False,
    gradebook: str | None = None,
    compare: Path | None = None,
    issued: Path | None = None,
    seed: int | None = None,
    version: Literal["default", "per-student"] | None = None,
    accept_changes: bool = False,
    review: Path | None = None,
    progress: Progress | None = None,
    irt: bool = False,
) -> GradeRun:
    """Grade a class and write DESIGN.md's output folder.

    Args:
        bank: the bank (compiled or not), or its path or bundled name.
        submissions: submission files (wide/long CSV or Parquet, JSON Lines, Canvas or Moodle
            exports), any mix.
        out_dir: the folder to write (created if needed).
        engine: where pieces are graded: ``numpy`` (this process) or ``dask``.
        chunk_rows: read and grade at most this many students at a time (bounded memory); by
            default a class is read whole, unless it is Parquet or graded on Dask.
        scheduler: Dask only: a running scheduler's address (default: a local cluster).
        workers: Dask only: worker processes of the local cluster.
        feedback: also write ``feedback/<student>.md``.
        gradebook: also write ``gradebook-canvas.csv`` or ``gradebook-moodle.csv``.
        compare: a previous output folder; lists changed scores in ``changes.csv``.
        issued: the issue manifest (``issued.json``) of what was handed out: every student is
            graded against the variant it says they were given.
        seed: each student's own variant as ``render --roster … --seed N`` drew it (a row's own
            seed wins).
        version: ``default``: everyone had the default variant; ``per-student``: each student's
            own variant, drawn without a seed (``--version``: the word users know).
        accept_changes: grade against a bank edited since ``issued`` (the issued variants are
            kept; keys and feedback are the bank's as it is now), and keep the ``review``
            decisions on questions edited since the review was written.
        review: an edited ``review.csv``: its scores replace the machine's for every student who
            gave the answer decided (:mod:`~quizgym.grading.decisions`).
        progress: called with (slots graded, slots to grade).
        irt: also fit the Rasch and 2PL models (the ``irt`` extra): ``irt.csv``,
            ``abilities.csv`` and a section of the report (:mod:`quizgym.irt`).

    Returns:
        What was done; ``rejected`` lists every row that could not be graded.

    Raises:
        QuizgymError: bad options (engine, gradebook, chunk size, a ``compare`` folder that holds
            no run), or Dask (or, with ``irt``, mirt) is not installed.
        SubmissionError: a submissions file cannot be read at all.
        BankError: the bank has errors.
        ReviewError: the review file is stale or has bad rows (nothing is written).
    """
    parquet = any(Path(s).suffix.lower() == ".parquet" for s in submissions)
    streamed = chunk_rows is not None or engine != "numpy" or parquet
    if streamed:
        from quizgym.grading.scale.engines import engine_named
        from quizgym.grading.scale.plan import plan_run

        runner = engine_named(engine, scheduler=scheduler, workers=workers)
    if irt:
        check_irt()  # before anything is graded
    check_gradebook(gradebook)
    if chunk_rows is not None and chunk_rows < 1:
        raise QuizgymError(f"--chunk-rows must be at least 1, not {chunk_rows}")
    manifest = read_issued(issued) if issued is not None else None
    if compare is not None:
        check_previous(compare, out_dir)
    if isinstance(bank, CompiledBank):
        book = bank
    elif isinstance(bank, Bank):
        book = compile_bank(bank)
    else:
        book = open_bank(bank)  # keys and mistakes from the cache when the bank is unchanged
    notes: list[str] = []
    if manifest is not None:
        manifest, notes = _check_manifest(book, manifest, accept_changes)
    decisions = None
    if review is not None:
        decisions = read_decisions(review, book, accept_changes=accept_changes)
        notes += decisions.notes
    # read
    if streamed:
        plan = plan_run(
            book.bank, submissions, chunk_rows=chunk_rows or CHUNK_ROWS, issued=manifest
        )
    else:
        read = read_submissions(book.bank, submissions, issued=manifest)
        # One piece: each distinct (variant, answer) pair is graded once.
        plan = plan_loaded(read, submissions, chunk_rows=max(1, len(read)))
    variants = resolve(
        book,
        plan.present,
        issued=manifest,
        seed=seed,
        version=version,
        has_seeds=plan.has_seeds,
        by_text=plan.by_text,
    )
    _check_keys(book, plan.present, variants)
    with _staged(out_dir) as stage:
        parts_dir = stage / ".parts" if streamed else None
        if parts_dir is not None:
            parts_dir.mkdir()
        job = Job(
            present=tuple(plan.present),
            parts_dir=parts_dir,
            gradebook=gradebook,
            feedback=feedback,
            variants=variants,
            decisions=decisions,
            roster=tuple(plan.roster),
            seeds=common_seeds(plan.seeds),
            irt=irt,
        )
        # grade
        if streamed:
            results = runner.map(book, plan, job, progress)
        else:
            tick = ticks(progress, len(plan.pieces) * len(job.present))
            results = [grade_piece(book, piece, job, progress=tick) for piece in plan.pieces]
        check_accounted(plan, results)
        # write
        run = assemble(book, plan, results, job, out_dir=stage, notes=[*plan.notes, *notes])
        changes = None
        if compare is not None:
            seeds = {s: d for result in results for s, d in result.seeds.items()}
            changes = regrade(book, compare, stage, seeds, variants)
        written = _publish(stage, out_dir, run, book)
    save(book)
    return replace(run, out_dir=out_dir, files=written, changes=changes)


RUN_RECORD = "run.json"
"""Written last into an output folder, once every other file of the run is in place."""
_STAGING = ".quizgym-staging-"


@contextmanager
def _staged(out_dir: Path) -> Iterator[Path]:
    """A folder inside ``out_dir`` where the run writes everything before it is published.

    The folder is locked for the run (:func:`_locked`), so staging folders left there belong to
    a run that was killed: they are removed first; this one is removed when the run ends,
    however it ends.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    with _locked(out_dir):
        for leftover in out_dir.glob(f"{_STAGING}*"):
            shutil.rmtree(leftover, ignore_errors=True)
        stage = Path(tempfile.mkdtemp(prefix=_STAGING, dir=out_dir))
        try:
            yield stage
        finally:
            shutil.rmtree(stage, ignore_errors=True)


LOCK = ".quizgym-lock"
"""The file in an output folder that a run holds locked while it writes there."""


@contextmanager
def _locked(out_dir: Path) -> Iterator[None]:
    """Hold ``out_dir``'s lock for a run: a second run into the same folder is refused, rather
    than removing the first one's files as it writes them.

    The lock is the operating system's (``flock``), so a run that is killed lets go of it; the
    lock file goes when the run ends.

    Raises:
        QuizgymError: another run holds the folder.
    """
    import os

    path = out_dir / LOCK
    while True:
        try:
            handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise QuizgymError(f"{out_dir}: cannot write there: {exc.strerror}") from exc
        if not _try_lock(handle):
            holder = os.read(handle, 32).decode("ascii", "replace").strip()
            os.close(handle)
            who = f" (process {holder})" if holder.isdigit() else ""
            raise QuizgymError(
                f"{out_dir}: another quizgym grade is writing there{who}; wait for it to "
                "finish or choose another -o folder"
            )
        try:
            same = os.path.samestat(os.fstat(handle), os.stat(path))
        except OSError:  # removed by the run that held it, as it ended
            same = False
        if same:
            break
        os.close(handle)  # a lock file its run removed: lock the one at the path now
    try:
        os.ftruncate(handle, 0)
        os.write(handle, f"{os.getpid()}\n".encode("ascii"))
        yield
    finally:
        with suppress(OSError):  # while locked: a run that opens it now locks a new one
            path.unlink()
        os.close(handle)


def _try_lock(handle: int) -> bool:
    """Lock an open file for this process without waiting; whether it could."""
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(handle, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _publish(stage: Path, out_dir: Path, run: GradeRun, bank: CompiledBank) -> list[Path]:
    """Move a finished run's files from ``stage`` into ``out_dir``; write ``run.json`` last.

    The old completion record goes first, so a folder caught half-way is never taken for a
    finished run (``--compare`` refuses it); each file replaces its old self in one rename, and
    the outputs of the previous run that this one does not write are removed, so no folder mixes
    two runs.
    """
    record = out_dir / RUN_RECORD
    before: list[str] = []
    if record.is_file():
        try:
            before = list(json.loads(record.read_text(encoding="utf-8")).get("files", []))
        except (OSError, ValueError):
            before = []
    record.unlink(missing_ok=True)
    names = sorted(p.name for p in stage.iterdir() if not p.name.startswith("."))
    for name in names:
        target = out_dir / name
        if (stage / name).is_dir():
            shutil.rmtree(target, ignore_errors=True)
        (stage / name).replace(target)
    for name in before:
        if name not in names and "/" not in name and not name.startswith("."):
            target = out_dir / name
            if target.is_dir():
                shutil.rmtree(target, ignore_errors=True)
            else:
                target.unlink(missing_ok=True)
    summary = {
        "format": "quizgym-run/1",
        "quizgym": __version__,
        "bank": bank.bank.bank,
        "bank_hash": bank.memo("bank_hash", None, lambda: bank_hash(bank.bank)),
        "students": run.students,
        "responses": run.responses,
        "rejected": len(run.rejected),
        "warnings": len(run.warnings),
        "files": names,
    }
    partial = out_dir / f"{RUN_RECORD}.partial"
    partial.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    partial.replace(record)
    return [out_dir / name for name in names]


def assemble(
    bank: CompiledBank,
    plan: Plan,
    results: Sequence[PieceResult],
    job: Job,
    *,
    out_dir: Path,
    notes: Sequence[str] = (),
) -> GradeRun:
    """Write the output folder from the pieces' results; return the run's summary.

    Every output is written here: the per-student tables from the graded partitions or the part
    files, then what the whole class's statistics give.
    """
    ordered = sorted(results, key=lambda r: r.index)
    empty = ClassAnswers(bank.slot_ids())
    for slot in plan.present:
        empty.keep_present(slot)
    for name in plan.roster:
        empty.mark_roster(name)
    nothing = grade_partition(bank, empty)
    sums = partial_sums(nothing)
    rejected: list[Rejection] = []
    students = 0
    version_counts = VersionCounts()
    seed_evidence = SeedEvidence()
    review = Review()
    for k, result in enumerate(ordered):
        sums = sums.merge(result.sums, order=k == len(ordered) - 1)  # keys sorted once
        # in place: merging into a copy each time is quadratic
        version_counts.absorb(result.version_counts)
        seed_evidence.absorb(result.seed_evidence)
        review.absorb(result.review)
        if "review" in result.files:
            review.read_part(result.files["review"])
        rejected += result.rejected
        students += result.students
    # One order whatever the engine: the files as given, then the lines.
    rank = {source: k for k, source in enumerate(plan.sources)}
    rejected.sort(key=lambda r: (rank.get(r.source, len(rank)), r.line))
    if job.decisions is not None:
        job.decisions.check_used(review.used)
    warnings = version_counts.warnings() + _unreadable(sums)
    flags = seed_evidence.flags()
    specs = tables(gradebook=job.gradebook)
    files = [out_dir / spec.name for spec in specs]
    # The per-student tables, then what the whole class's statistics give.
    if job.parts_dir is None:
        parts = [r.graded for r in ordered if r.graded is not None]
        for spec in specs:
            spec.write(out_dir / spec.name, bank.bank, parts)
        if job.feedback:
            write_feedback(out_dir / "feedback", bank.bank, parts)
    else:
        from quizgym.grading.scale.parts import join_parts

        join_parts(out_dir, bank.bank, ordered, job, empty=nothing)

    from quizgym.render.report import ReviewSummary, Silent, render_report, report_questions

    stats = combine(sums)
    fitted = (
        write_irt(out_dir, [s.id for s in sums.slots], [r.right for r in ordered])
        if job.irt
        else None
    )
    write_items(out_dir / "items.csv", stats)
    write_rejected(out_dir / "rejected.csv", rejected)
    write_review(out_dir / "review.csv", bank, review, flags=flags)
    counts = ReviewCounts(rows=len(review.entries), waiting=review.waiting, decided=review.decided)
    report_inputs: dict[str, Any] = {
        "bank": bank.bank,
        "questions": report_questions(bank),
        "stats": stats,
        "totals": sums.totals,
        "rejected_rows": sum(1 for r in rejected if not r.is_column),
        "ignored_columns": sum(1 for r in rejected if r.is_column),
        "students": students,
        "warnings": warnings,
        "flags": [f.text for f in flags],
        "notes": [*notes, job.variants.describe()],
        "non_answers": sums.non_answers,
        "silent": Silent(sums.silent, tuple(sums.silent_names)),
        "review": ReviewSummary(
            rows=counts.rows,
            waiting=counts.waiting,
            decided=counts.decided,
            agreement=agreements(bank, review),
        ),
        "irt": fitted,
    }
    report = render_report(**report_inputs)
    (out_dir / "report.html").write_text(report, encoding="utf-8")

    files += [out_dir / n for n in ("items.csv", "rejected.csv", "review.csv", "report.html")]
    if job.irt:
        files += [out_dir / n for n in IRT_FILES]
    if job.feedback:
        files.append(out_dir / "feedback")
    return GradeRun(
        out_dir=out_dir,
        students=students,
        responses=students * len(plan.present),
        rejected=rejected,
        stats=stats,
        files=files,
        warnings=warnings,
        notes=[*notes, job.variants.describe()],
        review=counts,
        reading=list(plan.notes),
        flags=[f.text for f in flags],
        report_inputs=report_inputs,
    )


def check_accounted(plan: Plan, results: Sequence[PieceResult]) -> None:
    """Students in = graded + rejected: every record of every file, as the census counted it
    apart from the readers, was graded, rejected, or is a summary row an LMS appends.

    Raises:
        QuizgymError: some file's records are not all accounted for (a reader lost or invented
            rows; nothing is written).
    """
    graded: dict[str, int] = {}
    rejected: dict[str, int] = {}
    for result in results:
        for source, count in result.records.items():
            graded[source] = graded.get(source, 0) + count
        for rejection in result.rejected:
            rejected[rejection.source] = rejected.get(rejection.source, 0) + rejection.records
    for source, census in plan.census.items():
        done, refused = graded.get(source, 0), rejected.get(source, 0)
        skipped = plan.skipped.get(source, 0)
        if census.records != done + refused + skipped:
            raise QuizgymError(
                f"{source}: {census.records} records in the file, but {done} graded, {refused} "
                f"rejected and {skipped} summary rows: some rows were lost in reading; nothing "
                "was written (this is a bug in quizgym: please report it with the file)"
            )


def _check_keys(book: CompiledBank, present: Sequence[str], variants: Variants) -> None:
    """Refuse a run in which a key that every student shares cannot be evaluated: every answer
    to it would be "could not be graded".

    A question without parameters has one key for everyone, and so has every question when
    everyone is graded against the default variant; a key that fails only for some variants is
    found by ``check``'s stress test, and those students' answers go to review.

    Raises:
        BankError: such a key, each located at its ``answer``.
    """
    from quizgym.errors import AnswerParseError, BankError, Finding

    findings = []
    wanted = set(present)
    for slot in book.slots:
        if slot.key is None or slot.id not in wanted:
            continue
        if getattr(slot.question, "params", None) and variants.rule != "default":
            continue
        try:
            book.key(slot, book.variant(slot.question))
        except AnswerParseError as exc:
            path, line, col = book.bank.locate((*slot.loc, "answer"))
            why = exc.message.rstrip(".")
            message = f"{slot.id}: the key cannot be evaluated: {why}; nothing graded"
            findings.append(Finding(path or book.bank.bank, line, col, message))
    if findings:
        raise BankError(findings)


def _check_manifest(
    book: CompiledBank, manifest: Issued, accept_changes: bool
) -> tuple[Issued, list[str]]:
    """Hold a manifest against the bank as it is now (:func:`~quizgym.issued.reconcile`).

    Returns:
        The manifest with its choice orders in the bank's current indices, and notes for the
        teacher (what changed, what was accepted).

    Raises:
        QuizgymError: the manifest is of another bank, or some issued variant cannot be graded
            as issued; or an issued question's content, key or scoring changed since (unless
            ``accept_changes``).
    """
    reconciled = reconcile(manifest, book)
    if reconciled.refused:
        first = reconciled.refused[0]
        more = len(reconciled.refused) - 1
        also = f" (and {more} more; 'quizgym check BANK --issued FILE' lists them)" if more else ""
        raise QuizgymError(f"--issued: {first}{also}")
    notes = list(reconciled.notes)
    if not reconciled.edits:
        return reconciled.issued, notes
    if not accept_changes:
        raise QuizgymError(
            f"--issued: {reconciled.summary()} ('quizgym check BANK --issued FILE' lists every "
            "change)"
        )
    shown = ", ".join(reconciled.changed[:6])
    if len(reconciled.changed) > 6:
        shown += f" and {len(reconciled.changed) - 6} more"
    notes.append(f"graded against the bank as edited since it was issued ({shown})")
    notes += [str(e) for e in reconciled.moved]
    return reconciled.issued, notes


def _unreadable(sums: Sums) -> list[str]:
    """Slots where every answer given was unreadable: a wrong column, or a wrong format."""
    out = []
    for slot, statuses in zip(sums.slots, sums.statuses, strict=True):
        given = sum(n for status, n in statuses.items() if status != "blank")
        if given >= 3 and statuses.get("invalid", 0) == given:
            out.append(
                f"{slot.id}: all {given} answers were unreadable: is this column really "
                "this question, in the format students were asked for?"
            )
    return out
