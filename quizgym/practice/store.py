"""Each answer in, one SQLite transaction out: the drill's progress store."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import FrameType

from fsrs import Card, State

from quizgym.errors import QuizgymError

SCHEMA_VERSION = 1
BUSY_SECONDS = 5
"""How long a drill waits for another to let go of the file."""

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


class StoreError(QuizgymError):
    """The progress database cannot be read or written (the message names the file and a fix)."""


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


@dataclass(frozen=True, kw_only=True)
class Answer:
    """One answer as the drill has graded it so far; the store adds the cards before and after."""

    session_id: int
    bank_id: str
    item_id: str
    content_sha: str
    answered_at: datetime
    response: str | None
    verdict: str
    score: float | None
    rating: int
    hints_used: int = 0
    duration_ms: int | None = None
    tag: str | None = None


Review = Callable[[Card | None], Card | None]
"""Schedules an answer: given the item's card before it, the card after it, or None when the
answer leaves the schedule alone (extra practice)."""


@dataclass(frozen=True, kw_only=True)
class Logged:
    """What the store made of an answer, read and written in one transaction."""

    attempt_id: int
    scheduled: bool
    """Whether the answer moved the item's schedule (else: logged as extra practice)."""
    card_before: Card | None
    card_after: Card | None
    """The card this attempt wrote (its card before, when not scheduled)."""
    card: Card | None
    """The item's card as stored now."""
    overtaken: bool = False
    """Another drill has reviewed the item since this attempt: the log changed, the card not."""


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
    if not text:
        return None
    try:
        return Card.from_json(text)
    except (ValueError, KeyError, TypeError) as exc:  # a damaged row, not a damaged file
        raise sqlite3.DatabaseError(f"an item's card cannot be read ({exc})") from exc


def is_lapse(card_before: Card | None, rating: int) -> bool:
    """A review-state card forgotten (Anki's lapse)."""
    return card_before is not None and card_before.state == State.Review and rating == 1


# --- errors -------------------------------------------------------------------------------------

_MOVE_ASIDE = "choose another file with --db"
# By SQLite's primary result code (the low byte of the extended one).
_HINTS = {
    sqlite3.SQLITE_FULL: "the disk is full: free some space, or " + _MOVE_ASIDE,
    sqlite3.SQLITE_IOERR: "the disk could not be written or read: is it full or failing? "
    "Free some space, or " + _MOVE_ASIDE,
    sqlite3.SQLITE_READONLY: "the file or its folder is read-only: make them writable, or "
    + _MOVE_ASIDE,
    sqlite3.SQLITE_CANTOPEN: "check that its folder exists and can be written, or " + _MOVE_ASIDE,
    sqlite3.SQLITE_PERM: "permission denied: check the file's permissions, or " + _MOVE_ASIDE,
    sqlite3.SQLITE_BUSY: f"another program kept it locked for more than {BUSY_SECONDS} s: close "
    "other drills on it and try again",
    sqlite3.SQLITE_LOCKED: "another program kept it locked: close other drills on it and try again",
    sqlite3.SQLITE_NOTADB: "it is not an SQLite database: move it aside, or " + _MOVE_ASIDE,
}
_DAMAGED = (
    "the file is damaged: move it aside to start afresh, or restore a backup "
    "(sqlite3's .recover command may save its answers)"
)


def describe(path: str, exc: sqlite3.Error, doing: str) -> StoreError:
    """One line for an SQLite error: the file, what failed, SQLite's reason and a way out.

    Args:
        path: the database file.
        exc: what SQLite raised.
        doing: what could not be done, e.g. ``save your answer to mc-two``.

    Returns:
        The error to raise (its message is never "this is a bug": these are the user's files).
    """
    code = getattr(exc, "sqlite_errorcode", None)
    hint = _HINTS.get(code & 0xFF, _DAMAGED) if code is not None else _DAMAGED
    return StoreError(f"{path}: cannot {doing} ({exc}): {hint}")


@contextmanager
def holding_ctrl_c() -> Iterator[None]:
    """Hold SIGINT (Ctrl-C) until the block ends, then deliver it.

    A transaction ends whole, and a caller wrapping a write and its bookkeeping learns that
    the write was committed before a Ctrl-C can stop it. Blocks nest; outside the main thread,
    or under a handler not set from Python, the block runs unprotected.
    """
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield
        return
    held: list[FrameType | None] = []
    signal.signal(signal.SIGINT, lambda _signum, frame: held.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            previous(signal.SIGINT, held[0])


# --- the store ----------------------------------------------------------------------------------


class Store:
    """The progress database of one user.

    Three tables, after Anki's ``cards``/``revlog`` split: ``item`` is a small mutable cache of each
    item's FSRS card, ``attempt`` is the log of every answer (undo deletes its last row, ``e`` after
    a correct answer re-rates it), and ``session`` records each drill. Items are keyed by the bank's
    slug and the question's YAML ``id``; ``content_sha`` only flags edits, so fixing a typo in a
    prompt keeps its progress. The schema version lives in ``PRAGMA user_version``.

    Every write is its own ``BEGIN IMMEDIATE … COMMIT`` with ``synchronous=FULL``, so an answer the
    drill has saved survives Ctrl-C, SIGKILL or a power cut; the drill saves each answer before it
    shows the verdict. Ctrl-C is held while a transaction runs, so a commit is never cut off from
    the drill learning of it.

    Several drills may share one file. Each write reads the item's card *inside* its transaction and
    schedules from that card, so one drill's review is never overwritten with another's stale copy;
    revising or undoing an attempt changes the card only while it is still the card that attempt
    wrote (:attr:`Logged.overtaken` and :meth:`Store.undo` say when it is not).

    Every ``sqlite3.Error`` leaves the store as a :class:`StoreError`: one line naming the file,
    what could not be done and how to recover. ``quizgym stats`` opens the file read-only
    (:meth:`Store.read_only`), which also works on read-only media.
    """

    def __init__(self, conn: sqlite3.Connection, path: str) -> None:
        self.conn = conn
        self.path = path

    @classmethod
    def open(cls, path: str | Path | None = None) -> Store:
        """Open (creating or migrating) the progress database for a drill.

        Args:
            path: the file; None for :func:`default_db_path`; ``:memory:`` for a throwaway one.

        Raises:
            StoreError: the file cannot be opened, or is not a quizgym progress database.
        """
        where = str(path if path is not None else default_db_path())
        try:
            if where != ":memory:":
                Path(where).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"{where}: cannot create its folder ({exc.strerror or exc}): {_MOVE_ASIDE}"
            ) from exc
        store = None
        try:
            store = cls(sqlite3.connect(where, isolation_level=None), where)
            store._migrate()
        except sqlite3.Error as exc:
            if store is not None:
                store.close()
            raise describe(where, exc, "open the progress database") from exc
        except QuizgymError:
            if store is not None:
                store.close()
            raise
        return store

    @classmethod
    def read_only(cls, path: str | Path | None = None) -> Store | None:
        """Open the progress database for reading only (``quizgym stats``); None if it has none.

        Nothing is created or written: a missing or empty file has no progress. When the file's
        folder cannot be written (read-only media), SQLite cannot make the index file a
        write-ahead-log database needs, and the file is opened ``immutable`` instead: read as
        it lies, which is safe because nothing can be writing to it there.

        Args:
            path: the file; None for :func:`default_db_path`.

        Raises:
            StoreError: the file cannot be read, or is not a quizgym progress database.
        """
        where = Path(path if path is not None else default_db_path())
        if not where.is_file():
            return None
        uri = where.absolute().as_uri()
        try:
            conn = cls._connect_read_only(f"{uri}?mode=ro")
        except sqlite3.OperationalError as exc:
            if (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF != sqlite3.SQLITE_CANTOPEN:
                raise describe(str(where), exc, "read the progress database") from exc
            try:
                conn = cls._connect_read_only(f"{uri}?mode=ro&immutable=1")
            except sqlite3.Error as again:
                raise describe(str(where), again, "read the progress database") from again
        except sqlite3.Error as exc:
            raise describe(str(where), exc, "read the progress database") from exc
        store = cls(conn, str(where))
        try:
            version = store._version()
        except BaseException:
            store.close()
            raise
        if version == 0:
            store.close()
            return None
        return store

    @staticmethod
    def _connect_read_only(uri: str) -> sqlite3.Connection:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the file
        except BaseException:
            conn.close()
            raise
        return conn

    def _version(self, doing: str = "read the progress database") -> int:
        """The schema version; 0 for an empty file.

        Raises:
            StoreError: a newer schema, a foreign database, or the file cannot be read.
        """
        with self.guard(doing):  # one statement, one snapshot: another drill may be creating it
            version, tables = self.conn.execute(
                "SELECT (SELECT user_version FROM pragma_user_version),"
                " (SELECT count(*) FROM sqlite_master)"
            ).fetchone()
            version = int(version)
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: written by a newer quizgym (schema {version}); upgrade quizgym"
            )
        if version == 0 and tables:
            raise StoreError(
                f"{self.path}: not a quizgym progress database: {_MOVE_ASIDE} (or move it aside)"
            )
        return version

    def _migrate(self) -> None:
        conn = self.conn
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute(f"PRAGMA busy_timeout={BUSY_SECONDS * 1000}")
        if self._version("open the progress database") == 0:
            # One script, one transaction: a crash mid-migration leaves an empty file.
            try:
                conn.executescript(
                    f"BEGIN IMMEDIATE;{_SCHEMA}PRAGMA user_version = {SCHEMA_VERSION};COMMIT;"
                )
            except sqlite3.OperationalError:
                # Two drills started at once on a new file: the other one created it while this
                # one waited for the write lock. Its schema stands; anything else is an error.
                if not conn.in_transaction:
                    raise
                conn.execute("ROLLBACK")
                if self._version("open the progress database") != SCHEMA_VERSION:
                    raise
        if self.path != ":memory:":
            self._write_ahead()
        conn.execute("PRAGMA synchronous=FULL")

    def _write_ahead(self) -> None:
        """Switch the file to write-ahead logging (kept in the file: once is enough).

        The switch needs the file to itself, and SQLite does not wait for that as it waits for a
        write lock: two drills opening a new file at once would see it busy while the other
        reads the schema. It is retried, for as long as a write lock is waited for.
        """
        deadline = time.monotonic() + BUSY_SECONDS
        while True:
            try:
                mode = self.conn.execute("PRAGMA journal_mode").fetchone()[0]
                if str(mode).lower() != "wal":
                    self.conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
                if code not in {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}:
                    raise
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def close(self) -> None:
        """Close the connection (everything is already committed)."""
        self.conn.close()

    @contextmanager
    def guard(self, doing: str) -> Iterator[None]:
        """Turn an SQLite error inside the block into a :class:`StoreError` about ``doing``."""
        try:
            yield
        except (sqlite3.ProgrammingError, sqlite3.InterfaceError):
            raise  # our SQL is wrong: a bug, not the user's file
        except sqlite3.Error as exc:
            raise describe(self.path, exc, doing) from exc

    @contextmanager
    def transaction(
        self, doing: str = "write the progress database"
    ) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE … COMMIT``, rolled back on any exception, Ctrl-C held meanwhile.

        Raises:
            StoreError: SQLite could not begin, write or commit (nothing of the block is kept).
        """
        with holding_ctrl_c(), self.guard(doing):
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
                self.conn.execute("COMMIT")
            except BaseException:
                # SQLite may already have rolled back (a failed write, a full disk); the first
                # error is the one to report.
                if self.conn.in_transaction:
                    with suppress(sqlite3.Error):
                        self.conn.execute("ROLLBACK")
                raise

    # --- items ----------------------------------------------------------------------------------

    def sync_items(self, bank_id: str, items: Sequence[ItemInfo]) -> dict[str, ItemRow]:
        """Add the bank's new questions, refresh text hashes and tags, return every item's row.

        Items no longer in the bank are kept (their progress returns if the id comes back).
        """
        with self.transaction(f"record the items of {bank_id}") as conn:
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
        with self.guard("read the progress database"):
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
        with self.guard("read the progress database"):
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
        with self.guard("read the progress database"):
            row = self.conn.execute(
                "SELECT count(*) FROM attempt WHERE bank_id = ? AND item_id = ?",
                (bank_id, item_id),
            ).fetchone()
        return int(row[0])

    # --- sessions and attempts ------------------------------------------------------------------

    def start_session(self, *, banks: Sequence[str], mode: str, now: datetime) -> int:
        """Record the start of a drill; returns its id."""
        with self.transaction("start a session") as conn:
            cursor = conn.execute(
                "INSERT INTO session (banks, mode, started_at) VALUES (?, ?, ?)",
                (" ".join(banks), mode, now.isoformat()),
            )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def end_session(self, session_id: int, *, now: datetime) -> None:
        """Record the end of a drill."""
        with self.transaction("end the session") as conn:
            conn.execute(
                "UPDATE session SET ended_at = ? WHERE id = ?", (now.isoformat(), session_id)
            )

    def record(self, answer: Answer, *, review: Review) -> Logged:
        """Log one answer and, when ``review`` schedules it, move the item's card: one transaction.

        The card ``review`` is given is read inside the write transaction, so an answer from
        another drill on the same file in the meantime is built on, not overwritten.

        Raises:
            StoreError: the answer could not be saved (nothing of it is).
        """
        with self.transaction(f"save your answer to {answer.item_id}") as conn:
            before = self._card_of(answer.bank_id, answer.item_id)
            after = review(before)
            scheduled = after is not None
            written = after if scheduled else before
            cursor = conn.execute(
                "INSERT INTO attempt (session_id, bank_id, item_id, content_sha, answered_at,"
                " response, verdict, score, rating, hints_used, duration_ms, scheduled, tag,"
                " card_before, card_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    answer.session_id,
                    answer.bank_id,
                    answer.item_id,
                    answer.content_sha,
                    answer.answered_at.isoformat(),
                    answer.response,
                    answer.verdict,
                    answer.score,
                    answer.rating,
                    answer.hints_used,
                    answer.duration_ms,
                    int(scheduled),
                    answer.tag,
                    _json(before),
                    _json(written),
                ),
            )
            if scheduled:
                lapse = +1 if is_lapse(before, answer.rating) else 0
                self._set_card(answer.bank_id, answer.item_id, after, lapse=lapse)
        assert cursor.lastrowid is not None
        return Logged(
            attempt_id=cursor.lastrowid,
            scheduled=scheduled,
            card_before=before,
            card_after=written,
            card=written,
        )

    def revise(
        self, attempt_id: int, answer: Answer, *, review: Callable[[Card | None], Card]
    ) -> Logged:
        """Replace a logged answer's grade: a later part answered, a self-mark, ``e`` for Easy.

        The attempt keeps its time and whether it was scheduled. Its card is re-scheduled from
        its card before with ``review`` only while the item's card is still the one it wrote;
        when another drill has reviewed the item since, only the log changes (``overtaken``).

        Raises:
            StoreError: the revision could not be saved (the attempt stays as it was).
        """
        with self.transaction(f"save your answer to {answer.item_id}") as conn:
            scheduled, old_rating, before_json, after_json = conn.execute(
                "SELECT scheduled, rating, card_before, card_after FROM attempt WHERE id = ?",
                (attempt_id,),
            ).fetchone()
            before, written = _card(before_json), _card(after_json)
            overtaken = bool(scheduled) and not self._still_written_by(attempt_id, after_json)
            if scheduled and not overtaken:
                written = review(before)
                lapse = int(is_lapse(before, answer.rating)) - int(is_lapse(before, old_rating))
                self._set_card(answer.bank_id, answer.item_id, written, lapse=lapse)
            conn.execute(
                "UPDATE attempt SET response = ?, verdict = ?, score = ?, rating = ?,"
                " hints_used = ?, duration_ms = ?, tag = ?, card_after = ? WHERE id = ?",
                (
                    answer.response,
                    answer.verdict,
                    answer.score,
                    answer.rating,
                    answer.hints_used,
                    answer.duration_ms,
                    answer.tag,
                    _json(written),
                    attempt_id,
                ),
            )
            card = self._card_of(answer.bank_id, answer.item_id)
        return Logged(
            attempt_id=attempt_id,
            scheduled=bool(scheduled),
            card_before=before,
            card_after=written,
            card=card,
            overtaken=overtaken,
        )

    def undo(self, attempt_id: int) -> bool:
        """Delete an answer and put its item's card back as it was before it.

        Returns:
            True when undone (or already gone); False when another drill has reviewed the item
            since, so that putting the card back would throw its review away: nothing changes.

        Raises:
            StoreError: the undo could not be saved (nothing changes).
        """
        with self.transaction("undo your answer") as conn:
            found = conn.execute(
                "SELECT bank_id, item_id, scheduled, rating, card_before, card_after"
                " FROM attempt WHERE id = ?",
                (attempt_id,),
            ).fetchone()
            if found is None:
                return True
            bank_id, item_id, scheduled, rating, before, after = found
            if scheduled and not self._still_written_by(attempt_id, after):
                return False
            conn.execute("DELETE FROM attempt WHERE id = ?", (attempt_id,))
            if scheduled:
                card = _card(before)
                self._set_card(bank_id, item_id, card, lapse=-1 if is_lapse(card, rating) else 0)
        return True

    def _card_of(self, bank_id: str, item_id: str) -> Card | None:
        found = self.conn.execute(
            "SELECT fsrs_card FROM item WHERE bank_id = ? AND item_id = ?", (bank_id, item_id)
        ).fetchone()
        if found is None:
            raise KeyError((bank_id, item_id))
        return _card(found[0])

    def _still_written_by(self, attempt_id: int, card_after: str | None) -> bool:
        """Whether the attempt is its item's last scheduled one and the card is the one it wrote.

        Every card change goes through an attempt (record, revise, undo), so the id check alone
        would do; the card check also catches a file changed by other means.
        """
        bank_id, item_id = self.conn.execute(
            "SELECT bank_id, item_id FROM attempt WHERE id = ?", (attempt_id,)
        ).fetchone()
        (last,) = self.conn.execute(
            "SELECT max(id) FROM attempt WHERE bank_id = ? AND item_id = ? AND scheduled = 1",
            (bank_id, item_id),
        ).fetchone()
        (stored,) = self.conn.execute(
            "SELECT fsrs_card FROM item WHERE bank_id = ? AND item_id = ?", (bank_id, item_id)
        ).fetchone()
        return bool(last == attempt_id and stored == card_after)

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
