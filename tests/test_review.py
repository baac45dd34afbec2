"""The review queue end to end: ``review.csv``, a teacher's decisions applied with ``--review``,
stale and bad review files refused, and the honest report (issue #16).

The class (``tests/data/review/class.csv``, made by ``make_class.py`` beside it) types every kind
of answer a machine cannot be sure of on a statistics bank: ``ture``, ``2,400``, ``15%``, ``1:6``,
``AB`` for a multiple-answer question, a misspelt choice, several letters for a one-answer
question, and free text.
"""

from __future__ import annotations

import csv
import re
import shlex
import shutil
import subprocess
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import CHROMIUM_ARGS, require_tool

from quizgym.answers import grade_response
from quizgym.cli import cli
from quizgym.grading.cells import undefuse
from quizgym.loader import load_bank
from quizgym.solver import compiled

DATA = Path(__file__).parent / "data" / "review"
BANK = DATA / "stats.yaml"
CLASS = DATA / "class.csv"
SLOTS = [
    "tf-skew",
    "mc-centre",
    "mc-spread",
    "num-sales",
    "num-share",
    "num-odds",
    "num-se",
    "why-n-minus-1",
]


def grade(
    tmp_path: Path, out: str, *options: str, bank: Path = BANK, answers: Path = CLASS
) -> Result:
    args = ["grade", str(bank), str(answers), "-o", str(tmp_path / out), "--seed", "7"]
    args += ["--feedback", "--gradebook", "canvas", *options]
    return CliRunner().invoke(cli, args)


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as stream:
        return [{k: undefuse(v) for k, v in row.items()} for row in csv.DictReader(stream)]


def class_answers(path: Path = CLASS) -> dict[tuple[str, str], str]:
    """(student, slot) → the text the student typed."""
    return {(r["student"], slot): r[slot] for r in rows(path) for slot in SLOTS}


def responses(out: Path) -> dict[tuple[str, str], dict[str, str]]:
    return {(r["student"], r["question"]): r for r in rows(out / "responses.csv")}


def doubt(student: str, slot: str, text: str) -> str:
    """Why the single-answer engine, grading one student's answer, says it deserves a look."""
    book = compiled(load_bank(BANK))
    found = book.slot(slot)
    variant = book.variant(found.question, student=student, seed=7)
    return grade_response(book, found.question, text, part=found.part, variant=variant).doubt


def decide(review: Path, target: Path, scores: dict[tuple[str, str], tuple[str, str]]) -> None:
    """Fill score and comment on the rows of ``review`` whose (question, answer) is in
    ``scores``, as a teacher does, and save it to ``target``."""
    table = rows(review)
    for row in table:
        if (row["question"], row["answer"]) in scores:
            row["score"], row["comment"] = scores[row["question"], row["answer"]]
    with target.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result]:
    """The class graded once, without a review."""
    tmp = tmp_path_factory.mktemp("review")
    result = grade(tmp, "first")
    return tmp / "first", result


# --- the queue ----------------------------------------------------------------------------------


def test_review_lists_every_uncertain_answer_once_with_its_count(
    first: tuple[Path, Result],
) -> None:
    out, result = first
    assert result.exit_code == 0, result.output
    typed = class_answers()
    graded = responses(out)
    queue = rows(out / "review.csv")
    # One row per distinct (question, version, answer).
    keys = [(r["question"], r["version"], r["answer"]) for r in queue]
    assert len(keys) == len(set(keys))
    # Every uncertain response is on exactly one row, and nothing else is.
    uncertain = Counter(
        (slot, text)
        for (student, slot), r in graded.items()
        if (text := typed[student, slot])
        and (r["verdict"] == "invalid" or r["scored_by"] == "rubric" or doubt(student, slot, text))
    )
    listed: Counter[tuple[str, str]] = Counter()
    for r in queue:
        listed[r["question"], r["answer"]] += int(r["count"])
        students = r["students"].split("; ")
        assert len(students) == int(r["count"])
        assert all(typed[s, r["question"]] == r["answer"] for s in students)
    assert listed == uncertain
    waiting = sum(uncertain.values())
    assert f"{waiting} answers to review ({len(queue)} in review.csv)" in result.stdout
    by_answer = {(r["question"], r["answer"]): r for r in queue}
    # Unreadable, with the likely reading shown and the score it earns suggested (issue #31).
    expected = {
        ("tf-skew", "ture"): ("a typo of 'true'", "likely: true", "1"),
        ("num-sales", "2,400"): (
            "an ambiguous comma (decimal or thousands); read with a thousands "
            "separator it is the key",
            "likely: 2400",
            "1",
        ),
        ("num-sales", "24OO"): ("a letter O for a zero; probably meant 2400", "likely: 2400", "1"),
        ("num-odds", "1:6"): (
            "written as a ratio; read as the ratio 1/6",
            "likely: 1/6 ≈ 0.1666667",
            "1",
        ),
        ("mc-spread", "AB"): (
            "letters run together; probably meant A, B",
            "likely: A: the interquartile range; B: the standard deviation",
            "1",
        ),
        ("mc-centre", "the medain"): (
            "a choice's text, misspelt; probably meant 'the median'",
            "likely: the median",
            "1",
        ),
    }
    # Read, but leniently: the machine scored it, and says why a person may look.
    share = by_answer["num-share", "15%"]
    assert share["reason"] == "read, but worth a look: read % as a fraction"
    assert (share["verdict"], share["suggested"], share["read_as"]) == (
        "correct",
        "1",
        "15% = 0.15",
    )
    for (slot, text), (why, read_as, suggested) in expected.items():
        row = by_answer[slot, text]
        assert row["reason"] == f"could not be read: {why}", row
        assert row["count"] == str(sum(1 for (_, s), t in typed.items() if s == slot and t == text))
        assert (row["verdict"], row["read_as"], row["suggested"]) == ("invalid", read_as, suggested)
        assert row["score"] == ""
        scored = {graded[s, q]["score"] for (s, q), t in typed.items() if (q, t) == (slot, text)}
        assert scored == {"0"}  # a suggestion only: 0 until a teacher decides
    # "no idea" is no answer: a blank, on no row.
    assert not [r for r in queue if r["answer"] == "no idea"]
    assert {graded[k]["verdict"] for k, t in typed.items() if t == "no idea"} == {"blank"}
    # ``ture`` is one decision for the whole class.
    assert by_answer["tf-skew", "ture"]["count"] == "5"
    # Letters name a position in each student's own shuffled order: one row per order.
    several = [r for r in queue if (r["question"], r["answer"]) == ("mc-centre", "A, B")]
    assert len(several) == 3 and all(r["version"].startswith("order ") for r in several)
    assert {r["reason"] for r in several} == {
        "could not be read: several choices for a one-answer question"
    }
    free = [r for r in queue if r["question"] == "why-n-minus-1"]
    assert {r["reason"] for r in free} == {"free text: the score is the rubric's suggestion"}
    assert all(r["group"] for r in free)  # similar answers share a group number
    assert by_answer["why-n-minus-1", "we lose one degree of freedom"]["suggested"] == "1"
    assert by_answer["why-n-minus-1", "it has nothing to do with bias"]["suggested"] == "0"


def test_review_csv_is_the_same_whatever_the_engine(
    first: tuple[Path, Result], tmp_path: Path
) -> None:
    out, _ = first
    result = grade(tmp_path, "chunked", "--chunk-rows", "7")
    assert result.exit_code == 0, result.output
    for name in ("review.csv", "responses.csv", "items.csv", "report.html"):
        assert (tmp_path / "chunked" / name).read_bytes() == (out / name).read_bytes(), name


def test_a_class_in_many_pieces_absorbs_each_pieces_queue_once(
    first: tuple[Path, Result], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Merging each piece into a copy of everything merged so far was quadratic in the pieces
    # (100 pieces of 500 entries: 2.8 s): each is absorbed in place, with the same outputs.
    from quizgym.grading.review import Graded, Review
    from quizgym.grading.wrong_version import VersionCounts

    def copies(*_: object) -> None:
        raise AssertionError("a piece merged into a copy")

    out, _ = first
    with monkeypatch.context() as patched:
        patched.setattr(Review, "merge", copies)  # (a fit has no copying merge: absorb only)
        result = grade(tmp_path, "pieces", "--chunk-rows", "1")
    assert result.exit_code == 0, result.output
    for name in ("review.csv", "responses.csv", "items.csv", "report.html"):
        assert (tmp_path / "pieces" / name).read_bytes() == (out / name).read_bytes(), name

    graded = Graded(False, "x", "invalid", 0.0, 1.0, "1", None, "", False, "")
    pieces = []
    for k in range(60):
        piece = Review(used={("q", f"a{k}")})
        for j in range(5):
            piece.add(("q", None, f"answer {j + k % 3}"), 1, [f"s{k}"], graded)
        pieces.append(piece)
    adds = 0
    add = Review.add

    def counted(self: Review, *args: Any) -> None:
        nonlocal adds
        adds += 1
        add(self, *args)

    merged = Review()
    for piece in pieces:
        merged = merged.merge(piece)
    monkeypatch.setattr(Review, "add", counted)
    whole = Review()
    for piece in pieces:
        whole.absorb(piece)
    assert adds == 60 * 5  # each piece's entries once
    assert (whole.entries, whole.used) == (merged.entries, merged.used)
    assert all(len(p.entries) == 5 and len(p.used) == 1 for p in pieces)  # left as they were
    fits = [
        VersionCounts(counts={"q": Counter({("default", "own"): k})}, kinds={"q": "number"})
        for k in range(9)
    ]
    fit = VersionCounts()
    for piece_fit in fits:
        fit.absorb(piece_fit)
    assert fit.counts == {"q": Counter({("default", "own"): 36})}
    assert fits[1].counts["q"][("default", "own")] == 1  # its counter is not shared


# --- decisions ----------------------------------------------------------------------------------

DECISIONS = {
    ("tf-skew", "ture"): ("1", ""),
    ("num-sales", "2,400"): ("1", "Right; write 2400 without the comma."),
    ("num-share", "15%"): ("0.5", "15% is right, but the question asked for a decimal."),
    ("mc-spread", "AB"): ("1", ""),
    ("why-n-minus-1", "we lose one degree of freedom"): ("1", ""),  # as the rubric suggested
    ("why-n-minus-1", "it has nothing to do with bias"): ("0", ""),  # as the rubric suggested
    ("why-n-minus-1", "because of the degrees of freedom"): ("0", "Which degree of freedom?"),
    ("why-n-minus-1", "the sample mean uses up one piece of information"): ("2", ""),
}


@pytest.fixture(scope="module")
def decided(
    first: tuple[Path, Result], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path, Result]:
    """The class graded again with a teacher's decisions, compared with the first run."""
    out, _ = first
    tmp = tmp_path_factory.mktemp("decided")
    review = tmp / "review.csv"
    decide(out / "review.csv", review, DECISIONS)
    result = grade(tmp, "second", "--review", str(review), "--compare", str(out))
    return tmp / "second", review, result


def test_decisions_change_exactly_the_decided_scores_in_every_output(
    first: tuple[Path, Result], decided: tuple[Path, Path, Result]
) -> None:
    before, _ = first
    after, _, result = decided
    assert result.exit_code == 0, result.output
    typed = class_answers()
    old, new = responses(before), responses(after)
    assert old.keys() == new.keys()
    delta: Counter[str] = Counter()
    for (student, slot), row in new.items():
        decision = DECISIONS.get((slot, typed[student, slot]))
        if decision is None:
            assert row == old[student, slot]
            continue
        score, comment = decision
        assert float(row["score"]) == float(score), (student, slot)
        assert row["scored_by"] == "teacher"
        assert row["feedback"] == (comment or "Scored by your teacher.")
        delta[student] += float(row["score"]) - float(old[student, slot]["score"])
    # grades.csv: totals and per-question columns moved by exactly the decisions.
    old_grades = {r["student"]: r for r in rows(before / "grades.csv")}
    new_grades = {r["student"]: r for r in rows(after / "grades.csv")}
    for student, row in new_grades.items():
        assert float(row["score"]) == pytest.approx(
            float(old_grades[student]["score"]) + delta[student]
        )
        for slot in SLOTS:
            assert row[slot] == new[student, slot]["score"]
    # The gradebook carries the same totals.
    book = {r["SIS User ID"]: r for r in rows(after / "gradebook-canvas.csv")[1:]}
    for student, row in new_grades.items():
        assert float(book[student]["Descriptive statistics"]) == float(row["score"])
    # items.csv: facility is the mean of the new scores.
    items = {r["question"]: r for r in rows(after / "items.csv")}
    for slot in ("tf-skew", "num-share", "why-n-minus-1"):
        points = float(items[slot]["max_score"])
        mean = sum(float(new[s, slot]["score"]) for s in new_grades) / len(new_grades)
        assert float(items[slot]["facility"]) == pytest.approx(100 * mean / points, abs=0.01)
    # Feedback files show the teacher's score and comment.
    student = next(s for s in new_grades if typed[s, "num-share"] == "15%")
    text = (after / "feedback" / f"{student}.md").read_text(encoding="utf-8")
    assert "## num-share: partial (0.5 / 1)" in text
    assert "15% is right, but the question asked for a decimal." in text
    # --compare lists every student whose total moved, saying a teacher scored it.
    changes = rows(after / "changes.csv")
    assert {c["student"] for c in changes} == {s for s, d in delta.items() if d}
    assert all("scored by a teacher (review)" in c["reason"] for c in changes)
    answers = sum(1 for (s, slot) in new if (slot, typed[s, slot]) in DECISIONS)
    assert f"{answers} answers scored by a teacher" in result.stdout


def test_the_new_review_csv_keeps_the_decisions_and_applies_again_to_the_same_bytes(
    decided: tuple[Path, Path, Result], tmp_path: Path
) -> None:
    after, _, _ = decided
    kept = {
        (r["question"], r["answer"]): (r["score"], r["comment"])
        for r in rows(after / "review.csv")
        if r["score"]
    }
    assert kept == {k: (v[0], v[1]) for k, v in DECISIONS.items()}
    shutil.copy(after / "review.csv", tmp_path / "review.csv")
    result = grade(tmp_path, "third", "--review", str(tmp_path / "review.csv"))
    assert result.exit_code == 0, result.output
    for name in ("grades.csv", "responses.csv", "items.csv", "review.csv", "gradebook-canvas.csv"):
        assert (tmp_path / "third" / name).read_bytes() == (after / name).read_bytes(), name


def test_report_shows_how_the_rubric_agreed_with_the_teacher(
    decided: tuple[Path, Path, Result],
) -> None:
    after, _, _ = decided
    html = (after / "report.html").read_text(encoding="utf-8")
    typed = class_answers()
    free = [
        (s, t)
        for (s, slot), t in typed.items()
        if slot == "why-n-minus-1" and (slot, t) in DECISIONS
    ]
    same = sum(
        1
        for _, t in free
        if t in ("we lose one degree of freedom", "it has nothing to do with bias")
    )
    share = f"{100 * same / len(free):.1f}"
    assert (
        f'<tr><td>why-n-minus-1</td><td class="num">{len(free)}</td><td class="num">{share}</td>'
        in html
    )
    assert "Cohen's κ (linear)" in html


def test_a_spreadsheet_saved_review_still_applies(
    first: tuple[Path, Result], tmp_path: Path
) -> None:
    """European Excel: semicolons, Windows-1252, decimal commas, and an answer cell it reformatted
    (``1:6`` read as a time): the fingerprint still says which answer was decided."""
    out, _ = first
    table = rows(out / "review.csv")
    for row in table:
        if (row["question"], row["answer"]) == ("num-odds", "1:6"):
            row["answer"], row["score"], row["comment"] = "01:06:00", "0,5", "Écrivez 1/6."
    # What cp1252 cannot hold (≈ in read_as) becomes "?", as Excel saves it.
    with (tmp_path / "review.csv").open(
        "w", encoding="cp1252", errors="replace", newline=""
    ) as stream:
        writer = csv.DictWriter(stream, fieldnames=list(table[0]), delimiter=";")
        writer.writeheader()
        writer.writerows(table)
    result = grade(tmp_path, "out", "--review", str(tmp_path / "review.csv"))
    assert result.exit_code == 0, result.output
    typed = class_answers()
    new = responses(tmp_path / "out")
    decided = [r for (s, slot), r in new.items() if slot == "num-odds" and typed[s, slot] == "1:6"]
    assert len(decided) == 9
    assert {(r["score"], r["feedback"], r["scored_by"]) for r in decided} == {
        ("0.5", "Écrivez 1/6.", "teacher")
    }


# --- refusals -----------------------------------------------------------------------------------


def _refused(result: Result, out: Path, before: dict[str, bytes]) -> list[str]:
    """The error lines of a refused run, after checking it wrote nothing."""
    assert result.exit_code == 2, result.output
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    return result.stderr.splitlines()


def _snapshot(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}


def test_a_review_of_an_edited_question_is_refused_with_its_line(
    decided: tuple[Path, Path, Result], tmp_path: Path
) -> None:
    after, review, _ = decided
    bank = tmp_path / "stats.yaml"
    bank.write_text(
        BANK.read_text(encoding="utf-8").replace(
            "rather than by n?", "rather than by n (the sample size)?"
        ),
        encoding="utf-8",
    )
    shutil.copytree(after, tmp_path / "out")
    before = _snapshot(tmp_path / "out")
    result = grade(tmp_path, "out", "--review", str(review), bank=bank)
    lines = _refused(result, tmp_path / "out", before)
    table = rows(review)
    edited = [
        k for k, r in enumerate(table, start=2) if r["question"] == "why-n-minus-1" and r["score"]
    ]
    assert lines == [
        f"Error: {review}:{line}: stale: why-n-minus-1 was edited in the bank since this review "
        "was written; grade with --accept-changes to keep the decisions on it"
        for line in edited
    ]
    # --accept-changes keeps them, and the report says so.
    result = grade(tmp_path, "out", "--review", str(review), "--accept-changes", bank=bank)
    assert result.exit_code == 0, result.output
    assert (
        "decisions from the review kept on questions edited since it was written: why-n-minus-1"
        in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    )


def test_a_decision_on_an_answer_nobody_gives_any_more_is_refused(
    decided: tuple[Path, Path, Result], tmp_path: Path
) -> None:
    after, review, _ = decided
    # The class file was corrected since: nobody typed ``ture`` now.
    answers = tmp_path / "class.csv"
    answers.write_text(
        CLASS.read_text(encoding="utf-8").replace(",ture,", ",true,"), encoding="utf-8"
    )
    shutil.copytree(after, tmp_path / "out")
    before = _snapshot(tmp_path / "out")
    result = grade(tmp_path, "out", "--review", str(review), answers=answers)
    lines = _refused(result, tmp_path / "out", before)
    line = next(k for k, r in enumerate(rows(review), start=2) if r["answer"] == "ture")
    assert lines == [
        f"Error: {review}:{line}: stale: nobody answered tf-skew with 'ture' in this run (the "
        "submissions changed since the review was written): delete the row's score, or grade the "
        "submissions it was made on"
    ]


def test_every_bad_row_of_a_review_is_named_and_nothing_is_applied(
    first: tuple[Path, Result], tmp_path: Path
) -> None:
    out, _ = first
    table = rows(out / "review.csv")
    bad = {
        3: {"score": "lots"},
        4: {"score": "5"},
        5: {"comment": "see me"},
        6: {"fingerprint": "q123", "score": "1"},
        7: {"question": "no-such-question", "score": "1"},
    }
    for line, cells in bad.items():
        table[line - 2].update(cells)
    table[0]["score"] = "0"
    table.append(dict(table[0], score="1"))  # the first row again, decided twice
    with (tmp_path / "review.csv").open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    shutil.copytree(out, tmp_path / "out")
    before = _snapshot(tmp_path / "out")
    result = grade(tmp_path, "out", "--review", str(tmp_path / "review.csv"))
    lines = _refused(result, tmp_path / "out", before)
    path = tmp_path / "review.csv"
    assert lines == [
        f"Error: {path}:3: the score 'lots' is not a number",
        f"Error: {path}:4: the score 5 is outside 0 … 1",
        f"Error: {path}:5: a comment without a score: give the score too",
        f"Error: {path}:6: the fingerprint 'q123' is not one quizgym wrote: keep the column as it "
        "was",
        f"Error: {path}:7: 'no-such-question' is no question of this bank",
        f"Error: {path}:{len(table) + 1}: the same answer decided twice (first on line 2)",
    ]


# --- the honest report --------------------------------------------------------------------------


def _tables(page: Any) -> dict[str, list[list[str]]]:
    """Each table under an h3 heading, as the browser shows it: heading → rows of cell texts."""
    found: dict[str, list[list[str]]] = page.evaluate(
        """() => {
            const out = {};
            for (const h of document.querySelectorAll('h3')) {
                let node = h.nextElementSibling;
                if (!node || node.tagName !== 'TABLE') continue;
                let title = h.textContent;
                let el = h;
                while (el && el.tagName !== 'H2') el = el.previousElementSibling;
                if (el) title = el.textContent + ' / ' + h.textContent;
                out[title] = [...node.querySelectorAll('tr')].map(
                    tr => [...tr.children].map(td => td.innerText.trim()));
            }
            return out;
        }"""
    )
    return found


def test_the_report_counts_every_student_and_explains_its_flags(first: tuple[Path, Result]) -> None:
    chromium = require_tool("chromium")
    from playwright.sync_api import sync_playwright

    out, _ = first
    graded = responses(out)
    students = len({s for s, _ in graded})
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto((out / "report.html").as_uri())
            tables = _tables(page)
            first_list = page.inner_text("#check-first")
            folded = page.evaluate(
                """[...document.querySelectorAll('details')].map(
                    d => [d.open, d.querySelector('table').checkVisibility()])"""
            )
            items = page.evaluate(
                """() => {
                    const t = [...document.querySelectorAll('h2')]
                        .find(h => h.textContent === 'Items').nextElementSibling;
                    return [...t.querySelectorAll('tr')].map(
                        tr => [...tr.children].map(c => c.innerText.trim()));
                }"""
            )
        finally:
            browser.close()
    # Every distractor table adds up to the class, unreadable answers on their own row.
    distractors = {k: v for k, v in tables.items() if k.startswith("Distractors / ")}
    assert set(distractors) == {"Distractors / tf-skew", "Distractors / mc-centre"}
    for title, table in distractors.items():
        head, *body = table
        n = head.index("n")
        counted = [r for r in body if r[0] != "All students"]
        assert sum(int(r[n]) for r in counted) == students, title
        slot = title.split(" / ")[1]
        invalid = sum(1 for (s, q), r in graded.items() if q == slot and r["verdict"] == "invalid")
        assert [r[n] for r in counted if r[0] == "(unreadable)"] == [str(invalid)]
    # The items table counts blanks and unreadable answers per item.
    head, *body = items
    for row in body:
        slot = row[0]
        mine = [r for (s, q), r in graded.items() if q == slot]
        assert int(row[head.index("Blank")]) == sum(1 for r in mine if r["verdict"] == "blank")
        assert int(row[head.index("Unreadable")]) == sum(
            1 for r in mine if r["verdict"] == "invalid"
        )
    # The multiple-answer question has a per-choice table: who picked what.
    picks = tables["Choices of multiple-answer questions / mc-spread"]
    typed = class_answers()
    chosen = Counter(
        letter
        for (s, q), t in typed.items()
        if q == "mc-spread" and t and t != "AB"
        for letter in t.replace(" ", "").split(",")
    )
    readable = sum(1 for (s, q), t in typed.items() if q == "mc-spread" and t and t != "AB")
    assert [r[2] for r in picks[1:]] == [str(chosen[letter]) for letter in "ABCD"]
    assert picks[1][3] == f"{100 * chosen['A'] / readable:.1f}"
    # Numeric items list their most common wrong answers with the mistake they matched.
    share = tables["Most common wrong answers / num-share"]
    assert share[1] == ["30", "count-not-share", "8"]
    odds = tables["Most common wrong answers / num-odds"]
    assert odds[1] == ["0.2", "wrong-denominator", "6"]
    se = tables["Most common wrong answers / num-se"]
    assert se[1] == ["(their own numbers)", "se-divides-by-n", "12"]
    # A flag names its dominant cause, and the list at the top says what to check first.
    assert (
        "num-sales: 14 of 55 answers could not be read, most often an ambiguous comma (decimal or "
        "thousands): 14 score 0 until you decide them in review.csv" in first_list
    )
    assert "answers await your decision (20 distinct, in review.csv)" in first_list
    # Per-variant rows are folded, small versions pooled.
    assert folded and all(not is_open and not shown for is_open, shown in folded)
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "versions with fewer than 5 students each" in html


# --- the documentation is true ------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
DOC_DECISIONS = {
    ("tf-skew", "ture"): ("1", ""),
    ("num-sales", "2,400"): ("1", "Right; write 2400 without the comma."),
    ("num-share", "15%"): ("0.5", "15% is right, but the question asked for a decimal."),
    ("why-n-minus-1", "the sample mean uses up one piece of information"): ("2", ""),
}
"""The decisions docs/grade.md says the teacher made between its two runs."""


def _sessions(text: str) -> list[tuple[str, str]]:
    """The (command, output) pairs of the console blocks of ``text`` that grade class.csv."""
    found = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.DOTALL):
        if "stats.yaml class.csv" not in block:
            continue
        for part in re.split(r"^\$ ", block, flags=re.MULTILINE)[1:]:
            command, _, output = part.partition("\n")
            found.append((command, output))
    return found


@pytest.mark.parametrize("document", ["README.md", "docs/grade.md"])
def test_the_review_loop_prints_what_the_documents_show(
    document: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("stats.yaml", "class.csv"):
        shutil.copy(DATA / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    sessions = _sessions((ROOT / document).read_text(encoding="utf-8"))
    assert sum("--review" in c for c, _ in sessions) == 1
    for command, output in sessions:
        if "--review" in command:
            decide(Path("graded/review.csv"), Path("graded/review.csv"), DOC_DECISIONS)
        if command.startswith("quizgym "):
            result = CliRunner().invoke(cli, shlex.split(command)[1:])
            shown = result.stdout + result.stderr
        else:  # head, grep, sed: what a reader runs to look at the files
            shown = subprocess.run(
                command, shell=True, capture_output=True, text=True, check=False
            ).stdout
        assert shown == output, command


def test_a_review_record_read_from_the_columns_is_the_verdicts_own(tmp_path: Path) -> None:
    """``Graded.many`` (what the queue records of each distinct verdict, read from its columns)
    is ``Graded.of`` its verdict object, for every verdict of a class of every kind of slot."""
    from quizgym.grading.batch import failed, grade_partition
    from quizgym.grading.readers.submissions import read_submissions
    from quizgym.grading.review import Graded
    from quizgym.grading.verdicts import Verdicts

    data = Path(__file__).parent / "data" / "grade"
    bank = compiled(load_bank(data / "quiz.yaml"))
    graded = grade_partition(bank, read_submissions(bank.bank, [data / "class.csv"]))
    seen = 0
    for g in graded.slots:
        made = [
            *g.verdicts,
            failed(g.slot, RuntimeError("engine bug")),  # one the engine failed on
            replace(g.verdicts[0], doubt="typed in km/h, converted"),  # one with a doubt
        ]
        fresh = Verdicts.of(made)  # the same verdicts, none of them made yet
        fresh._made = [None] * len(fresh)
        assert Graded.many(fresh, range(len(fresh))[::-1]) == [Graded.of(v) for v in made[::-1]]
        seen += len(made)
    assert seen > 20
