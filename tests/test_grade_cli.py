"""``quizgym grade`` end to end: output files pinned by goldens, exit codes, regrading."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from quizgym.answers import grade_response
from quizgym.cli import cli
from quizgym.grading import outputs
from quizgym.grading.outputs import feedback_name
from quizgym.loader import load_bank

DATA = Path(__file__).parent / "data" / "grade"
GOLDENS = Path(__file__).parent / "goldens" / "grade"
PER_STUDENT = ["--version", "per-student"]
"""The test class has a seed on two rows only: the others were drawn without one."""
GOLDEN_FILES = [
    "grades.csv",
    "responses.csv",
    "items.csv",
    "rejected.csv",
    "review.csv",
    "gradebook-canvas.csv",
    "feedback/s02.md",
]


@pytest.fixture
def graded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Any]:
    for name in ("quiz.yaml", "class.csv"):
        shutil.copy(DATA / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    args = ["grade", "quiz.yaml", "class.csv", "-o", "out", "--feedback", "--gradebook", "canvas"]
    args += ["--version", "per-student"]  # a blank seed cell: drawn without a seed
    result = CliRunner().invoke(cli, args)
    return tmp_path / "out", result


def test_grade_writes_the_designed_files(graded: tuple[Path, Any], update_goldens: bool) -> None:
    out, result = graded
    assert result.exit_code == 1  # one row rejected
    assert result.stdout == (
        "graded 12 students (108 responses) → out/; 1 row rejected (see rejected.csv); "
        "12 answers to review (10 in review.csv)\n"  # s03's "no idea" is a blank
    )
    assert result.stderr == "class.csv:14: duplicate student s12 (first at class.csv:13)\n"
    for name in GOLDEN_FILES:
        golden = GOLDENS / name
        if update_goldens:
            golden.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(out / name, golden)
        assert (out / name).read_text(encoding="utf-8") == golden.read_text(encoding="utf-8"), name
    assert len(list((out / "feedback").glob("*.md"))) == 12


def test_responses_follow_the_design_columns(graded: tuple[Path, Any]) -> None:
    out, _ = graded
    with (out / "responses.csv").open(encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    assert (
        ",".join(rows[0])
        == "student,question,answer,verdict,score,max_score,read_as,feedback,tag,scored_by"
    )
    assert len(rows) == 12 * 9
    assert {r["verdict"] for r in rows} == {"correct", "partial", "incorrect", "invalid", "blank"}
    # error carried forward: s06 computed 0.301 + 0.602 = 0.903, wrong parts but a right sum
    s06 = {r["question"]: r for r in rows if r["student"] == "s06"}
    assert s06["num-sum.total"]["verdict"] == "correct"
    assert "error carried forward" in s06["num-sum.total"]["feedback"]


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in {"src", "href"} and value:
                self.external.append(value)


def test_report_is_self_contained_and_explains_flagged_items(graded: tuple[Path, Any]) -> None:
    out, _ = graded
    html = (out / "report.html").read_text(encoding="utf-8")
    parser = _Collector()
    parser.feed(html)
    assert parser.external == []
    assert parser.tags.count("svg") == 2
    assert parser.tags.count("circle") == 9  # one point per item on the facility chart
    assert (
        "<li><strong>num-loss</strong>: students who did well on the rest of the test did worse "
        "on this item (discrimination -6%): check the key.</li>"
    ) in html
    for heading in ("Distractors", "Misconceptions", "Difficulty per variant"):
        assert f"<h2>{heading}</h2>" in html
    assert "bert-is-causal" in html
    assert "p=0.25" in html


def test_moodle_gradebook(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["grade", str(DATA / "quiz.yaml"), str(DATA / "class.csv"), "-o", str(tmp_path),
         "--gradebook", "moodle", "--version", "per-student"],
    )  # fmt: skip
    assert result.exit_code == 1
    lines = (tmp_path / "gradebook-moodle.csv").read_text(encoding="utf-8").splitlines()
    assert lines[:3] == ['"ID number","Grading test quiz"', '"s01","9"', '"s02","6.5"']


def test_clean_class_exits_0(tmp_path: Path) -> None:
    (tmp_path / "c.csv").write_text("student,tf-bert\ns1,false\ns2,true\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["grade", str(DATA / "quiz.yaml"), str(tmp_path / "c.csv"), "-o", str(tmp_path / "o")]
    )
    assert result.exit_code == 0
    assert (tmp_path / "o" / "rejected.csv").read_text() == '"source","line","student","reason"\n'


ENTRY = (
    "import atexit, gc, sys\n"
    "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
    "sys.argv = ['quizgym', *sys.argv[1:]]\n"
    "from quizgym.cli import main\n"
    "main()\n"
)


@pytest.mark.parametrize("clean", [True, False])
def test_the_command_leaves_its_objects_to_the_system(tmp_path: Path, clean: bool) -> None:
    """The ``quizgym`` command, done, freezes what is left so that the interpreter's last
    collections do not walk a graded class (0.1 s of a large run): whether the command succeeded
    or not, its files are written and its exit code kept."""
    rows = "student,tf-bert\ns1,false\ns2,true\n" if clean else "student,tf-bert\ns1,false\n,true\n"
    (tmp_path / "c.csv").write_text(rows, encoding="utf-8")
    out = tmp_path / "o"
    args = ["grade", str(DATA / "quiz.yaml"), str(tmp_path / "c.csv"), "-o", str(out)]
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == (0 if clean else 1), done.stderr
    assert done.stdout.splitlines()[-1] == "frozen True"
    rejected = (out / "rejected.csv").read_text(encoding="utf-8").splitlines()
    assert len(rejected) == (1 if clean else 2)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.csv"], "Error: missing.csv: No such file or directory\n"),
        (["empty.csv"], "Error: empty.csv: empty file: expected a header row\n"),
    ],
)
def test_unreadable_input_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("empty.csv").write_text("", encoding="utf-8")
    result = CliRunner().invoke(cli, ["grade", str(DATA / "quiz.yaml"), *args])
    assert result.exit_code == 2
    assert result.stderr == message


def _regrade(old: str, new: str, out: str, *options: str) -> Any:
    """Grade the test class, edit the bank (``old`` → ``new``), grade again with --compare."""
    shutil.copy(DATA / "class.csv", "class.csv")
    bank = (DATA / "quiz.yaml").read_text(encoding="utf-8")
    Path("quiz.yaml").write_text(bank, encoding="utf-8")
    CliRunner().invoke(cli, ["grade", "quiz.yaml", "class.csv", "-o", "before", *PER_STUDENT])
    assert old in bank
    Path("quiz.yaml").write_text(bank.replace(old, new), encoding="utf-8")
    command = ["grade", "quiz.yaml", "class.csv", "-o", out, "--compare", "before", *options]
    command += PER_STUDENT
    return CliRunner().invoke(cli, command)


def _changes(out: str) -> list[dict[str, str]]:
    """The rows of changes.csv."""
    with Path(out, "changes.csv").open(encoding="utf-8") as stream:
        return list(csv.DictReader(stream))


def test_compare_lists_students_whose_score_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # the teacher widens the tolerance of the sum: 2.0 (s09) is now accepted
    result = _regrade("{abs: 0.01}", "{abs: 0.1}", "after")
    assert "; 1 student's score changed (see changes.csv)" in result.stdout
    rows = _changes("after")
    assert [(r["student"], r["old_total"], r["new_total"], r["question"]) for r in rows] == [
        ("s09", "7", "8", "num-sum.total")
    ]
    assert rows[0]["reason"] == "num-sum.total: incorrect (0) → correct (1); read as 2.0"


def test_fallback_writer_writes_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without pyarrow, a table is written by Python's csv module: the same bytes, codes given
    through a second level included."""
    np = outputs.np
    header = ["a", "b", "c"]
    columns: list[outputs.Column] = [
        (["x", 'say "hi"', "1,2"], np.array([0, 1, 2, 0])),
        (["", "ü\nline"], np.array([0, 1, 1, 0])),
        (["=1+2", "y", "z"], outputs.Through(np.array([2, 0, 1]), np.array([1, 1, 0, 2]))),
    ]
    outputs.write_table(tmp_path / "arrow.csv", header, columns)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now fails
    outputs.write_table(tmp_path / "plain.csv", header, columns)
    written = (tmp_path / "arrow.csv").read_bytes()
    assert written == (tmp_path / "plain.csv").read_bytes()
    assert [row[2] for row in csv.reader(io.StringIO(written.decode()))][1:] == [
        "'=1+2",
        "'=1+2",
        "z",
        "y",
    ]


def test_a_table_of_many_batches_writes_the_same_bytes_as_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyarrow writes a long table a batch of rows at a time: across batches, the bytes are
    Python's csv module's."""
    np = outputs.np
    rows = 3 * outputs.CSV_BATCH_ROWS + 17
    columns: list[outputs.Column] = [
        ([f"s{k}" for k in range(rows)], np.arange(rows)),
        (["a,b", 'say "hi"', "two\nlines", "", "=1"], np.arange(rows) % 5),
        (["x", "y"], outputs.Through(np.array([1, 0, 1]), np.arange(rows) % 3)),
    ]
    outputs.write_table(tmp_path / "arrow.csv", ["s", "t", "u"], columns)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now fails
    outputs.write_table(tmp_path / "plain.csv", ["s", "t", "u"], columns)
    assert (tmp_path / "arrow.csv").read_bytes() == (tmp_path / "plain.csv").read_bytes()


def test_grade_forwards_options_to_the_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}

    class Run:
        rejected: list[Any] = []
        warnings: list[str] = []
        reading: list[str] = []
        flags: list[str] = []

        def summary(self) -> str:
            return "done"

    def fake(bank: str, submissions: list[Path], **kwargs: Any) -> Any:
        seen.update(bank=bank, submissions=submissions, **kwargs)
        return Run()

    import quizgym.grading.run as pipeline

    monkeypatch.setattr(pipeline, "grade_submissions", fake)
    result = CliRunner().invoke(
        cli, ["grade", "bert-mlm", "a.csv", "b.jsonl", "-o", str(tmp_path), "--feedback"]
    )
    assert (result.exit_code, result.stdout) == (0, "done\n")
    assert seen["bank"] == "bert-mlm"
    assert seen["submissions"] == [Path("a.csv"), Path("b.jsonl")]
    assert seen["out_dir"] == tmp_path
    assert (seen["feedback"], seen["gradebook"], seen["compare"]) == (True, None, None)


def test_help_has_an_example() -> None:
    result = CliRunner().invoke(cli, ["grade", "--help"])
    assert "quizgym grade bert-mlm class.csv -o graded --issued out/issued.json" in result.stdout


@pytest.mark.parametrize(
    ("content", "code", "summary"),
    [
        ("student,tf-bert\n,true\n", 1, "graded 0 students (0 responses)"),
        ("student,tf-bert\ns1,true\n", 0, "graded 1 student (1 response)"),
        ("student\ns1\n", 0, "graded 1 student (0 responses)"),
    ],
)
def test_tiny_classes_still_get_every_file(
    tmp_path: Path, content: str, code: int, summary: str
) -> None:
    (tmp_path / "c.csv").write_text(content, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["grade", str(DATA / "quiz.yaml"), str(tmp_path / "c.csv"), "-o", str(out)]
    )
    assert result.exit_code == code
    assert result.stdout.startswith(summary)
    names = ["grades.csv", "responses.csv", "items.csv", "rejected.csv", "report.html"]
    names += ["review.csv", "run.json"]
    assert sorted(p.name for p in out.iterdir()) == sorted(names)


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ('=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("-ln(0.2)", "'-ln(0.2)"),
        ("+1+1", "'+1+1"),
        ("-2.30", "-2.30"),
        ("1e-3", "1e-3"),
        ("ln 10", "ln 10"),
    ],
)
def test_cells_a_spreadsheet_would_run_are_written_as_text(text: str, written: str) -> None:
    from quizgym.grading.cells import defuse

    assert defuse(text) == written


def test_ignored_columns_are_not_counted_as_rejected_rows(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from quizgym.cli import cli

    source = tmp_path / "cols.csv"
    source.write_text("student,nope,tf-bert,tf-bert\ns1,x,false,true\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["grade", str(DATA / "quiz.yaml"), str(source), "-o", str(tmp_path / "g")]
    )
    assert result.exit_code == 1
    assert result.stdout == (
        f"graded 1 student (1 response) → {tmp_path / 'g'}/; 2 columns ignored (see rejected.csv)\n"
    )
    report = (tmp_path / "g" / "report.html").read_text(encoding="utf-8")
    assert "No rows rejected." in report
    assert "<strong>2 columns ignored</strong>" in report


def test_compare_reads_back_defused_cells(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from quizgym.cli import cli
    from quizgym.grading.cells import defuse, undefuse

    for text in ("@alice", "=1+1", "-ln(0.2)", "-2.30", "'quoted", "plain"):
        assert undefuse(defuse(text)) == text
    source = tmp_path / "class.csv"
    source.write_text("student,tf-bert\n@alice,false\n=bob,true\n", encoding="utf-8")
    quiz = str(DATA / "quiz.yaml")
    first = CliRunner().invoke(cli, ["grade", quiz, str(source), "-o", str(tmp_path / "a")])
    again = CliRunner().invoke(
        cli,
        ["grade", quiz, str(source), "-o", str(tmp_path / "b"), "--compare", str(tmp_path / "a")],
    )
    assert (first.exit_code, again.exit_code) == (0, 0)
    assert "; 0 students' scores changed" in again.stdout


@pytest.mark.parametrize(
    ("student", "name"),
    [
        ("s 01", "s_01.md"),
        ("a.b+c@uni.edu", "a.b+c@uni.edu.md"),
        ("../etc/passwd", "_._etc_passwd.md"),
    ],
)
def test_feedback_files_are_named_like_the_students_worksheets(student: str, name: str) -> None:
    assert feedback_name(student) == name


@pytest.mark.parametrize(
    ("previous", "message"),
    [
        (
            "out",
            "Error: --compare out: name the previous run's folder, not the one this run writes",
        ),
        ("empty", "Error: --compare empty: no grades.csv there (is it a grade folder?)"),
    ],
)
def test_compare_refuses_before_grading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, previous: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(DATA / "class.csv", "class.csv")
    Path("empty").mkdir()
    quiz = str(DATA / "quiz.yaml")
    CliRunner().invoke(cli, ["grade", quiz, "class.csv", "-o", "out", *PER_STUDENT])
    before = Path("out/grades.csv").read_bytes()
    result = CliRunner().invoke(
        cli, ["grade", quiz, "class.csv", "-o", "out", "--compare", previous, *PER_STUDENT]
    )
    assert (result.exit_code, result.output) == (2, message + "\n")
    assert Path("out/grades.csv").read_bytes() == before  # nothing graded, nothing overwritten


def test_compare_shows_each_students_new_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The key of a question with per-student numbers changes: a right answer is now wrong, and
    # the reason shows the key of that student's own numbers.
    monkeypatch.chdir(tmp_path)
    for options in ([], ["--chunk-rows", "5"]):
        out = f"after{len(options)}"
        _regrade("answer: nsp_loss(p)\n", "answer: nsp_loss(p) + 1\n", out, *options)
        rows = {r["student"]: r for r in _changes(out)}
        question = load_bank(Path("quiz.yaml")).question("num-loss")
        key = grade_response(load_bank(Path("quiz.yaml")), question, None, student="s01").expected
        assert key.startswith("1 + ln 10") or key.startswith("ln 10 + 1"), key
        assert rows["s01"]["reason"] == (
            f"num-loss: correct (1) → incorrect (0); read as 2.303; expected {key}"
        )
    assert Path("after0/changes.csv").read_bytes() == Path("after2/changes.csv").read_bytes()
