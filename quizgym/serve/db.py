"""The server's store: one schema over SQLite (WAL, the default) or PostgreSQL, behind a thin
layer that runs one transaction at a time per thread and turns every driver error into a
one-line :class:`ServeStoreError`.

Tables: ``card`` (each student's FSRS card per item, as the drill's ``item`` table), ``shown``
(every form handed out, with the variant's seed or version: never put in the page),
``submission`` (one per form answered, unique by the form's token: a repeated submit is
recorded once), ``attempt`` (one row per slot answered, with the verdict as shown) and
``decision`` (the teacher's review decisions, by ``review.csv`` fingerprint).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from quizgym.errors import QuizgymError

__all__ = [
    "POSTGRES_SCHEMA",
    "Database",
    "DuplicateError",
    "ServeStoreError",
    "SqliteDatabase",
    "Tx",
]

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS card (
  student   TEXT NOT NULL,
  bank_id   TEXT NOT NULL,
  item_id   TEXT NOT NULL,
  fsrs_card TEXT,                 -- fsrs.Card.to_json(); NULL = never reviewed on schedule
  due_ts    BIGINT,
  state     INTEGER,
  lapses    INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (student, bank_id, item_id)
);
CREATE TABLE IF NOT EXISTS shown (
  token    TEXT PRIMARY KEY,      -- the form's idempotency token
  student  TEXT NOT NULL,
  mode     TEXT NOT NULL CHECK (mode IN ('practice', 'quiz')),
  bank_id  TEXT NOT NULL,
  item_id  TEXT,                  -- practice: the question; quiz: NULL (the whole quiz)
  seed     BIGINT,                -- practice: the variant's seed (HMAC of the secret)
  review   INTEGER NOT NULL DEFAULT 0,
  shown_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ix_shown_student ON shown (student, mode, shown_at);
CREATE TABLE IF NOT EXISTS submission (
  id          {id},
  token       TEXT NOT NULL UNIQUE,
  student     TEXT NOT NULL,
  mode        TEXT NOT NULL,
  bank_id     TEXT NOT NULL,
  item_id     TEXT,
  answered_at TEXT NOT NULL,
  verdict     TEXT NOT NULL,
  score       DOUBLE PRECISION,
  max_score   DOUBLE PRECISION NOT NULL,
  rating      INTEGER,
  scheduled   INTEGER NOT NULL DEFAULT 0,
  card_before TEXT,
  card_after  TEXT,
  finish      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS ix_submission_student ON submission (student, mode, answered_at);
CREATE TABLE IF NOT EXISTS attempt (
  id            {id},
  submission_id BIGINT NOT NULL REFERENCES submission(id),
  student       TEXT NOT NULL,
  mode          TEXT NOT NULL,
  bank_id       TEXT NOT NULL,
  item_id       TEXT NOT NULL,
  slot          TEXT NOT NULL,      -- q or q.part
  response      TEXT,
  verdict       TEXT NOT NULL,
  score         DOUBLE PRECISION NOT NULL,
  max_score     DOUBLE PRECISION NOT NULL,
  read_as       TEXT NOT NULL DEFAULT '',
  feedback      TEXT NOT NULL DEFAULT '',
  expected      TEXT NOT NULL DEFAULT '',
  tag           TEXT,
  needs_review  INTEGER NOT NULL DEFAULT 0,
  seed          BIGINT,             -- practice: the variant's seed
  version       INTEGER,            -- quiz: index into issued.json's versions
  content_sha   TEXT NOT NULL,
  engine        TEXT NOT NULL,      -- the quizgym version that graded it
  answered_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ix_attempt_student ON attempt (student, mode, slot);
CREATE TABLE IF NOT EXISTS decision (
  fingerprint TEXT PRIMARY KEY,     -- review.csv's q…-a…: the question, slot, version and answer
  slot        TEXT NOT NULL,
  answer      TEXT NOT NULL,
  score       TEXT NOT NULL,        -- as review.csv's score cell
  comment     TEXT NOT NULL DEFAULT '',
  decided_at  TEXT NOT NULL
);
"""

_SQLITE_ID = "INTEGER PRIMARY KEY"
POSTGRES_SCHEMA = _SCHEMA.replace("{id}", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY")
"""The same tables for PostgreSQL (:mod:`quizgym.serve.postgres`)."""


class ServeStoreError(QuizgymError):
    """The server's database cannot be read or written (the message names it and a way out)."""


class DuplicateError(Exception):
    """A row that is already there (a form's token submitted twice)."""


class Tx(Protocol):
    """One transaction: statements written with ``?`` placeholders, for either database."""

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a statement; its rows."""

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a statement; the rows it changed."""

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run a statement once per row of parameters."""


class _SqliteTx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(self.conn.execute(sql, tuple(params)).fetchall())

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self.conn.execute(sql, tuple(params)).rowcount

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.conn.executemany(sql, rows)


class Database:
    """Where the server keeps everything; safe to share between threads."""

    where: str
    """The file or server, for messages."""

    @contextmanager
    def transaction(
        self, doing: str, *, lock: str | None = None, write: bool = True
    ) -> Iterator[Tx]:
        """A transaction, committed when the block ends (rolled back on an error); ``write``
        False for one that only reads (it waits for no writer).

        ``lock`` (a student) serializes the transactions that name it across every process
        sharing the store (SQLite's ``BEGIN IMMEDIATE`` serializes them all already).

        Raises:
            ServeStoreError: the database failed (``doing`` says what was being done).
        """
        raise NotImplementedError  # pragma: no cover
        yield

    def close(self) -> None:
        """Close every connection this process opened."""


class SqliteDatabase(Database):
    """A SQLite file in WAL mode, ``synchronous=FULL`` (an answer shown is an answer on disk,
    whatever happens next; ``NORMAL`` when asked: it survives the server's crash, not a power
    cut).

    Reads run on one connection per thread. Writes run on one connection, one block at a time,
    each block in a savepoint of the open transaction, and are committed in groups: a block
    returns only once a COMMIT that includes it has succeeded, and the blocks that arrive while
    one COMMIT is being written to disk share the next one (one fsync for many answers).
    """

    def __init__(self, path: Path, *, sync: str = "full") -> None:
        if sync not in ("full", "normal"):
            raise ServeStoreError(f"--sync must be full or normal, not {sync!r}")
        self.path = path
        self.sync = sync.upper()
        self.where = str(path)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._writing = threading.Lock()
        """Held while a block runs on the writer connection, or a group is committed."""
        self._group = threading.Condition(threading.Lock())
        self._open = 1
        """The group the next block joins."""
        self._done = 0
        """The last group committed (or failed)."""
        self._leading = False
        self._failed: dict[int, str] = {}
        conn = self._conn()
        try:
            found = conn.execute("PRAGMA user_version").fetchone()[0]
            if found > SCHEMA_VERSION:
                raise ServeStoreError(
                    f"{path}: made by a newer quizgym (schema {found}); upgrade quizgym"
                )
            conn.executescript(_SCHEMA.replace("{id}", _SQLITE_ID))
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            raise ServeStoreError(f"{path}: cannot create the tables: {exc}") from exc
        self._writer = self._connect()

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path, isolation_level=None, timeout=10, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {self.sync}")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as exc:
            raise ServeStoreError(f"{self.path}: cannot open the database: {exc}") from exc
        with self._lock:
            self._all.append(conn)
        return conn

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    @contextmanager
    def transaction(
        self, doing: str, *, lock: str | None = None, write: bool = True
    ) -> Iterator[Tx]:
        if write:
            group = yield from self._block(doing)
            self._commit(group, doing)
            return
        conn = self._conn()
        try:
            conn.execute("BEGIN")
            yield _SqliteTx(conn)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise ServeStoreError(f"{self.path}: cannot {doing}: {exc}") from exc
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _block(self, doing: str) -> Generator[Tx, None, int]:
        """Run one write block in a savepoint of the open group; the group it joined."""
        conn = self._writer
        with self._writing:
            try:
                if not conn.in_transaction:
                    conn.execute("BEGIN IMMEDIATE")
                conn.execute("SAVEPOINT block")
            except sqlite3.Error as exc:
                raise ServeStoreError(f"{self.path}: cannot {doing}: {exc}") from exc
            try:
                yield _SqliteTx(conn)
                conn.execute("RELEASE block")
            except sqlite3.IntegrityError as exc:
                self._undo(conn)
                raise DuplicateError(str(exc)) from exc
            except sqlite3.Error as exc:
                self._undo(conn)
                raise ServeStoreError(f"{self.path}: cannot {doing}: {exc}") from exc
            except BaseException:
                self._undo(conn)
                raise
            return self._open

    @staticmethod
    def _undo(conn: sqlite3.Connection) -> None:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK TO block")
            conn.execute("RELEASE block")

    def _commit(self, group: int, doing: str) -> None:
        """Return once ``group`` is committed: commit it, unless another thread is doing so."""
        with self._group:
            while self._done < group:
                if self._leading:
                    self._group.wait()
                    continue
                self._leading = True
                self._group.release()
                failure = None
                try:
                    with self._writing:
                        committing, self._open = self._open, self._open + 1
                        if self._writer.in_transaction:
                            try:
                                self._writer.execute("COMMIT")
                            except sqlite3.Error as exc:
                                failure = str(exc)
                                with contextlib.suppress(sqlite3.Error):
                                    self._writer.execute("ROLLBACK")
                finally:
                    self._group.acquire()
                    self._leading = False
                if failure is not None:
                    self._failed[committing] = failure
                self._done = committing
                self._group.notify_all()
            reason = self._failed.get(group)
        if reason is not None:
            raise ServeStoreError(f"{self.path}: cannot {doing}: {reason}")

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()
