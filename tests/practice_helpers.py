"""Shared helpers for the practice tests: run a session, read the progress database, make it
read-only."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import require_tool

from quizgym.cli import cli
from quizgym.loader import load_bank
from quizgym.practice.drill import review_seed
from quizgym.solver import keys_of, variant_of

T0 = "2026-01-05T10:00:00+00:00"
BANK = load_bank("bert-mlm")


def run(
    db: Path,
    answers: list[str],
    *args: str,
    now: str = T0,
    env: dict[str, str] | None = None,
    **runner: Any,
) -> Result:
    """Drive ``quizgym practice`` through CliRunner: one line of input per answer."""
    environment = {"QUIZGYM_NOW": now, "QUIZGYM_DB": str(db), "COLUMNS": "100", **(env or {})}
    text = "".join(f"{a}\n" for a in answers)
    return CliRunner(**runner).invoke(
        cli, ["practice", "--seed", "7", *args], input=text, env=environment
    )


def rows(db: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Query the progress database directly (what a crash would leave behind)."""
    with sqlite3.connect(db) as conn:
        return list(conn.execute(sql, params))


def key_for(qid: str, *, seed: int = 7, reviews: int = 0, part: int = 0) -> Any:
    """The exact key of the variant the drill shows for an item's review (engine as oracle)."""
    question = BANK.question(qid)
    variant = variant_of(BANK, question, seed=review_seed(seed, BANK.bank, qid, reviews))
    return keys_of(BANK, question, variant)[part]  # type: ignore[arg-type]


@contextmanager
def read_only(*paths: Path) -> Iterator[None]:
    """Make files and folders read-only for the block, even for root (``chattr +i``).

    Skips (fails under ``CI=true``) where the file system cannot make a file immutable.
    """
    root = os.geteuid() == 0
    made: list[Path] = []
    try:
        for path in paths:
            if root:
                chattr = require_tool("chattr")
                done = subprocess.run([chattr, "+i", str(path)], capture_output=True, check=False)
                if done.returncode:
                    message = f"chattr +i is not supported here: {done.stderr.decode().strip()}"
                    if os.environ.get("CI") == "true":
                        pytest.fail(message)
                    pytest.skip(message)
            else:
                path.chmod(0o555 if path.is_dir() else 0o444)
            made.append(path)
        yield
    finally:
        for path in reversed(made):
            if root:
                subprocess.run(["chattr", "-i", str(path)], check=True)
            else:
                path.chmod(0o755 if path.is_dir() else 0o644)
