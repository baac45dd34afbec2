"""``quizgym grade`` as one library call: read → grade in partitions → statistics → files."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from quizgym.analysis import Statistics, Sums, combine
from quizgym.grading.batch import GradedPartition, grade_partition, graded_slots, partitions
from quizgym.grading.compare import Change, check_previous, regrade, seeds_of
from quizgym.grading.ingest import Rejection, read_submissions
from quizgym.grading.outputs import (
    GRADEBOOKS,
    check_gradebook,
    write_feedback,
    write_gradebook,
    write_grades,
    write_items,
    write_rejected,
    write_responses,
)
from quizgym.grading.sums import partial_sums
from quizgym.loader import load_bank
from quizgym.model import Bank
from quizgym.render.report import render_report
from quizgym.solver import compile_bank

__all__ = ["GRADEBOOKS", "GradeRun", "grade_submissions"]


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
        return text


def grade_submissions(
    bank: Bank | str | Path,
    submissions: Sequence[Path | str],
    *,
    out_dir: Path = Path("graded"),
    feedback: bool = False,
    gradebook: str | None = None,
    compare: Path | None = None,
    chunk_size: int = 25_000,
    progress: Callable[[int, int], None] | None = None,
) -> GradeRun:
    """Grade a class and write DESIGN.md's output folder.

    Args:
        bank: the bank, or its path or bundled name.
        submissions: submission files (wide/long CSV, JSON Lines, Canvas or Moodle exports).
        out_dir: the folder to write (created if needed).
        feedback: also write ``feedback/<student>.md``.
        gradebook: also write ``gradebook-canvas.csv`` or ``gradebook-moodle.csv``.
        compare: a previous output folder; lists changed scores in ``changes.csv``.
        chunk_size: students per partition (bounds memory; results do not depend on it).
        progress: called with (slots graded, slots to grade).

    Returns:
        What was done; ``rejected`` lists every row that could not be graded.

    Raises:
        SubmissionError: a submissions file cannot be read at all.
        BankError: the bank has errors.
    """
    check_gradebook(gradebook)
    if compare is not None:
        check_previous(compare, out_dir)
    book = compile_bank(bank if isinstance(bank, Bank) else load_bank(bank))
    answers = read_submissions(book.bank, submissions)
    chunks = partitions(answers, size=chunk_size)
    todo, done = len(graded_slots(book, answers)) * len(chunks), 0

    def tick(_: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, todo)

    parts: list[GradedPartition] = [grade_partition(book, c, progress=tick) for c in chunks]
    sums: Sums | None = None
    for part in parts:
        sums = partial_sums(part) if sums is None else sums.merge(partial_sums(part))
    assert sums is not None
    stats = combine(sums)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = [out_dir / n for n in ("grades.csv", "responses.csv", "items.csv", "rejected.csv")]
    # pyarrow writes the two large tables without holding the GIL: one in a second thread.
    # Both finish (or fail, the grades' error raised first) before anything else is written.
    with ThreadPoolExecutor(max_workers=1) as pool:
        grades = pool.submit(write_grades, files[0], parts)
        try:
            write_responses(files[1], parts)
        finally:
            grades.result()
    write_items(files[2], stats)
    write_rejected(files[3], answers.rejected)
    report = out_dir / "report.html"
    report.write_text(
        render_report(
            bank=book.bank,
            stats=stats,
            totals=sums.totals,
            rejected_rows=sum(1 for r in answers.rejected if not r.is_column),
            ignored_columns=sum(1 for r in answers.rejected if r.is_column),
            students=len(answers),
        ),
        encoding="utf-8",
    )
    files.append(report)
    if feedback:
        write_feedback(out_dir / "feedback", book.bank, parts)
        files.append(out_dir / "feedback")
    if gradebook is not None:
        path = out_dir / f"gradebook-{gradebook}.csv"
        write_gradebook(path, book.bank, parts, lms=gradebook)
        files.append(path)
    changes = None
    if compare is not None:
        seeds = {s: d for part in parts for s, d in seeds_of(part.answers).items()}
        changes = regrade(book, compare, out_dir, seeds)
        files.append(out_dir / "changes.csv")
    return GradeRun(
        out_dir=out_dir,
        students=len(answers),
        responses=len(answers) * len(graded_slots(book, answers)),
        rejected=answers.rejected,
        stats=stats,
        files=files,
        changes=changes,
    )
