"""What students mean (issue #31): non-answers are blanks, units as students write them, and an
unreadable answer's likely reading (``ture``, ``ABC``, ``2,400``, ``O.5``, ``1:6``) suggested in
review with the score it earns, never given without a teacher.

The class (``tests/data/meaning/class.csv``, made by ``make_class.py`` beside it) is 64 students
of a statistics and kinematics quiz typing the way students type.
"""

# ruff: noqa: E501  (the tables read best one case a line)

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from quizgym.answers import Status, grade_response, non_answer
from quizgym.cli import cli
from quizgym.grading.cells import defuse, undefuse
from quizgym.loader import load_bank, parse_bank
from quizgym.meaning import likely
from quizgym.model import points_of
from quizgym.solver import CompiledBank, compiled

DATA = Path(__file__).parent / "data" / "meaning"
BANK = DATA / "kinematics.yaml"
CLASS = DATA / "class.csv"

SMALL = """
bank: small
title: Small
defaults: {points: 4}
questions:
  - id: tf
    type: true_false
    prompt: Is it?
    answer: true
  - id: ma
    type: multiple_choice
    multiple: true
    prompt: Which?
    choices:
      - {text: one, correct: true}
      - {text: two, correct: true}
      - {text: three, correct: true}
      - {text: four}
  - id: mc
    type: multiple_choice
    prompt: Which one?
    choices:
      - {text: Not sure, correct: true}
      - {text: Sure}
  - id: time
    type: numeric
    prompt: How long?
    answer: "0.25"
    units: s
  - id: speed
    type: numeric
    prompt: How fast?
    answer: "5"
    units: m/s
    tolerance: {abs: 0.1}
  - id: comma
    type: numeric
    prompt: How much?
    answer: "2.4"
  - id: thousands
    type: numeric
    prompt: How many?
    answer: "2400"
    mistakes:
      - {answer: "2.4", feedback: "That is in thousands.", tag: in-thousands, credit: 0.5}
  - id: free
    type: free_text
    prompt: Why?
    model_answer: Because of this and that.
    rubric:
      - {criterion: this, any_of: [this]}
      - {criterion: that, any_of: [that]}
  - id: free-set
    type: free_text
    prompt: Why, for points?
    points: 4
    model_answer: Because of this and that.
    rubric:
      - {criterion: this, any_of: [this]}
      - {criterion: that, any_of: [that]}
"""


@pytest.fixture(scope="module")
def small() -> CompiledBank:
    return compiled(parse_bank(SMALL, path="small.yaml"))


# --- non-answers (point 4) ----------------------------------------------------------------------

NON_ANSWERS = [
    "idk",
    "IDK",
    "?",
    "??",
    "-",
    "--",
    "—",
    "n/a",
    "N/A",
    "x = ?",
    "v=?",
    "dont know",
    "don't know",
    "I don’t know",
    "no idea",
    "…",
]
ANSWERS = ["-5", "5-", "n", "no", "x = 5", "?5", "-0.5", "none", "no 5"]


@pytest.mark.parametrize("text", NON_ANSWERS)
@pytest.mark.parametrize("slot", ["tf", "ma", "time", "comma", "free"])
def test_a_non_answer_is_a_blank_on_every_kind_of_question(
    small: CompiledBank, slot: str, text: str
) -> None:
    assert non_answer(text)
    book = small
    verdict = grade_response(book, book.bank.question(slot), text)
    assert (verdict.status, verdict.score, verdict.needs_review) == (Status.BLANK, 0.0, False)


@pytest.mark.parametrize("text", ANSWERS)
def test_what_only_looks_like_a_non_answer_is_read_as_an_answer(text: str) -> None:
    assert not non_answer(text)


def test_a_choice_whose_text_is_a_non_answer_is_that_choice(small: CompiledBank) -> None:
    book = small
    verdict = grade_response(book, book.bank.question("mc"), "not sure")
    assert (verdict.status, verdict.read_as) == (Status.CORRECT, "A: Not sure")


def test_a_lone_minus_is_not_defused_and_a_formula_still_is() -> None:
    assert defuse("-") == "-" and undefuse("-") == "-"
    assert defuse("-1+2") == "'-1+2" and defuse("--") == "'--" and undefuse("'-") == "'-"


# --- likely readings (points 3 and 5) -----------------------------------------------------------

# (slot, typed, the likely reading, its cause and note, the score it earns of 4 points)
LIKELY = [
    ("tf", "ture", "true", "a typo of 'true'", "probably meant 'true'", 4.0),
    ("tf", "flase", "false", "a typo of 'false'", "probably meant 'false'", 0.0),
    ("ma", "ABC", "A, B, C", "letters run together", "probably meant A, B, C", 4.0),
    ("ma", "abc", "A, B, C", "letters run together", "probably meant A, B, C", 4.0),
    ("ma", "AC", "A, C", "letters run together", "probably meant A, C", 4 * 2 / 3),
    (
        "comma",
        "2,400",
        "2.400",
        "an ambiguous comma (decimal or thousands)",
        "read as a decimal comma it is the key",
        4.0,
    ),
    (
        "thousands",
        "2,400",
        "2400",
        "an ambiguous comma (decimal or thousands)",
        "read with a thousands separator it is the key",
        4.0,
    ),
    ("comma", "O.5", "0.5", "a letter O for a zero", "probably meant 0.5", 0.0),
    ("comma", "2.4OO", "2.400", "a letter O for a zero", "probably meant 2.400", 4.0),
    ("thousands", "24OO", "2400", "a letter O for a zero", "probably meant 2400", 4.0),
    ("comma", "12:5", "12/5", "written as a ratio", "read as the ratio 12/5", 4.0),
]


@pytest.mark.parametrize(("slot", "typed", "meant", "cause", "note", "score"), LIKELY)
def test_an_unreadable_answer_has_a_likely_reading_graded_by_the_engine(
    small: CompiledBank, slot: str, typed: str, meant: str, cause: str, note: str, score: float
) -> None:
    book = small
    question = book.bank.question(slot)
    as_typed = grade_response(book, question, typed)
    assert (as_typed.status, as_typed.score) == (Status.INVALID, 0.0)  # never credited as typed
    found = likely(book, question, typed, variant=book.variant(question))
    assert found is not None
    assert (found.text, found.cause, found.note) == (meant, cause, note)
    assert found.verdict == grade_response(book, question, meant)
    assert found.verdict.score == pytest.approx(score)


def test_a_comma_whose_readings_score_alike_suggests_nothing(small: CompiledBank) -> None:
    book = small
    question = book.bank.question("comma")
    assert likely(book, question, "5,100", variant=book.variant(question)) is None
    question = book.bank.question("thousands")
    found = likely(book, question, "2,4OO", variant=book.variant(question))
    assert found is None  # a comma and a letter O at once: too far from anything typed


def test_a_comma_reading_that_is_a_known_mistake_says_so(small: CompiledBank) -> None:
    book = small
    question = book.bank.question("thousands")
    found = likely(book, question, "2,4", variant=book.variant(question))
    assert found is None  # "2,4" is read: 2.4, the known mistake, with its half credit
    verdict = grade_response(book, question, "2,4")
    assert (verdict.status, verdict.tag, verdict.score) == (Status.PARTIAL, "in-thousands", 2.0)


# --- units as students write them (point 2) -----------------------------------------------------

UNITS = [
    ("speed", "5 ms^-1", Status.CORRECT, "5 ms^-1 = 5 m/s"),
    ("speed", "5 ms-1", Status.CORRECT, "5 ms^-1 = 5 m/s"),
    ("speed", "5 m.s^-1", Status.CORRECT, "5 m*s^-1"),
    ("speed", "5 m s^-1", Status.CORRECT, "5 m s^-1"),
    ("speed", "5 m·s⁻¹", Status.CORRECT, "5 m*s^-1"),
    ("speed", "5.05 ms⁻¹", Status.CORRECT, "5.05 ms^-1 = 5.05 m/s"),  # within the band
    ("speed", "5.2 ms^-1", Status.INCORRECT, "5.2 ms^-1 = 5.2 m/s"),
    ("speed", "5 ms", Status.INCORRECT, "5 ms"),  # metre-seconds or milliseconds: no speed
    ("time", "250 ms", Status.CORRECT, "250 ms = 0.25 s"),  # ms is a millisecond in a time
    ("time", "0.25 ms", Status.INCORRECT, "0.25 ms = 0.00025 s"),
]


@pytest.mark.parametrize(("slot", "typed", "status", "read_as"), UNITS)
def test_units_as_students_write_them(
    small: CompiledBank, slot: str, typed: str, status: Status, read_as: str
) -> None:
    book = small
    verdict = grade_response(book, book.bank.question(slot), typed)
    assert (verdict.status, verdict.read_as) == (status, read_as)
    assert "ms^-1" not in verdict.doubt  # read as metres per second, not doubted as a unit


# --- a rubric question's points (point 9) -------------------------------------------------------


def test_a_rubric_question_without_points_is_worth_its_rubric_and_the_schema_says_so(
    small: CompiledBank,
) -> None:
    book = small
    bank = book.bank
    assert points_of(bank.question("free"), bank.defaults) == 2  # not defaults.points (4)
    assert grade_response(book, bank.question("free"), "this").max_score == 2
    half = grade_response(book, bank.question("free-set"), "only this")
    assert (half.score, half.max_score) == (2.0, 4.0)
    assert points_of(bank.question("tf"), bank.defaults) == 4
    result = CliRunner().invoke(cli, ["schema"])
    schema = json.loads(result.stdout)
    free = schema["$defs"]["FreeText"]["properties"]["points"]["description"]
    default = schema["$defs"]["Defaults"]["properties"]["points"]["description"]
    assert "the rubric's total" in free and "never defaults.points" in free
    assert "a free-text question without points is worth its rubric's total" in default


# --- a class that types the way students type ---------------------------------------------------

FAIR: dict[tuple[str, str], float] = {
    # point 2: units
    ("num-speed", "5 ms^-1"): 1,
    ("num-speed", "5 ms-1"): 1,
    ("num-speed", "5 m.s^-1"): 1,
    ("num-speed", "5 m s^-1"): 1,
    ("num-speed", "5 m·s⁻¹"): 1,
    ("num-accel", "2.4 ms-2"): 1,
    # point 3: a decimal comma
    ("num-accel", "2,400"): 1,
    # point 4: the letter O
    ("num-heads", "O.5"): 1,
    # point 5: typos and letters run together
    ("tf-skew", "ture"): 1,
    ("tf-skew", "flase"): 0,
    ("ma-spread", "ABC"): 1,
    ("ma-spread", "abc"): 1,
    ("ma-spread", "AC"): 2 / 3,
}
"""What a fair teacher gives the answers of points 2-5 (29 students' answers in the class)."""
NON = {"idk", "?", "-", "n/a", "x = ?", "dont know"}


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as stream:
        return [{k: undefuse(v) for k, v in row.items()} for row in csv.DictReader(stream)]


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result]:
    out = tmp_path_factory.mktemp("meaning") / "graded"
    result = CliRunner().invoke(cli, ["grade", str(BANK), str(CLASS), "-o", str(out)])
    return out, result


def test_the_class_gets_a_fair_score_or_a_fair_suggestion_and_no_silent_wrong_grade(
    graded: tuple[Path, Result],
) -> None:
    out, result = graded
    assert result.exit_code == 0, result.output
    typed = {(r["student"], slot): r[slot] for r in _rows(CLASS) for slot in r if slot != "student"}
    responses = {(r["student"], r["question"]): r for r in _rows(out / "responses.csv")}
    queue = {(r["question"], r["answer"]): r for r in _rows(out / "review.csv")}
    fair = unfair = 0
    for (student, slot), text in typed.items():
        if (slot, text) not in FAIR:
            continue
        row, wanted = responses[student, slot], FAIR[slot, text]
        listed = queue.get((slot, text))
        if listed is None:  # decided by the machine: it must be the fair score
            assert float(row["score"]) == pytest.approx(wanted), (slot, text)
            fair += 1
        elif float(listed["suggested"]) == pytest.approx(wanted, abs=1e-4):
            assert float(row["score"]) == 0  # a suggestion only, until a teacher decides
            assert listed["read_as"].startswith("likely: "), listed
            fair += 1
        else:
            unfair += 1
    assert fair + unfair == 29
    assert fair >= 25, (fair, unfair)  # the issue asks at least 25 of the 29
    assert unfair == 0  # and every one of them gets its fair score or suggestion
    # No silent wrong grade: every answer whose score is not the fair one is in review.
    for (student, slot), text in typed.items():
        if (slot, text) in FAIR and (slot, text) not in queue:
            assert float(responses[student, slot]["score"]) == pytest.approx(FAIR[slot, text])


def test_non_answers_are_blanks_with_no_review_row(graded: tuple[Path, Result]) -> None:
    out, _ = graded
    typed = {(r["student"], slot): r[slot] for r in _rows(CLASS) for slot in r if slot != "student"}
    responses = {(r["student"], r["question"]): r for r in _rows(out / "responses.csv")}
    given = [(key, text) for key, text in typed.items() if text in NON]
    assert len(given) == 20
    assert all(responses[key]["verdict"] == "blank" for key, _ in given)
    queue = _rows(out / "review.csv")
    assert not [r for r in queue if r["answer"] in NON or r["answer"].startswith("'")]
    raw = (out / "review.csv").read_text(encoding="utf-8")
    assert "'-" not in raw
    items = {r["question"]: r for r in _rows(out / "items.csv")}
    for slot in items:
        blanks = sum(1 for (s, q), t in typed.items() if q == slot and (not t or t in NON))
        assert int(items[slot]["blank"]) == blanks, slot


# --- export --check accounts for every answer it typed (point 8) --------------------------------


@pytest.mark.parametrize("fmt", ["qti12", "gift"])
def test_export_check_accounts_for_every_typed_answer_once(tmp_path: Path, fmt: str) -> None:
    from quizgym.export.scoring import check_export

    target = tmp_path / f"out.{fmt}"
    result = CliRunner().invoke(
        cli, ["export", str(BANK), "--to", fmt, "--check", "-o", str(target)]
    )
    last = result.stdout.splitlines()[-1]
    report = check_export(compiled(load_bank(BANK)), fmt=fmt, data=target.read_bytes())
    typed = sum(b.probes for b in report.blanks)
    agreed = sum(b.agreed for b in report.blanks)
    per_answer = [f for b in report.blanks for f in b.findings if f.typed]
    wrong = sum(1 for f in per_answer if f.severe)
    noted = len(per_answer) - wrong
    assert agreed + noted + wrong == typed  # each typed answer once: none unexplained
    assert all(f.text for f in per_answer)  # and each difference names its answer
    verdict = "FAILED" if report.failed else "ok"
    assert last == (
        f"{verdict}: {len(report.blanks)} numeric blanks, {typed} typed answers: {agreed} scored as "
        f"quizgym scores them, {noted} otherwise as noted, {wrong} scored wrong"
    )
    if fmt == "qti12":
        assert noted > 0  # Canvas: partial credit and rounding notes, each counted


# --- a report a teacher reads at a glance (point 8) ---------------------------------------------


def test_the_report_keeps_pending_review_apart_and_lists_who_said_nothing(
    graded: tuple[Path, Result],
) -> None:
    out, _ = graded
    html = (out / "report.html").read_text(encoding="utf-8")
    assert (
        '<p id="silent">2 students answered nothing (every answer blank): u063, u064.</p>' in html
    )
    assert (
        '<p id="non-answers">20 answers say “no answer” and are counted as blank, not sent to '
        "review: “-” ×5, “idk” ×5, “?” ×4, “dont know” ×2, “n/a” ×2, “x = ?” ×2.</p>"
    ) in html
    assert html.count("<li><strong>") == html.count("<li><strong>")  # (lists below)
    pending = html.split('<ul id="pending">')[1].split("</ul>")[0]
    flagged = html.split("<h2>Items to look at</h2>")[1].split("</ul>")[0]
    assert "<strong>tf-skew</strong>: 5 of 55 answers could not be read" in pending
    assert "could not be read" not in flagged  # quality flags only
    items = {r["question"]: r for r in _rows(out / "items.csv")}
    assert all("could not be read" not in r["flags"] for r in items.values())
    assert '<tr class="pending"><td>tf-skew</td>' in html  # yellow, not red


def test_the_items_table_fits_1200_pixels_with_no_column_cut_off(
    graded: tuple[Path, Result], tmp_path: Path
) -> None:
    from conftest import CHROMIUM_ARGS, require_tool

    chromium = require_tool("chromium")
    from playwright.sync_api import sync_playwright

    out, _ = graded
    # and a bank whose ids are long, as the bundled one's are
    long_bank = tmp_path / "long.yaml"
    long_bank.write_text(
        BANK.read_text(encoding="utf-8").replace(
            "id: num-speed", "id: num-cyclist-constant-speed-over-a-hundred-metres"
        ),
        encoding="utf-8",
    )
    answers = tmp_path / "class.csv"
    answers.write_text(
        CLASS.read_text(encoding="utf-8").replace(
            "num-speed", "num-cyclist-constant-speed-over-a-hundred-metres"
        ),
        encoding="utf-8",
    )
    other = tmp_path / "long"
    result = CliRunner().invoke(cli, ["grade", str(long_bank), str(answers), "-o", str(other)])
    assert result.exit_code == 0, result.output
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            for report in (out / "report.html", other / "report.html"):
                page.goto(report.as_uri())
                found = page.evaluate(
                    """() => {
                        const t = document.querySelector('table.items');
                        const box = t.getBoundingClientRect();
                        const cut = [...t.querySelectorAll('th, td')]
                            .filter(c => c.scrollWidth > c.clientWidth + 1)
                            .map(c => c.innerText);
                        return {right: box.right, width: document.documentElement.clientWidth,
                                page: document.documentElement.scrollWidth,
                                columns: t.rows[0].cells.length, cut};
                    }"""
                )
                assert found["columns"] == 14
                assert found["cut"] == [], report
                assert found["right"] <= found["width"], found
                assert found["page"] <= 1200, found
        finally:
            browser.close()
