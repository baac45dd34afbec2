"""A chunked run's part files: each graded piece's rows of every per-student table written to
its own files, then joined under one header into the output folder's tables."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from quizgym.errors import QuizgymError
from quizgym.grading.batch import GradedPartition
from quizgym.grading.outputs import feedback_name, tables, write_feedback
from quizgym.grading.pieces import Job, PieceResult
from quizgym.grading.review import Review
from quizgym.model import Bank
from quizgym.names import claim_name

__all__ = ["join_parts", "write_parts"]


def write_parts(result: PieceResult, bank: Bank, job: Job) -> PieceResult:
    """Write a graded piece's rows to part files in ``job.parts_dir``; the result then holds
    their paths instead of its graded partition (small enough to send back from a worker)."""
    assert job.parts_dir is not None and result.graded is not None
    graded, result.graded = result.graded, None
    stem = f"{result.index:06d}"
    for table in tables(gradebook=job.gradebook):
        result.files[table.name] = job.parts_dir / f"{stem}-{table.name}"
        table.write(result.files[table.name], bank, [graded])
    # The queue goes to a part file too: a class in many pieces holds it once, when merged.
    result.files["review"] = job.parts_dir / f"{stem}-review.jsonl"
    result.review.write_part(result.files["review"])
    result.review = Review(used=result.review.used)
    if job.feedback:
        result.files["feedback"] = job.parts_dir / f"{stem}-feedback"
        write_feedback(result.files["feedback"], bank, [graded])
        result.feedback = [feedback_name(s) for s in graded.answers.students]
    return result


def join_parts(
    out_dir: Path,
    bank: Bank,
    results: Sequence[PieceResult],
    job: Job,
    *,
    empty: GradedPartition,
) -> None:
    """Each per-student table of the output folder from the pieces' part files, in piece order,
    under the header an ``empty`` class writes; the feedback files moved in beside them."""
    assert job.parts_dir is not None
    for spec in tables(gradebook=job.gradebook):
        head = job.parts_dir / f"header-{spec.name}"
        spec.write(head, bank, [empty])
        _concatenate(out_dir / spec.name, head, [r.files[spec.name] for r in results])
    if job.feedback:
        _move_feedback(out_dir / "feedback", results)


def _move_feedback(folder: Path, results: Sequence[PieceResult]) -> None:
    """Move each piece's feedback files to ``folder``, named as one in-memory run names them."""
    folder.mkdir(parents=True, exist_ok=True)
    used: set[str] = set()
    for result in results:
        local: set[str] = set()
        for name in result.feedback:
            source = result.files["feedback"] / claim_name(name, local)
            source.replace(folder / claim_name(name, used))


def _concatenate(target: Path, head: Path, parts: Sequence[Path]) -> None:
    """One file: the header (from an empty class), then each part without its identical header."""
    prefix = head.read_bytes()
    with target.open("wb") as out:
        out.write(prefix)
        for part in parts:
            with part.open("rb") as stream:
                if stream.read(len(prefix)) != prefix:
                    raise QuizgymError(f"{part}: part file does not start with the run's header")
                shutil.copyfileobj(stream, out, 1 << 20)
