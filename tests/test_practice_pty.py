"""The real program in a pseudo-terminal: killed at any prompt it loses no answer it has graded.

Every test here runs the installed ``quizgym`` command as a child process (pexpect), as a
student would, and reads what it left in the progress database with a separate connection.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pexpect
import pytest
from practice_helpers import T0, rows

QUIZGYM = Path(sys.executable).with_name("quizgym")
DATA = Path(__file__).parent / "data" / "practice"
DURABLE = DATA / "durable.yaml"


def _env(db: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "QUIZGYM_DB": str(db),
        "QUIZGYM_NOW": T0,
        "TERM": "dumb",
        "NO_COLOR": "1",
        "COLUMNS": "100",
        **extra,
    }


@contextmanager
def _drill(db: Path, *args: str, **env: str) -> Iterator[pexpect.spawn]:
    child = pexpect.spawn(
        str(QUIZGYM),
        ["practice", "--seed", "1", *args],
        env=_env(db, **env),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 100),
    )
    try:
        yield child
    finally:
        child.close(force=True)


def test_sigkill_mid_session_keeps_every_answer_given(tmp_path: Path) -> None:
    db = tmp_path / "progress.sqlite3"
    with _drill(db, "--seed", "3", "--new", "5") as child:
        child.expect_exact("Your choice > ")
        child.sendline("B")  # mc-def-sequence: right
        child.expect_exact("✓ Correct")
        child.expect_exact("Enter: next")
        child.sendline("")
        child.expect_exact("Your choice > ")
        child.sendline("A")  # mc-def-masked-set: wrong
        child.expect_exact("✗ Not quite")
        child.expect_exact("Enter: next")
        child.sendline("")
        child.expect_exact("Your choice > ")
        child.sendline("A")  # mc-def-corrupted-input: right; killed before pressing Enter
        child.expect_exact("Rated good")
        child.expect_exact("Enter: next")
        child.kill(signal.SIGKILL)
        child.wait()
        assert child.signalstatus == signal.SIGKILL
    assert rows(db, "SELECT item_id, verdict, response FROM attempt ORDER BY id") == [
        ("mc-def-sequence", "correct", "B"),
        ("mc-def-masked-set", "incorrect", "A"),
        ("mc-def-corrupted-input", "correct", "A"),
    ]
    states = rows(
        db, "SELECT item_id, state FROM item WHERE fsrs_card IS NOT NULL ORDER BY card_id"
    )
    assert [item for item, _ in states] == [
        "mc-def-sequence",
        "mc-def-masked-set",
        "mc-def-corrupted-input",
    ]
    assert rows(db, "SELECT ended_at FROM session") == [(None,)]  # killed: never ended


# --- SIGKILL at every prompt of a session -----------------------------------------------------

# One session over the durable bank, prompt by prompt: (the prompt's name, what is on screen
# when it waits, what the student types). The screen text includes every verdict or model
# answer shown since the previous prompt, so waiting for it means the student has seen them.
SESSION: list[tuple[str, tuple[str, ...], str]] = [
    ("choice", ("Your choice > ",), "B"),
    ("choice-next", ("✓ Correct", "Enter: next · e easy · u undo · q quit > "), ""),
    ("free-text", ("Your answer (one line) > ",), "we rest"),
    ("self-mark", ("Model answer: To rest", "Your mark: 1 again · 2 hard"), "3"),
    ("free-text-next", ("Rated good", "Enter: next · e easy · u undo · q quit > "), ""),
    ("part-a", ("(a) one plus one", "a = > "), "2"),
    ("part-b", ("(a) ✓ Correct", "(b) a plus one", "b = > "), "5"),
    ("part-c", ("(b) ✗ Not quite", "(c) b plus one", "c = > "), "4"),
    ("parts-next", ("(c) ✓ Correct", "Rated hard", "Enter: next · u undo · q quit > "), ""),
    ("true-false", ("True or false? (t/f) > ",), "t"),
    ("true-false-next", ("✓ Correct", "Enter: next · e easy · u undo · q quit > "), ""),
]
PROMPTS = [name for name, _, _ in SESSION]

CHOICE = ("mc-two", "correct", 3, "B")
SUGGESTED = ("ft-why", "partial", 2, "we rest")  # the rubric's suggestion (1 of 2 criteria)
SELF_MARKED = ("ft-why", "correct", 3, "we rest")  # after the student's own mark
TRUE_FALSE = ("tf-last", "correct", 3, "t")


def _parts(verdict: str, rating: int, **answers: str) -> tuple[Any, ...]:
    return ("num-chain", verdict, rating, json.dumps(answers))


# What the database must hold when the drill is killed at each prompt: every answer whose
# verdict (or model answer) is on screen, with the grade it had when it was shown. Parts not
# yet answered count as no answer (2 of 3 parts right is Hard, 1 of 3 is Again).
SAVED: dict[str, list[tuple[Any, ...]]] = {
    "choice": [],
    "choice-next": [CHOICE],
    "free-text": [CHOICE],
    "self-mark": [CHOICE, SUGGESTED],
    "free-text-next": [CHOICE, SELF_MARKED],
    "part-a": [CHOICE, SELF_MARKED],
    "part-b": [CHOICE, SELF_MARKED, _parts("partial", 1, a="2")],
    "part-c": [CHOICE, SELF_MARKED, _parts("partial", 1, a="2", b="5")],
    "parts-next": [CHOICE, SELF_MARKED, _parts("partial", 2, a="2", b="5", c="4")],
    "true-false": [CHOICE, SELF_MARKED, _parts("partial", 2, a="2", b="5", c="4")],
    "true-false-next": [
        CHOICE,
        SELF_MARKED,
        _parts("partial", 2, a="2", b="5", c="4"),
        TRUE_FALSE,
    ],
}


def _drive_to(child: pexpect.spawn, prompt: str) -> None:
    """Answer every prompt before ``prompt``; return once ``prompt`` is waiting for input."""
    for name, screen, typed in SESSION:
        for text in screen:
            child.expect_exact(text)
        if name == prompt:
            return
        child.sendline(typed)


def _saved(db: Path) -> list[tuple[Any, ...]]:
    return rows(db, "SELECT item_id, verdict, rating, response FROM attempt ORDER BY id")


def _assert_cards_follow_the_log(db: Path) -> None:
    """Each answered item's card is the one its last attempt wrote: seen items are not new."""
    last = rows(
        db,
        "SELECT item_id, card_after FROM attempt a WHERE id ="
        " (SELECT max(id) FROM attempt b WHERE b.item_id = a.item_id) ORDER BY id",
    )
    cards = dict(rows(db, "SELECT item_id, fsrs_card FROM item WHERE fsrs_card IS NOT NULL"))
    assert cards == dict(last)


@pytest.mark.parametrize("prompt", PROMPTS)
def test_sigkill_at_any_prompt_loses_no_answer_whose_verdict_was_shown(
    tmp_path: Path, prompt: str
) -> None:
    db = tmp_path / "progress.sqlite3"
    with _drill(db, str(DURABLE)) as child:
        _drive_to(child, prompt)
        child.kill(signal.SIGKILL)
        child.wait()
        assert child.signalstatus == signal.SIGKILL
    assert _saved(db) == SAVED[prompt]
    _assert_cards_follow_the_log(db)


@pytest.mark.parametrize("prompt", ["self-mark", "part-b"])
def test_ctrl_c_at_the_self_mark_or_between_parts_keeps_what_was_shown(
    tmp_path: Path, prompt: str
) -> None:
    db = tmp_path / "progress.sqlite3"
    with _drill(db, str(DURABLE)) as child:
        _drive_to(child, prompt)
        child.sendintr()
        child.expect_exact("Session ended early")
        child.expect_exact("Progress saved after every answer.")
        child.expect(pexpect.EOF)
        output = child.before
        child.close()
        assert child.exitstatus == 0
    assert "Traceback" not in output
    assert _saved(db) == SAVED[prompt]
    assert rows(db, "SELECT ended_at IS NOT NULL FROM session") == [(1,)]


def test_ctrl_c_ends_the_session_cleanly_with_a_summary(tmp_path: Path) -> None:
    db = tmp_path / "progress.sqlite3"
    with _drill(db, "--seed", "3") as child:
        child.expect_exact("Your choice > ")
        child.sendline("B")
        child.expect_exact("Enter: next")
        child.sendintr()
        child.expect_exact("Session ended early")
        child.expect(pexpect.EOF)
        output = child.before
        child.close()
        assert child.exitstatus == 0
    assert "Traceback" not in output
    assert rows(db, "SELECT item_id FROM attempt") == [("mc-def-sequence",)]


# --- two drills on one database ---------------------------------------------------------------


def test_two_drills_on_one_database_keep_both_reviews_and_undo_only_their_own(
    tmp_path: Path,
) -> None:
    db = tmp_path / "progress.sqlite3"
    one_item = (str(DURABLE), "--new", "1")
    a_minute_later = "2026-01-05T10:01:00+00:00"
    with (
        _drill(db, *one_item) as first,
        _drill(db, *one_item, QUIZGYM_NOW=a_minute_later) as second,
    ):
        # Both drills have read mc-two as new before either answers it.
        first.expect_exact("Your choice > ")
        second.expect_exact("Your choice > ")
        first.sendline("B")
        first.expect_exact("Enter: next")
        second.sendline("B")  # reviews the card the first drill wrote: its 10-minute step
        second.expect_exact("Enter: next")
        first.sendline("u")  # the card is now the second drill's: undo must not reset it
        first.expect_exact("another drill has answered mc-two since")
        logged = rows(db, "SELECT card_before, card_after FROM attempt ORDER BY id")
        assert len(logged) == 2
        assert json.loads(logged[1][0]) == json.loads(logged[0][1])  # read inside its write
        (state,) = rows(db, "SELECT state FROM item WHERE item_id = 'mc-two'")[0]
        assert state == 2  # Good on the learning step graduated it to Review
        second.sendline("u")  # its own last answer, still the card's: undone
        second.expect_exact("Undone: mc-two (correct)")
        card = rows(db, "SELECT fsrs_card FROM item WHERE item_id = 'mc-two'")[0][0]
        assert json.loads(card) == json.loads(logged[0][1])  # back to the first drill's card
        assert len(rows(db, "SELECT id FROM attempt")) == 1


# --- terminal escapes in bank text ------------------------------------------------------------

HOSTILE = DATA / "hostile.yaml"
# What would drive a terminal: ESC (OSC/CSI sequences), BEL, 8-bit CSI, bidi override/isolates.
OBEYED = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\u2069")


def test_bank_text_cannot_retitle_clear_or_reorder_the_terminal(tmp_path: Path) -> None:
    db = tmp_path / "progress.sqlite3"
    with _drill(db, str(HOSTILE)) as child:
        screen: list[str] = []
        child.logfile_read = _Collect(screen)
        child.expect_exact("Your choice > ")
        child.sendline("?")  # the hint
        child.expect_exact("Your choice > ")
        child.sendline("B")  # the wrong choice: its feedback
        child.expect_exact("Enter: next")
        child.sendline("")
        child.expect_exact("Your answer in nats\\x1b]0;pwned\\x07 > ")  # escaped, not obeyed
        child.sendline("3")  # wrong: the answer, its units and the explanation
        child.expect_exact("Enter: next")
        child.sendline("q")
        child.expect_exact("Session ended early")
        child.expect(pexpect.EOF)
    shown = "".join(screen)
    assert [c for c in OBEYED if c in shown] == []
    # escaped, not hidden: the author can see what the bank holds
    assert "Pick the safe one.\\x1b]0;pwned\\x07 \\x1b[2J \\u202eevil" in shown
    assert "A hint \\x1b[2J\\u2066here\\u2069." in shown
    assert "No \\x1b[2J\\x9b1m." in shown
    assert "Because \\x1b]0;pwned\\x07 it is." in shown
    assert "nats\\x1b]0;pwned\\x07" in shown
    assert "Two \\u202eowt." in shown


class _Collect:
    """A pexpect log that keeps everything the child printed."""

    def __init__(self, into: list[str]) -> None:
        self.into = into

    def write(self, text: str) -> None:
        self.into.append(text)

    def flush(self) -> None:
        pass


# --- a disk that fills up mid-session ---------------------------------------------------------


def _limit_file_size(limit: int) -> None:
    # A write past RLIMIT_FSIZE fails with EFBIG, as on a full disk, once SIGXFSZ (which would
    # kill the process) is ignored; SQLite then reports a disk I/O error.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_disk_that_fills_up_stops_the_drill_with_one_line_and_no_unsaved_verdict(
    tmp_path: Path,
) -> None:
    bank = tmp_path / "many.yaml"
    items = "".join(
        f"  - {{id: tf-{k:02d}, type: true_false, prompt: Statement {k}., answer: true}}\n"
        for k in range(40)
    )
    bank.write_text(f"bank: many\ntitle: Many\nquestions:\n{items}")
    db = tmp_path / "progress.sqlite3"
    answers = "t\n\n" * 40
    limit = 48 * 1024  # room for the -shm index (32 KiB) and a few pages of write-ahead log
    done = subprocess.run(
        [str(QUIZGYM), "practice", str(bank), "--seed", "1", "--new", "40", "--limit", "40"],
        input=answers,
        capture_output=True,
        text=True,
        env=_env(db),
        preexec_fn=lambda: _limit_file_size(limit),
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    saved = [item for (item,) in rows(db, "SELECT item_id FROM attempt ORDER BY id")]
    assert 0 < len(saved) < 40
    # every verdict shown was saved, and the one that could not be saved was never shown
    assert done.stdout.count("✓ Correct") == len(saved)
    unsaved = f"tf-{len(saved):02d}"
    assert f"Not saved: your answer to {unsaved}" in done.stdout
    assert "Progress saved after every answer." not in done.stdout
    error = done.stderr.splitlines()
    assert len(error) == 1, done.stderr
    assert error[0].startswith(f"Error: {db}: cannot save your answer to {unsaved} (disk I/O")
    assert "Free some space" in error[0]
    assert "bug" not in error[0]


# --- the first prompt shown from the bank's preview while the drill loads ----------------------

FIRST = DATA / "first.yaml"


def _warm_cache(tmp: Path) -> dict[str, str]:
    """An environment whose cache holds first.yaml's compiled bank and preview."""
    cache = {"QUIZGYM_CACHE": "on", "QUIZGYM_CACHE_DIR": str(tmp / "cache")}
    with _drill(tmp / "warm.sqlite3", str(FIRST), "--tag", "choice", **cache) as child:
        child.expect_exact("Your choice > ")
        child.sendline("q")
        child.expect(pexpect.EOF)
    assert any((tmp / "cache").glob("*.json"))
    return cache


@pytest.mark.parametrize("term", ["dumb", "xterm"])  # input() plain, and through readline
def test_ctrl_c_as_soon_as_the_first_prompt_shows_ends_the_drill_every_time(
    tmp_path: Path, term: str
) -> None:
    # The drill is loading in another thread when the prompt appears: a Ctrl-C then must end
    # the session at once, as at any prompt, never leave it waiting for a line. (Blocking in
    # input() at once lost it now and then; see also test_practice_preview.py for the mechanism.)
    cache = _warm_cache(tmp_path)
    for attempt in range(6):
        db = tmp_path / f"p{attempt}.sqlite3"
        with _drill(db, str(FIRST), "--tag", "choice", TERM=term, **cache) as child:
            child.expect_exact("Your choice > ")
            child.sendintr()
            child.expect_exact("Session ended early", timeout=10)
            child.expect(pexpect.EOF, timeout=10)
            output = child.before
            child.close()
            assert child.exitstatus == 0, output
        assert "Traceback" not in output and "Aborted" not in output
        assert rows(db, "SELECT count(*) FROM attempt") == [(0,)]
        assert rows(db, "SELECT ended_at IS NOT NULL FROM session") == [(1,)]


@pytest.mark.parametrize("term", ["dumb", "xterm"])
def test_an_answer_typed_while_the_drill_loads_is_graded_and_echoed_once(
    tmp_path: Path, term: str
) -> None:
    cache = _warm_cache(tmp_path)
    db = tmp_path / "p.sqlite3"
    seen: list[str] = []
    with _drill(db, str(FIRST), "--tag", "choice", TERM=term, **cache) as child:
        child.logfile_read = _Collect(seen)
        child.expect_exact("Your choice > ")
        child.send("Q")  # typed at once, before the drill has loaded …
        child.send("\x7f")  # … corrected (Backspace) …
        child.sendline("A")
        child.expect_exact("Enter: next")
        child.sendline("q")
        child.expect(pexpect.EOF)
    shown = "".join(seen)
    assert rows(db, "SELECT item_id, response FROM attempt") == [("mc-shuffled", "A")]
    after = shown.split("Your choice > ", 1)[1].split("\n", 1)[0]
    assert after.replace("\r", "").rstrip().endswith("A") and "AA" not in after, repr(after)
