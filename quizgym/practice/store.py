"""The progress store: one SQLite file, one transaction per answer.

Three tables, after Anki's ``cards``/``revlog`` split: ``item`` is a small mutable cache of each
item's FSRS card, ``attempt`` is the log of every answer (undo deletes its last row, ``e`` after a
correct answer re-rates it), and ``session`` records each drill. Items are keyed by the bank's
slug and the question's YAML ``id``; ``content_sha`` only flags edits, so fixing a typo in a
prompt keeps its progress. The schema version lives in ``PRAGMA user_version``.

Every write is its own ``BEGIN IMMEDIATE … COMMIT`` with ``synchronous=FULL``, so an answer the
student has seen graded survives Ctrl-C, SIGKILL or a power cut.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from fsrs import Card, State

from quizgym.errors import QuizgymError

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE item (
  card_id     INTEGER PRIMARY KEY,        -- the int given to fsrs.Card(card_id=...)
  bank_id     TEXT NOT NULL,              -- the bank's slug, not its path
  item_id     TEXT NOT NULL,              -- the question's stable YAML id
  content_sha TEXT NOT NULL,              -- flags edits; progress is kept
  qtype       TEXT NOT NULL,
  tags        TEXT NOT NULL DEFAULT '',   -- space-separated, for stats without the bank
  fsrs_card   TEXT,                       -- fsrs.Card.to_json(); NULL = new
  due_ts      INTEGER,                    -- epoch seconds UTC
  state       INTEGER,                    -- fsrs.State
  lapses      INTEGER NOT NULL DEFAULT 0,
  UNIQUE (bank_id, item_id)
);
CREATE INDEX ix_item_due ON item (bank_id, due_ts);
CREATE TABLE session (
  id         INTEGER PRIMARY KEY,
  banks      TEXT NOT NULL,
  mode       TEXT NOT NULL CHECK (mode IN ('review', 'cram')),
  started_at TEXT NOT NULL,
  ended_at   TEXT
);
CREATE TABLE attempt (
  id          INTEGER PRIMARY KEY,
  session_id  INTEGER REFERENCES session(id),
  bank_id     TEXT NOT NULL,
  item_id     TEXT NOT NULL,
  content_sha TEXT NOT NULL,
  answered_at TEXT NOT NULL,              -- ISO-8601 UTC
  response    TEXT,
  verdict     TEXT NOT NULL
              CHECK (verdict IN ('correct', 'partial', 'incorrect', 'revealed', 'skipped')),
  score       REAL,                       -- 0..1 from the grader; NULL when self-marked
  rating      INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 4),
  hints_used  INTEGER NOT NULL DEFAULT 0,
  duration_ms INTEGER,
  scheduled   INTEGER NOT NULL,           -- 0 = extra practice: logged, schedule untouched
  tag         TEXT,                       -- misconception met, if any
  card_before TEXT,                       -- fsrs card JSON before (NULL = new)
  card_after  TEXT                        -- fsrs card JSON after
);
CREATE INDEX ix_attempt_item ON attempt (bank_id, item_id, answered_at);
"""


@dataclass(frozen=True)
class ItemInfo:
    """What the store needs to know about one question of a bank."""

    item_id: str
    content_sha: str
    qtype: str
    tags: tuple[str, ...] = ()


@dataclass
class ItemRow:
    """One item's scheduling state as stored."""

    bank_id: str
    item_id: str
    card_id: int
    card: Card | None
    """The FSRS card, or None for an item never reviewed on schedule."""
    lapses: int
    content_sha: str


@dataclass(frozen=True)
class Attempt:
    """One answer, as logged."""

    session_id: int
    bank_id: str
    item_id: str
    content_sha: str
    answered_at: datetime
    response: str | None
    verdict: str
    score: float | None
    rating: int
    hints_used: int
    duration_ms: int | None
    scheduled: bool
    tag: str | None
    card_before: Card | None
    card_after: Card | None


def default_db_path() -> Path:
    """``$QUIZGYM_DB``, or ``progress.sqlite3`` in the user data dir (platformdirs)."""
    env = os.environ.get("QUIZGYM_DB")
    if env:
        return Path(env)
    import platformdirs

    return platformdirs.user_data_path("quizgym", appauthor=False) / "progress.sqlite3"


def _json(card: Card | None) -> str | None:
    return card.to_json() if card is not None else None


def _card(text: str | None) -> Card | None:
    return Card.from_json(text) if text else None


def is_lapse(card_before: Card | None, rating: int) -> bool:
    """A review-state card forgotten (Anki's lapse)."""
    return card_before is not None and card_before.state == State.Review and rating == 1


class Store:
    """The progress database of one user."""

    def __init__(self, conn: sqlite3.Connection, path: str) -> None:
        self.conn = conn
        self.path = path

    @classmethod
    def open(cls, path: str | Path | None = None) -> Store:
        """Open (creating or migrating) the progress database.

        Args:
            path: the file; None for :func:`default_db_path`; ``:memory:`` for a throwaway one.

        Raises:
            QuizgymError: the file is not a quizgym progress database or cannot be opened.
        """
        where = str(path if path is not None else default_db_path())
        try:
            if where != ":memory:":
                Path(where).parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(where, isolation_level=None)
            store = cls(conn, where)
            store._migrate()
        except (sqlite3.Error, OSError) as exc:
            raise QuizgymError(f"{where}: cannot open the progress database: {exc}") from exc
        return store

    def _migrate(self) -> None:
        conn = self.conn
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=5000")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise QuizgymError(
                f"{self.path}: written by a newer quizgym (schema {version}); upgrade quizgym"
            )
        if version == 0:
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if tables:
                raise QuizgymError(f"{self.path}: not a quizgym progress database")
            # One script, one transaction: a crash mid-migration leaves an empty file.
            conn.executescript(
                f"BEGIN IMMEDIATE;{_SCHEMA}PRAGMA user_version = {SCHEMA_VERSION};COMMIT;"
            )
        if self.path != ":memory:":
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")

    def close(self) -> None:
        """Close the connection (everything is already committed)."""
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE … COMMIT``; rolled back on any exception."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # --- items ----------------------------------------------------------------------------------

    def sync_items(self, bank_id: str, items: Sequence[ItemInfo]) -> dict[str, ItemRow]:
        """Add the bank's new questions, refresh text hashes and tags, return every item's row.

        Items no longer in the bank are kept (their progress returns if the id comes back).
        """
        with self.transaction() as conn:
            for info in items:
                conn.execute(
                    "INSERT INTO item (bank_id, item_id, content_sha, qtype, tags)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (bank_id, item_id) DO UPDATE SET"
                    " content_sha = excluded.content_sha, qtype = excluded.qtype,"
                    " tags = excluded.tags",
                    (bank_id, info.item_id, info.content_sha, info.qtype, " ".join(info.tags)),
                )
        wanted = {info.item_id for info in items}
        return {row.item_id: row for row in self.rows(bank_id=bank_id) if row.item_id in wanted}

    def rows(self, *, bank_id: str) -> list[ItemRow]:
        """Every stored item of a bank."""
        cursor = self.conn.execute(
            "SELECT bank_id, item_id, card_id, fsrs_card, lapses, content_sha FROM item"
            " WHERE bank_id = ? ORDER BY card_id",
            (bank_id,),
        )
        return [
            ItemRow(bank, item, card_id, _card(card), lapses, sha)
            for bank, item, card_id, card, lapses, sha in cursor
        ]

    def row(self, bank_id: str, item_id: str) -> ItemRow:
        """One stored item.

        Raises:
            KeyError: no such item.
        """
        found = self.conn.execute(
            "SELECT bank_id, item_id, card_id, fsrs_card, lapses, content_sha FROM item"
            " WHERE bank_id = ? AND item_id = ?",
            (bank_id, item_id),
        ).fetchone()
        if found is None:
            raise KeyError((bank_id, item_id))
        bank, item, card_id, card, lapses, sha = found
        return ItemRow(bank, item, card_id, _card(card), lapses, sha)

    def attempt_count(self, bank_id: str, item_id: str) -> int:
        """How many answers to an item are logged."""
        row = self.conn.execute(
            "SELECT count(*) FROM attempt WHERE bank_id = ? AND item_id = ?", (bank_id, item_id)
        ).fetchone()
        return int(row[0])

    # --- sessions and attempts ------------------------------------------------------------------

    def start_session(self, *, banks: Sequence[str], mode: str, now: datetime) -> int:
        """Record the start of a drill; returns its id."""
        with self.transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO session (banks, mode, started_at) VALUES (?, ?, ?)",
                (" ".join(banks), mode, now.isoformat()),
            )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def end_session(self, session_id: int, *, now: datetime) -> None:
        """Record the end of a drill."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE session SET ended_at = ? WHERE id = ?", (now.isoformat(), session_id)
            )

    def record(self, attempt: Attempt) -> int:
        """Log one answer and, when scheduled, move the item's card: one transaction."""
        with self.transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO attempt (session_id, bank_id, item_id, content_sha, answered_at,"
                " response, verdict, score, rating, hints_used, duration_ms, scheduled, tag,"
                " card_before, card_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    attempt.session_id,
                    attempt.bank_id,
                    attempt.item_id,
                    attempt.content_sha,
                    attempt.answered_at.isoformat(),
                    attempt.response,
                    attempt.verdict,
                    attempt.score,
                    attempt.rating,
                    attempt.hints_used,
                    attempt.duration_ms,
                    int(attempt.scheduled),
                    attempt.tag,
                    _json(attempt.card_before),
                    _json(attempt.card_after),
                ),
            )
            if attempt.scheduled:
                self._set_card(
                    attempt.bank_id,
                    attempt.item_id,
                    attempt.card_after,
                    lapse=+1 if is_lapse(attempt.card_before, attempt.rating) else 0,
                )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def rerate(self, attempt_id: int, *, rating: int, card_after: Card) -> None:
        """Change the rating of a scheduled answer (``e`` = Easy after a correct one)."""
        with self.transaction() as conn:
            bank_id, item_id = conn.execute(
                "SELECT bank_id, item_id FROM attempt WHERE id = ?", (attempt_id,)
            ).fetchone()
            conn.execute(
                "UPDATE attempt SET rating = ?, card_after = ? WHERE id = ?",
                (rating, _json(card_after), attempt_id),
            )
            self._set_card(bank_id, item_id, card_after, lapse=0)

    def undo(self, attempt_id: int) -> None:
        """Delete an answer and put its item's card back as it was before it."""
        with self.transaction() as conn:
            found = conn.execute(
                "SELECT bank_id, item_id, scheduled, rating, card_before FROM attempt WHERE id = ?",
                (attempt_id,),
            ).fetchone()
            if found is None:
                return
            bank_id, item_id, scheduled, rating, before = found
            conn.execute("DELETE FROM attempt WHERE id = ?", (attempt_id,))
            if scheduled:
                card = _card(before)
                self._set_card(bank_id, item_id, card, lapse=-1 if is_lapse(card, rating) else 0)

    def _set_card(self, bank_id: str, item_id: str, card: Card | None, *, lapse: int) -> None:
        self.conn.execute(
            "UPDATE item SET fsrs_card = ?, due_ts = ?, state = ?, lapses = lapses + ?"
            " WHERE bank_id = ? AND item_id = ?",
            (
                _json(card),
                int(card.due.timestamp()) if card else None,
                int(card.state) if card else None,
                lapse,
                bank_id,
                item_id,
            ),
        )
