"""The progress store: schema versioning, one transaction per answer, undo and re-rating."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fsrs import Card, Rating, Scheduler, State
from hypothesis import given, settings
from hypothesis import strategies as st

from quizgym.errors import QuizgymError
from quizgym.practice.store import SCHEMA_VERSION, Attempt, ItemInfo, Store, default_db_path

NOW = datetime(2026, 1, 5, 10, tzinfo=UTC)
SCHEDULER = Scheduler(enable_fuzzing=False)


def _store(tmp_path: Path) -> Store:
    store = Store.open(tmp_path / "p.sqlite3")
    store.sync_items("bank", [ItemInfo("q1", "sha1", "true_false", ("t1",))])
    return store


def _attempt(store: Store, card_before: Card | None, rating: Rating, at: datetime) -> Attempt:
    row = store.row("bank", "q1")
    before = card_before or Card(card_id=row.card_id, due=at)
    after, _ = SCHEDULER.review_card(before, rating, review_datetime=at)
    return Attempt(
        session_id=store.start_session(banks=["bank"], mode="review", now=at),
        bank_id="bank",
        item_id="q1",
        content_sha="sha1",
        answered_at=at,
        response="t",
        verdict="correct" if rating > 1 else "incorrect",
        score=1.0 if rating > 1 else 0.0,
        rating=int(rating),
        hints_used=0,
        duration_ms=1200,
        scheduled=True,
        tag=None,
        card_before=card_before,
        card_after=after,
    )


def test_new_database_has_the_schema_version_and_tables(tmp_path: Path) -> None:
    _store(tmp_path).close()
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
    store = _store(tmp_path)
    store.record(_attempt(store, None, Rating.Good, NOW))
    with sqlite3.connect(tmp_path / "p.sqlite3") as other:  # as a crash would leave it
        assert other.execute("SELECT count(*) FROM attempt").fetchone()[0] == 1
        assert other.execute("SELECT state FROM item").fetchone()[0] == State.Learning


def test_undo_restores_the_card_and_the_lapse_count(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.record(_attempt(store, None, Rating.Easy, NOW))
    review = store.row("bank", "q1").card
    assert review is not None and review.state == State.Review
    lapse = store.record(_attempt(store, review, Rating.Again, review.due))
    assert store.row("bank", "q1").lapses == 1
    store.undo(lapse)
    row = store.row("bank", "q1")
    assert row.lapses == 0 and row.card is not None and row.card.due == review.due
    assert store.attempt_count("bank", "q1") == 1


def test_rerate_to_easy_moves_the_card(tmp_path: Path) -> None:
    store = _store(tmp_path)
    attempt = _attempt(store, None, Rating.Good, NOW)
    attempt_id = store.record(attempt)
    easy, _ = SCHEDULER.review_card(Card(card_id=1, due=NOW), Rating.Easy, review_datetime=NOW)
    store.rerate(attempt_id, rating=4, card_after=easy)
    card = store.row("bank", "q1").card
    assert card is not None and card.due - NOW == timedelta(days=8)


def test_editing_text_keeps_the_card_and_updates_the_hash(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.record(_attempt(store, None, Rating.Good, NOW))
    rows = store.sync_items("bank", [ItemInfo("q1", "sha2", "true_false", ("t1", "t2"))])
    assert rows["q1"].card is not None and rows["q1"].content_sha == "sha2"


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([Rating.Again, Rating.Hard, Rating.Good, Rating.Easy]), max_size=6))
def test_undoing_every_answer_returns_to_new(ratings: list[Rating]) -> None:
    store = Store.open(":memory:")
    store.sync_items("bank", [ItemInfo("q1", "sha1", "true_false")])
    ids, at = [], NOW
    for rating in ratings:
        before = store.row("bank", "q1").card
        ids.append(store.record(_attempt(store, before, rating, at)))
        at = max(at, store.row("bank", "q1").card.due)  # type: ignore[union-attr]
    for attempt_id in reversed(ids):
        store.undo(attempt_id)
    row = store.row("bank", "q1")
    assert row.card is None and row.lapses == 0
