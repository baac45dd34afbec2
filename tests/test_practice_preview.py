"""The first prompt shown from the bank's preview, before the drill is loaded (practice/preview.py).

A drill whose bank has a preview in the cache must be, to the student and in the progress
database, the very drill it is without one: the same screens, verdicts, answers, times and
schedule. Each case drills the same answers twice from the same progress, once with the cache
off (the drill works everything out itself) and once with the preview, and compares both.
"""

from __future__ import annotations

import shutil
import signal as signal_module
from pathlib import Path
from typing import Any

import pytest
from practice_helpers import rows, run

import quizgym.practice.preview as first

HERE = Path(__file__).parent
BANK = HERE / "data" / "practice" / "first.yaml"
ATTEMPTS = (
    "SELECT item_id, response, verdict, score, rating, answered_at, duration_ms, scheduled,"
    " content_sha, tag, card_before, card_after FROM attempt ORDER BY id"
)

CASES = {
    # tag: answers typed (the first one at the first prompt)
    "choice": ["A", "", "q"],
    "several": ["A B", "", "q"],
    "statement": ["B", "", "q"],
    "parts": ["6", "4.8", "", "q"],
    "truth": ["t", "e", "q"],
    "words": ["more signal, enough context", "", "", "q"],
    "table": ["B", "", "q"],  # a table and a formula: drawn with what the screen imports then
    "drawn": ["9", "", "q"],  # numbers drawn: not previewed, the drill shows it itself
}


def _drill(
    tmp: Path, name: str, answers: list[str], *, cache: str, tag: str, **runner: Any
) -> tuple[str, list[tuple[Any, ...]]]:
    db = tmp / f"{name}.sqlite3"
    if (tmp / "before.sqlite3").exists():
        shutil.copy(tmp / "before.sqlite3", db)
    env = {"QUIZGYM_CACHE": cache, "QUIZGYM_CACHE_DIR": str(tmp / "cache")}
    result = run(db, answers, str(BANK), "--tag", tag, env=env, **runner)
    assert result.exit_code == 0, result.output
    return result.output, rows(db, ATTEMPTS)


def _record_shown(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The items whose first screen is shown from the preview, as the drills go."""
    shown: list[str] = []
    show = first.show_first

    def recording(found: Any, **kwargs: Any) -> first.Opening:
        opening = show(found, **kwargs)
        shown.append(opening.first.view.item_id)
        return opening

    monkeypatch.setattr(first, "show_first", recording)
    return shown


@pytest.mark.parametrize("tag", list(CASES))
def test_the_first_prompt_from_the_preview_is_the_drill_itself(
    tag: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = _record_shown(monkeypatch)
    answers = CASES[tag]
    plain = _drill(tmp_path, "plain", answers, cache="off", tag=tag)
    assert not shown
    _drill(tmp_path, "warm", ["q"], cache="on", tag=tag)  # the first drill keeps the preview
    assert not shown
    previewed = _drill(tmp_path, "previewed", answers, cache="on", tag=tag)
    assert previewed == plain  # every screen, every saved answer, time and card
    assert shown == ([] if tag == "drawn" else [plain[1][0][0]])
    assert plain[1], "the first answer was saved"


@pytest.mark.parametrize(
    ("tag", "formula"), [("choice", "L = -sum_{i in M} ln p_i"), ("table", "-ln p_?(x_i)")]
)
def test_an_ascii_terminal_is_shown_the_previewed_formulas_as_the_drill_shows_them(
    tag: str, formula: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The preview keeps each formula's text for both kinds of terminal (small scripts, and
    # plain ASCII): the first screen is drawn without the TeX reader, as the drill draws it.
    shown = _record_shown(monkeypatch)
    answers = CASES[tag]
    plain = _drill(tmp_path, "plain", answers, cache="off", tag=tag, charset="ascii")
    _drill(tmp_path, "warm", ["q"], cache="on", tag=tag)  # kept from a Unicode terminal
    previewed = _drill(tmp_path, "previewed", answers, cache="on", tag=tag, charset="ascii")
    assert previewed == plain
    assert shown == [plain[1][0][0]]
    assert formula in previewed[0] and previewed[0].isascii(), previewed[0]


def test_a_review_is_previewed_with_its_schedule_and_fresh_choice_order(tmp_path: Path) -> None:
    # An item answered before comes back due: the preview reads its card and its attempts
    # (each review draws its own choice order), as the drill does.
    env = {"QUIZGYM_CACHE": "on", "QUIZGYM_CACHE_DIR": str(tmp_path / "cache")}
    before = tmp_path / "before.sqlite3"
    done = run(before, ["B", "", "q"], str(BANK), "--tag", "choice", env=env)
    assert done.exit_code == 0, done.output
    later = "2026-02-05T10:00:00+00:00"
    outputs = []
    for cache in ("off", "on"):
        db = tmp_path / f"{cache}.sqlite3"
        shutil.copy(before, db)
        env["QUIZGYM_CACHE"] = cache
        result = run(db, ["A", "", "q"], str(BANK), "--tag", "choice", now=later, env=env)
        assert result.exit_code == 0, result.output
        outputs.append((result.output, rows(db, ATTEMPTS)))
    assert outputs[0] == outputs[1]
    assert "· new" not in outputs[1][0]  # a review, not a new item


def test_quitting_at_the_first_prompt_saves_nothing_and_says_so(tmp_path: Path) -> None:
    env = {"QUIZGYM_CACHE": "on", "QUIZGYM_CACHE_DIR": str(tmp_path / "cache")}
    run(tmp_path / "warm.sqlite3", ["q"], str(BANK), env=env)
    db = tmp_path / "p.sqlite3"
    result = run(db, [], str(BANK), env=env)  # end of input at the first prompt
    assert result.exit_code == 0, result.output
    assert "Session ended early" in result.output and "Answered 0" in result.output
    assert rows(db, "SELECT count(*) FROM attempt") == [(0,)]
    assert rows(db, "SELECT count(*) FROM session WHERE ended_at IS NOT NULL") == [(1,)]


def test_a_damaged_preview_is_never_trusted(tmp_path: Path) -> None:
    env = {"QUIZGYM_CACHE": "on", "QUIZGYM_CACHE_DIR": str(tmp_path / "cache")}
    plain = run(tmp_path / "a.sqlite3", ["A", "", "q"], str(BANK), env={"QUIZGYM_CACHE": "off"})
    run(tmp_path / "warm.sqlite3", ["q"], str(BANK), env=env)
    for path in (tmp_path / "cache").glob("*.json"):  # flip a byte of every file's body
        data = bytearray(path.read_bytes())
        data[-5] ^= 1
        path.write_bytes(bytes(data))
    again = run(tmp_path / "b.sqlite3", ["A", "", "q"], str(BANK), env=env)
    assert again.exit_code == 0, again.output
    assert again.output == plain.output


# --- when what was shown is not what the drill would ask ----------------------------------------

T_NOW = "2026-01-05T10:00:00+00:00"


def _warm(tmp: Path, bank: Path = BANK) -> dict[str, str]:
    env = {"QUIZGYM_CACHE": "on", "QUIZGYM_CACHE_DIR": str(tmp / "cache")}
    done = run(tmp / "warm.sqlite3", ["q"], str(bank), env=env)
    assert done.exit_code == 0, done.output
    return env


def _previews(tmp: Path) -> list[tuple[str, dict[str, Any]]]:
    """The preview records in the cache, with their keys."""
    from quizgym.solver.cache import read

    found = []
    for path in (tmp / "cache").glob("*.json"):
        key = path.read_bytes().partition(b"\n")[0].decode().split(" ")[1]
        stored = read(key, tmp / "cache")
        if stored is not None and stored.parts.get("format") == first.PREVIEW_FORMAT:
            found.append((key, stored.parts))
    return found


def _warm_with_other_hashes(tmp: Path) -> dict[str, str]:
    """A warm cache whose preview names other contents than the bank's (the screens alike)."""
    from quizgym.solver.cache import write

    env = _warm(tmp)
    ((key, record),) = _previews(tmp)
    for question in record["questions"]:
        question["sha"] = "0" * 16
    write(key, record, tmp / "cache")
    return env


def test_an_answer_to_a_question_changed_while_loading_is_not_used_and_asked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another drill on the same progress file answers the first item while this one loads: the
    # item is now a review with a fresh choice order, so the line typed at the first prompt
    # answered a screen the drill no longer asks. It must be neither graded nor lost silently.
    import quizgym.practice as practice_module
    from quizgym.practice.store import Answer, Store

    env = _warm(tmp_path)
    db = tmp_path / "p.sqlite3"
    load = practice_module._load

    def answered_meanwhile(names: Any) -> Any:
        from datetime import datetime

        from fsrs import Card, Rating, Scheduler

        other = Store.open(db)
        at = datetime.fromisoformat(T_NOW)
        session = other.start_session(banks=["first"], mode="review", now=at)
        (sha,) = rows(db, "SELECT content_sha FROM item WHERE item_id = 'mc-shuffled'")[0]
        scheduler = Scheduler(enable_fuzzing=False)
        answer = Answer(
            session_id=session, bank_id="first", item_id="mc-shuffled", content_sha=sha,
            answered_at=at, response="A", verdict="correct", score=1.0, rating=3,
        )  # fmt: skip
        other.record(
            answer,
            review=lambda before: scheduler.review_card(before or Card(), Rating.Good, at)[0],
        )
        other.close()
        return load(names)

    monkeypatch.setattr(practice_module, "_load", answered_meanwhile)
    result = run(db, ["C", "A", "", "q"], str(BANK), "--tag", "choice", env=env)
    assert result.exit_code == 0, result.output
    assert "changed while the drill was loading" in result.output
    assert "your answer “C” was not used" in result.output
    assert result.output.count("mc-shuffled ─") == 2  # shown again, as it is now
    assert "· new" in result.output.split("changed while")[0]  # first shown as a new item
    assert "· new" not in result.output.split("changed while")[1]  # then as the review it is
    # Only the other drill's answer and this one's second line: "C" was never graded.
    assert rows(db, "SELECT response FROM attempt ORDER BY id") == [("A",), ("A",)]


def test_a_preview_whose_content_hash_differs_from_the_bank_is_not_answered(
    tmp_path: Path,
) -> None:
    # The screen alone can be the same for two contents (an edit of the key only): the drill
    # takes the typed line only for the question whose content the preview was made from.
    env = _warm_with_other_hashes(tmp_path)
    db = tmp_path / "p.sqlite3"
    result = run(db, ["C", "A", "", "q"], str(BANK), "--tag", "choice", env=env)
    assert result.exit_code == 0, result.output
    assert "your answer “C” was not used" in result.output
    assert rows(db, "SELECT response FROM attempt") == [("A",)]
    # the items are recorded with the bank's own hashes, not the preview's
    assert rows(db, "SELECT count(*) FROM item WHERE content_sha = ?", "0" * 16) == [(0,)]


def test_q_at_the_first_prompt_quits_even_when_the_question_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _warm_with_other_hashes(tmp_path)
    db = tmp_path / "p.sqlite3"
    result = run(db, ["q"], str(BANK), "--tag", "choice", env=env)
    assert result.exit_code == 0, result.output
    assert "not used" not in result.output
    assert result.output.count("mc-shuffled ─") == 1
    assert "Session ended early" in result.output


@pytest.mark.parametrize("stop", ["eof", "ctrl-c while drawn"])
def test_stopping_at_the_first_screen_ends_the_session_with_its_summary_and_nothing_more(
    stop: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quizgym.practice.ui import RichUI

    env = _warm(tmp_path)
    if stop == "ctrl-c while drawn":
        show = RichUI.show_item
        calls: list[int] = []

        def interrupted(self: RichUI, view: Any) -> None:
            calls.append(1)
            if len(calls) == 1:
                raise KeyboardInterrupt
            show(self, view)

        monkeypatch.setattr(RichUI, "show_item", interrupted)
    db = tmp_path / "p.sqlite3"
    result = run(db, [], str(BANK), "--tag", "choice", env=env)
    assert result.exit_code == 0, result.output
    assert "Aborted" not in result.output
    assert "Session ended early" in result.output and "Answered 0" in result.output
    assert result.output.count("mc-shuffled ─") == (1 if stop == "eof" else 0)  # not again
    assert rows(db, "SELECT count(*) FROM session WHERE ended_at IS NOT NULL") == [(1,)]


# --- errors: before the first prompt, or never at the cost of an answer --------------------------


def test_a_locked_database_is_reported_before_the_first_prompt(tmp_path: Path) -> None:
    import sqlite3

    env = _warm(tmp_path)
    db = tmp_path / "p.sqlite3"
    assert run(db, ["q"], str(BANK), env={"QUIZGYM_CACHE": "off"}).exit_code == 0  # made
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another program keeps the write lock (5 s and more)
    try:
        result = run(db, ["A", "", "q"], str(BANK), "--tag", "choice", env=env)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code != 0
    assert "locked" in result.output
    assert "Your choice >" not in result.output  # nothing was asked


def test_a_missing_pack_is_reported_before_the_first_prompt_and_a_changed_one_is_reread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "bank"
    folder.mkdir()
    packs = HERE / "data" / "packs"
    bank = folder / "uses-physics.yaml"
    shutil.copy(packs / "uses-physics.yaml", bank)
    shutil.copy(packs / "physics.yaml", folder / "physics.yaml")
    env = _warm(tmp_path, bank)
    assert _previews(tmp_path)  # kept, with the pack's digest
    shown: list[str] = []
    show = first.show_first

    def recording(found: Any, **kwargs: Any) -> first.Opening:
        shown.append(found.view.item_id)
        return show(found, **kwargs)

    monkeypatch.setattr(first, "show_first", recording)
    fresh = run(tmp_path / "a.sqlite3", ["20", "", "q"], str(bank), env=env)
    assert fresh.exit_code == 0, fresh.output
    assert shown == ["energy"]  # the preview was used
    pack = folder / "physics.yaml"
    pack.write_text(pack.read_text().replace("m * v^2 / 2", "m * v^2"))  # the key changes
    changed = run(tmp_path / "b.sqlite3", ["18", "", "q"], str(bank), env=env)
    assert changed.exit_code == 0, changed.output
    assert shown == ["energy"]  # not from the preview: its pack is not the same
    assert rows(tmp_path / "b.sqlite3", "SELECT verdict FROM attempt") == [("correct",)]
    pack.unlink()
    missing = run(tmp_path / "c.sqlite3", ["18"], str(bank), env=env)
    assert missing.exit_code != 0
    assert "physics.yaml" in missing.output and "Your answer" not in missing.output


@pytest.mark.parametrize("error", ["QuizgymError", "RuntimeError"])
def test_an_error_while_loading_says_the_typed_answer_was_not_saved(
    error: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    import quizgym.practice as practice_module
    from quizgym.errors import QuizgymError

    env = _warm(tmp_path)
    threads: list[str] = []

    def failing(names: Any) -> Any:
        threads.append(threading.current_thread().name)
        raise (
            QuizgymError("the bank cannot be read")
            if error == "QuizgymError"
            else RuntimeError("a bug")
        )

    monkeypatch.setattr(practice_module, "_load", failing)
    db = tmp_path / "p.sqlite3"
    result = run(db, ["A", "", "q"], str(BANK), "--tag", "choice", env=env)
    assert threads == ["quizgym-drill-loader"]  # it failed in the background
    assert result.exit_code != 0
    assert "Your answer “A” to mc-shuffled was not saved" in result.output
    assert ("the bank cannot be read" if error == "QuizgymError" else "a bug") in result.output
    assert rows(db, "SELECT count(*) FROM attempt") == [(0,)]


def test_the_first_answer_is_timed_when_its_line_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The clock runs on by a second at each reading; what the drill does after Enter (loading,
    # recording the items) must not count towards the answer's time.
    from quizgym.practice import views
    from quizgym.practice.store import Store

    env = _warm(tmp_path)
    from datetime import datetime, timedelta

    ticks = [datetime.fromisoformat(T_NOW)]

    def clock() -> datetime:
        ticks[0] += timedelta(seconds=1)
        return ticks[0]

    monkeypatch.setattr(views, "clock_from", lambda _: clock)
    sync = Store.sync_items

    def slow(self: Store, *args: Any) -> Any:
        ticks[0] += timedelta(minutes=5)  # recording the items took long (again after Enter)
        return sync(self, *args)

    monkeypatch.setattr(Store, "sync_items", slow)
    db = tmp_path / "p.sqlite3"
    result = run(db, ["A", "", "q"], str(BANK), "--tag", "choice", env=env)
    assert result.exit_code == 0, result.output
    ((duration, answered),) = rows(db, "SELECT duration_ms, answered_at FROM attempt")
    assert duration < 5000, (duration, result.output)
    assert answered < "2026-01-05T10:10:00", answered  # one sync before the prompt, not two


CTRL_C_IN_THE_LOADER = """
import signal, sys, threading, time
from rich.console import Console
from quizgym.practice.preview import First, Loader, show_first
from quizgym.practice.ui import RichUI
from quizgym.practice.views import ItemView, utc_now

def load():
    time.sleep(0.3)  # the prompt is up, the main thread waits for a line
    # The student's Ctrl-C is delivered to this thread, not the main one (the OS may pick any
    # thread that does not block it): Python only records it for the main thread to act on.
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)
    time.sleep(30)
    return []

view = ItemView(bank="b", item_id="q", kind="true_false", position=1, total=1, right=0,
                wrong=0, partial=0, new=True, retry=False, prompt="Yes?", statement=None,
                choices=(), multiple=False)
first = First(view=view, slot=None, label="True or false? (t/f)", seed=1, sha="0")
now = utc_now()
opening = show_first(first, ui=RichUI(Console()), clock=utc_now, now=now, loader=Loader(load))
print("stopped by", type(opening.stopped).__name__, flush=True)
"""


@pytest.mark.skipif(not hasattr(signal_module, "pthread_kill"), reason="POSIX threads' signals")
def test_a_ctrl_c_delivered_to_the_loading_thread_stops_the_first_prompt() -> None:
    # The mechanism behind a Ctrl-C lost at the first prompt, made certain: blocked in input()
    # the main thread would sleep on, with the signal only recorded; the first prompt waits in
    # Python while the drill loads, so it acts on it within a few hundredths of a second.
    import os
    import subprocess
    import sys

    typing, typed = os.pipe()  # open, and nothing typed
    child = subprocess.Popen(
        [sys.executable, "-c", CTRL_C_IN_THE_LOADER],
        stdin=typing,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(typing)
    try:
        out, err = child.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        pytest.fail(f"the Ctrl-C was never acted on: {out}{err}")
    finally:
        os.close(typed)
    assert "stopped by KeyboardInterrupt" in out, (out, err)


def test_a_read_only_database_is_reported_before_the_first_prompt(tmp_path: Path) -> None:
    from practice_helpers import read_only

    env = _warm(tmp_path)
    db = tmp_path / "p.sqlite3"
    assert run(db, ["A", "", "q"], str(BANK), "--tag", "choice", env=env).exit_code == 0
    with read_only(db):
        result = run(db, ["A", "", "q"], str(BANK), "--tag", "choice", env=env)
    assert result.exit_code == 2, result.output
    (line,) = result.output.splitlines()  # the error, and nothing asked before it
    assert "cannot record the items of first" in line and "read-only" in line
