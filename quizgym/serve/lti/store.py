"""The LTI tables of the server's database: platforms, deployments, login states, used
nonces, launches, LMS users and resource links in; each graded attempt's score queued for the
platform out.

The same statements run on SQLite and PostgreSQL (:mod:`quizgym.serve.db`). A login state is
a row keyed by the ``state`` parameter, deleted when a launch uses it, so that nothing of the
login hangs on a cookie (a tool opened in a new window, or with third-party cookies blocked,
works the same); a nonce is a row too, and a second launch with it is refused.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from quizgym.serve.db import Database, SqliteDatabase, Tx

__all__ = [
    "Link",
    "Platform",
    "QueuedScore",
    "ensure_tables",
    "find_platform",
    "platforms",
    "save_platform",
]

_TABLES = """
CREATE TABLE IF NOT EXISTS lti_platform (
  id             {id},
  issuer         TEXT NOT NULL,
  client_id      TEXT NOT NULL,
  auth_login_url TEXT NOT NULL,
  auth_token_url TEXT NOT NULL,
  key_set_url    TEXT NOT NULL,
  audience       TEXT,
  name           TEXT NOT NULL DEFAULT '',
  UNIQUE (issuer, client_id)
);
CREATE TABLE IF NOT EXISTS lti_deployment (
  platform_id   BIGINT NOT NULL,
  deployment_id TEXT NOT NULL,
  PRIMARY KEY (platform_id, deployment_id)
);
CREATE TABLE IF NOT EXISTS lti_state (
  state       TEXT PRIMARY KEY,
  nonce       TEXT NOT NULL,
  platform_id BIGINT NOT NULL,
  made_ts     DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS lti_nonce (
  platform_id BIGINT NOT NULL,
  nonce       TEXT NOT NULL,
  used_ts     DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (platform_id, nonce)
);
CREATE TABLE IF NOT EXISTS lti_launch (
  id            TEXT PRIMARY KEY,
  platform_id   BIGINT NOT NULL,
  deployment_id TEXT NOT NULL,
  student       TEXT NOT NULL,
  teacher       INTEGER NOT NULL,
  kind          TEXT NOT NULL,
  body          TEXT NOT NULL,
  made_ts       DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS lti_user (
  platform_id BIGINT NOT NULL,
  sub         TEXT NOT NULL,
  student     TEXT NOT NULL UNIQUE,
  name        TEXT NOT NULL DEFAULT '',
  roles       TEXT NOT NULL DEFAULT '',
  learner     INTEGER NOT NULL,
  link        TEXT,
  PRIMARY KEY (platform_id, sub)
);
CREATE TABLE IF NOT EXISTS lti_link (
  platform_id   BIGINT NOT NULL,
  resource_link TEXT NOT NULL,
  deployment_id TEXT NOT NULL,
  context_id    TEXT NOT NULL DEFAULT '',
  target        TEXT NOT NULL,
  lineitem      TEXT,
  scopes        TEXT NOT NULL DEFAULT '',
  nrps_url      TEXT,
  PRIMARY KEY (platform_id, resource_link)
);
CREATE TABLE IF NOT EXISTS lti_score (
  id            {id},
  key           TEXT NOT NULL UNIQUE,
  platform_id   BIGINT NOT NULL,
  lineitem      TEXT NOT NULL,
  scopes        TEXT NOT NULL,
  sub           TEXT NOT NULL,
  student       TEXT NOT NULL,
  score_given   DOUBLE PRECISION,
  score_maximum DOUBLE PRECISION NOT NULL,
  activity      TEXT NOT NULL,
  grading       TEXT NOT NULL,
  stamp         TEXT NOT NULL,
  made_ts       DOUBLE PRECISION NOT NULL,
  tries         INTEGER NOT NULL DEFAULT 0,
  next_ts       DOUBLE PRECISION NOT NULL,
  claimed_ts    DOUBLE PRECISION,
  posted_ts     DOUBLE PRECISION,
  error         TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS ix_lti_score_due ON lti_score (posted_ts, next_ts);
"""


def ensure_tables(db: Database) -> None:
    """Create the LTI tables when they are missing.

    Raises:
        ServeStoreError: the database cannot be written.
    """
    ident = (
        "INTEGER PRIMARY KEY"
        if isinstance(db, SqliteDatabase)
        else "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
    )
    with db.transaction("create the LTI tables") as tx:
        if not isinstance(db, SqliteDatabase):
            tx.rows("SELECT pg_advisory_xact_lock(?)", (7_305_512_030,))
        for statement in _TABLES.replace("{id}", ident).split(";"):
            if statement.strip():
                tx.run(statement)


@dataclass(frozen=True)
class Platform:
    """An LMS registered with the tool."""

    id: int
    issuer: str
    client_id: str
    auth_login_url: str
    auth_token_url: str
    key_set_url: str
    audience: str | None
    deployments: tuple[str, ...]
    name: str = ""


_PLATFORM = (
    "SELECT id, issuer, client_id, auth_login_url, auth_token_url, key_set_url, audience, name"
    " FROM lti_platform"
)


def _platform(tx: Tx, row: Sequence[Any]) -> Platform:
    deployments = tuple(
        d for (d,) in tx.rows(
            "SELECT deployment_id FROM lti_deployment WHERE platform_id = ? ORDER BY deployment_id",
            (row[0],),
        )
    )  # fmt: skip
    return Platform(
        id=int(row[0]), issuer=row[1], client_id=row[2], auth_login_url=row[3],
        auth_token_url=row[4], key_set_url=row[5], audience=row[6], deployments=deployments,
        name=row[7],
    )  # fmt: skip


def platforms(db: Database) -> list[Platform]:
    """Every registered platform."""
    with db.transaction("read the LTI platforms", write=False) as tx:
        return [_platform(tx, row) for row in tx.rows(f"{_PLATFORM} ORDER BY id")]


def find_platform(tx: Tx, issuer: str, client_id: str | None) -> list[Platform]:
    """The platforms of an issuer (of one client id when given)."""
    if client_id:
        rows = tx.rows(f"{_PLATFORM} WHERE issuer = ? AND client_id = ?", (issuer, client_id))
    else:
        rows = tx.rows(f"{_PLATFORM} WHERE issuer = ? ORDER BY id", (issuer,))
    return [_platform(tx, row) for row in rows]


def save_platform(
    db: Database, *, issuer: str, client_id: str, auth_login_url: str, auth_token_url: str,
    key_set_url: str, deployments: Sequence[str], audience: str | None = None, name: str = "",
) -> tuple[Platform, bool]:  # fmt: skip
    """Register a platform, or update the one of this issuer and client id (its deployment
    ids are added to those it had); the platform and whether it is new."""
    with db.transaction("register the platform") as tx:
        found = find_platform(tx, issuer, client_id)
        if found:
            pid = found[0].id
            tx.run(
                "UPDATE lti_platform SET auth_login_url = ?, auth_token_url = ?,"
                " key_set_url = ?, audience = ?, name = ? WHERE id = ?",
                (auth_login_url, auth_token_url, key_set_url, audience, name, pid),
            )
        else:
            (pid,) = tx.rows(
                "INSERT INTO lti_platform (issuer, client_id, auth_login_url, auth_token_url,"
                " key_set_url, audience, name) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (issuer, client_id, auth_login_url, auth_token_url, key_set_url, audience, name),
            )[0]
        for deployment in deployments:
            tx.run(
                "INSERT INTO lti_deployment (platform_id, deployment_id) VALUES (?, ?)"
                " ON CONFLICT DO NOTHING",
                (pid, deployment),
            )
        saved = find_platform(tx, issuer, client_id)[0]
    return saved, not found


@dataclass(frozen=True)
class Link:
    """A resource link placed in an LMS course, as its last launch described it."""

    platform_id: int
    resource_link: str
    target: str
    lineitem: str | None
    scopes: tuple[str, ...]
    nrps_url: str | None


@dataclass(frozen=True)
class QueuedScore:
    """A score waiting for (or posted to) a platform's line item."""

    id: int
    key: str
    platform_id: int
    lineitem: str
    scopes: tuple[str, ...]
    sub: str
    student: str
    score_given: float | None
    score_maximum: float
    activity: str
    grading: str
    stamp: str
    tries: int


def dumps(value: object) -> str:
    """JSON for a column."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
