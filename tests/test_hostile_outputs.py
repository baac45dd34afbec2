"""Hostile input in what ``quizgym grade`` writes: inert, complete, atomic (issue #17, outputs).

Each test reproduces what an adversarial pass found, on the statistics bank: raw HTML in feedback
files, a formula in a gradebook header, a 300-character student id, terminal escapes and bidi
overrides in ids, and outputs a killed run left half-written.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

from click.testing import CliRunner
from conftest import CHROMIUM_ARGS, require_tool

from quizgym.cli import cli
from quizgym.grading.run import LOCK
from quizgym.names import LONGEST, file_stem

STATS = Path(__file__).parent / "data" / "issued" / "stats.yaml"
HOSTILE = [
    "<script>window.ran = (window.ran || 0) + 1</script>",
    '<img src=x onerror="window.ran = (window.ran || 0) + 1">',
    "[click](javascript:window.ran=1)",
    "*not emphasis* _nor this_ `nor code`",
]


class _Live(HTMLParser):
    """Elements and attributes of a page that could run code."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"script", "iframe", "object", "embed"}:
            self.found.append(tag)
        for name, value in attrs:
            if name.startswith("on") or (value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"{tag} {name}")


def live_markup(html: str) -> list[str]:
    parser = _Live()
    parser.feed(html)
    return parser.found


def grade(tmp_path: Path, rows: list[str], *options: str, bank: Path = STATS) -> object:
    (tmp_path / "class.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    args = ["grade", str(bank), str(tmp_path / "class.csv"), "-o", str(tmp_path / "out")]
    return CliRunner().invoke(cli, [*args, "--version", "default", *options])


def test_feedback_files_stay_inert_when_a_viewer_renders_them(tmp_path: Path) -> None:
    chromium = require_tool("chromium")
    from markdown_it import MarkdownIt
    from playwright.sync_api import sync_playwright

    rows = ["student,tf-mean-median,mc-spread"] + [
        f"s{k},{text.replace(',', ' ')},{text.replace(',', ' ')}" for k, text in enumerate(HOSTILE)
    ]
    result = grade(tmp_path, rows, "--feedback")
    assert result.exit_code == 1  # every answer is unreadable: a warning says so
    assert "all 4 answers were unreadable" in result.stderr
    # As a Markdown viewer shows them: CommonMark with raw HTML passed through (GitHub's default).
    viewer = MarkdownIt("commonmark", {"html": True})
    pages = []
    for md in sorted((tmp_path / "out" / "feedback").glob("*.md")):
        html = viewer.render(md.read_text(encoding="utf-8"))
        assert live_markup(html) == [], md.name
        page = md.with_suffix(".html")
        page.write_text(f"<!DOCTYPE html><html><body>{html}</body></html>", encoding="utf-8")
        pages.append(page)
    assert len(pages) == len(HOSTILE)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            for path in pages:
                page.goto(path.as_uri())
                page.wait_for_timeout(50)
                assert page.evaluate("window.ran || 0") == 0, path.name
                # what the student typed is shown, as text
                assert "Your answer" in page.inner_text("body")
        finally:
            browser.close()
    shown = (tmp_path / "out" / "feedback" / "s3.md").read_text(encoding="utf-8")
    assert r"\*not emphasis\* \_nor this\_ \`nor code\`" in shown


def test_a_formula_in_the_banks_title_does_not_reach_the_gradebook_as_one(tmp_path: Path) -> None:
    bank = tmp_path / "bank.yaml"
    text = STATS.read_text(encoding="utf-8")
    bank.write_text(
        text.replace("title: Introductory statistics", 'title: \'=HYPERLINK("http://x","y")\''),
        encoding="utf-8",
    )
    result = grade(
        tmp_path, ["student,tf-mean-median", "s1,true"], "--gradebook", "canvas", bank=bank
    )
    assert result.exit_code == 0, result.output
    header = (tmp_path / "out" / "gradebook-canvas.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.endswith(',"\'=HYPERLINK(""http://x"",""y"")"')


def test_a_very_long_student_id_gets_a_short_unique_file_name(tmp_path: Path) -> None:
    long_a, long_b = "s" + "x" * 300, "s" + "x" * 299 + "y"
    rows = ["student,tf-mean-median", f"{long_a},true", f"{long_b},false"]
    result = grade(tmp_path, rows, "--feedback")
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in (tmp_path / "out" / "feedback").iterdir())
    assert len(names) == 2 and all(len(n) == LONGEST + 3 for n in names), names
    assert names[0] != names[1]
    assert file_stem(long_a) == file_stem(long_a) and file_stem("s01") == "s01"
    roster = tmp_path / "roster.csv"
    roster.write_text(f"student\n{long_a}\n{long_b}\n", encoding="utf-8")
    rendered = CliRunner().invoke(
        cli, ["render", str(STATS), "--roster", str(roster), "-o", str(tmp_path / "sheets")]
    )
    assert rendered.exit_code == 0, rendered.output
    assert len(list((tmp_path / "sheets").glob("worksheet-*.html"))) == 2


def test_ids_that_would_drive_the_terminal_are_shown_spelled_out(tmp_path: Path) -> None:
    rows = [
        "student,tf-mean-median",
        "\x1b]0;pwned\x07s1,maybe",
        "s2\u202eevil,true",
        "s2\u202eevil,x",
    ]
    result = grade(tmp_path, rows)
    assert result.exit_code == 1
    assert "\x1b" not in result.stderr and "\u202e" not in result.stderr
    assert "s2\\u202eevil" in result.stderr
    report = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "\u202e" not in report and "\x1b" not in report


KILL = """
import sys
from pathlib import Path
from quizgym.grading import run as grading_run
from quizgym.grading import outputs

real = outputs.write_items
def slow_items(path, stats):  # the run is caught after grades.csv, before the rest
    real(path, stats)
    print("items", flush=True)
    import time
    time.sleep(60)
grading_run.write_items = slow_items
grading_run.grade_submissions(
    Path(sys.argv[1]), [Path(sys.argv[2])], out_dir=Path(sys.argv[3]), version="default"
)
"""


def test_a_killed_run_leaves_the_last_finished_run_whole(tmp_path: Path) -> None:
    rows = ["student,tf-mean-median,mc-spread"] + [f"s{k},true,A" for k in range(50)]
    first = grade(tmp_path, rows)
    assert first.exit_code == 0, first.output
    out = tmp_path / "out"
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert "run.json" in before
    # grade a different class into the same folder, and kill it half-way
    (tmp_path / "class.csv").write_text(
        "\n".join(["student,tf-mean-median"] + [f"t{k},false" for k in range(80)]) + "\n",
        encoding="utf-8",
    )
    with subprocess.Popen(
        [sys.executable, "-c", KILL, str(STATS), str(tmp_path / "class.csv"), str(out)],
        stdout=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "items"
        child.send_signal(signal.SIGKILL)
        child.wait()
    # the killed run's lock file stays (its lock went with the process): the next run takes it
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name != LOCK}
    assert after == before  # nothing of the killed run is mixed in
    leftovers = [p.name for p in out.iterdir() if p.name.startswith(".quizgym-staging-")]
    assert len(leftovers) == 1  # a kill cannot clean up after itself...
    again = grade(tmp_path, rows)
    assert again.exit_code == 0
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # ...the next run does


def test_compare_refuses_a_folder_whose_run_did_not_finish(tmp_path: Path) -> None:
    rows = ["student,tf-mean-median", "s1,true"]
    assert grade(tmp_path, rows).exit_code == 0
    (tmp_path / "out" / "run.json").unlink()
    (tmp_path / "class.csv").write_text("student,tf-mean-median\ns1,false\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli,
        ["grade", str(STATS), str(tmp_path / "class.csv"), "-o", str(tmp_path / "new"),
         "--compare", str(tmp_path / "out")],
    )  # fmt: skip
    assert (result.exit_code, result.output) == (
        2,
        f"Error: --compare {tmp_path / 'out'}: the run there did not finish (no run.json): "
        "grade it again\n",
    )


def test_a_later_run_removes_what_an_earlier_one_wrote_and_it_does_not(tmp_path: Path) -> None:
    rows = ["student,tf-mean-median", "s1,true"]
    assert grade(tmp_path, rows, "--feedback", "--gradebook", "moodle").exit_code == 0
    assert (tmp_path / "out" / "feedback").is_dir()
    assert grade(tmp_path, rows).exit_code == 0
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["grades.csv", "items.csv", "rejected.csv", "report.html", "responses.csv",
                     "review.csv", "run.json"]  # fmt: skip
    record = json.loads((tmp_path / "out" / "run.json").read_text(encoding="utf-8"))
    assert record["students"] == 1 and record["files"] == [n for n in names if n != "run.json"]
