"""Hostile submissions: no answer and no row stops the class, loses a student or an answer.

Each case of issue #17 that concerns the submission side is reproduced here (it failed before its
fix): an answer the engine fails on becomes an ``invalid`` verdict with a reason and the class
goes on; a row that cannot be read becomes a rejected row with a reason and the rows after it are
graded; and at the end of every run, the students (records) in the input, counted independently
of the parsers, equal those graded plus those rejected.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import require_module

from quizgym.answers import Status, grade_response
from quizgym.cli import cli
from quizgym.grading import batch
from quizgym.grading.run import grade_submissions
from quizgym.loader import load_bank
from quizgym.model import Bank

QUIZ = Path(__file__).parent / "data" / "grade" / "quiz.yaml"
SLOTS = [
    "tf-bert", "mc-causal", "mc-multi", "ste-size", "num-loss",
    "num-sum.first", "num-sum.second", "num-sum.total", "why-mask",
]  # fmt: skip
ANSWERS = ["false", "A", "A, B", "A", "ln 2", "0.6931", "1.386", "2.079", "a mismatch"]
BOOM = "💥"
"""The answer the tests make the engine fail on."""


@pytest.fixture(scope="module")
def quiz() -> Bank:
    return load_bank(QUIZ)


def grade(paths: list[Path], out: Path, **options: Any) -> Any:
    return grade_submissions(QUIZ, paths, out_dir=out, version="per-student", **options)


def responses(out: Path) -> dict[tuple[str, str], dict[str, str]]:
    with (out / "responses.csv").open(encoding="utf-8", newline="") as stream:
        return {(r["student"], r["question"]): r for r in csv.DictReader(stream)}


def write_class(path: Path, rows: list[list[str]], header: list[str] | None = None) -> Path:
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(header or ["student", *SLOTS])
        writer.writerows(rows)
    return path


# --- one answer never stops the class -------------------------------------------------------


@pytest.mark.parametrize("typed", ["²", "①", "₁", "٣", "ı", "1" * 5000])
def test_a_digit_int_refuses_is_an_unreadable_choice(quiz: Bank, typed: str) -> None:
    # str.isdigit() is true for "²" and int() refused it: grade exited 2, the drill crashed.
    for question in ("mc-causal", "mc-multi", "ste-size"):
        verdict = grade_response(quiz, quiz.question(question), typed, seed=1)
        assert verdict.status is Status.INVALID
        assert "is not one of the choices" in verdict.feedback


def test_a_superscript_for_a_choice_grades_the_class(tmp_path: Path) -> None:
    data = write_class(tmp_path / "c.csv", [["s1", *ANSWERS], ["s2", "true", "²", *ANSWERS[2:]]])
    result = CliRunner().invoke(
        cli, ["grade", str(QUIZ), str(data), "-o", str(tmp_path / "g"), "--version", "per-student"]
    )
    assert result.exit_code == 0, result.output
    assert "graded 2 students" in result.output
    assert responses(tmp_path / "g")["s2", "mc-causal"]["verdict"] == "invalid"


def _raising(real: Callable[..., Any], position: int = 2) -> Callable[..., Any]:
    """``real``, failing when its argument at ``position`` is :data:`BOOM`."""

    def fake(*args: Any, **kwargs: Any) -> Any:
        if len(args) > position and args[position] == BOOM:
            raise RuntimeError("injected failure")
        return real(*args, **kwargs)

    return fake


@pytest.mark.parametrize("chunk_rows", [None, 1], ids=["in-memory", "chunked"])
@pytest.mark.parametrize("slot", SLOTS)
def test_an_answer_the_engine_fails_on_is_invalid_and_the_class_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slot: str, chunk_rows: int | None
) -> None:
    index = SLOTS.index(slot)
    rows = [[f"s{k}", *ANSWERS] for k in range(4)]
    rows[2][1 + index] = BOOM
    data = write_class(tmp_path / "c.csv", rows)
    clean = grade([data], tmp_path / "clean", chunk_rows=chunk_rows)
    before = responses(tmp_path / "clean")
    # Every place the grader reads or grades one answer fails on BOOM: the engine itself, the
    # choice and true/false readers, the numeric reader and the numeric verdict.
    monkeypatch.setattr(batch, "grade_response", _raising(batch.grade_response))
    monkeypatch.setattr(batch, "read_choices", _raising(batch.read_choices, 0))
    monkeypatch.setattr(batch, "read_bool", _raising(batch.read_bool, 0))
    monkeypatch.setattr(batch, "read_answer", _raising(batch.read_answer, 0))
    run = grade([data], tmp_path / "hit", chunk_rows=chunk_rows)
    after = responses(tmp_path / "hit")
    assert run.students == clean.students == 4
    assert not run.rejected
    failed = after["s2", slot]
    assert failed["verdict"] == "invalid"
    assert failed["score"] == "0"
    assert "could not be graded (RuntimeError: injected failure)" in failed["feedback"]
    # The teacher is asked to grade it by hand, in review.csv.
    with (tmp_path / "hit" / "review.csv").open(encoding="utf-8", newline="") as stream:
        queue = {(r["question"], r["answer"]): r for r in csv.DictReader(stream)}
    assert queue[slot, BOOM]["reason"] == (
        "could not be graded: quizgym failed on it (an error): grade it by hand"
    )
    # Nothing else moved (the failed answer was BOOM in both runs: unreadable either way).
    assert {k: v for k, v in after.items() if k != ("s2", slot)} == {
        k: v for k, v in before.items() if k != ("s2", slot)
    }


@pytest.mark.parametrize("chunk_rows", [None, 1], ids=["in-memory", "chunked"])
def test_a_failure_of_the_numeric_array_path_grades_each_answer_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk_rows: int | None
) -> None:
    rows = [[f"s{k}", *ANSWERS] for k in range(3)]
    data = write_class(tmp_path / "c.csv", rows)
    grade([data], tmp_path / "clean", chunk_rows=chunk_rows)

    def broken(**_: Any) -> Any:
        raise MemoryError("no room for the array")

    monkeypatch.setattr(batch, "compare_array", broken)
    grade([data], tmp_path / "hit", chunk_rows=chunk_rows)
    assert responses(tmp_path / "hit") == responses(tmp_path / "clean")


# --- the invariant: students in = graded + rejected -----------------------------------------


def rejected(out: Path) -> list[dict[str, str]]:
    with (out / "rejected.csv").open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


def graded_students(out: Path) -> list[str]:
    with (out / "grades.csv").open(encoding="utf-8", newline="") as stream:
        return [r["student"] for r in csv.DictReader(stream)]


def stray_quote_class(path: Path, *, closed_later: bool) -> Path:
    """72 students; line 32 (s30) holds a quote that is never closed on its line."""
    rows = [f"s{k:02d},true,answer {k}" for k in range(72)]
    rows[30] = 's30,true,"oops'
    if closed_later:  # a later quoted cell would close it: the rows between would be one cell
        rows[60] = 's60,true,"a, b"'
    path.write_text("student,tf-bert,why-mask\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("closed_later", [False, True], ids=["never-closed", "closed-later"])
@pytest.mark.parametrize("chunk_rows", [None, 10], ids=["in-memory", "chunked"])
def test_a_stray_quote_rejects_its_row_and_grades_the_rows_after_it(
    tmp_path: Path, closed_later: bool, chunk_rows: int | None
) -> None:
    # Before: 41 (or 31) students graded, none rejected, exit 0: the rest vanished in one cell.
    data = stray_quote_class(tmp_path / "c.csv", closed_later=closed_later)
    run = grade([data], tmp_path / "g", chunk_rows=chunk_rows)
    assert run.students == 71
    (row,) = rejected(tmp_path / "g")
    assert (row["line"], row["student"]) == ("32", "s30")
    assert row["reason"] == (
        'a quote (") opened on line 32 is not closed before line 33, which is a row of its own: '
        "line 32 rejected; the rows after it are read"
    )
    assert graded_students(tmp_path / "g") == [f"s{k:02d}" for k in range(72) if k != 30]
    if closed_later:
        assert responses(tmp_path / "g")["s60", "why-mask"]["answer"] == "a, b"


def test_a_quoted_answer_on_several_lines_is_one_cell(tmp_path: Path) -> None:
    data = tmp_path / "c.csv"
    data.write_text(
        'student,tf-bert,why-mask\ns1,true,"first line\nsecond, line\n\nlast"\ns2,false,x\n',
        encoding="utf-8",
    )
    run = grade([data], tmp_path / "g")
    assert (run.students, run.rejected) == (2, [])
    assert responses(tmp_path / "g")["s1", "why-mask"]["answer"] == (
        "first line\nsecond, line\n\nlast"
    )


def test_a_quote_that_swallows_rows_names_the_lines_it_holds(tmp_path: Path) -> None:
    # The continuation lines are not rows (one cell each), until a line that is a whole row.
    data = tmp_path / "c.csv"
    data.write_text(
        'student,tf-bert,why-mask\ns1,true,"open\nmore\nmore\ns2,false,x\ns3,true,"y"\n',
        encoding="utf-8",
    )
    run = grade([data], tmp_path / "g")
    assert run.students == 2
    (row,) = rejected(tmp_path / "g")
    assert row["line"] == "2"
    assert "lines 2–4 (one cell) rejected" in row["reason"]


def test_a_run_whose_reader_loses_a_row_fails_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quizgym.grading.readers import submissions, wide

    data = write_class(tmp_path / "c.csv", [[f"s{k}", *ANSWERS] for k in range(5)])
    real = wide.read_wide

    def lossy(answers: Any, source: str, line: int, header: Any, rows: Any, **kw: Any) -> None:
        real(answers, source, line, header, list(rows)[:-1], **kw)  # the last row, gone

    monkeypatch.setattr(wide, "_read_wide_arrow", lambda *args: False)
    monkeypatch.setattr(submissions, "read_wide", lossy)
    result = CliRunner().invoke(
        cli, ["grade", str(QUIZ), str(data), "-o", str(tmp_path / "g"), "--version", "per-student"]
    )
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: {data}: 5 records in the file, but 4 graded, 0 rejected and 0 summary rows: "
        "some rows were lost in reading; nothing was written (this is a bug in quizgym: please "
        "report it with the file)\n"
    )
    assert not (tmp_path / "g" / "grades.csv").exists()


# --- one bad row never aborts the class -------------------------------------------------------


@pytest.mark.parametrize("chunk_rows", [None, 1], ids=["in-memory", "chunked"])
def test_a_cell_over_128_kib_rejects_its_row(tmp_path: Path, chunk_rows: int | None) -> None:
    # Before: csv.Error "field larger than field limit (131072)" stopped the class.
    data = write_class(
        tmp_path / "c.csv",
        [["s1", *ANSWERS], ["s2", *ANSWERS[:-1], "y" * 200_000], ["s3", *ANSWERS]],
    )
    data.write_text(data.read_text() + 's4,"' + "z" * 200_000 + "\n")  # and never closed
    run = grade([data], tmp_path / "g", chunk_rows=chunk_rows)
    assert run.students == 2
    assert [(r.line, r.student, r.reason) for r in run.rejected] == [
        (3, "s2", "a cell of 200,000 characters (the most is 131,072)"),
        (5, "s4", 'a quote (") opened on line 5 is never closed (line 5 to the end of the file)'),
    ]


JSONL_BAD = [
    ('{"student": "d", "answers": {"tf-bert": ' + "[" * 50_000 + "]" * 50_000 + "}}",
     "", "JSON nested too deeply to be a record"),
    ('{"student": "e", "seed": ' + "1" * 5000 + ', "answers": {}}',
     "", "not valid JSON: a number too long to read"),
    ('{"student": "f", "seed": "' + "1" * 5000 + '", "answers": {}}',
     "f", "seed '111111111111111111111111111111111111111…' has more than 20 digits"),
    ('{"student": ["list", "id"], "answers": {}}',
     "", "a student id must be text or a whole number, not a list"),
    ('{"student": "g", "student": "h", "answers": {}}',
     "", "the key 'student' appears twice in one object"),
    ('{"student": "i", "answers": {"tf-bert": "true", "TF-BERT": "false"}}',
     "i", "the key 'TF-BERT' appears twice in one object"),
    ('{"student": "j", "answers": {"tf-bert": {"nested": true}}}',
     "j", "the answer to tf-bert must be text, a number or a list of them, not an object"),
    ('{"student": "k", "anwsers": {"tf-bert": "true"}}',
     "", "unknown key 'anwsers' (a record has student, seed, answers, name, email, section)"),
    ('{"student": "l\\u0000", "answers": {}}',
     "l\\x00", "a student id with a control or invisible character (NUL, an escape, a "
     "byte-order mark, a direction override…): l\\x00"),
    ('{"student": "m", "answers": {"why-mask": "' + "w" * 140_000 + '"}}',
     "m", "a cell of 140,000 characters (the most is 131,072)"),
]  # fmt: skip


@pytest.mark.parametrize("chunk_rows", [None, 2], ids=["in-memory", "chunked"])
def test_each_bad_json_line_is_rejected_and_the_rest_graded(
    tmp_path: Path, chunk_rows: int | None
) -> None:
    good = '{"student": "s%d", "answers": {"tf-bert": "true"}}'
    lines = [good % 0, *(line for line, _, _ in JSONL_BAD), good % 1, "", good % 2]
    data = tmp_path / "a.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = grade([data], tmp_path / "g", chunk_rows=chunk_rows)
    assert run.students == 3
    assert [(r.line, r.student, r.reason) for r in run.rejected] == [
        (k, student, reason) for k, (_, student, reason) in enumerate(JSONL_BAD, start=2)
    ]


def test_json_lines_split_at_line_feeds_only(tmp_path: Path) -> None:
    # U+2028 and U+0085 are characters a JSON string may hold raw: no record break there.
    data = tmp_path / "a.jsonl"
    data.write_text(
        '{"student": "s1", "answers": {"why-mask": "a\u2028b\x85c"}}\n', encoding="utf-8"
    )
    run = grade([data], tmp_path / "g")
    assert (run.students, run.rejected) == (1, [])


def test_a_huge_line_costs_bounded_memory(tmp_path: Path) -> None:
    # Before: a 1 GB line cost 6.3 GB (CSV) and 11.5 GB (JSON Lines). Here 64 MiB of one line
    # must not cost more than a few MiB above the same class without it.
    if not Path("/proc/self/status").exists():
        pytest.skip("needs Linux /proc")
    import subprocess
    import sys

    peak = (
        "import re, sys\nfrom pathlib import Path\n"
        "from quizgym.grading.run import grade_submissions\n"
        "grade_submissions(sys.argv[1], [Path(sys.argv[2])], out_dir=Path(sys.argv[3]),"
        " version='per-student')\n"
        "status = open('/proc/self/status', encoding='utf-8').read()\n"
        "print(re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1))\n"
    )
    huge = "x" * (64 << 20)
    cases = {
        "c.csv": ("student,tf-bert\ns1,true\n", f"s2,{huge}\ns3,false\n"),
        "c.jsonl": (
            '{"student": "s1", "answers": {"tf-bert": "true"}}\n',
            '{"student": "s2", "answers": {"tf-bert": "' + huge + '"}}\n'
            '{"student": "s3", "answers": {"tf-bert": "false"}}\n',
        ),
    }
    for name, (head, tail) in cases.items():
        peaks = []
        for label, body in (("small", head), ("huge", head + tail)):
            path = tmp_path / f"{label}-{name}"
            path.write_text(body, encoding="utf-8")
            done = subprocess.run(
                [sys.executable, "-c", peak, str(QUIZ), str(path), str(tmp_path / label)],
                check=True,
                capture_output=True,
                text=True,
            )
            peaks.append(int(done.stdout.split()[-1]) / 1024)
        assert peaks[1] < peaks[0] + 40, (name, peaks)  # MiB; the line alone is 64
        (row,) = rejected(tmp_path / "huge")  # named, though its line was never kept
        assert (row["line"], row["student"]) == ("3" if name == "c.csv" else "2", "s2")
        assert row["reason"].startswith("a record of more than 16,777,216 bytes (line ")


def test_parquet_columns_of_other_types_are_reported_not_fatal(tmp_path: Path) -> None:
    pa = require_module("pyarrow")
    pq = require_module("pyarrow.parquet")
    table = pa.table(
        {
            "student": ["s1", "s2", "s3"],
            "tf-bert": pa.array([b"true", b"fa\xfflse", None], type=pa.binary()),
            "mc-multi": pa.array([["A", "B"], None, ["BERT"]], type=pa.list_(pa.string())),
            "mc-causal": pa.array([{"x": 1}, {"x": 2}, None], type=pa.struct([("x", pa.int8())])),
            "num-loss": pa.array([[["0.69"]], None, None], type=pa.list_(pa.list_(pa.string()))),
        }
    )
    path = tmp_path / "c.parquet"
    pq.write_table(table, path)
    run = grade([path], tmp_path / "g")
    assert [(r.line, r.student, r.reason) for r in run.rejected] == [
        (1, "", "column 'mc-causal' holds struct values, not text; column ignored"),
        (1, "", "column 'num-loss' holds list of list of string values, not text; column ignored"),
        (3, "s2", "undecodable bytes (the file is not UTF-8)"),
    ]
    got = responses(tmp_path / "g")
    assert (got["s1", "tf-bert"]["verdict"], got["s1", "mc-multi"]["answer"]) == (
        "incorrect",
        "A, B",
    )
    assert got["s1", "mc-multi"]["verdict"] == "correct"
    assert got["s3", "mc-multi"]["read_as"] == "A: BERT"


def test_a_thousand_rows_rejected_alike_are_one_summary_line(tmp_path: Path) -> None:
    rows = [[f"s{k}", *ANSWERS] for k in range(3)] + [[f"x{k}", "true"] for k in range(1000)]
    data = write_class(tmp_path / "c.csv", rows)
    result = CliRunner().invoke(
        cli, ["grade", str(QUIZ), str(data), "-o", str(tmp_path / "g"), "--version", "per-student"]
    )
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if not line.startswith("warning:")]
    assert lines[:10] == [f"{data}:{k}: too few cells: 2, the header has 10" for k in range(5, 15)]
    assert lines[10:] == [
        "… and 990 more rows of the same kind (too many or too few cells): see rejected.csv"
    ]
    assert len(rejected(tmp_path / "g")) == 1000


def test_a_million_unknown_columns_are_one_summary_line(tmp_path: Path) -> None:
    data = tmp_path / "c.csv"
    width = 200_000
    data.write_text(
        "student,tf-bert," + ",".join(f"c{k}" for k in range(width)) + "\n"
        + "s1,true" + "," * width + "\n",
        encoding="utf-8",
    )  # fmt: skip
    result = CliRunner().invoke(
        cli, ["grade", str(QUIZ), str(data), "-o", str(tmp_path / "g"), "--version", "per-student"]
    )
    assert result.exit_code == 1
    assert len(result.stderr.splitlines()) == 11
    assert result.stderr.splitlines()[-1] == (
        f"… and {width - 10:,} more columns of the same kind (unknown question column): see "
        "rejected.csv"
    )
    assert "graded 1 student" in result.stdout


# --- readers keep the invariant ---------------------------------------------------------------


CANVAS = (
    "name,id,sis_id,section,section_id,section_sis_id,submitted,attempt,"
    '"101: <p>BERT generates text left to right.</p>",1.0,n correct,n incorrect,score\n'
    "Student One,2001,s1,Sec A,1,,2026-01-01,1,False,1,1,0,1\n"
    "Student Two,2002,s2,Sec A\n"
    "Student Three,2003,s3,Sec A,1,,2026-01-01,1,True,0,0,1,0\n"
)
MOODLE = (
    "Surname,First name,ID number,Email address,State,Started on,Completed,Time taken,"
    "Grade/1.00,Question 1,Response 1,Right answer 1\n"
    "Overall average,Student,s1,s1@example.org,Finished,x,x,5 mins,1.00,"
    "BERT generates text left to right.,False,False\n"
    "Overall average,,,,,,,,1.00,,,\n"
    "Group average,,,,,,,,1.00,,,\n"
)


def test_a_short_canvas_row_is_rejected_not_read_as_blanks(tmp_path: Path) -> None:
    data = tmp_path / "canvas.csv"
    data.write_text(CANVAS, encoding="utf-8")
    run = grade([data], tmp_path / "g")
    assert run.students == 2
    assert [(r.line, r.student, r.reason) for r in run.rejected] == [
        (3, "2002", "too few cells: 4, the header has 13")
    ]


def test_only_the_real_summary_rows_of_moodle_are_skipped(tmp_path: Path) -> None:
    # A student whose surname is "Overall average" has an id: graded. Moodle's own average rows
    # (identity cells blank) are no students: neither graded nor rejected.
    data = tmp_path / "moodle.csv"
    data.write_text(MOODLE, encoding="utf-8")
    run = grade([data], tmp_path / "g")
    assert (run.students, run.rejected) == (1, [])
    assert graded_students(tmp_path / "g") == ["s1"]


@pytest.mark.parametrize("chunk_rows", [None, 1], ids=["in-memory", "chunked"])
def test_a_second_header_mid_file_is_rejected(tmp_path: Path, chunk_rows: int | None) -> None:
    data = tmp_path / "c.csv"
    data.write_text(
        "\ufeffstudent,tf-bert\ns1,true\n\ufeffstudent,tf-bert\ns2,false\nStudent,TF-BERT\n",
        encoding="utf-8",
    )
    run = grade([data], tmp_path / "g", chunk_rows=chunk_rows)
    assert run.students == 2
    assert [(r.line, r.reason) for r in run.rejected] == [
        (3, "a second header (the file's header is on line 1)"),
        (5, "a second header (the file's header is on line 1)"),
    ]


@pytest.mark.parametrize(
    ("student", "shown"),
    [
        ("s\x001", "s\\x001"),
        ("s\x1b[2J", "s\\x1b[2J"),
        ("s\u202e1", "s\\u202e1"),
        ("\ufeffs1", "\\ufeffs1"),
    ],
)
@pytest.mark.parametrize("careful", [False, True], ids=["fast", "careful"])
def test_control_characters_in_an_id_reject_the_row(
    tmp_path: Path, student: str, shown: str, careful: bool
) -> None:
    data = tmp_path / "c.csv"
    extra = "s9\n" if careful else ""  # a row to reject: no fast path takes the file
    data.write_text(f"student,tf-bert\ns0,true\n{student},false\n{extra}", encoding="utf-8")
    run = grade([data], tmp_path / "g")
    assert [(r.line, r.student) for r in run.rejected] == [(3, shown)] + careful * [(4, "s9")]
    assert run.rejected[0].reason.startswith("a student id with a control or invisible character")
    assert run.students == 1


@pytest.mark.slow
def test_dask_grades_hostile_files_as_the_numpy_engine_does(tmp_path: Path) -> None:
    require_module("dask.dataframe")
    require_module("distributed")
    data = stray_quote_class(tmp_path / "c.csv", closed_later=True)
    data.write_text(data.read_text() + "s90,true,²\ns91," + "y" * 140_000 + ",x\n")
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text("\n".join(line for line, _, _ in JSONL_BAD) + "\n", encoding="utf-8")
    runs = {}
    for engine in ("numpy", "dask"):
        runs[engine] = grade([data, jsonl], tmp_path / engine, engine=engine, chunk_rows=7)
    assert runs["numpy"].students == runs["dask"].students == 72
    for name in ("grades.csv", "responses.csv", "rejected.csv"):
        assert (tmp_path / "numpy" / name).read_bytes() == (tmp_path / "dask" / name).read_bytes()


@pytest.mark.parametrize("chunk_rows", [None, 1], ids=["in-memory", "chunked"])
@pytest.mark.parametrize("name", ["c.csv", "c.jsonl", "moodle.csv"])
def test_a_file_given_twice_is_read_twice(
    tmp_path: Path, name: str, chunk_rows: int | None
) -> None:
    data = tmp_path / name
    if name == "c.jsonl":
        data.write_text('{"student": "s1", "answers": {"tf-bert": "true"}}\n', encoding="utf-8")
    elif name == "moodle.csv":
        data.write_text(MOODLE, encoding="utf-8")
    else:
        write_class(data, [["s1", *ANSWERS], ["s2", *ANSWERS]])
    once = grade([data], tmp_path / "once", chunk_rows=chunk_rows)
    twice = grade([data, data], tmp_path / "twice", chunk_rows=chunk_rows)
    assert twice.students == once.students
    assert once.rejected == []
    assert len(twice.rejected) == once.students  # each row of the second copy: a duplicate
    assert all(r.reason.startswith("duplicate student") for r in twice.rejected)
