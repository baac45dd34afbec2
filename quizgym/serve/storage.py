"""Which store a server uses: a ``--db`` value and a data folder in, the open database out
(SQLite in the folder by default, PostgreSQL for a ``postgresql://`` URL)."""

from __future__ import annotations

from pathlib import Path

from quizgym.serve.db import POSTGRES_SCHEMA, Database, ServeStoreError, SqliteDatabase

__all__ = ["open_database"]


def open_database(url: str | None, *, folder: Path, sync: str = "full") -> Database:
    """The database of a data folder (``serve.sqlite3``), or the PostgreSQL server of ``url``;
    ``sync`` is SQLite's ``synchronous`` (``full`` or ``normal``).

    Raises:
        ServeStoreError: it cannot be opened.
    """
    if url is not None and url.startswith(("postgresql://", "postgres://")):
        try:
            from quizgym.serve.postgres import PostgresDatabase
        except ImportError as exc:
            raise ServeStoreError('PostgreSQL needs psycopg: pip install "quizgym[serve]"') from exc
        return PostgresDatabase(url, schema=POSTGRES_SCHEMA)
    if url is not None:
        return SqliteDatabase(Path(url), sync=sync)
    return SqliteDatabase(folder / "serve.sqlite3", sync=sync)
