"""Inputs people really send (issue #16, item 5): read as they are meant, never refused for
their form, nothing dropped.

A semicolon CSV (European Excel), a tab-separated one; a Windows-1252 file (Excel's "CSV" on
Western Windows); JSON Lines lists for multiple-answer questions; roster columns (name, email,
section) carried into the gradebooks; header cells in any case, render's roster too. Each is
held in memory and in chunks (the two engines must agree).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import require_module

from quizgym.cli import cli
from quizgym.grading.run import grade_submissions
from quizgym.render.roster import read_roster

DATA = Path(__file__).parent / "data"
QUIZ = DATA / "grade" / "quiz.yaml"
COMMAS = DATA / "inputs" / "commas.yaml"
ENGINES = pytest.mark.parametrize("chunk_rows", [None, 1], ids=["in-memory", "chunked"])


def grade(paths: list[Path], out: Path, bank: Path = QUIZ, **options: Any) -> Any:
    return grade_submissions(bank, paths, out_dir=out, version="per-student", **options)


def table(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


def verdicts(out: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(student, question) → (answer as read, verdict)."""
    return {
        (r["student"], r["question"]): (r["read_as"], r["verdict"])
        for r in table(out / "responses.csv")
    }


COMMA_CLASS = 'student,tf-bert,mc-multi,why-mask\ns1,false,"A, B",a mismatch\ns2,true,C,\n'
EXPECTED = {
    ("s1", "tf-bert"): ("false", "correct"),
    ("s1", "mc-multi"): ("A: BERT; B: RoBERTa", "correct"),
    ("s1", "why-mask"): ("rubric 1/1", "correct"),
    ("s2", "tf-bert"): ("true", "incorrect"),
    ("s2", "mc-multi"): ("C: GPT-2", "incorrect"),
    ("s2", "why-mask"): ("", "blank"),
}


@ENGINES
@pytest.mark.parametrize(
    "content",
    [
        COMMA_CLASS,
        COMMA_CLASS.replace(",", ";").replace("A; B", "A, B"),  # European Excel
        COMMA_CLASS.replace(",", "\t").replace("A\t B", "A, B"),  # tab-separated
    ],
    ids=["comma", "semicolon", "tab"],
)
def test_semicolon_and_tab_files_read_like_comma_ones(
    tmp_path: Path, content: str, chunk_rows: int | None
) -> None:
    # Before: a semicolon file was refused with "no 'student' column" (exit 2).
    data = tmp_path / "class.csv"
    data.write_text(content, encoding="utf-8")
    run = grade([data], tmp_path / "g", chunk_rows=chunk_rows)
    assert (run.students, run.rejected) == (2, [])
    assert verdicts(tmp_path / "g") == EXPECTED


def test_a_semicolon_long_file_and_a_semicolon_canvas_export(tmp_path: Path) -> None:
    long = tmp_path / "long.csv"
    long.write_text("Student;Question;Answer\ns1;TF-BERT;false\ns1;mc-multi;A, B\n")
    run = grade([long], tmp_path / "g")
    assert (run.students, run.rejected) == (1, [])
    assert verdicts(tmp_path / "g")["s1", "mc-multi"] == ("A: BERT; B: RoBERTa", "correct")


CP1252 = (
    "student,name,tf-bert,why-mask\ns1,René Müller,false,le décalage (mismatch)\ns2,Zoë,true,\n"
)


@ENGINES
def test_a_cp1252_file_is_read_with_a_note(tmp_path: Path, chunk_rows: int | None) -> None:
    # Before: every row with an accented letter was rejected as undecodable (students lost).
    data = tmp_path / "class.csv"
    data.write_bytes(CP1252.encode("cp1252"))
    run = grade([data], tmp_path / "g", chunk_rows=chunk_rows, gradebook="canvas")
    assert (run.students, run.rejected) == (2, [])
    note = (
        f"{data}: not UTF-8; read as Windows-1252 (cp1252, which includes Latin-1), as Excel "
        "writes CSV on Western Windows: check accented names in the outputs"
    )
    assert run.reading == [note]
    assert note in run.notes
    assert note in (tmp_path / "g" / "report.html").read_text(encoding="utf-8")
    gradebook = table(tmp_path / "g" / "gradebook-canvas.csv")
    assert [r["Student"] for r in gradebook[1:]] == ["René Müller", "Zoë"]
    assert verdicts(tmp_path / "g")["s1", "why-mask"] == ("rubric 1/1", "correct")


def test_the_cp1252_note_is_one_line_on_the_terminal(tmp_path: Path) -> None:
    data = tmp_path / "class.csv"
    data.write_bytes(CP1252.encode("cp1252"))
    result = CliRunner().invoke(
        cli, ["grade", str(QUIZ), str(data), "-o", str(tmp_path / "g"), "--version", "per-student"]
    )
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"note: {data}: not UTF-8; read as Windows-1252 (cp1252, which includes Latin-1), as "
        "Excel writes CSV on Western Windows: check accented names in the outputs"
    ]


def test_a_utf8_file_with_a_few_bad_bytes_rejects_only_their_rows(tmp_path: Path) -> None:
    # Valid UTF-8 sequences (é) say the file is UTF-8: the row with a stray byte is rejected.
    data = tmp_path / "class.csv"
    data.write_bytes("student,why-mask\ns1,café\n".encode() + b"s2,caf\xe9\ns3,x\n")
    run = grade([data], tmp_path / "g")
    assert run.students == 2
    assert [(r.line, r.reason) for r in run.rejected] == [
        (3, "undecodable bytes (the file is not UTF-8)")
    ]
    assert run.reading == []


@ENGINES
def test_json_lines_lists_are_read_as_several_answers(
    tmp_path: Path, chunk_rows: int | None
) -> None:
    data = tmp_path / "a.jsonl"
    data.write_text(
        '{"student": "s1", "answers": {"mc-multi": ["A", "B"]}}\n'
        '{"student": "s2", "answers": {"mc-multi": ["BERT", "RoBERTa"]}}\n'
        '{"student": "s3", "answers": {"mc-multi": ["c"], "tf-bert": false}}\n'
        '{"student": "s4", "answers": {"mc-multi": [], "tf-bert": null}}\n',
        encoding="utf-8",
    )
    run = grade([data], tmp_path / "g", chunk_rows=chunk_rows)
    assert (run.students, run.rejected) == (4, [])
    got = verdicts(tmp_path / "g")
    assert got["s1", "mc-multi"] == got["s2", "mc-multi"] == ("A: BERT; B: RoBERTa", "correct")
    assert got["s3", "mc-multi"] == ("C: GPT-2", "incorrect")
    assert got["s3", "tf-bert"] == ("false", "correct")
    assert got["s4", "mc-multi"] == got["s4", "tf-bert"] == ("", "blank")


def test_a_list_of_choice_texts_that_hold_commas(tmp_path: Path) -> None:
    data = tmp_path / "a.jsonl"
    data.write_text(
        '{"student": "s1", "answers": {"pick-loss": ["It is -log p, for the true class", '
        '"It is convex in the logits; always"]}}\n',
        encoding="utf-8",
    )
    run = grade([data], tmp_path / "g", bank=COMMAS)
    assert run.rejected == []
    (row,) = table(tmp_path / "g" / "responses.csv")
    assert (row["verdict"], row["score"]) == ("correct", "1")


ROSTER_CLASS = (
    "Student,Name,EMAIL,section,tf-bert\n"
    "1001,Ann Lee,ann@example.org,Sec A,false\n"
    "s2,Bo Ng,bo@example.org,Sec B,true\n"
)


@ENGINES
def test_roster_columns_are_carried_into_the_gradebooks(
    tmp_path: Path, chunk_rows: int | None
) -> None:
    # Before: name, email and section were "unknown question columns", ignored.
    data = tmp_path / "class.csv"
    data.write_text(ROSTER_CLASS, encoding="utf-8")
    canvas = grade([data], tmp_path / "c", chunk_rows=chunk_rows, gradebook="canvas")
    assert (canvas.students, canvas.rejected) == (2, [])
    with (tmp_path / "c" / "gradebook-canvas.csv").open(encoding="utf-8", newline="") as stream:
        assert list(csv.reader(stream)) == [
            ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Grading test quiz"],
            ["    Points Possible", "", "", "", "", "1"],
            ["Ann Lee", "1001", "", "", "Sec A", "1"],
            ["Bo Ng", "", "s2", "", "Sec B", "0"],
        ]
    grade([data], tmp_path / "m", chunk_rows=chunk_rows, gradebook="moodle")
    with (tmp_path / "m" / "gradebook-moodle.csv").open(encoding="utf-8", newline="") as stream:
        assert list(csv.reader(stream)) == [
            ["ID number", "Email address", "Grading test quiz"],
            ["1001", "ann@example.org", "1"],
            ["s2", "bo@example.org", "0"],
        ]


@ENGINES
@pytest.mark.parametrize("gradebook", ["moodle", "canvas"])
def test_roster_columns_of_a_parquet_file_are_carried_into_the_gradebooks(
    tmp_path: Path, chunk_rows: int | None, gradebook: str
) -> None:
    # Before: planning read only a Parquet file's student and seed, so its pieces and the run
    # disagreed on the roster and the run stopped ("part file does not start with the run's
    # header"); the same class as CSV was graded.
    pa_csv = require_module("pyarrow.csv")
    pq = require_module("pyarrow.parquet")
    source = tmp_path / "class.csv"
    source.write_text(ROSTER_CLASS, encoding="utf-8")
    text = pa_csv.ConvertOptions(strings_can_be_null=False, column_types={"Student": "string"})
    data = tmp_path / "class.parquet"
    pq.write_table(pa_csv.read_csv(source, convert_options=text), data)
    for path in (source, data):
        out = tmp_path / f"{path.suffix[1:]}"
        run = grade([path], out, chunk_rows=chunk_rows, gradebook=gradebook)
        assert (run.students, run.rejected) == (2, [])
    book = f"gradebook-{gradebook}.csv"
    assert (tmp_path / "parquet" / book).read_bytes() == (tmp_path / "csv" / book).read_bytes()
    roster = "ann@example.org" if gradebook == "moodle" else "Sec A"
    assert roster in (tmp_path / "parquet" / book).read_text(encoding="utf-8")


def test_roster_fields_from_json_lines_and_long_files_and_a_file_without_them(
    tmp_path: Path,
) -> None:
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text(
        '{"Student": "s1", "Name": "Ann", "Answers": {"tf-bert": "false"}}\n', encoding="utf-8"
    )
    long = tmp_path / "b.csv"
    long.write_text("student,question,answer,name\ns2,tf-bert,true,Bo\ns2,mc-causal,A,\n")
    plain = tmp_path / "c.csv"
    plain.write_text("student,tf-bert\ns3,false\n")
    for chunk_rows in (None, 1):
        out = tmp_path / f"g{chunk_rows}"
        run = grade([jsonl, long, plain], out, chunk_rows=chunk_rows, gradebook="canvas")
        assert (run.students, run.rejected) == (3, [])
        rows = table(out / "gradebook-canvas.csv")[1:]
        assert [r["Student"] for r in rows] == ["Ann", "Bo", "s3"]


@ENGINES
def test_header_case_does_not_matter(tmp_path: Path, chunk_rows: int | None) -> None:
    data = tmp_path / "class.csv"
    data.write_text('STUDENT,Seed,TF-Bert,MC-MULTI\ns1,3,false,"A, B"\n', encoding="utf-8")
    run = grade([data], tmp_path / "g", chunk_rows=chunk_rows)
    assert (run.students, run.rejected) == (1, [])
    got = verdicts(tmp_path / "g")
    assert got["s1", "tf-bert"] == ("false", "correct")
    assert got["s1", "mc-multi"] == ("A: BERT; B: RoBERTa", "correct")
    with (tmp_path / "g" / "grades.csv").open(encoding="utf-8") as stream:
        assert stream.readline().strip() == (
            '"student","score","max_score","percent","tf-bert","mc-multi"'
        )


def test_render_roster_header_case_does_not_matter(tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,NAME,Seed\ns1,Ann,7\ns2,Bo,\n", encoding="utf-8")
    students = read_roster(roster)
    assert [(s.id, s.name, s.seed) for s in students] == [("s1", "Ann", 7), ("s2", "Bo", None)]
