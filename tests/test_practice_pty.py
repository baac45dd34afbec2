"""The real program in a pseudo-terminal, killed with SIGKILL mid-session: no answer is lost."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pexpect
from practice_helpers import T0, rows

QUIZGYM = Path(sys.executable).with_name("quizgym")


def test_sigkill_mid_session_keeps_every_answer_given(tmp_path: Path) -> None:
    db = tmp_path / "progress.sqlite3"
    env = {
        **os.environ,
        "QUIZGYM_DB": str(db),
        "QUIZGYM_NOW": T0,
        "TERM": "dumb",
        "NO_COLOR": "1",
        "COLUMNS": "100",
    }
    child = pexpect.spawn(
        str(QUIZGYM),
        ["practice", "--seed", "3", "--new", "5"],
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 100),
    )
    try:
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
    finally:
        child.close(force=True)
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


def test_ctrl_c_ends_the_session_cleanly_with_a_summary(tmp_path: Path) -> None:
    db = tmp_path / "progress.sqlite3"
    env = {**os.environ, "QUIZGYM_DB": str(db), "QUIZGYM_NOW": T0, "TERM": "dumb", "NO_COLOR": "1"}
    child = pexpect.spawn(
        str(QUIZGYM), ["practice", "--seed", "3"], env=env, encoding="utf-8", timeout=60
    )
    try:
        child.expect_exact("Your choice > ")
        child.sendline("B")
        child.expect_exact("Enter: next")
        child.sendintr()
        child.expect_exact("Session ended early")
        child.expect(pexpect.EOF)
        output = child.before
    finally:
        child.close()
    assert child.exitstatus == 0
    assert "Traceback" not in output
    assert rows(db, "SELECT item_id FROM attempt") == [("mc-def-sequence",)]
