"""Whole practice sessions driven through CliRunner: answers in, screen text and database out."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from practice_helpers import T0, key_for, read_only, rows, run

from quizgym.cli import cli

GOLDENS = Path(__file__).parent / "goldens"


def test_a_session_shows_verdicts_feedback_answers_and_a_summary(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    # mc-def-sequence: B is right; mc-def-masked-set: B is the [MASK] distractor; then quit.
    result = run(db, ["B", "", "B", "", "q"], "--new", "3")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "bert-mlm · 1/3 · ✓0 ✗0 · new" in out
    assert "✓ Correct · read as B: The sequence of n tokens" in out
    assert "B. The [MASK] token itself." in out  # bank text printed literally, no markup
    assert "✗ Not quite · read as B: The [MASK] token itself." in out
    assert "[MASK] is the symbol put into the input" in out  # the distractor's feedback
    assert "Answer: C: The set of masked positions" in out
    assert "Why: M is the set of masked positions" in out  # the explanation
    assert "Rated good; next review in 10 min." in out
    assert "Rated again; next review in 1 min." in out
    assert "Session ended early" in out
    assert "Answered 2 · right 1 · partly 0 · wrong 1" in out
    assert "Missed: mc-def-masked-set" in out
    logged = rows(
        db, "SELECT item_id, verdict, rating, scheduled, response FROM attempt ORDER BY id"
    )
    assert logged == [
        ("mc-def-sequence", "correct", 3, 1, "B"),
        ("mc-def-masked-set", "incorrect", 1, 1, "B"),
    ]


def test_numeric_answer_typed_as_an_expression_shows_how_it_was_read_and_the_exact_key(
    tmp_path: Path,
) -> None:
    key = key_for("num-uniform-baseline")
    result = run(
        tmp_path / "p.sqlite3", [key.text, "", "q"], "--tag", "softmax", "--type", "numeric"
    )
    assert result.exit_code == 0, result.output
    vocab = re.search(r"ln (\d+)", key.text)
    assert vocab is not None and vocab.group(1) in result.output  # this review's variant number
    assert "✓ Correct · read as ln(" in result.output
    assert f"Answer: {key} nats" in result.output  # e.g. "ln 25000 ≈ 10.127 nats"
    # seed 7 draws vocab 40000; the bank's worked explanation uses the default 30000 and says so
    assert key.text == "ln 40000"
    assert "Why: (worked for vocab = 30000) Uniform means" in result.output


def test_a_known_wrong_number_gets_its_misconception_feedback(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    key = key_for("num-uniform-baseline")
    log10 = f"{key.number / 2.302585092994046:.4f}"  # the log-base-10 slip
    result = run(db, [log10, "", "q"], "--tag", "softmax", "--type", "numeric")
    assert "✗ Not quite" in result.output
    assert "This is a common mistake (log base)." in result.output  # a sentence, not a tag
    assert "misconception:" not in result.output and "log-base" not in result.output
    assert "Common mistakes you made: log base." in result.output
    assert rows(db, "SELECT tag, rating FROM attempt") == [("log-base", 1)]


def test_multi_part_numeric_grades_each_part_with_error_carried_forward(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    skips = ["s", ""] * 5  # the five numeric exercises before num-two-sentences
    # sentence1 wrong (5 ln 2 instead of 6 ln 2), sentence2 right, total right for that slip
    answers = [*skips, "5 ln 2", "2 ln 2", "7 ln 2", "", "q"]
    result = run(db, answers, "--type", "numeric", "--tag", "exercise", "--new", "9")
    out = result.output
    assert "(sentence1) L_MLM of sentence 1" in out
    assert "(sentence1) ✗ Not quite · read as 5*ln(2) ≈ 3.465736" in out
    assert "Answer: 6 ln 2 ≈ 4.1589 nats" in out
    assert "(sentence2) ✓ Correct" in out
    assert "(total) ✓ Correct · read as 7*ln(2)" in out
    assert "error carried forward" in out
    last = rows(db, "SELECT item_id, verdict, rating, response FROM attempt ORDER BY id DESC")[0]
    assert last[:3] == ("num-two-sentences", "partial", 2)  # 2 of 3 parts: Hard
    assert json.loads(last[3]) == {"sentence1": "5 ln 2", "sentence2": "2 ln 2", "total": "7 ln 2"}


def test_undo_takes_back_the_last_answer_and_asks_again(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    result = run(db, ["A", "u", "B", "", "q"], "--new", "2")
    assert "Undone: mc-def-sequence (incorrect); ask it again." in result.output
    logged = rows(db, "SELECT item_id, verdict FROM attempt")
    assert logged == [("mc-def-sequence", "correct")]
    card = rows(db, "SELECT state, due_ts FROM item WHERE item_id = 'mc-def-sequence'")
    assert card[0][0] == 1  # Learning after one Good, not the Again that was undone


def test_wrong_items_come_back_later_in_the_session(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    # wrong on item 1, right on 2 and 3, then item 1 returns and is answered right
    result = run(db, ["A", "", "C", "", "A", "", "B", "", "q"], "--new", "3")
    assert "bert-mlm · 4/4 · ✓2 ✗1 · again" in result.output
    logged = rows(db, "SELECT item_id, verdict FROM attempt ORDER BY id")
    assert logged[-1] == ("mc-def-sequence", "correct")
    assert len(logged) == 4


@pytest.mark.parametrize(
    ("answers", "verdict"),
    [(["!", ""], "revealed"), (["s", ""], "skipped")],
)
def test_reveal_and_skip_rate_again(tmp_path: Path, answers: list[str], verdict: str) -> None:
    db = tmp_path / "p.sqlite3"
    result = run(db, [*answers, "q"], "--new", "1")
    assert result.exit_code == 0
    assert rows(db, "SELECT verdict, rating FROM attempt") == [(verdict, 1)]
    if verdict == "revealed":
        assert "Answer: B: The sequence of n tokens" in result.output


def test_hint_then_right_is_rated_hard(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    result = run(db, ["?", "0", "", "q"], "--type", "numeric", "--limit", "1")
    assert "Hint: Count the terms of Σ_{i∈M} when M is empty." in result.output
    assert "Rated hard" in result.output
    assert rows(db, "SELECT rating, hints_used FROM attempt") == [(2, 1)]


def test_unreadable_answers_are_asked_again_not_graded(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    result = run(db, ["Z", "", "B", "", "q"], "--new", "1")
    assert "Your answer 'Z' is not one of the choices" in result.output
    assert "Type your answer, or ? hint" in result.output
    assert rows(db, "SELECT verdict FROM attempt") == [("correct",)]


def test_free_text_shows_model_answer_and_rubric_and_takes_the_students_mark(
    tmp_path: Path,
) -> None:
    db = tmp_path / "p.sqlite3"
    answer = "so the model keeps a good representation of the correct token"
    result = run(db, [answer, "", "", "q"], "--type", "free_text", "--limit", "1")
    out = result.output
    assert "Model answer:" in out and "Rubric:" in out
    assert "Your mark: 1 again · 2 hard · 3 good · 4 easy" in out
    first = rows(db, "SELECT verdict, rating, score, response FROM attempt")
    assert first[0][2] is None and first[0][3] == answer  # self-marked: no auto score


def test_eof_ends_cleanly_with_a_summary_and_keeps_every_answer(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    result = run(db, ["B", "", "C"], "--new", "5")  # input ends at a prompt
    assert result.exit_code == 0
    assert "Traceback" not in result.output and "Aborted" not in result.output
    assert "Session ended early" in result.output
    assert [r[0] for r in rows(db, "SELECT item_id FROM attempt ORDER BY id")] == [
        "mc-def-sequence",
        "mc-def-masked-set",
    ]
    assert rows(db, "SELECT ended_at IS NOT NULL FROM session") == [(1,)]


def test_easy_after_a_correct_answer(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    result = run(db, ["B", "e", "q"], "--new", "1")
    assert "Marked easy: next review in 8 days." in result.output
    assert rows(db, "SELECT rating FROM attempt") == [(4,)]


def test_ascii_terminal_gets_a_plain_fallback(tmp_path: Path) -> None:
    result = run(tmp_path / "p.sqlite3", ["B", "", "q"], "--new", "2", charset="ascii")
    assert result.exit_code == 0, result.output
    assert "L_MLM = -sum_{i in M} ln P(x_i | x_\\M)" in result.output
    assert "+ Correct" in result.output
    assert result.output.isascii()
    assert "+- bert-mlm * 1/2 * +0 x0 * new" in result.output  # ASCII box and marks


def test_no_color_is_respected(tmp_path: Path) -> None:
    coloured = run(tmp_path / "a.sqlite3", ["B", "", "q"], env={"FORCE_COLOR": "1"})
    plain = run(tmp_path / "b.sqlite3", ["B", "", "q"], env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\x1b[1;32m" in coloured.output  # green "Correct" on a colour terminal
    assert not re.search(r"\x1b\[[0-9;]*3[1-7]m", plain.output)


def test_filters_and_limits(tmp_path: Path) -> None:
    result = run(tmp_path / "p.sqlite3", ["q"], "--type", "true_false", "--new", "4")
    assert "bert-mlm · 1/4" in result.output
    assert "tf-bert-generates" in result.output


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--type", "essay"], {}, "Invalid value for '--type'"),
        (["nope.yaml"], {}, "Error: nope.yaml: no such file or bundled bank"),
        ([], {"QUIZGYM_NOW": "yesterday"}, "Error: QUIZGYM_NOW='yesterday' is not an ISO-8601"),
    ],
)
def test_usage_errors_are_one_line_exit_2(
    tmp_path: Path, args: list[str], env: dict[str, str], message: str
) -> None:
    result = run(tmp_path / "p.sqlite3", [], *args, env=env)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_a_file_that_is_not_a_progress_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    db.write_text("not sqlite at all\n" * 100)
    result = run(db, [])
    assert result.exit_code == 2
    assert result.output.startswith(f"Error: {db}: cannot open the progress database")
    assert len(result.output.splitlines()) == 1


def test_editing_a_question_keeps_its_progress(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    bank = tmp_path / "mini.yaml"
    text = (
        "bank: mini\ntitle: Mini\nquestions:\n"
        "  - id: tf-one\n    type: true_false\n    prompt: {prompt}\n    answer: true\n"
    )
    bank.write_text(text.format(prompt="BERT reads both sides."))
    run(db, ["t", "", "q"], str(bank))
    due_before = rows(db, "SELECT due_ts, content_sha FROM item")[0]
    bank.write_text(text.format(prompt="BERT reads context on both sides."))
    result = run(db, ["q"], str(bank), now="2026-01-05T10:01:00+00:00")
    assert "Answered 0" in result.output  # not new again, and not due yet (10 min step)
    due_after = rows(db, "SELECT due_ts, content_sha FROM item")[0]
    assert due_after[0] == due_before[0] and due_after[1] != due_before[1]


def test_stats_after_sessions(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    run(db, ["B", "", "B", "", "A", "", "q"], "--new", "3")
    result = CliRunner().invoke(
        cli, ["stats"], env={"QUIZGYM_DB": str(db), "QUIZGYM_NOW": T0, "COLUMNS": "100"}
    )
    assert result.exit_code == 0, result.output
    out = result.output
    all_row = next(line for line in out.splitlines() if line.startswith("│ all"))
    assert re.findall(r"\d+%|\d+", all_row)[:3] == ["70", "3", "67%"]
    assert "Missed most: mc-def-masked-set ×1" in out
    assert "Streak: 1 day" in out
    assert re.search(r"Due: today 3 ·", out)


def test_stats_lists_leeches(tmp_path: Path) -> None:
    # Lapses are counted by the drill (test_practice_schedule); here an item forgotten 9 times
    # after it was learned is a leech, one forgotten 7 times is not yet.
    db = tmp_path / "p.sqlite3"
    run(db, ["B", "", "B", "", "A", "", "q"], "--new", "3")
    seen = [item for (item,) in rows(db, "SELECT item_id FROM item ORDER BY card_id")][:2]
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE item SET lapses = 9 WHERE item_id = ?", (seen[0],))
        conn.execute("UPDATE item SET lapses = 7 WHERE item_id = ?", (seen[1],))
    env = {"QUIZGYM_DB": str(db), "QUIZGYM_NOW": T0, "COLUMNS": "200"}
    out = CliRunner().invoke(cli, ["stats"], env=env).output
    leeches = [line for line in out.splitlines() if line.startswith("Leeches: ")]
    assert leeches == [
        f"Leeches: {seen[0]} ×9 (forgotten 8+ times once learned: reread, rewrite or split them)"
    ]


def test_stats_on_an_empty_database(tmp_path: Path) -> None:
    (tmp_path / "new.sqlite3").touch()
    result = CliRunner().invoke(cli, ["stats", "--db", str(tmp_path / "new.sqlite3")])
    assert result.exit_code == 0
    assert result.output == "No progress yet: run quizgym practice first.\n"


def test_session_screen_golden(tmp_path: Path, update_goldens: bool) -> None:
    """A reproducible session (--seed, QUIZGYM_NOW) pinned as a golden screen."""
    answers = ["C", "", "f", "e", "t", "", "q"]
    result = run(tmp_path / "p.sqlite3", answers, "--type", "true_false", "--new", "3")
    golden = GOLDENS / "practice-session.txt"
    if update_goldens:
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(result.output)
    assert result.output == golden.read_text()
    assert json.loads(json.dumps(result.exit_code)) == 0


def test_the_header_counts_partly_right_items_apart() -> None:
    import io

    from rich.console import Console

    from quizgym.practice.ui import RichUI
    from quizgym.practice.views import ItemView

    out = io.StringIO()
    ui = RichUI(Console(file=out, width=80, color_system=None))
    view = ItemView("bert-mlm", "num-x", "numeric", 3, 5, right=1, wrong=0, new=False,
                    retry=False, prompt="P?", partial=1)  # fmt: skip
    ui.show_item(view)
    assert "bert-mlm · 3/5 · ✓1 ~1 ✗0" in out.getvalue()


# --- commit before show, per-answer isolation -----------------------------------------------

DATA = Path(__file__).parent / "data" / "practice"


def test_undo_at_a_later_part_takes_back_the_parts_already_saved(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    durable = str(DATA / "durable.yaml")
    # mc-two right, free text self-marked good, then part a of num-chain, then u at part b
    answers = ["B", "", "we rest", "3", "", "2", "u", "2", "3", "4", "", "q"]
    result = run(db, answers, durable, "--new", "3")
    assert result.exit_code == 0, result.output
    assert "Undone: num-chain (partial); ask it again." in result.output
    assert rows(db, "SELECT item_id, verdict, response FROM attempt ORDER BY id") == [
        ("mc-two", "correct", "B"),
        ("ft-why", "correct", "we rest"),
        ("num-chain", "correct", json.dumps({"a": "2", "b": "3", "c": "4"})),
    ]


def test_quitting_at_the_self_mark_keeps_the_answer_with_the_rubrics_suggestion(
    tmp_path: Path,
) -> None:
    db = tmp_path / "p.sqlite3"
    result = run(db, ["B", "", "rest and memory", "q"], str(DATA / "durable.yaml"))
    assert "Model answer: To rest" in result.output
    assert "Progress saved after every answer." in result.output
    assert rows(db, "SELECT item_id, verdict, rating, score FROM attempt ORDER BY id")[1:] == [
        ("ft-why", "correct", 3, None)  # both criteria met: Good, as suggested
    ]


def test_an_answer_the_engine_fails_on_is_reported_and_asked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quizgym.practice import drill

    real = drill.grade_response

    def failing(*args: object, **kwargs: object) -> object:
        if args[2] == "²":
            raise ValueError("invalid literal for int() with base 10: '²'")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(drill, "grade_response", failing)
    db = tmp_path / "p.sqlite3"
    result = run(db, ["²", "B", "", "q"], "--new", "1")
    assert result.exit_code == 0, result.output
    assert "Your answer could not be graded (ValueError: invalid literal" in result.output
    assert "✓ Correct" in result.output
    assert rows(db, "SELECT verdict, response FROM attempt") == [("correct", "B")]


# --- damaged, full and read-only databases --------------------------------------------------


def _stats(db: Path) -> Result:
    env = {"QUIZGYM_DB": str(db), "QUIZGYM_NOW": T0, "COLUMNS": "100"}
    return CliRunner().invoke(cli, ["stats"], env=env)


def _damage(db: Path) -> None:
    data = bytearray(db.read_bytes())
    for k in range(4096 + 100, len(data), 7):  # every page after the header page
        data[k] = 0xA5
    db.write_bytes(bytes(data))


def test_a_damaged_database_is_one_line_with_a_way_out_for_practice_and_stats(
    tmp_path: Path,
) -> None:
    db = tmp_path / "p.sqlite3"
    run(db, ["B", "", "q"], "--new", "1")
    _damage(db)
    for result in (run(db, ["B", "", "q"]), _stats(db)):
        assert result.exit_code == 2, result.output
        (line,) = result.output.splitlines()
        assert line.startswith(f"Error: {db}: cannot ")
        assert "database disk image is malformed" in line and "move it aside" in line
        assert "bug" not in line


def test_a_read_only_database_refuses_practice_before_any_question(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    run(db, ["B", "", "q"], "--new", "1")
    with read_only(db):
        result = run(db, ["B", "", "q"])
    assert result.exit_code == 2
    (line,) = result.output.splitlines()
    assert line.startswith(f"Error: {db}: cannot record the items of bert-mlm")
    assert "read-only" in line and "--db" in line


def test_stats_reads_a_database_on_read_only_media(tmp_path: Path) -> None:
    media = tmp_path / "media"
    media.mkdir()
    db = media / "p.sqlite3"
    run(db, ["B", "", "A", "", "q"], "--new", "2")
    before = _stats(db).output
    with read_only(db, media):
        result = _stats(db)
    assert result.exit_code == 0, result.output
    assert result.output == before
    assert "Missed most: mc-def-masked-set ×1" in result.output


def test_stats_on_a_missing_database_creates_nothing(tmp_path: Path) -> None:
    result = _stats(tmp_path / "none" / "p.sqlite3")
    assert result.exit_code == 0
    assert result.output == "No progress yet: run quizgym practice first.\n"
    assert list(tmp_path.iterdir()) == []


# --- terminal escapes -------------------------------------------------------------------------


def test_bank_text_with_escapes_is_shown_spelled_out(tmp_path: Path) -> None:
    result = run(tmp_path / "p.sqlite3", ["?", "B", "", "3", "", "q"], str(DATA / "hostile.yaml"))
    assert result.exit_code == 0, result.output
    assert [c for c in ("\x1b", "\x07", "\x9b", "\u202e", "\u2066") if c in result.output] == []
    assert "Pick the safe one.\\x1b]0;pwned\\x07 \\x1b[2J \\u202eevil" in result.output


def test_echoed_text_with_escapes_is_shown_spelled_out() -> None:
    import io

    from rich.console import Console

    from quizgym.practice.ui import RichUI

    out = io.StringIO()
    ui = RichUI(Console(file=out, width=80, color_system=None))
    ui.show_note("Your answer 'x\x1b]0;pwned\x07\u2067y' is not one of the choices")
    assert out.getvalue() == "Your answer 'x\\x1b]0;pwned\\x07\\u2067y' is not one of the choices\n"
