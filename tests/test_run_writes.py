"""A class read whole writes what a chunked run writes; whatever fails while a run writes its
outputs, or before, fails the run and publishes nothing."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

from quizgym.grading import outputs
from quizgym.grading.run import grade_submissions
from quizgym.loader import load_bank
from quizgym.solver import compile_bank

FIELD = Path(__file__).parent / "data" / "field" / "stats-mechanics.yaml"


def _class(path: Path, students: int) -> Path:
    book = compile_bank(load_bank(FIELD))
    typed = ["10", "36 km/h", "9.81 N", "0.117", "", "12,345.6", "ln(2)/3", "x"]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", *(s.id for s in book.slots)])
        for k in range(students):
            writer.writerow(
                [f"s{k}", *(typed[(k + j) % len(typed)] for j in range(len(book.slots)))]
            )
    return path


def test_the_whole_run_writes_what_a_chunked_run_writes(tmp_path: Path) -> None:
    source = _class(tmp_path / "class.csv", 300)
    whole = grade_submissions(FIELD, [source], out_dir=tmp_path / "whole", version="per-student")
    grade_submissions(
        FIELD, [source], out_dir=tmp_path / "chunked", version="per-student", chunk_rows=70
    )
    assert whole.students == 300
    for name in ("responses.csv", "grades.csv", "items.csv", "review.csv"):
        assert (tmp_path / "whole" / name).read_bytes() == (
            tmp_path / "chunked" / name
        ).read_bytes()


def test_a_failed_write_of_responses_fails_the_run_and_publishes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _class(tmp_path / "class.csv", 50)
    prepare = outputs.responses_writer

    def failing(path: Path, parts: list[object]) -> outputs.Write:
        prepare(path, parts)  # type: ignore[arg-type]

        def write() -> None:
            raise OSError(28, "No space left on device")

        return write

    monkeypatch.setattr(outputs, "responses_writer", failing)
    out = tmp_path / "out"
    with pytest.raises(OSError, match="No space left"):
        grade_submissions(FIELD, [source], out_dir=out, version="per-student")
    assert sorted(p.name for p in out.iterdir()) == []  # nor a staging folder


def _fails_with_nothing_left(tmp_path: Path, message: str) -> None:
    """The run raises ``message``, and nothing is published."""
    source = _class(tmp_path / "class.csv", 50)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match=message):
        grade_submissions(FIELD, [source], out_dir=out, version="per-student")
    assert sorted(p.name for p in out.iterdir()) == []


def test_a_failure_after_the_tables_were_written_publishes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run fails after its piece was graded and its tables written, before the class-wide
    outputs (a stale review file is refused there)."""
    from quizgym.grading import run

    def broken(*_args: object) -> list[str]:
        raise RuntimeError("assembling failed")

    monkeypatch.setattr(run, "_unreadable", broken)
    _fails_with_nothing_left(tmp_path, "assembling failed")


def test_an_output_folder_named_in_bytes_that_are_not_utf8_is_written(tmp_path: Path) -> None:
    """A folder name the system allows but UTF-8 does not (Linux: any bytes) is written to as it
    is, as every other output of the run is."""
    import os

    if sys.platform != "linux":  # macOS and Windows refuse such names themselves
        pytest.skip("only Linux names files in any bytes")
    source = _class(tmp_path / "class.csv", 40)
    odd = tmp_path / os.fsdecode(b"out-\xff")
    odd.mkdir()
    grade_submissions(FIELD, [source], out_dir=odd, version="per-student")
    grade_submissions(FIELD, [source], out_dir=tmp_path / "plain", version="per-student")
    for name in ("responses.csv", "grades.csv", "items.csv"):
        assert (odd / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()
