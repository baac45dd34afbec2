"""Grading in chunks and on Dask writes the files the in-memory engine writes, byte for byte."""

from __future__ import annotations

import csv
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from conftest import require_module

from quizgym.cli import cli
from quizgym.grading.run import grade_submissions as grade
from quizgym.grading.scale.plan import plan_run
from quizgym.loader import load_bank
from quizgym.solver import bank_slots

OUTPUTS = ("grades.csv", "responses.csv", "items.csv", "rejected.csv", "review.csv", "report.html")

# What students type, right and wrong, for every kind of slot, and some garbage.
POOL = [
    "true", "False", "f", "yes", "maybe", "A", "b", "C", "d", "1", "3", "GPT", "A, B", "1,2",
    "0.693", "ln 2", "2 ln 2", "1.386", "1.39", "0.301", "2.0794", "2.08", "2.3026", "ln 10",
    "0.5", "1/0", "zz", "80", "0.8", "80%", "fine-tuning mismatch", "no idea", "",
]  # fmt: skip


# The same for the bank of another field (units, percentages, parameters, parts with error carried
# forward): values of its keys, with and without units, its slips, and garbage.
FIELD_POOL = [
    "10", "10 m/s", "36 km/h", "7.5 m/s", "5", "5 m/s", "15", "15%", "0.15", "35.31", "35.3 m",
    "9.81 N", "9.8", "0.1171875", "0.117", "0.8413", "0.841", "7.5", "0.231", "ln(2)/3", "25",
    "25 m", "50 m", "12345.6", "12,345.6", "3 kg", "1/0", "zz", "", "no idea",
]  # fmt: skip
FIELD = Path(__file__).parent / "data" / "field" / "stats-mechanics.yaml"
SCALE_BANKS = {"bert-mlm": ("bert-mlm", POOL), "stats-mechanics": (str(FIELD), FIELD_POOL)}
"""The banks the chunked and streamed runs are compared on: name -> (bank, answers to draw)."""

# The generated classes give a seed on some rows and none on others: those were drawn without a
# seed, which a run must be told (--version per-student) rather than guess.
grade_submissions = partial(grade, version="per-student")
grade_at_scale = grade_submissions
PER_STUDENT = ["--version", "per-student"]


def write_class(
    path: Path,
    slots: list[str],
    students: range,
    *,
    seed: int,
    bad: bool = True,
    pool: list[str] = POOL,
) -> None:
    """A wide CSV of a class (and, with ``bad``, rows the reader must reject)."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["student", "seed", *slots, *(["not-a-question"] if bad else [])])
        for k in students:
            cells = [rng.choice(pool) for _ in slots] + ([""] if bad else [])
            writer.writerow([f"s{k:05d}", k % 4 if k % 3 else "", *cells])
            if bad and k % 17 == 5:
                writer.writerow([f"s{k - 3:05d}", "", *cells])  # a duplicate student
            if bad and k % 23 == 7:
                writer.writerow([f"x{k}", "seven", *cells])  # a seed that is not a number
            if bad and k % 29 == 3:
                writer.writerow([f"y{k}", "1"])  # too few cells


@pytest.fixture(scope="module")
def arrow() -> SimpleNamespace:
    """pyarrow (``pa``) and pyarrow.parquet (``pq``), for a test that writes or reads Parquet.

    A fixture, not a module-level import: without pyarrow each such test skips on a laptop and
    fails under CI=true, and the tests that need no Parquet still run.
    """
    return SimpleNamespace(pa=require_module("pyarrow"), pq=require_module("pyarrow.parquet"))


def to_parquet(arrow: SimpleNamespace, source: Path, target: Path, *, row_group: int) -> None:
    """The same table as Parquet (every column a string; empty cells null)."""
    with source.open(encoding="utf-8", newline="") as stream:
        rows = list(csv.reader(stream))
    header, body = rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]
    columns = {h: [r[k] or None for r in body] for k, h in enumerate(header)}
    arrow.pq.write_table(arrow.pa.table(columns), target, row_group_size=row_group)


def same_outputs(
    left: Path, right: Path, *, rename: tuple[str, str] = ("", ""), gradebook: bool = True
) -> list[str]:
    """The output files that differ between two runs (``rename``: source names that may)."""
    differ = []
    names = [*OUTPUTS, *(["gradebook-canvas.csv"] if gradebook else [])]
    if (left / "feedback").is_dir() or (right / "feedback").is_dir():
        files = {p.relative_to(left) for p in (left / "feedback").iterdir()}
        if files != {p.relative_to(right) for p in (right / "feedback").iterdir()}:
            differ.append("feedback/")
        names += sorted(str(f) for f in files)
    for name in names:
        a = (left / name).read_bytes()
        b = (right / name).read_bytes().replace(rename[1].encode(), rename[0].encode())
        if a != b:
            differ.append(name)
    return differ


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """One real local Dask cluster of two worker processes for the module."""
    distributed = require_module("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as local:
        yield local.scheduler_address


def write_class_files(arrow: SimpleNamespace, folder: Path, name: str) -> dict[str, Path]:
    """A generated class of a bank of SCALE_BANKS in four files: wide CSV, wide Parquet (and its
    CSV twin), JSON Lines; a.csv and b.csv share some questions."""
    bank, pool = SCALE_BANKS[name]
    slots = [s.id for s in bank_slots(load_bank(bank))]
    first, second = (slots[:50], slots[30:]) if name == "bert-mlm" else (slots[:8], slots[5:])
    write_class(folder / "a.csv", first, range(0, 70), seed=1, pool=pool)
    write_class(folder / "b.csv", second, range(70, 130), seed=2, bad=False, pool=pool)
    # duplicate of a student of a.csv, at b.csv line 9: rejected in both engines
    lines = (folder / "b.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(8, lines[8].replace("s00077", "s00003", 1))
    (folder / "b.csv").write_text("".join(lines), encoding="utf-8")
    to_parquet(arrow, folder / "b.csv", folder / "b.parquet", row_group=13)
    with (folder / "c.jsonl").open("w", encoding="utf-8") as out:
        for k in range(130, 140):
            answers = {s: pool[(k + j) % len(pool)] for j, s in enumerate(slots[::5])}
            out.write(json.dumps({"student": f"s{k:05d}", "answers": answers}) + "\n")
        # "s 00131" and "s/00131" both become feedback/s_00131.md: the run names them apart
        for student in ("s 00131", "s/00131", "s_00131"):
            out.write(json.dumps({"student": student, "answers": {slots[0]: "true"}}) + "\n")
        out.write("{not json\n")
    return {p.name: p for p in folder.iterdir()}


def grade_in_memory(name: str, class_files: dict[str, Path], out: Path) -> Path:
    """The in-memory run the chunked and distributed ones must equal, byte for byte."""
    files = [class_files["a.csv"], class_files["b.csv"], class_files["c.jsonl"]]
    bank = SCALE_BANKS[name][0]
    run = grade_submissions(bank, files, out_dir=out, gradebook="canvas", feedback=True)
    assert run.students == 143 and len(run.rejected) > 10
    assert {"s_00131.md", "s_00131-2.md", "s_00131-3.md"} <= {
        p.name for p in (out / "feedback").iterdir()
    }
    return out


@pytest.fixture(scope="module")
def class_files(
    arrow: SimpleNamespace, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """The bundled bank's class (the fixed counts of the tests below are of it)."""
    return write_class_files(arrow, tmp_path_factory.mktemp("class"), "bert-mlm")


@pytest.fixture(scope="module")
def in_memory(class_files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return grade_in_memory("bert-mlm", class_files, tmp_path_factory.mktemp("numpy"))


@pytest.fixture(scope="module")
def field_class_files(
    arrow: SimpleNamespace, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    return write_class_files(arrow, tmp_path_factory.mktemp("field-class"), "stats-mechanics")


@pytest.fixture(scope="module")
def field_in_memory(
    field_class_files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    out = tmp_path_factory.mktemp("field-numpy")
    return grade_in_memory("stats-mechanics", field_class_files, out)


@pytest.fixture(params=list(SCALE_BANKS))
def scaled(request: pytest.FixtureRequest) -> tuple[str, dict[str, Path], Path]:
    """Each bank of SCALE_BANKS: (bank, its class's files, the in-memory run's folder)."""
    if request.param == "bert-mlm":
        files, whole = "class_files", "in_memory"
    else:
        files, whole = "field_class_files", "field_in_memory"
    bank = SCALE_BANKS[request.param][0]
    return bank, request.getfixturevalue(files), request.getfixturevalue(whole)


def test_dask_cluster_writes_what_the_numpy_engine_writes(
    cluster: str, scaled: tuple[str, dict[str, Path], Path], tmp_path: Path
) -> None:
    bank, class_files, in_memory = scaled
    files = [class_files["a.csv"], class_files["b.parquet"], class_files["c.jsonl"]]
    run = grade_at_scale(
        bank,
        files,
        out_dir=tmp_path,
        engine="dask",
        scheduler=cluster,
        chunk_rows=9,
        gradebook="canvas",
        feedback=True,
    )
    assert run.students == 143
    assert same_outputs(in_memory, tmp_path, rename=("b.csv", "b.parquet")) == []
    rejected = (tmp_path / "rejected.csv").read_text(encoding="utf-8")
    a, b = class_files["a.csv"], class_files["b.parquet"]
    assert f'"{b}","9","s00003","duplicate student s00003 (first at {a}:5)"\n' in rejected


def test_chunked_numpy_engine_writes_the_same_files(
    scaled: tuple[str, dict[str, Path], Path], tmp_path: Path
) -> None:
    bank, class_files, in_memory = scaled
    files = [class_files["a.csv"], class_files["b.csv"], class_files["c.jsonl"]]
    ticks: list[tuple[int, int]] = []
    grade_at_scale(
        bank,
        files,
        out_dir=tmp_path,
        chunk_rows=2,
        gradebook="canvas",
        feedback=True,
        progress=lambda done, total: ticks.append((done, total)),
    )
    assert same_outputs(in_memory, tmp_path) == []
    total = ticks[-1][1]
    assert total > 30 and ticks == [(k, total) for k in range(1, total + 1)]


def test_pieces_hold_at_most_chunk_rows_students(class_files: dict[str, Path]) -> None:
    bank = load_bank("bert-mlm")
    plan = plan_run(bank, [class_files["a.csv"], class_files["b.parquet"]], chunk_rows=10)
    assert [p.kind for p in plan.pieces] == ["csv"] * 8 + ["parquet"] * 7
    assert all(p.rows <= 10 for p in plan.pieces)
    assert plan.present == [s.id for s in bank_slots(bank)]


def test_cli_grades_parquet_on_a_running_scheduler(
    cluster: str, class_files: dict[str, Path], tmp_path: Path
) -> None:
    result = CliRunner().invoke(
        cli,
        ["grade", "bert-mlm", str(class_files["b.parquet"]), "-o", str(tmp_path), *PER_STUDENT]
        + ["--engine", "dask", "--scheduler", cluster, "--chunk-rows", "20"],
    )
    with (tmp_path / "review.csv").open(encoding="utf-8", newline="") as stream:
        queue = list(csv.DictReader(stream))
    waiting = sum(int(r["count"]) for r in queue)
    assert result.output == (
        f"graded 61 students (3172 responses) → {tmp_path}/; {waiting} answers to review "
        f"({len(queue)} in review.csv)\n"
    )
    assert result.exit_code == 0
    grades = (tmp_path / "grades.csv").read_text(encoding="utf-8").splitlines()
    assert len(grades) == 62 and grades[8].startswith('"s00003",')


def test_without_dask_the_engine_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, class_files: dict[str, Path], tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    result = CliRunner().invoke(
        cli,
        ["grade", "bert-mlm", str(class_files["a.csv"]), "-o", str(tmp_path), "--engine", "dask"],
    )
    assert result.output == 'Error: --engine dask needs Dask: pip install "quizgym[dask]"\n'
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--compare", "."], "Error: --compare .: no grades.csv there (is it a grade folder?)\n"),
        (["--chunk-rows", "0"], "'--chunk-rows': 0 is not in the range x>=1."),
    ],
)  # fmt: skip
def test_scaled_runs_refuse_what_they_cannot_do(
    class_files: dict[str, Path], tmp_path: Path, args: list[str], message: str
) -> None:
    command = ["grade", "bert-mlm", str(class_files["b.parquet"]), "-o", str(tmp_path), *args]
    command += PER_STUDENT
    result = CliRunner().invoke(cli, command)
    assert result.exit_code == 2
    assert message in result.output


ROWS = [
    "student,seed,tf-bert-generates,why-not-all-mask",
    "s1,1,false,mismatch",
    's2,,true,"two\nlines"',
    "",
    "s3,x,f,",
    "s1,2,f,dup",
    "s4,3,t",
]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_csv_pieces_number_lines_as_the_whole_file_reader(tmp_path: Path, newline: str) -> None:
    reference, source = tmp_path / "lf" / "class.csv", tmp_path / "other" / "class.csv"
    for path, ending in ((reference, "\n"), (source, newline)):
        path.parent.mkdir()
        path.write_bytes(b"\xef\xbb\xbf" + ending.join(ROWS).encode() + ending.encode())
    whole = grade_submissions("bert-mlm", [reference], out_dir=tmp_path / "whole")
    chunked = grade_at_scale("bert-mlm", [source], out_dir=tmp_path / "chunked", chunk_rows=1)
    lines = [(r.line, r.reason) for r in chunked.rejected]
    assert lines == [
        (6, "seed 'x' is not a whole number"),
        (7, f"duplicate student s1 (first at {source}:2)"),
        (8, "too few cells: 3, the header has 4"),
    ]
    assert [(r.line, r.reason.replace("/lf/", "/other/")) for r in whole.rejected] == lines
    rename = (str(reference.parent), str(source.parent))
    assert (
        same_outputs(tmp_path / "whole", tmp_path / "chunked", rename=rename, gradebook=False) == []
    )


def test_a_file_that_is_not_parquet_is_one_line(arrow: SimpleNamespace, tmp_path: Path) -> None:
    fake = tmp_path / "class.parquet"
    fake.write_text("student,tf-bert-generates\ns1,true\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["grade", "bert-mlm", str(fake), "-o", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert result.output.startswith(f"Error: {fake}: not a Parquet file: ")
    assert result.output.count("\n") == 1


def write_long(
    path: Path, slots: list[str], students: range, *, seed: int, pool: list[str] = POOL
) -> None:
    """A long CSV, grouped by student, with rows the reader must reject."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["student", "question", "answer", "seed"])
        for k in students:
            for slot in rng.sample(slots, 12):
                writer.writerow([f"s{k:05d}", slot, rng.choice(pool), k % 3])
            if k % 7 == 2:
                writer.writerow([f"s{k:05d}", slot, "again", ""])  # a second answer
            if k % 11 == 4:
                writer.writerow([f"s{k:05d}", "no-such-question", "1", ""])
            if k % 13 == 6:
                writer.writerow([f"s{k:05d}", slot, "1", "9"])  # a seed that differs


@pytest.mark.parametrize("name", list(SCALE_BANKS))
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_long_files_stream_like_the_in_memory_reader(
    request: pytest.FixtureRequest, tmp_path: Path, suffix: str, name: str
) -> None:
    bank, pool = SCALE_BANKS[name]
    slots = [s.id for s in bank_slots(load_bank(bank))]
    source = tmp_path / "long.csv"
    write_long(source, slots, range(40), seed=4, pool=pool)
    whole = grade_submissions(bank, [source], out_dir=tmp_path / "whole")
    assert len(whole.rejected) > 8
    streamed = source
    if suffix == ".parquet":
        streamed = tmp_path / "long.parquet"
        to_parquet(request.getfixturevalue("arrow"), source, streamed, row_group=50)
    plan = plan_run(load_bank(bank), [streamed], chunk_rows=6)
    assert len(plan.pieces) == 7 and {p.layout for p in plan.pieces} == {"long"}
    grade_at_scale(bank, [streamed], out_dir=tmp_path / "chunked", chunk_rows=6)
    rename = ("long.csv", streamed.name)
    assert (
        same_outputs(tmp_path / "whole", tmp_path / "chunked", rename=rename, gradebook=False) == []
    )


def test_a_long_file_not_grouped_by_student_is_a_one_line_error(tmp_path: Path) -> None:
    source = tmp_path / "long.csv"
    source.write_text(
        "student,question,answer\n"
        "s1,tf-bert-generates,true\ns2,tf-bert-generates,false\ns1,mc-which-causal,A\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        cli,
        ["grade", "bert-mlm", str(source), "-o", str(tmp_path), "--chunk-rows", "1", *PER_STUDENT],
    )
    assert result.output == (
        f"Error: {source}:4: the rows of student s1 are not together (first at line 2): sort a "
        "long file by student to grade it in chunks, or grade without --chunk-rows and --engine\n"
    )
    assert result.exit_code == 2


# VmHWM: the peak RSS of this program's memory; ru_maxrss would start at pytest's own size,
# which a forked child inherits.
PEAK = """
import re, sys
from pathlib import Path
from quizgym.grading.run import grade_submissions
source, out, chunk = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
grade_submissions(
    "bert-mlm", [source], out_dir=out, chunk_rows=chunk or None, version="per-student"
)
status = open("/proc/self/status", encoding="utf-8").read()
print(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1))
"""


# The same allocator arenas and thread pools on every machine: glibc keeps up to 8 arenas per
# core and Arrow starts a thread per core, so a many-core CI machine would measure its own size.
PINNED = {"MALLOC_ARENA_MAX": "2", "OMP_NUM_THREADS": "2"}


def _peak_mib(source: Path, out: Path, chunk: int) -> float:
    done = subprocess.run(
        [sys.executable, "-c", PEAK, str(source), str(out), str(chunk)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **PINNED},
    )
    return int(done.stdout.split()[-1]) / 1024


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_chunked_run_has_bounded_peak_memory_and_the_same_results(tmp_path: Path) -> None:
    slots = [s.id for s in bank_slots(load_bank("bert-mlm"))]
    small, large = tmp_path / "small.csv", tmp_path / "large.csv"
    write_class(small, slots, range(2500), seed=3, bad=False)
    write_class(large, slots, range(10_000), seed=3, bad=False)
    whole = _peak_mib(large, tmp_path / "whole", 0)
    whole_small = _peak_mib(small, tmp_path / "whole-small", 0)
    chunked = _peak_mib(large, tmp_path / "chunked", 500)
    chunked_small = _peak_mib(small, tmp_path / "chunked-small", 500)
    # 4x the students: the in-memory run grows (about 65 MiB here), the chunked one by less than
    # half of that (about 19 MiB: the census and the run's sums, a few KB a student) and stays
    # under the whole.
    assert whole > whole_small + 40, (whole, whole_small)
    assert chunked - chunked_small < (whole - whole_small) / 2, (chunked, chunked_small, whole)
    assert chunked < whole - 40, (chunked, whole)
    assert same_outputs(tmp_path / "whole", tmp_path / "chunked", gradebook=False) == []


# Per bank: the key edit (the first occurrence), the question it changes, and how verdicts move.
KEY_EDITS = {
    # the key of one true/false item flips, so everyone's score on it changes
    "bert-mlm": (
        ("    answer: false\n", "    answer: true\n"),
        "tf-bert-generates",
        {("correct", "incorrect"), ("incorrect", "correct")},
    ),
    # a speed's key goes from 5 m/s to 10 m/s: 5 becomes wrong, 10 right (each without its
    # required unit: partly right)
    "stats-mechanics": (
        ("    answer: 400 / 80\n", "    answer: 400 / 40\n"),
        "speed-required-units",
        {
            ("correct", "incorrect"),
            ("incorrect", "correct"),
            ("partial", "incorrect"),
            ("incorrect", "partial"),
        },
    ),
}


@pytest.mark.parametrize("name", list(SCALE_BANKS))
def test_chunked_and_in_memory_runs_compare_alike(tmp_path: Path, name: str) -> None:
    # A teacher regrades a class after a key change: the chunked engine lists the same changes
    # (changes.csv byte for byte) as the in-memory one.
    bank, pool = SCALE_BANKS[name]
    (old, new), question, moves = KEY_EDITS[name]
    book = load_bank(bank)
    slots = [s.id for s in bank_slots(book)]
    source = tmp_path / "class.csv"
    write_class(source, slots, range(400), seed=11, bad=False, pool=pool)
    before = Path(book.path).read_text(encoding="utf-8")
    (tmp_path / "old.yaml").write_text(before, encoding="utf-8")
    changed = before.replace(old, new, 1)
    assert changed != before
    (tmp_path / "new.yaml").write_text(changed, encoding="utf-8")
    grade_submissions(tmp_path / "old.yaml", [source], out_dir=tmp_path / "before")
    memory = grade_submissions(
        tmp_path / "new.yaml", [source], out_dir=tmp_path / "memory", compare=tmp_path / "before"
    )
    chunked = grade_at_scale(
        tmp_path / "new.yaml",
        [source],
        out_dir=tmp_path / "chunked",
        chunk_rows=150,
        compare=tmp_path / "before",
    )
    assert memory.changes and chunked.changes == memory.changes
    assert len({c.student for c in memory.changes}) > 40
    # only the flipped item changed, each way round
    assert {c.question for c in memory.changes} == {question}
    assert {(c.old_verdict, c.new_verdict) for c in memory.changes} == moves
    assert (tmp_path / "chunked" / "changes.csv").read_bytes() == (
        tmp_path / "memory" / "changes.csv"
    ).read_bytes()


@pytest.mark.parametrize("name", ["b.csv", "b.parquet"])
def test_grading_does_not_load_pandas(
    class_files: dict[str, Path], tmp_path: Path, name: str
) -> None:
    # pyarrow imports pandas (0.4 s, in every process) when it converts a Python value or builds
    # a NumPy view; quizgym grade avoids both, in memory and in chunks. Nor does it import
    # pyarrow.compute, whose wrappers take 25 ms to make: it calls the functions underneath; nor
    # numpy.ma, which np.unique imports (7 ms) when it is asked for the values alone.
    code = (
        "import sys; from quizgym.cli import main; sys.argv[0] = 'quizgym'\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(any(m in sys.modules for m in ('pandas', 'pyarrow.compute', 'numpy.ma')))"
    )
    command = [
        sys.executable,
        "-c",
        code,
        "grade",
        "bert-mlm",
        str(class_files[name]),
        *PER_STUDENT,
    ]
    done = subprocess.run(
        [*command, "-o", str(tmp_path / "out")], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "False", done.stdout
