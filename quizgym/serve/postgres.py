"""The server's store on PostgreSQL (psycopg 3): the SQLite schema and statements, run on one
connection per thread, each write transaction holding an advisory lock on its student so that
several app processes serialize one student's answers as SQLite's ``BEGIN IMMEDIATE`` does."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors

from quizgym.serve.db import SCHEMA_VERSION, Database, DuplicateError, ServeStoreError

__all__ = ["PostgresDatabase"]

_PLACEHOLDER = re.compile(r"\?")
_SCHEMA_LOCK = 7_305_512_001  # any constant: one server at a time creates the tables


def _sql(statement: str) -> str:
    """A statement written with ``?`` placeholders, in psycopg's ``%s`` style."""
    return _PLACEHOLDER.sub("%s", statement.replace("%", "%%"))


def _safe(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"//([^:/@]+):[^@]*@", r"//\1:***@", url)


class _Tx:
    def __init__(self, cursor: psycopg.Cursor[Any]) -> None:
        self.cursor = cursor

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self.cursor.execute(_sql(sql), tuple(params))
        return list(self.cursor.fetchall()) if self.cursor.description else []

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        self.cursor.execute(_sql(sql), tuple(params))
        return self.cursor.rowcount

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.cursor.executemany(_sql(sql), [tuple(r) for r in rows])


class PostgresDatabase(Database):
    """A PostgreSQL database shared by any number of servers."""

    def __init__(self, url: str, *, schema: str) -> None:
        self.url = url
        self.where = _safe(url)
        self._local = threading.local()
        self._all: list[psycopg.Connection[Any]] = []
        self._lock = threading.Lock()
        with self.transaction("create the tables") as tx:
            tx.rows("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))
            plain = re.sub(r"--[^\n]*", "", schema)  # the comments hold semicolons
            for statement in plain.split(";"):
                if statement.strip():
                    tx.run(statement)
            found = tx.rows("SELECT value FROM meta WHERE key = 'schema'")
            if found and int(found[0][0]) > SCHEMA_VERSION:
                raise ServeStoreError(
                    f"{self.where}: made by a newer quizgym (schema {found[0][0]}); upgrade quizgym"
                )
            tx.run(
                "INSERT INTO meta (key, value) VALUES ('schema', ?) ON CONFLICT (key) DO NOTHING",
                (str(SCHEMA_VERSION),),
            )

    def _conn(self) -> psycopg.Connection[Any]:
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            try:
                conn = psycopg.connect(self.url, connect_timeout=10)
            except psycopg.Error as exc:
                raise ServeStoreError(f"{self.where}: cannot connect: {exc}".strip()) from exc
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    @contextmanager
    def transaction(
        self, doing: str, *, lock: str | None = None, write: bool = True
    ) -> Iterator[_Tx]:
        conn = self._conn()
        try:
            with conn.transaction(), conn.cursor() as cursor:
                tx = _Tx(cursor)
                if lock is not None:
                    tx.rows("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (lock,))
                yield tx
        except errors.UniqueViolation as exc:
            raise DuplicateError(str(exc)) from exc
        except psycopg.Error as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ServeStoreError(f"{self.where}: cannot {doing}: {reason}") from exc

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()
