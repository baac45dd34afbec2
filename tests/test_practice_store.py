"""The progress store: schema versioning, one transaction per answer, undo and re-rating, two
drills on one file, and damaged, full or read-only files."""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fsrs import Card, Rating, Scheduler, State
from hypothesis import given, settings
from hypothesis import strategies as st
from practice_helpers import read_only

from quizgym.errors import QuizgymError
from quizgym.practice.store import (
    SCHEMA_VERSION,
    Answer,
    ItemInfo,
    Store,
    StoreError,
    default_db_path,
)

NOW = datetime(2026, 1, 5, 10, tzinfo=UTC)
SCHEDULER = Scheduler(enable_fuzzing=False)


def _store(path: Path | str) -> Store:
    store = Store.open(path)
    store.sync_items("bank", [ItemInfo("q1", "sha1", "true_false", ("t1",))])
    return store


def _answer(store: Store, rating: Rating, at: datetime, **changes: object) -> Answer:
    fields: dict[str, object] = {
        "session_id": store.start_session(banks=["bank"], mode="review", now=at),
        "bank_id": "bank",
        "item_id": "q1",
        "content_sha": "sha1",
        "answered_at": at,
        "response": "t",
        "verdict": "correct" if rating > 1 else "incorrect",
        "score": 1.0 if rating > 1 else 0.0,
        "rating": int(rating),
        "hints_used": 0,
        "duration_ms": 1200,
        **changes,
    }
    return Answer(**fields)  # type: ignore[arg-type]


def _reviewer(rating: Rating, at: datetime) -> Callable[[Card | None], Card]:
    """What the drill passes: schedule from whatever card the store read."""

    def review(before: Card | None) -> Card:
        card, _ = SCHEDULER.review_card(
            before or Card(card_id=1, due=at), rating, review_datetime=at
        )
        return card

    return review


def _record(store: Store, rating: Rating, at: datetime) -> int:
    return store.record(_answer(store, rating, at), review=_reviewer(rating, at)).attempt_id


def test_new_database_has_the_schema_version_and_tables(tmp_path: Path) -> None:
    _store(tmp_path / "p.sqlite3").close()
    with sqlite3.connect(tmp_path / "p.sqlite3") as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        names = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert names == {"item", "attempt", "session"}
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(QuizgymError, match="newer quizgym"):
        Store.open(path)
    with pytest.raises(QuizgymError, match="newer quizgym"):
        Store.read_only(path)


def test_another_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (x)")
    with pytest.raises(QuizgymError, match="not a quizgym progress database"):
        Store.open(path)


def test_default_location_follows_quizgym_db_then_platformdirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZGYM_DB", str(tmp_path / "x.sqlite3"))
    assert default_db_path() == tmp_path / "x.sqlite3"
    monkeypatch.delenv("QUIZGYM_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_db_path() == tmp_path / "data" / "quizgym" / "progress.sqlite3"


def test_each_answer_is_committed_and_visible_to_another_connection(tmp_path: Path) -> None:
    store = _store(tmp_path / "p.sqlite3")
    _record(store, Rating.Good, NOW)
    with sqlite3.connect(tmp_path / "p.sqlite3") as other:  # as a crash would leave it
        assert other.execute("SELECT count(*) FROM attempt").fetchone()[0] == 1
        assert other.execute("SELECT state FROM item").fetchone()[0] == State.Learning


def test_an_answer_not_due_is_logged_and_leaves_the_card(tmp_path: Path) -> None:
    store = _store(tmp_path / "p.sqlite3")
    _record(store, Rating.Good, NOW)
    card = store.row("bank", "q1").card
    logged = store.record(_answer(store, Rating.Again, NOW), review=lambda before: None)
    assert not logged.scheduled and logged.card_after == logged.card_before == card
    assert store.row("bank", "q1").card == card


def test_undo_restores_the_card_and_the_lapse_count(tmp_path: Path) -> None:
    store = _store(tmp_path / "p.sqlite3")
    _record(store, Rating.Easy, NOW)
    review = store.row("bank", "q1").card
    assert review is not None and review.state == State.Review
    lapse = _record(store, Rating.Again, review.due)
    assert store.row("bank", "q1").lapses == 1
    assert store.undo(lapse)
    row = store.row("bank", "q1")
    assert row.lapses == 0 and row.card is not None and row.card.due == review.due
    assert store.attempt_count("bank", "q1") == 1


def test_revising_moves_the_card_from_the_attempts_card_before(tmp_path: Path) -> None:
    store = _store(tmp_path / "p.sqlite3")
    attempt_id = _record(store, Rating.Good, NOW)
    easy = _answer(store, Rating.Easy, NOW)
    logged = store.revise(attempt_id, easy, review=_reviewer(Rating.Easy, NOW))
    card = store.row("bank", "q1").card
    assert card is not None and card.due - NOW == timedelta(days=8)
    assert logged.card == card and not logged.overtaken
    assert store.attempt_count("bank", "q1") == 1


def test_revising_a_lapse_into_a_pass_takes_the_lapse_back(tmp_path: Path) -> None:
    # A multi-part answer is saved after its first part (wrong: Again, a lapse) and revised
    # when the other parts are right (Hard): the lapse must not stay counted.
    store = _store(tmp_path / "p.sqlite3")
    _record(store, Rating.Easy, NOW)
    review = store.row("bank", "q1").card
    assert review is not None
    attempt_id = _record(store, Rating.Again, review.due)
    assert store.row("bank", "q1").lapses == 1
    store.revise(
        attempt_id,
        _answer(store, Rating.Hard, review.due),
        review=_reviewer(Rating.Hard, review.due),
    )
    assert store.row("bank", "q1").lapses == 0


def test_editing_text_keeps_the_card_and_updates_the_hash(tmp_path: Path) -> None:
    store = _store(tmp_path / "p.sqlite3")
    _record(store, Rating.Good, NOW)
    rows = store.sync_items("bank", [ItemInfo("q1", "sha2", "true_false", ("t1", "t2"))])
    assert rows["q1"].card is not None and rows["q1"].content_sha == "sha2"


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([Rating.Again, Rating.Hard, Rating.Good, Rating.Easy]), max_size=6))
def test_undoing_every_answer_returns_to_new(ratings: list[Rating]) -> None:
    store = Store.open(":memory:")
    store.sync_items("bank", [ItemInfo("q1", "sha1", "true_false")])
    ids, at = [], NOW
    for rating in ratings:
        ids.append(_record(store, rating, at))
        at = max(at, store.row("bank", "q1").card.due)  # type: ignore[union-attr]
    for attempt_id in reversed(ids):
        assert store.undo(attempt_id)
    row = store.row("bank", "q1")
    assert row.card is None and row.lapses == 0


# --- two drills on one file -----------------------------------------------------------------


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[Store, Store]]:
    """Two connections on one file, as two drills in two terminals have."""
    first = _store(tmp_path / "p.sqlite3")
    second = Store.open(tmp_path / "p.sqlite3")
    yield first, second
    first.close()
    second.close()


def test_a_second_drill_builds_on_the_first_drills_review(two: tuple[Store, Store]) -> None:
    first, second = two
    stale = second.row("bank", "q1").card  # read before the first drill answers
    assert stale is None
    a = first.record(_answer(first, Rating.Good, NOW), review=_reviewer(Rating.Good, NOW))
    later = NOW + timedelta(minutes=10)
    b = second.record(_answer(second, Rating.Good, later), review=_reviewer(Rating.Good, later))
    assert b.card_before == a.card_after  # read inside the write, not the stale copy
    card = first.row("bank", "q1").card
    assert card is not None and card.state == State.Review  # Good, then Good on its step
    assert card == b.card_after


def test_undo_in_one_drill_does_not_reset_the_others_card(two: tuple[Store, Store]) -> None:
    first, second = two
    a = _record(first, Rating.Good, NOW)
    b = _record(second, Rating.Again, NOW + timedelta(minutes=1))
    theirs = first.row("bank", "q1").card
    assert not first.undo(a)  # the card is the second drill's now: refused, nothing changes
    assert first.row("bank", "q1").card == theirs
    assert first.attempt_count("bank", "q1") == 2
    assert second.undo(b)  # its own, still current: undone, back to the first drill's card
    assert first.undo(a)  # and now the first drill's is the last again
    assert first.row("bank", "q1").card is None


def test_a_revision_after_another_drills_review_changes_only_the_log(
    two: tuple[Store, Store],
) -> None:
    first, second = two
    a = _record(first, Rating.Again, NOW)  # part 1 of 3 wrong, saved
    _record(second, Rating.Good, NOW + timedelta(minutes=1))
    theirs = first.row("bank", "q1").card
    revised = _answer(first, Rating.Hard, NOW, verdict="partial", response='{"a": "1"}')
    logged = first.revise(a, revised, review=_reviewer(Rating.Hard, NOW))
    assert logged.overtaken and logged.card == theirs
    assert first.row("bank", "q1").card == theirs
    with sqlite3.connect(first.path) as conn:
        assert conn.execute(
            "SELECT verdict, rating FROM attempt WHERE id = ?", (a,)
        ).fetchone() == (
            "partial",
            2,
        )


# --- damaged, full and read-only files ------------------------------------------------------


def _one_line(error: StoreError, path: Path) -> str:
    message = str(error)
    assert "\n" not in message and message.startswith(f"{path}: cannot ")
    assert "bug" not in message
    return message


def test_a_full_database_is_one_line_and_keeps_everything_before(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    store = _store(path)
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages}")  # the file may not grow: "full"
    saved, at = 0, NOW
    with pytest.raises(StoreError) as caught:
        for _ in range(1000):
            _record(store, Rating.Good, at)
            saved += 1
            at += timedelta(days=30)
    message = _one_line(caught.value, path)
    assert "cannot save your answer to q1 (database or disk is full)" in message
    assert "free some space" in message
    assert not store.conn.in_transaction
    assert store.attempt_count("bank", "q1") == saved  # the failed one rolled back whole


def _damage(path: Path) -> None:
    """Overwrite the middle of the file (not its header), as a bad sector or a cut copy would."""
    data = bytearray(path.read_bytes())
    for k in range(4096 + 100, len(data), 7):
        data[k] = 0xA5
    path.write_bytes(bytes(data))


def _populated(path: Path) -> None:
    store = _store(path)
    _record(store, Rating.Good, NOW)
    store.sync_items("bank", [ItemInfo(f"q{k}", "sha", "true_false") for k in range(200)])
    store.close()  # checkpointed: everything is in the main file


def test_a_damaged_database_is_one_line_naming_the_file_with_a_way_out(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    _populated(path)
    _damage(path)
    with pytest.raises(StoreError) as caught:
        store = Store.open(path)
        store.rows(bank_id="bank")
        store.sync_items("bank", [ItemInfo("q1", "sha1", "true_false")])
    message = _one_line(caught.value, path)
    assert "malformed" in message and "move it aside" in message


def test_a_file_that_is_not_sqlite_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    path.write_bytes(b"\x89PNG\r\n" + bytes(8000))
    for open_it in (Store.open, Store.read_only):
        with pytest.raises(StoreError) as caught:
            open_it(path)
        assert "file is not a database" in _one_line(caught.value, path)


def test_a_damaged_card_is_one_line_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    _store(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE item SET fsrs_card = '{not json'")
    with pytest.raises(StoreError) as caught:
        Store.open(path).rows(bank_id="bank")
    assert "an item's card cannot be read" in _one_line(caught.value, path)


def test_a_read_only_file_refuses_answers_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    _populated(path)
    with read_only(path), pytest.raises(StoreError) as caught:
        _store(path)
    message = _one_line(caught.value, path)
    assert "readonly database" in message and "read-only" in message


@pytest.mark.parametrize("folder_too", [False, True], ids=["file", "folder"])
def test_stats_reads_a_database_on_read_only_media(tmp_path: Path, folder_too: bool) -> None:
    media = tmp_path / "media"
    media.mkdir()
    path = media / "p.sqlite3"
    _populated(path)
    # with the folder read-only too, no -shm or -wal file can be made beside it: immutable
    with read_only(path, *([media] if folder_too else [])):
        store = Store.read_only(path)
        assert store is not None
        assert len(store.rows(bank_id="bank")) == 200
        assert store.attempt_count("bank", "q1") == 1
        with pytest.raises(StoreError, match="readonly database"):
            store.sync_items("bank", [ItemInfo("q-new", "sha", "true_false")])
        store.close()
        if folder_too:
            assert [p.name for p in media.iterdir()] == ["p.sqlite3"]


def test_read_only_opening_creates_nothing(tmp_path: Path) -> None:
    assert Store.read_only(tmp_path / "none.sqlite3") is None
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "empty.sqlite3").touch()
    assert Store.read_only(tmp_path / "empty.sqlite3") is None
    assert (tmp_path / "empty.sqlite3").stat().st_size == 0


def test_ctrl_c_during_a_write_comes_after_the_commit(tmp_path: Path) -> None:
    store = _store(tmp_path / "p.sqlite3")
    insert = "INSERT INTO session (banks, mode, started_at) VALUES ('b', 'review', 'x')"
    with pytest.raises(KeyboardInterrupt), store.transaction() as conn:
        os.kill(os.getpid(), signal.SIGINT)  # arrives mid-transaction: held until COMMIT
        conn.execute(insert)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert not store.conn.in_transaction
    with sqlite3.connect(tmp_path / "p.sqlite3") as other:
        assert other.execute("SELECT count(*) FROM session").fetchone()[0] == 1


RACE = """
import sys, time
from quizgym.practice.store import Store
at = float(sys.argv[2])
while time.time() < at:
    pass
Store.open(sys.argv[1]).close()
"""


def test_two_drills_starting_at_once_on_a_new_file_both_open_it(tmp_path: Path) -> None:
    # The second drill waits for the first's write lock while it creates the schema, then finds
    # the schema there: it must open the file, not call it damaged.
    import subprocess
    import sys
    import time

    for round_ in range(4):
        db = tmp_path / f"progress-{round_}.sqlite3"
        at = str(time.time() + 0.5)  # both past their imports, then off at the same instant
        runs = [
            subprocess.Popen(
                [sys.executable, "-c", RACE, str(db), at], stderr=subprocess.PIPE, text=True
            )
            for _ in range(2)
        ]
        for run in runs:
            _, err = run.communicate(timeout=60)
            assert run.returncode == 0, err
        assert Store.read_only(db) is not None
