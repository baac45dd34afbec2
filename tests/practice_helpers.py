"""Shared helpers for the practice tests: run a session, read the progress database."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

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
