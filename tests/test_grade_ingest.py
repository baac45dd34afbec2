"""Submission formats in, and every kind of row that cannot be graded out (never dropped)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from quizgym.errors import SubmissionError
from quizgym.grading.readers import read_submissions
from quizgym.grading.readers import wide as ingest
from quizgym.grading.table import ClassAnswers
from quizgym.loader import load_bank
from quizgym.model import Bank

QUIZ = Path(__file__).parent / "data" / "grade" / "quiz.yaml"


@pytest.fixture(scope="module")
def quiz() -> Bank:
    return load_bank(QUIZ)


def _read(quiz: Bank, tmp_path: Path, name: str, content: str | bytes) -> ClassAnswers:
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return read_submissions(quiz, [path])


def _table(answers: ClassAnswers) -> dict[str, dict[str, str | None]]:
    return {
        student: {slot: answers.answers[slot][row] for slot in sorted(answers.answers)}
        for row, student in enumerate(answers.students)
    }


WIDE = "student,seed,tf-bert,num-sum.first\ns1,3,false,ln 2\ns2,,T,\n"
EXPECTED = {
    "s1": {"num-sum.first": "ln 2", "tf-bert": "false"},
    "s2": {"num-sum.first": None, "tf-bert": "T"},
}


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("wide.csv", WIDE),
        ("bom.csv", b"\xef\xbb\xbf" + WIDE.encode()),
        ("crlf.csv", WIDE.replace("\n", "\r\n")),
        ("long.csv", "student,question,answer,seed\ns1,tf-bert,false,3\ns1,num-sum.first,ln 2,\n"
         "s2,tf-bert,T,\ns2,num-sum.first,,\n"),
        ("answers.jsonl", '{"student": "s1", "seed": 3, "answers": {"tf-bert": "false", '
         '"num-sum.first": "ln 2"}}\n\n{"student": "s2", "answers": {"tf-bert": "T"}}\n'),
    ],
)  # fmt: skip
def test_each_format_reads_the_same_class(
    quiz: Bank, tmp_path: Path, name: str, content: str | bytes
) -> None:
    answers = _read(quiz, tmp_path, name, content)
    assert _table(answers) == EXPECTED
    assert answers.seeds == [3, None]
    assert answers.rejected == []


@pytest.mark.parametrize(
    "content",
    [
        WIDE,
        "student,seed,tf-bert,nope\ns1,3,false,x\n\ns2,,T,y\n",  # blank line, unknown column
        'student,tf-bert,why-mask\ns1,false,"two\nlines"\ns2,T,""\n',  # a value on two lines
        "student,tf-bert\ns1,true\ns1,false\n",  # a duplicate: nothing is fast here
    ],
)
def test_pyarrow_and_standard_library_read_alike(
    quiz: Bank, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str
) -> None:
    fast = _read(quiz, tmp_path, "a.csv", content)
    # Both fast paths off: every row goes through the careful row-by-row reader.
    monkeypatch.setattr(ingest, "_read_wide_arrow", lambda *args: False)
    monkeypatch.setattr(ingest, "_read_clean_wide", lambda *args: False)
    slow = _read(quiz, tmp_path, "b.csv", content)
    assert (_table(fast), fast.seeds) == (_table(slow), slow.seeds)
    assert [r.reason.replace("a.csv", "b.csv") for r in fast.rejected] == [
        r.reason for r in slow.rejected
    ]
    assert [o[1] for o in fast.origins] == [o[1] for o in slow.origins]


@pytest.mark.parametrize("error", ["ArrowNotImplementedError", "ArrowMemoryError", "ArrowInvalid"])
def test_a_file_pyarrow_cannot_read_is_read_carefully(
    quiz: Bank, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: str
) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.csv as pacsv

    expected = _table(_read(quiz, tmp_path, "a.csv", WIDE))

    def refuse(*args: object, **kwargs: object) -> None:
        raise getattr(pa, error)("not today")

    monkeypatch.setattr(pacsv, "read_csv", refuse)
    assert _table(_read(quiz, tmp_path, "b.csv", WIDE)) == expected


def test_several_files_make_one_class(quiz: Bank, tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("student,tf-bert\ns1,true\n", encoding="utf-8")
    (tmp_path / "b.jsonl").write_text('{"student": "s2", "answers": {"mc-causal": "A"}}\n')
    answers = read_submissions(quiz, [tmp_path / "a.csv", tmp_path / "b.jsonl"])
    assert _table(answers) == {
        "s1": {"mc-causal": None, "tf-bert": "true"},
        "s2": {"mc-causal": "A", "tf-bert": None},
    }


def test_canvas_student_analysis(quiz: Bank, tmp_path: Path) -> None:
    content = (
        "name,id,sis_id,section,section_id,section_sis_id,submitted,attempt,"
        '"101: <p>BERT generates text left to right.</p>",1.0,"102: Which model is causal?",1.0,'
        '"103: Which are masked language models?",1.0,"104: Something else",1.0,'
        "n correct,n incorrect,score\n"
        "Student One,2001,s1,Sec A,1,,2026-01-01 10:00:00 UTC,1,False,1,GPT,1,"
        '"BERT,RoBERTa",1,x,0,3,0,3\n'
        "Student Two,2002,s2,Sec A,1,,2026-01-01 10:00:00 UTC,1,True,0,,0,GPT-2,0,,0,0,3,0\n"
    )
    answers = _read(quiz, tmp_path, "canvas.csv", content)
    assert _table(answers) == {
        "2001": {"mc-causal": "GPT", "mc-multi": "BERT\nRoBERTa", "tf-bert": "False"},
        "2002": {"mc-causal": None, "mc-multi": "GPT-2", "tf-bert": "True"},
    }
    assert [(r.line, r.reason) for r in answers.rejected] == [
        (
            1,
            "Canvas question '104: Something else' matches no question of the bank (one with "
            "per-student numbers needs --issued); column ignored",
        )
    ]


def test_lms_header_problems_name_the_header_line_after_blank_lines(
    quiz: Bank, tmp_path: Path
) -> None:
    # Blank lines before the header: the LMS readers said line 1 for the header's problems.
    canvas = (
        "\n\nname,id,sis_id,section,section_id,section_sis_id,submitted,attempt,"
        '"101: <p>BERT generates text left to right.</p>",1.0,"104: Something else",1.0,'
        "n correct,n incorrect,score\n"
        "Student One,2001,s1,Sec A,1,,2026-01-01 10:00:00 UTC,1,False,1,x,0,1,0,1\n"
    )
    answers = _read(quiz, tmp_path, "canvas.csv", canvas)
    assert [(r.line, r.reason[:30]) for r in answers.rejected] == [
        (3, "Canvas question '104: Somethin")
    ]
    with pytest.raises(SubmissionError) as raised:
        _read(quiz, tmp_path, "none.csv", canvas.replace("101: <p>BERT", "101: <p>Nope"))
    assert raised.value.line == 3
    assert "no question column of this Canvas export matches the bank" in str(raised.value)
    moodle = (
        "\n\nSurname,First name,ID number,State,Grade/1.00,Question 1,Response 1\n"
        "One,S,s1,Finished,1.00,Which model is cheapest?,GPT\n"
    )
    with pytest.raises(SubmissionError, match="no response column of this Moodle export") as raised:
        _read(quiz, tmp_path, "moodle.csv", moodle)
    assert raised.value.line == 3
    two = moodle.replace("Response 1\n", "Response 1,Question 2,Response 2\n").replace(
        "GPT\n", "GPT,Which model is causal?,GPT\n"
    )
    answers = _read(quiz, tmp_path, "two.csv", two)
    assert answers.answers["mc-causal"] == ["GPT"]
    assert [(r.line, r.reason[:21]) for r in answers.rejected] == [(3, "Moodle 'Question 1' m")]
    for header, message in [
        ("Surname,First name,ID number,Grade/1.00,Response 1", "without 'Question N' columns"),
        ("Surname,First name,State,Grade/1.00,Question 1,Response 1", "without an 'ID number'"),
    ]:
        with pytest.raises(SubmissionError, match=message) as raised:
            _read(quiz, tmp_path, "m.csv", f"\n\n{header}\nOne,S,s1,1.00,GPT\n")
        assert raised.value.line == 3


def test_moodle_responses_by_question_text_and_by_position(quiz: Bank, tmp_path: Path) -> None:
    with_text = (
        "Surname,First name,ID number,Email address,State,Started on,Completed,Time taken,"
        "Grade/2.00,Question 1,Response 1,Right answer 1,Question 2,Response 2,Right answer 2\n"
        "One,S,s1,s1@example.org,Finished,x,x,5 mins,1.00,Which model is causal?: GPT; BERT; "
        "T5 encoder,GPT,GPT,BERT generates text left to right.,False,False\n"
        "Overall average,,,,,,,,1.00,,,,,,\n"
    )
    answers = _read(quiz, tmp_path, "moodle.csv", with_text)
    # "Question 1" holds the question text and the choices: matched by the start of the prompt
    assert _table(answers) == {"s1": {"mc-causal": "GPT", "tf-bert": "False"}}
    # Without "Question N" (Moodle's default) a response is not mapped by position: refused.
    positional = "ID number,Response 1,Response 2\ns1,False,GPT\n"
    with pytest.raises(SubmissionError, match="without 'Question N' columns"):
        _read(quiz, tmp_path, "moodle2.csv", positional)


REJECTS = (
    "student,seed,tf-bert,nope,num-sum\n"
    "s1,,true,x,1\n"
    "s2,,true,x,1,extra\n"
    "s3,,true\n"
    ",,true,x,1\n"
    "s1,,false,x,1\n"
    "s4,seven,true,x,1\n"
    "s5,,true,x,1\n"
)


def test_every_rejected_row_is_listed_with_line_and_reason(quiz: Bank, tmp_path: Path) -> None:
    # é is UTF-8 (two bytes): the file is UTF-8 with one bad byte, whose row is rejected.
    content = REJECTS.replace("s5,,true,x", "s5,,true,café").encode() + b"s6,,tr\xffue,x,1\n"
    answers = _read(quiz, tmp_path, "rejects.csv", content)
    reasons = [(r.line, r.student, r.reason) for r in answers.rejected]
    assert reasons == [
        (1, "", "unknown question column 'nope'; column ignored"),
        (1, "", "unknown question column 'num-sum' (it has parts: num-sum.first, "
         "num-sum.second, num-sum.total); column ignored"),
        (3, "s2", "too many cells: 6, the header has 5"),
        (4, "s3", "too few cells: 3, the header has 5"),
        (5, "", "no student id"),
        (6, "s1", f"duplicate student s1 (first at {tmp_path / 'rejects.csv'}:2)"),
        (7, "s4", "seed 'seven' is not a whole number"),
        (9, "s6", "undecodable bytes (the file is not UTF-8)"),
    ]  # fmt: skip
    assert answers.students == ["s1", "s5"]


def test_rejected_rows_in_long_and_jsonl(quiz: Bank, tmp_path: Path) -> None:
    long = (
        "student,question,answer,seed\n"
        "s1,tf-bert,true,1\n"
        "s1,tf-bert,false,1\n"
        "s1,mc-causal,A,2\n"
        "s1,who,A,1\n"
        ",tf-bert,true,\n"
    )
    answers = _read(quiz, tmp_path, "long.csv", long)
    assert [(r.line, r.reason) for r in answers.rejected] == [
        (3, "duplicate answer of s1 to tf-bert (first at line 2)"),
        (4, "seed 2 differs from s1's seed 1"),
        (5, "unknown question 'who'"),
        (6, "no student id"),
    ]
    jsonl = (
        '{"student": "s1", "answers": {"tf-bert": "true"}}\n'
        "{not json}\n"
        '{"student": "s2", "answers": {"tf-bert": "true", "who": "1"}}\n'
        '{"student": "s1", "answers": {}}\n'
        '["s3"]\n'
        '{"student": "s4", "answers": {"tf-bert": "\\udcff"}}\n'
    )
    answers = _read(quiz, tmp_path, "a.jsonl", jsonl)
    assert [(r.line, r.student, r.reason[:24]) for r in answers.rejected] == [
        (2, "", "not valid JSON: Expectin"),
        (3, "s2", "unknown question 'who'"),
        (4, "s1", "duplicate student s1 (fi"),
        (5, "", 'expected {"student": ...'),
        (6, "s4", "an escape that is not a "),
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty file: expected a header row"),
        ("name,answer\nx,1\n", "no 'student' column"),
    ],
)
def test_unreadable_files_raise(quiz: Bank, tmp_path: Path, content: str, message: str) -> None:
    with pytest.raises(SubmissionError, match=message):
        _read(quiz, tmp_path, "bad.csv", content)
    with pytest.raises(SubmissionError, match="No such file"):
        read_submissions(quiz, [tmp_path / "missing.csv"])


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "lone-cr"])
def test_windows_and_old_mac_line_endings_read_like_unix(
    quiz: Bank, tmp_path: Path, newline: str
) -> None:
    unix = _table(_read(quiz, tmp_path, "unix.csv", WIDE))
    other = _read(quiz, tmp_path, "other.csv", WIDE.replace("\n", newline).encode())
    assert _table(other) == unix
    assert not other.rejected


def test_a_repeated_column_is_reported_and_the_first_one_graded(quiz: Bank, tmp_path: Path) -> None:
    answers = _read(quiz, tmp_path, "dup.csv", "student,tf-bert,tf-bert\ns1,false,true\n")
    assert answers.answers["tf-bert"] == ["false"]
    (rejection,) = answers.rejected
    assert rejection.line == 1
    assert rejection.reason == (
        "duplicate column 'tf-bert' (column 3; the first is column 2); column ignored"
    )


def test_two_clean_wide_files_make_one_class(quiz: Bank, tmp_path: Path) -> None:
    # Both files take the pyarrow path; the second one's columns are appended to the first's.
    (tmp_path / "a.csv").write_text("student,tf-bert\ns1,true\ns2,\n", encoding="utf-8")
    (tmp_path / "b.csv").write_text("student,mc-causal,tf-bert\ns3,A,F\n", encoding="utf-8")
    answers = read_submissions(quiz, [tmp_path / "a.csv", tmp_path / "b.csv"])
    assert _table(answers) == {
        "s1": {"mc-causal": None, "tf-bert": "true"},
        "s2": {"mc-causal": None, "tf-bert": None},
        "s3": {"mc-causal": "A", "tf-bert": "F"},
    }
    assert answers.origins == [
        (str(tmp_path / "a.csv"), 2),
        (str(tmp_path / "a.csv"), 3),
        (str(tmp_path / "b.csv"), 2),
    ]


def test_a_file_pyarrow_reads_in_several_blocks(
    quiz: Bank, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pyarrow reads about 1 MB per block, each with its own dictionary of distinct answers until
    # they are unified; answers first seen in a late block must keep their own text.
    rows = [f"student{k:07d},{'true' if k % 3 else 'F'},{k // 10_000}" for k in range(60_000)]
    content = "student,tf-bert,mc-causal\n" + "\n".join(rows) + "\n"
    assert len(content) > 1_200_000
    fast = _read(quiz, tmp_path, "a.csv", content)
    assert isinstance(fast.answers["mc-causal"], ingest.Coded)
    monkeypatch.setattr(ingest, "_read_wide_arrow", lambda *args: False)
    slow = _read(quiz, tmp_path, "b.csv", content)
    assert list(fast.answers["mc-causal"]) == list(slow.answers["mc-causal"])
    assert list(fast.answers["tf-bert"]) == list(slow.answers["tf-bert"])
    assert fast.answers["mc-causal"][59_999] == "5"


FIELD = Path(__file__).parent / "data" / "field" / "stats-mechanics.yaml"


@pytest.mark.parametrize("chunk_rows", [None, 1], ids=["in-memory", "chunked"])
@pytest.mark.parametrize("earlier", ["wide.csv", "first.jsonl"])
def test_a_long_file_repeating_an_earlier_files_student_rejects_each_row(
    tmp_path: Path, earlier: str, chunk_rows: int | None
) -> None:
    # A student of an earlier file had that file's row reused by the long reader: the run
    # stopped ("this is a bug in quizgym") and wrote nothing. Each of their rows here is
    # rejected with its line, read whole or in chunks alike, and their earlier answer graded.
    from quizgym.grading.run import grade_submissions

    first = tmp_path / earlier
    if earlier.endswith(".csv"):
        first.write_text("student,speed-required-units\ns1,5 m/s\ns2,5 m/s\n", encoding="utf-8")
    else:
        first.write_text(
            '{"student": "s1", "answers": {"speed-required-units": "5 m/s"}}\n'
            '{"student": "s2", "answers": {"speed-required-units": "5 m/s"}}\n',
            encoding="utf-8",
        )
    long = tmp_path / "long.csv"
    long.write_text(
        "student,question,answer\n"
        "s3,speed-required-units,5 m/s\n"
        "s1,speed-required-units,4 m/s\n"
        "s2,speed-required-units,3 m/s\n"
        "s2,speed-units,5\n",
        encoding="utf-8",
    )
    at = 2 if earlier.endswith(".csv") else 1  # the line of s1 (s2: the next one)
    out = tmp_path / "g"
    run = grade_submissions(FIELD, [first, long], out_dir=out, chunk_rows=chunk_rows)
    assert run.students == 3  # 2 + 1 graded, 3 rejected: the 6 records of the input
    assert [(r.source, r.line, r.student, r.reason) for r in run.rejected] == [
        (str(long), 3, "s1", f"duplicate student s1 (first at {first}:{at})"),
        (str(long), 4, "s2", f"duplicate student s2 (first at {first}:{at + 1})"),
        (str(long), 5, "s2", f"duplicate student s2 (first at {first}:{at + 1})"),
    ]
    grades = (out / "grades.csv").read_text(encoding="utf-8").splitlines()
    assert grades[1:] == [
        '"s1","1","1","100","1"',
        '"s2","1","1","100","1"',
        '"s3","1","1","100","1"',
    ]
    rejected = (out / "rejected.csv").read_text(encoding="utf-8").splitlines()
    assert [line.split(",")[1] for line in rejected[1:]] == ['"3"', '"4"', '"5"']


CANVAS_HEAD = "name,id,sis_id,section,section_id,section_sis_id,submitted,attempt,"


def _canvas_run(tmp_path: Path, bank_text: str, report_text: str) -> dict[str, dict[str, str]]:
    """Grade a Canvas report against a bank (both given as text): ``responses.csv`` by student."""
    from quizgym.grading.run import grade_submissions

    bank = tmp_path / "bank.yaml"
    bank.write_text(bank_text, encoding="utf-8")
    report = tmp_path / "canvas.csv"
    report.write_text(CANVAS_HEAD + report_text, encoding="utf-8")
    run = grade_submissions(bank, [report], out_dir=tmp_path / "g")
    assert run.rejected == []
    with (tmp_path / "g" / "responses.csv").open(encoding="utf-8", newline="") as stream:
        return {r["student"]: r for r in csv.DictReader(stream)}


def test_a_canvas_answer_to_a_shuffled_multiple_answer_question_with_a_comma_in_a_choice(
    tmp_path: Path,
) -> None:
    # Canvas writes the comma of a choice's text as "\\,". Only an unshuffled question's pieces
    # were turned into choices: a shuffled one's whole cell was read, and found no choice.
    rows = _canvas_run(
        tmp_path,
        "bank: averages\ntitle: Averages\nversion: 1\nquestions:\n"
        "  - id: centre\n    type: multiple_choice\n    multiple: true\n    shuffle: true\n"
        "    prompt: Which of these measure the centre of a sample?\n    choices:\n"
        '      - {text: "Mean, arithmetic", correct: true}\n'
        "      - {text: Median, correct: true}\n"
        "      - {text: Range}\n",
        '"101: Which of these measure the centre of a sample?",1.0,n correct,n incorrect,score\n'
        'Ann,2001,s1,A,1,,2026-01-01,1,"Mean\\, arithmetic,Median",1,1,0,1\n'
        'Bo,2002,s2,A,1,,2026-01-01,1,"Range,Mean\\, arithmetic",0,0,1,0\n',
    )
    assert sorted(rows) == ["2001", "2002"]
    assert (rows["2001"]["verdict"], rows["2001"]["score"]) == ("correct", "1")
    assert (rows["2002"]["verdict"], rows["2002"]["score"]) == ("incorrect", "0")
    assert "Mean, arithmetic" in rows["2001"]["read_as"]


def test_a_canvas_answer_naming_a_choice_whose_text_breaks_over_lines(tmp_path: Path) -> None:
    # The cell's choice texts become one per line: a text's own line break must not split it.
    rows = _canvas_run(
        tmp_path,
        "bank: lines\ntitle: Lines\nversion: 1\nquestions:\n"
        "  - id: pick\n    type: multiple_choice\n    multiple: true\n"
        "    prompt: Which two?\n    choices:\n"
        '      - {text: "first line\\nsecond line", correct: true}\n'
        '      - {text: "B, with comma", correct: true}\n'
        "      - {text: Other}\n",
        '"101: Which two?",1.0,n correct,n incorrect,score\n'
        'Ann,2001,s1,A,1,,2026-01-01,1,"first line second line,B\\, with comma",1,2,0,1\n',
    )
    assert sorted(rows) == ["2001"]
    assert (rows["2001"]["verdict"], rows["2001"]["score"]) == ("correct", "1")


def test_planning_surveys_each_csv_file_once(
    quiz: Bank, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The survey reads every byte of a file (its encoding): planning a chunked run did it twice.
    from quizgym.grading.scale import plan as pieces

    wide, long = tmp_path / "wide.csv", tmp_path / "long.csv"
    wide.write_text(WIDE, encoding="utf-8")
    long.write_text("student,question,answer\ns3,tf-bert,true\n", encoding="utf-8")
    surveyed: list[Path] = []

    def head(path: Path, **options: object) -> object:
        surveyed.append(path)
        return real(path, **options)

    real = pieces.csv_head
    monkeypatch.setattr(pieces, "csv_head", head)
    plan = pieces.plan_run(quiz, [wide, long], chunk_rows=1)
    assert surveyed == [wide, long]
    assert [(p.source, p.layout, p.rows) for p in plan.pieces] == [
        (str(wide), "wide", 1),
        (str(wide), "wide", 1),
        (str(long), "long", 1),
    ]
