"""A class read whole writes ``responses.csv`` in a second thread while it sums (``Job.write_to``):
whatever fails there, or meanwhile, fails the run, publishes nothing and leaves no thread behind."""

from __future__ import annotations

import csv
import sys
import threading
import time
from pathlib import Path

import pytest

from quizgym.grading import outputs, pieces
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


def _writers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("quizgym-write")]


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
    assert not _writers()


def test_a_failed_write_of_responses_fails_the_run_and_publishes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _class(tmp_path / "class.csv", 50)
    prepare = outputs.responses_writer

    def failing(path: Path, parts: list[object]) -> outputs.Write:
        prepare(path, parts)  # type: ignore[arg-type]

        def write() -> None:
            assert threading.current_thread().name.startswith("quizgym-write")
            raise OSError(28, "No space left on device")

        return write

    monkeypatch.setattr(outputs, "responses_writer", failing)
    out = tmp_path / "out"
    with pytest.raises(OSError, match="No space left"):
        grade_submissions(FIELD, [source], out_dir=out, version="per-student")
    assert sorted(p.name for p in out.iterdir()) == []  # nor a staging folder
    assert not _writers()


def _writes_slowly(
    monkeypatch: pytest.MonkeyPatch, *, after: threading.Event | None = None
) -> None:
    """``responses.csv`` is still being written 0.3 s after the run went on (or after
    ``after`` is set)."""
    prepare = outputs.responses_writer

    def slow(path: Path, parts: list[object]) -> outputs.Write:
        write = prepare(path, parts)  # type: ignore[arg-type]

        def later() -> None:
            if after is not None:
                after.wait(5)
            time.sleep(0.3)
            write()

        return later

    monkeypatch.setattr(outputs, "responses_writer", slow)


def _fails_with_nothing_left(tmp_path: Path, message: str) -> None:
    """The run raises ``message``; the writes ended first, and nothing is published."""
    source = _class(tmp_path / "class.csv", 50)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match=message):
        grade_submissions(FIELD, [source], out_dir=out, version="per-student")
    assert sorted(p.name for p in out.iterdir()) == []
    assert not _writers()


def test_a_failure_while_the_write_runs_waits_for_it_and_publishes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = threading.Event()

    def broken(*_args: object) -> None:
        started.set()
        raise RuntimeError("sums failed")

    _writes_slowly(monkeypatch, after=started)
    monkeypatch.setattr(pieces, "partial_sums", broken)
    _fails_with_nothing_left(tmp_path, "sums failed")


def test_a_failure_after_the_piece_waits_for_the_writes_and_publishes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run fails after its piece was graded and before it writes the class-wide outputs
    (a stale review file is refused there): the tables being written end first."""
    from quizgym.grading import run

    def broken(*_args: object) -> list[str]:
        raise RuntimeError("assembling failed")

    _writes_slowly(monkeypatch)
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


def _records_thread(monkeypatch: pytest.MonkeyPatch, *, fails: bool = False) -> list[str]:
    """The threads that wrote ``grades.csv`` (its write raising a full disk with ``fails``)."""
    threads: list[str] = []
    prepare = outputs.grades_writer

    def recorded(path: Path, parts: list[object]) -> outputs.Write:
        write = prepare(path, parts)  # type: ignore[arg-type]

        def where() -> None:
            threads.append(threading.current_thread().name)
            if fails:
                raise OSError(28, "No space left on device")
            write()

        return where

    monkeypatch.setattr(outputs, "grades_writer", recorded)
    return threads


def test_a_table_the_writer_has_not_begun_is_written_by_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run, done with everything else while the writer's thread is still on
    ``responses.csv``, writes ``grades.csv`` itself rather than wait; the files are the same."""
    source = _class(tmp_path / "class.csv", 80)
    grade_submissions(FIELD, [source], out_dir=tmp_path / "plain", version="per-student")
    _writes_slowly(monkeypatch)
    threads = _records_thread(monkeypatch)
    grade_submissions(FIELD, [source], out_dir=tmp_path / "out", version="per-student")
    assert threads == [threading.main_thread().name]
    for name in ("grades.csv", "responses.csv"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()
    assert not _writers()


def test_a_table_written_by_the_run_that_fails_publishes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _class(tmp_path / "class.csv", 50)
    _writes_slowly(monkeypatch)
    threads = _records_thread(monkeypatch, fails=True)
    out = tmp_path / "out"
    with pytest.raises(OSError, match="No space left"):
        grade_submissions(FIELD, [source], out_dir=out, version="per-student")
    assert threads == [threading.main_thread().name]
    assert sorted(p.name for p in out.iterdir()) == []  # nor a staging folder
    assert not _writers()  # the writer's own write ended first
