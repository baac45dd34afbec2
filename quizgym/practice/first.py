"""The drill's first prompt, shown before the drill itself is loaded.

Loading the drill takes a quarter of a second or more: the bank format (pydantic), the answer
engine and its numbers (mpmath), the compiled bank read back from the cache, markdown-it for
the prompt. None of it is needed to *show* the first item, only to grade its answer. So when a
bank has been drilled before with the same bytes and the same quizgym, its **preview** (a small
record of plain data kept in the compiled-bank cache: each question's id, type, tags, content
hash, what its first screen says and its bank text already parsed) is enough to work out the
first item exactly as the drill would — the same queue (:func:`~quizgym.practice.queue.order_queue`
over the same rows), the same review seed and choice order (:mod:`quizgym.solver.draws`), the
same :class:`~quizgym.practice.views.ItemView` — and to show it on the drill's own
:class:`~quizgym.practice.ui.RichUI`. The drill is loaded in a background thread while the student
reads, and then runs as always with the :class:`Opening`: it works out its first item itself,
and when that is what was shown it does not show it again, keeps the time it was shown at, and
takes the line already typed as its first answer (nothing is saved before that answer is graded,
so nothing shown can be lost). When anything differs it shows its own item.

Only questions whose first screen does not depend on drawn numbers are previewed (every type
but a numeric question with parameters or derived values); for any other first item, a bank
without a preview (its first drill, an edit, an upgrade), an option the preview cannot decide, or
a damaged record, the drill starts as it always has.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from quizgym.practice.queue import content_sha, order_queue, review_seed, slot_label
from quizgym.practice.views import Clock, ItemView, SlotView
from quizgym.solver.draws import choice_order, student_key

if TYPE_CHECKING:
    from fsrs import Card

    from quizgym.practice.store import Store
    from quizgym.practice.ui import RichUI
    from quizgym.solver import CompiledBank

__all__ = [
    "PREVIEW_FORMAT",
    "Loader",
    "Opening",
    "first_item",
    "keep_preview",
    "read_previews",
    "show_first",
]

PREVIEW_FORMAT = "drill-preview/1"
"""The layout of a preview record; bump it when the layout changes."""
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # quizgym.model.LETTERS, without the bank format
_PARSERS = ("markdown_it", "mdit_py_plugins")
"""Whose output the preview's parsed texts are (besides quizgym's own code)."""


@dataclass(frozen=True, kw_only=True)
class Opening:
    """The first item as shown before the drill was loaded, and what the student did there."""

    now: datetime
    """When the session started (its queue was worked out for this time)."""
    seed: int
    """The session's seed."""
    view: ItemView
    slot: SlotView | None
    """The part shown before the first answer (a multi-part question), if any."""
    label: str
    shown_at: datetime
    """When the item was on the screen: its answer time counts from here."""
    typed: str | None = None
    """The line the student typed (None when they stopped instead)."""
    stopped: BaseException | None = None
    """EOFError or KeyboardInterrupt, raised at the first prompt."""


def _key(bank_key: str) -> str:
    """The preview's key: the compiled bank's (the bank's bytes and quizgym), this layout and
    the parser of its texts."""
    from quizgym.solver.cache import library_stamp

    stamps = "\0".join(library_stamp(name) for name in _PARSERS)
    return hashlib.sha256(f"{bank_key}\0{PREVIEW_FORMAT}\0{stamps}".encode()).hexdigest()


# --- kept by the drill ---------------------------------------------------------------------------


def keep_preview(book: CompiledBank) -> None:
    """Keep the preview of a compiled bank for the next drill, unless the cache has it already
    or is off."""
    from quizgym.solver.cache import encode, pack_digests, read, write

    if book.cache_key is None:
        return  # the cache is off, or the bank did not come from a file
    key = _key(book.cache_key)
    if read(key) is not None:
        return
    depends = pack_digests(list(book.bank.packs), book.bank.path)
    if book.bank.packs and depends is None:
        return
    from quizgym.model import QUESTION_TYPES, MultipleChoice, SpotTheError
    from quizgym.practice.ui import RichUI
    from quizgym.richtext.parse import parse

    questions: list[dict[str, Any]] = []
    texts: set[str] = set()
    for question in book.bank.questions:
        draw = book.draw(question)
        record: dict[str, Any] = {
            "id": question.id,
            "type": question.type,
            "tags": list(question.tags),
            "sha": content_sha(question),
            "static": not (draw.params or draw.derived or draw.where),
        }
        if record["static"]:
            slot = book.slots_of(question)[0]
            choices = (
                question.choices if isinstance(question, MultipleChoice | SpotTheError) else []
            )
            record |= {
                "salt": draw.salt,
                "choices": draw.choices,
                "shuffled": draw.shuffled,
                "texts": [c.text for c in choices],
                "multiple": isinstance(question, MultipleChoice) and question.multiple,
                "prompt": question.prompt,
                "statement": question.statement if isinstance(question, SpotTheError) else None,
                "part": slot.part,
                "part_prompt": slot.prompt if slot.part is not None else None,
                "units": slot.units,
            }
            shown = [question.prompt, *record["texts"]]
            if record["statement"]:
                shown.append(record["statement"])
            if slot.part is not None:
                part_view = SlotView(slot.part, slot.prompt, slot.units)
                shown += [slot.prompt, RichUI.slot_text(part_view)]
            texts.update(shown)
        questions.append(record)
    write(
        key,
        {
            "format": PREVIEW_FORMAT,
            "slug": book.bank.bank,
            "packs": list(book.bank.packs),
            "depends": depends or [],
            "types": list(QUESTION_TYPES),
            "questions": questions,
            "docs": {text: encode(parse(text)) for text in sorted(texts)},
        },
    )


# --- read by the next one ------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Bank:
    slug: str
    questions: list[dict[str, Any]]
    types: list[str]
    docs: dict[str, Any]


def _read(name: str) -> _Bank | None:
    """A bank's preview, when the cache holds one for its bytes and its packs are unchanged."""
    from quizgym.resources import read_bank_file
    from quizgym.solver.cache import bank_key, pack_digests, read

    path, raw = read_bank_file(name)
    stored = read(_key(bank_key(raw)))
    if stored is None:
        return None
    record = stored.parts
    if record.get("format") != PREVIEW_FORMAT:
        return None
    packs = [str(p) for p in record["packs"]]
    if packs and pack_digests(packs, str(path)) != record["depends"]:
        return None  # a pack changed: the drill loads the bank and says what it makes of it
    return _Bank(
        slug=str(record["slug"]),
        questions=list(record["questions"]),
        types=[str(t) for t in record["types"]],
        docs=dict(record["docs"]),
    )


def read_previews(names: Sequence[str]) -> list[_Bank] | None:
    """The previews of these banks (a path or a bundled name each); None unless every one has
    a preview that can be trusted (the drill then loads them as always, and reports what is
    wrong with one in its own words)."""
    try:
        banks = [_read(name) for name in names]
    except Exception:  # a missing or unreadable bank, a damaged record
        return None
    if any(bank is None for bank in banks):
        return None
    return [bank for bank in banks if bank is not None]


def first_item(
    banks: list[_Bank],
    *,
    store: Store,
    now: datetime,
    new: int,
    limit: int,
    tags: Sequence[str],
    types: Sequence[str],
    cram: bool,
    seed: int | None,
) -> tuple[ItemView, SlotView | None, str, int] | None:
    """The drill's first item, worked out from the banks' previews as the drill works it out:
    its view, the part shown before it is asked (if any), its answer label and the session's
    seed; None when the drill must work it out itself (see the module docs).

    Raises:
        StoreError: the progress database cannot be read.
    """
    try:
        chosen = _first(banks, store=store, now=now, new=new, limit=limit, tags=tags,
                        types=types, cram=cram, seed=seed)  # fmt: skip
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None  # a record that does not read as a preview: never trusted
    return chosen


def _first(
    banks: list[_Bank],
    *,
    store: Store,
    now: datetime,
    new: int,
    limit: int,
    tags: Sequence[str],
    types: Sequence[str],
    cram: bool,
    seed: int | None,
) -> tuple[ItemView, SlotView | None, str, int] | None:
    from quizgym.richtext.parse import remember
    from quizgym.solver.cache import decode

    wanted = set(tags)
    if any(t not in banks[0].types for t in types):
        return None  # the drill refuses the option, in its words
    if wanted - {t for bank in banks for q in bank.questions for t in q["tags"]}:
        return None
    candidates: list[tuple[tuple[_Bank, dict[str, Any], Card | None], Card | None]] = []
    for bank in banks:
        rows = {row.item_id: row for row in store.rows(bank_id=bank.slug)}
        for question in bank.questions:
            if (wanted and not wanted & set(question["tags"])) or (
                types and question["type"] not in types
            ):
                continue
            row = rows.get(question["id"])  # an item never drilled: the drill adds it, cardless
            card = row.card if row is not None else None
            candidates.append(((bank, question, card), card))
    if not candidates:
        return None
    queue = order_queue(candidates, now=now, new=new, limit=limit, cram=cram)
    if not queue:
        return None
    bank, question, card = queue[0]
    if not question["static"]:
        return None  # its numbers are drawn with the expression language
    session_seed = seed if seed is not None else secrets.randbelow(2**31)
    reviews = store.attempt_count(bank.slug, question["id"])
    state = student_key(
        bank.slug, None, review_seed(session_seed, bank.slug, question["id"], reviews)
    )
    order = choice_order(
        state ^ int(question["salt"]),
        params=0,
        choices=int(question["choices"]),
        shuffled=bool(question["shuffled"]),
    )
    texts = [str(t) for t in question["texts"]]
    kind = str(question["type"])
    choices = tuple((_LETTERS[k], texts[i]) for k, i in enumerate(order)) if texts else ()
    view = ItemView(
        bank=bank.slug,
        item_id=str(question["id"]),
        kind=kind,
        position=1,
        total=len(queue),
        right=0,
        wrong=0,
        partial=0,
        new=card is None,
        retry=False,
        prompt=str(question["prompt"]),
        statement=question["statement"],
        choices=choices,
        multiple=bool(question["multiple"]),
    )
    part = question["part"]
    slot = SlotView(part, question["part_prompt"], question["units"]) if part else None
    label = slot_label(kind, multiple=view.multiple, part=part, units=question["units"])
    remember({text: decode(bank.docs[text]) for text in _shown(view, slot) if text in bank.docs})
    return view, slot, label, session_seed


def _shown(view: ItemView, slot: SlotView | None) -> list[str]:
    """The bank texts the first screen parses (see :func:`keep_preview`)."""
    from quizgym.practice.ui import RichUI

    texts = [view.prompt, *(text for _, text in view.choices)]
    if view.statement:
        texts.append(view.statement)
    if slot is not None:
        texts += [slot.prompt or "", RichUI.slot_text(slot)]
    return texts


# --- showing it ----------------------------------------------------------------------------------


class Loader:
    """Runs the loading of the drill in a background thread; :meth:`result` waits for it and
    returns what it made, or raises what it raised (in the calling thread)."""

    def __init__(self, load: Callable[[], Any]) -> None:
        self._load = load
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="quizgym-drill-loader", daemon=True)

    def _run(self) -> None:
        try:
            self._value = self._load()
        except BaseException as exc:  # handed to the caller in its own thread
            self._error = exc

    def start(self) -> None:
        """Start loading."""
        if not self._thread.is_alive() and self._thread.ident is None:
            self._thread.start()

    def result(self) -> Any:
        """What loading made (waiting for it; loading here when it was never started)."""
        if self._thread.ident is None:
            self._run()
        else:
            self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def show_first(
    found: tuple[ItemView, SlotView | None, str, int],
    *,
    ui: RichUI,
    clock: Clock,
    now: datetime,
    loader: Loader,
) -> Opening:
    """Show the first item, start ``loader`` while the student reads it, and read the answer."""
    view, slot, label, seed = found
    ui.show_item(view)
    shown_at = clock()
    if slot is not None:
        ui.show_slot(slot)
    typed: str | None = None
    stopped: BaseException | None = None
    try:
        # The drill loads once the prompt is on the screen: the first prompt never waits for it.
        typed = ui.ask(label, shown=loader.start)
    except (EOFError, KeyboardInterrupt) as exc:
        stopped = exc
    return Opening(
        now=now,
        seed=seed,
        view=view,
        slot=slot,
        label=label,
        shown_at=shown_at,
        typed=typed,
        stopped=stopped,
    )
