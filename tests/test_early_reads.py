"""``quizgym grade`` reads and counts a class's files while the grader is imported
(:mod:`quizgym.grading.early`): what it started is taken only when it fits, and a run gives the
same outputs whether it was taken, refused or never started."""

from __future__ import annotations

import csv
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import require_module

from quizgym.cli import cli
from quizgym.grading import early as early_module
from quizgym.grading.census import Census, count_csv
from quizgym.grading.early import EarlyRead, EarlyReads, start_reads
from quizgym.grading.rows import MAX_CELL
from quizgym.grading.run import GradeRun, grade_submissions
from quizgym.loader import load_bank

FIELD = Path(__file__).parent / "data" / "field" / "stats-mechanics.yaml"
TYPED = [
    "10", "10 m/s", "36 km/h", "7.5 m/s", "5", "15%", "0.15", "35.31", "35.3 m", "9.81 N",
    "0.1171875", "0.841", "ln(2)/3", "25 m", "12,345.6", "3 kg", "1/0", "zz", "", "no idea",
]  # fmt: skip
TABLES = ("grades.csv", "responses.csv", "items.csv", "rejected.csv", "review.csv")


@pytest.fixture(autouse=True)
def _pyarrow() -> None:
    require_module("pyarrow")  # the early read is pyarrow's


def write_class(path: Path, students: int, *, seed: int = 1, bank: Path = FIELD) -> Path:
    """A clean wide CSV of a bank, the field one by default (one row a line: a file pyarrow
    may read)."""
    slots = load_bank(bank).slot_ids()
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["student", "seed", *slots])
        for k in range(students):
            writer.writerow([f"s{k:05d}", k % 5, *(rng.choice(TYPED) for _ in slots)])
    return path


def graded(bank: Path | str, files: list[Path], out: Path, **options: Any) -> Path:
    grade_submissions(bank, files, out_dir=out, **options)
    return out


def graded_early(
    data: Path, out: Path, *, started: EarlyReads | None = None, bank: Path = FIELD
) -> GradeRun:
    """A class graded with the reads ``start_reads`` started (now, by default), closed once the
    run has ended."""
    early = started if started is not None else start_reads([data])
    try:
        return grade_submissions(bank, [data], out_dir=out, version="per-student", early=early)
    finally:
        early.close()


def same_as_plain(data: Path, out: Path, *, bank: Path = FIELD) -> bool:
    """Whether a run's tables are those of a run with no early read."""
    plain = graded(bank, [data], out.parent / "plain", version="per-student")
    return differing(out, plain) == []


def differing(left: Path, right: Path) -> list[str]:
    return [n for n in TABLES if (left / n).read_bytes() != (right / n).read_bytes()]


class Spy:
    """What the early reads did: each census asked for (None: counted here) and each read.

    A patient spy lets each helper end before its count is asked for, as it has in a real
    command (the grader's imports take longer than the count); in a test the grader is
    imported already.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.census: list[Census | None] = []
        self.reads: list[EarlyRead] = []
        self.patient = True
        census, start = EarlyRead.census, early_module._start

        def spied_census(read: EarlyRead) -> Census | None:
            if self.patient and read.helper is not None:
                read.helper.wait(timeout=60)
            found = census(read)
            self.census.append(found)
            return found

        def spied_start(path: Path, **options: Any) -> EarlyRead | None:
            read = start(path, **options)
            if read is not None:
                self.reads.append(read)
            return read

        monkeypatch.setattr(EarlyRead, "census", spied_census)
        monkeypatch.setattr(early_module, "_start", spied_start)


@pytest.fixture
def helped(monkeypatch: pytest.MonkeyPatch) -> Spy:
    """Every file counted by a helper process (however small, on any machine)."""
    monkeypatch.setattr(early_module, "HELPER_BYTES", 1)
    monkeypatch.setattr(early_module, "may_help", lambda: True)
    return Spy(monkeypatch)


def test_grade_takes_the_early_read_and_count_and_writes_the_same(
    tmp_path: Path, helped: Spy, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_class(tmp_path / "class.csv", 400)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        cli, ["grade", str(FIELD), "class.csv", "-o", "early", "--version", "per-student"]
    )
    assert result.exit_code in (0, 1), result.output
    assert "graded 400 students" in result.stdout
    (read,) = helped.reads
    assert read.taken  # pyarrow's read, started before the grader was imported
    assert helped.census == [count_csv(data)]  # the helper's count, which is the file's
    assert read.helper is None  # its helper has ended
    assert same_as_plain(data, tmp_path / "early")


def test_a_file_changed_after_its_early_read_is_read_again(tmp_path: Path, helped: Spy) -> None:
    data = write_class(tmp_path / "class.csv", 300)
    early = start_reads([data])
    write_class(data, 310, seed=2)  # rewritten before the grader reads it
    graded_early(data, tmp_path / "early", started=early)
    (read,) = helped.reads
    assert not read.taken and helped.census == []
    assert same_as_plain(data, tmp_path / "early")
    assert (tmp_path / "early" / "grades.csv").read_text(encoding="utf-8").count("\n") == 311


def test_a_helper_count_that_pyarrow_does_not_read_is_counted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_class(tmp_path / "class.csv", 200)
    wrong = Census(records=201)  # one record too many: pyarrow reads 200 rows
    monkeypatch.setattr(EarlyRead, "census", lambda read: wrong)
    run = graded_early(data, tmp_path / "early")
    assert run.students == 200 and not run.rejected
    assert same_as_plain(data, tmp_path / "early")


def test_a_bank_whose_slot_is_named_like_a_roster_column_is_read_by_its_own_read(
    tmp_path: Path, helped: Spy
) -> None:
    """The header alone cannot tell a roster column from a slot of the same name: a bank whose
    question is called ``email`` leaves the early read (which took the column as plain text)
    untaken, and the reader starts its own, which reads it as answers."""
    text = FIELD.read_text(encoding="utf-8")
    assert text.count("id: speed-required-units") == 1
    bank = tmp_path / "bank.yaml"
    bank.write_text(text.replace("id: speed-required-units", "id: email"), encoding="utf-8")
    data = write_class(tmp_path / "class.csv", 150, bank=bank)
    assert "email" in data.read_text(encoding="utf-8").splitlines()[0].split(",")
    graded_early(data, tmp_path / "early", bank=bank)
    (read,) = helped.reads
    assert not read.taken
    assert helped.census and helped.census[0] is not None  # the count still stands
    assert same_as_plain(data, tmp_path / "early", bank=bank)
    graded = (tmp_path / "early" / "responses.csv").read_text(encoding="utf-8")
    assert '"email",' in graded  # graded as the slot it is


@pytest.mark.parametrize(
    "script",
    [
        "import sys; sys.exit(3)",  # fails
        "import time; time.sleep(30)",  # still counting when the count is wanted
        "print('[7, false, 0, 0]')",  # answers, but not the file's count
    ],
)
def test_a_helper_that_fails_is_late_or_is_wrong_leaves_the_count_here(
    tmp_path: Path, helped: Spy, monkeypatch: pytest.MonkeyPatch, script: str
) -> None:
    monkeypatch.setattr(early_module, "_CENSUS", script)
    helped.patient = "sleep" not in script  # the slow one is still at work when asked
    data = write_class(tmp_path / "class.csv", 120)
    run = graded_early(data, tmp_path / "early")
    assert run.students == 120 and not run.rejected
    (read,) = helped.reads
    assert read.helper is None
    if "7" not in script:
        assert helped.census == [None]  # counted here
    assert same_as_plain(data, tmp_path / "early")


@pytest.mark.parametrize(
    "answer",
    [b"", b"[1, 2]", b"[-1, false, 0, 0]", b"[1.0, false, 0, 0]", b"[true, false, 0, 0]",
     b"[1, 0, 0, 0]", b"{}", b"[1, false, 0, 0] junk"],
)  # fmt: skip
def test_a_helper_answer_that_is_not_a_census_is_refused(answer: bytes) -> None:
    assert early_module._census_of(answer) is None


def test_a_helper_answer_is_the_census_it_says() -> None:
    assert early_module._census_of(b"[12, true, 1, 2]\n") == Census(
        records=12, multiline=True, blank=1, broken=2
    )


def test_start_reads_never_fails_and_close_ends_what_it_started(
    tmp_path: Path, helped: Spy
) -> None:
    (tmp_path / "empty.csv").write_bytes(b"")
    (tmp_path / "long.csv").write_text("student,question,answer\ns1,q,1\n", encoding="utf-8")
    (tmp_path / "folder.csv").mkdir()
    (tmp_path / "bad.csv").write_bytes(b'student,"q\n')
    wide = write_class(tmp_path / "wide.csv", 50)
    names = ["missing.csv", "empty.csv", "long.csv", "folder.csv", "bad.csv", "wide.csv"]
    early = start_reads([tmp_path / n for n in names])
    assert list(early.reads) == [wide]
    (read,) = helped.reads
    helper = read.helper
    assert helper is not None
    assert early.keys is not None  # a helper for the draw keys, started ahead
    keys = early.keys._process
    early.close()
    assert helper.returncode is not None  # ended, not left running
    assert keys is not None and keys.returncode is not None
    assert read.table is not None and read.table.done()
    assert early.reads == {}


def test_a_run_with_parquet_starts_no_early_read(tmp_path: Path, helped: Spy) -> None:
    data = write_class(tmp_path / "class.csv", 20)
    early = start_reads([data, tmp_path / "more.parquet"])
    assert early.reads == {} and helped.reads == []


def test_the_early_reader_imports_no_part_of_the_grader() -> None:
    code = (
        "import sys, quizgym.grading.early\n"
        "heavy = ('quizgym.answers', 'quizgym.model', 'numpy', 'pyarrow', 'sympy', 'pydantic')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout == "[]\n"


@pytest.mark.parametrize("column", [0, 3])  # the student's id, an answer
def test_a_cell_too_long_in_a_file_pyarrow_reads_rejects_its_row(
    tmp_path: Path, column: int
) -> None:
    data = write_class(tmp_path / "class.csv", 30)
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    cells = lines[5].rstrip("\n").split(",")
    cells[column] = "x" * (MAX_CELL + 1)
    lines[5] = ",".join(cells) + "\n"
    data.write_text("".join(lines), encoding="utf-8")
    run = graded_early(data, tmp_path / "out")
    assert run.students == 29
    (rejected,) = run.rejected
    assert rejected.line == 6 and "a cell of 131,073 characters" in rejected.reason


def test_a_class_in_many_files_reads_a_few_ahead_with_a_helper_a_spare_core(
    tmp_path: Path, helped: Spy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thirty section files are not thirty tables held at once, nor thirty helpers."""
    monkeypatch.setattr(early_module, "cores", lambda: 2)
    files = []
    for k in range(early_module.MOST_EARLY_FILES + 2):
        files.append(write_class(tmp_path / f"section{k}.csv", 40, seed=k))
        lines = files[-1].read_text(encoding="utf-8").splitlines(keepends=True)
        files[-1].write_text(  # students of their own in each file
            lines[0] + "".join(line.replace("s0", f"x{k}-", 1) for line in lines[1:]),
            encoding="utf-8",
        )
    early = start_reads(files)
    try:
        assert list(early.reads) == files[: early_module.MOST_EARLY_FILES]
        assert [r.helper is not None for r in helped.reads].count(True) == 1
        run = grade_submissions(
            FIELD, files, out_dir=tmp_path / "early", version="per-student", early=early
        )
    finally:
        early.close()
    assert run.students == 40 * len(files) and not run.rejected
    plain = graded(FIELD, files, tmp_path / "plain", version="per-student")
    assert differing(tmp_path / "early", plain) == []
