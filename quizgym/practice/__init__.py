"""The terminal drill with spaced repetition, and its progress statistics.

:func:`run_practice` and :func:`show_stats` are what ``quizgym practice`` and ``quizgym stats``
call: they load the banks, open the progress store, wire up the terminal and delegate to
:func:`quizgym.practice.drill.practice` and :func:`quizgym.practice.stats.bank_stats`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the drill pulls in the answer engine (sympy): import it only when used
    from pathlib import Path

    from quizgym.practice.stats import BankStats
    from quizgym.practice.views import Summary

DEFAULT_BANK = "bert-mlm"


def run_practice(
    banks: Sequence[str] = (),
    *,
    db: str | Path | None = None,
    new: int = 10,
    limit: int = 20,
    tags: Sequence[str] = (),
    types: Sequence[str] = (),
    cram: bool = False,
    seed: int | None = None,
) -> Summary:
    """Drill banks in the terminal (stdin/stdout) and return the session's summary.

    Args:
        banks: bank paths or bundled names; the bundled BERT bank when empty.
        db: the progress database; ``$QUIZGYM_DB`` or the user data dir when None.
        new: at most this many never-seen items.
        limit: at most this many items in all.
        tags: only items with one of these tags.
        types: only items of these types.
        cram: also drill learned items not yet due (their schedule is left alone).
        seed: reproducible variants and intervals (with ``QUIZGYM_NOW``, a reproducible session).

    Raises:
        QuizgymError: a bank or the database cannot be used.
    """
    from quizgym.practice.drill import practice
    from quizgym.practice.store import Store
    from quizgym.practice.ui import RichUI, make_console
    from quizgym.practice.views import clock_from
    from quizgym.solver.cache import open_bank, save

    books = [open_bank(name) for name in (banks or [DEFAULT_BANK])]  # the cache when fresh
    loaded = [book.bank for book in books]
    clock = clock_from(os.environ.get("QUIZGYM_NOW"))
    store = Store.open(db)
    console, ascii_only = make_console()
    if sys.stdin.isatty() and os.environ.get("TERM", "dumb") != "dumb":
        import readline  # noqa: F401  (line editing and history for input())
    try:
        return practice(
            loaded,
            store=store,
            ui=RichUI(console, ascii_only=ascii_only),
            clock=clock,
            new=new,
            limit=limit,
            tags=tags,
            types=types,
            cram=cram,
            seed=seed,
        )
    finally:
        store.close()
        for book in books:
            save(book)  # the keys this session solved serve the next one


def show_stats(banks: Sequence[str] = (), *, db: str | Path | None = None) -> list[BankStats]:
    """Print progress per bank and tag; return the figures.

    The database is opened read-only (nothing is created or written), so this works on a copy
    on read-only media, and alongside a running drill.

    Args:
        banks: bank slugs, bundled names or bank paths; every bank in the database when empty.
        db: the progress database; ``$QUIZGYM_DB`` or the user data dir when None.

    Raises:
        QuizgymError: a bank path or the database cannot be used.
    """
    from quizgym.practice.stats import bank_stats
    from quizgym.practice.store import Store
    from quizgym.practice.ui import RichUI, make_console, render_stats
    from quizgym.practice.views import clock_from

    def slug(bank: str) -> str:  # a path is read for its slug; a name needs no bank (pydantic)
        from quizgym.loader import load_bank

        return load_bank(bank).bank

    slugs = tuple(slug(b) if os.path.isfile(b) else b for b in banks)
    now = clock_from(os.environ.get("QUIZGYM_NOW"))()
    store = Store.read_only(db)
    figures = []
    if store is not None:
        try:
            with store.guard("read the progress database"):
                figures = bank_stats(store=store, now=now, banks=slugs)
        finally:
            store.close()
    console, ascii_only = make_console()
    render_stats(RichUI(console, ascii_only=ascii_only), figures)
    return figures


__all__ = ["DEFAULT_BANK", "run_practice", "show_stats"]
