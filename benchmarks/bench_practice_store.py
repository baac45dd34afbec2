"""Cost of saving each answer durably, against a bare SQLite insert in the same process.

The drill commits one transaction per answer (item update + attempt insert, WAL,
synchronous=FULL) so that nothing is lost on SIGKILL. This prints how much that costs compared
with a plain autocommit INSERT into a one-table database with default settings.
Run: .venv/bin/python benchmarks/bench_practice_store.py
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fsrs import Card, Rating, Scheduler

from quizgym.practice.store import Attempt, ItemInfo, Store

N = 300


def baseline(folder: Path) -> float:
    conn = sqlite3.connect(folder / "plain.sqlite3", isolation_level=None)
    conn.execute("CREATE TABLE log (item TEXT, response TEXT, at TEXT)")
    start = time.perf_counter()
    for i in range(N):
        conn.execute("INSERT INTO log VALUES (?, ?, ?)", (f"q{i % 70}", "B", str(i)))
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed


def store(folder: Path) -> float:
    db = Store.open(folder / "progress.sqlite3")
    db.sync_items("bank", [ItemInfo(f"q{i}", "sha", "multiple_choice") for i in range(70)])
    session = db.start_session(banks=["bank"], mode="review", now=datetime.now(UTC))
    scheduler = Scheduler(enable_fuzzing=False)
    now = datetime(2026, 1, 5, tzinfo=UTC)
    start = time.perf_counter()
    for i in range(N):
        card = Card(card_id=i % 70 + 1, due=now)
        after, _ = scheduler.review_card(card, Rating.Good, review_datetime=now)
        db.record(
            Attempt(
                session,
                "bank",
                f"q{i % 70}",
                "sha",
                now + timedelta(seconds=i),
                "B",
                "correct",
                1.0,
                3,
                0,
                900,
                True,
                None,
                None,
                after,
            )
        )
    elapsed = time.perf_counter() - start
    db.close()
    return elapsed


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        base, ours = baseline(folder), store(folder)
    print(f"bare INSERT (autocommit, defaults): {1000 * base / N:.3f} ms/answer")
    print(f"Store.record (FSRS + WAL + FULL):   {1000 * ours / N:.3f} ms/answer")
    print(f"ratio: {ours / base:.2f}x the bare insert")


if __name__ == "__main__":
    main()
