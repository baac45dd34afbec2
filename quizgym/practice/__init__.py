"""Banks and a progress database in; the terminal drill (``quizgym practice``) and its progress
statistics (``quizgym stats``) out."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the drill pulls in the answer engine (sympy): import it only when used
    from pathlib import Path

    from quizgym.practice.preview import Loader, Opening
    from quizgym.practice.stats import BankStats
    from quizgym.practice.ui import RichUI
    from quizgym.practice.views import Summary
    from quizgym.solver import CompiledBank

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

    :func:`run_practice` and :func:`show_stats` are what ``quizgym practice`` and ``quizgym stats``
    call: they load the banks, open the progress store, wire up the terminal and delegate to
    :func:`quizgym.practice.drill.practice` and :func:`quizgym.practice.stats.bank_stats`.

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
    from quizgym.practice.preview import Loader, first_item, read_previews, show_first
    from quizgym.practice.store import Store
    from quizgym.practice.ui import RichUI, make_console
    from quizgym.practice.views import clock_from

    names = list(banks or [DEFAULT_BANK])
    # A bank drilled before shows its first item from its preview while the drill loads
    # (quizgym.practice.preview); any other starts as it always has, loading the drill first, so
    # an unreadable bank or pack is reported before anything is asked.
    previews = read_previews(names)
    books = _load(names) if previews is None else []
    keeper = Loader(lambda: _keep_previews(books))
    clock = clock_from(os.environ.get("QUIZGYM_NOW"))
    store = Store.open(db)
    console, ascii_only = make_console()
    ui = RichUI(console, ascii_only=ascii_only)
    if sys.stdin.isatty() and os.environ.get("TERM", "dumb") != "dumb":
        import readline  # noqa: F401  (line editing and history for input())
    opening = None
    if previews is None:
        # The next drill's preview is made while the student reads this one's first item (it
        # parses every first screen's text, which the prompt must not wait for), and kept at
        # once: a drill is often left at its first prompt, or killed there.
        ui.at_next_prompt(lambda: _meanwhile(keeper))
    try:
        if previews is not None:
            now = clock()
            # The items are recorded here, as the drill records them before asking anything:
            # a locked or unwritable database is reported before the first prompt.
            found = first_item(
                previews, store=store, now=now, new=new, limit=limit, tags=tags, types=types,
                cram=cram, seed=seed,
            )  # fmt: skip
            if found is None:
                books = _load(names)
            else:
                loader = Loader(lambda: _load(names))
                opening = show_first(found, ui=ui, clock=clock, now=now, loader=loader)
                books = _loaded(loader, opening, ui)
        from quizgym.practice.drill import practice

        return practice(
            [book.bank for book in books],
            store=store,
            ui=ui,
            clock=clock,
            new=new,
            limit=limit,
            tags=tags,
            types=types,
            cram=cram,
            seed=seed,
            opening=opening,
        )
    finally:
        store.close()
        _keep(books)
        if previews is None:
            keeper.result()  # made at the first prompt (here, if none was reached)


def _load(names: Sequence[str]) -> list[CompiledBank]:
    """The banks, compiled (from the cache when it is fresh), with the drill imported."""
    import quizgym.practice.drill  # noqa: F401  (the answer engine, before it is needed)
    from quizgym.solver.cache import open_bank

    return [open_bank(name) for name in names]


def _loaded(loader: Loader[list[CompiledBank]], opening: Opening, ui: RichUI) -> list[CompiledBank]:
    """The banks the loader made; when it failed after the student typed an answer at the
    first prompt, they are told that answer was not saved before the error is reported."""
    try:
        return loader.result()
    except BaseException:
        if opening.typed is not None:
            ui.show_note(
                f"Your answer “{opening.typed.strip()}” to {opening.first.view.item_id} was not"
                " saved: the drill could not start (see below)."
            )
        raise


def _meanwhile(keeper: Loader[None]) -> None:
    """At the drill's first prompt: make the previews in the background, the prompt waiting
    in Python meanwhile (a Ctrl-C acts at once), and not reading the line before they are done
    (so the main thread imports nothing while the other thread does)."""
    from quizgym.practice.preview import wait_for_line

    keeper.start()
    wait_for_line(keeper)
    keeper.wait()


def _keep_previews(books: Sequence[CompiledBank]) -> None:
    """Keep each bank's preview for the next drill (see quizgym.practice.preview)."""
    from quizgym.practice.preview import keep_preview

    for book in books:
        keep_preview(book)


def _keep(books: Sequence[CompiledBank]) -> None:
    """Keep what this session worked out for the next one (the keys it solved)."""
    from quizgym.solver.cache import save

    for book in books:
        save(book)


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
