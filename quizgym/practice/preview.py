"""A bank's preview from the compiled-bank cache in, the drill's first prompt on the screen out,
shown before the drill itself is loaded."""

from __future__ import annotations

import contextlib
import hashlib
import os
import select
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from quizgym.practice.queue import content_sha, order_queue, review_seed, slot_label
from quizgym.practice.views import Clock, ItemView, SlotView
from quizgym.richtext.tree import Doc
from quizgym.solver.draws import choice_order, student_key

if sys.platform != "win32":
    # Imported here, not when the first prompt waits: a Ctrl-C that lands inside an import in
    # the main thread can leave the import lock held, and the loading thread then waits forever.
    import termios

if TYPE_CHECKING:
    from fsrs import Card

    from quizgym.practice.store import ItemInfo, ItemRow, Store
    from quizgym.practice.ui import RichUI
    from quizgym.solver import CompiledBank

__all__ = [
    "PREVIEW_FORMAT",
    "First",
    "Loader",
    "Opening",
    "first_item",
    "keep_preview",
    "read_previews",
    "show_first",
    "wait_for_line",
]

PREVIEW_FORMAT = "drill-preview/3"
"""The layout of a preview record; bump it when the layout changes."""
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # quizgym.model.LETTERS, without the bank format
T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class First:
    """The drill's first item, worked out from the banks' previews (:func:`first_item`)."""

    view: ItemView
    slot: SlotView | None
    """The part shown before the first answer (a multi-part question), if any."""
    label: str
    """What the answer is asked with (``Your choice``, ``selected =``, …)."""
    seed: int
    """The session's seed (drawn here when the student gave none)."""
    sha: str
    """The question's content hash as the preview has it: the drill checks it against the bank."""


@dataclass(frozen=True, kw_only=True)
class Opening:
    """The first item as shown before the drill was loaded, and what the student did there."""

    now: datetime
    """When the session started (its queue was worked out for this time)."""
    first: First
    """What was shown (and the hash of the question it was shown for)."""
    shown_at: datetime
    """When the item was on the screen: its answer time counts from here."""
    typed: str | None = None
    """The line the student typed (None when they stopped instead)."""
    answered_at: datetime | None = None
    """When that line was read (the answer's time, whatever the drill did after it)."""
    stopped: EOFError | KeyboardInterrupt | None = None
    """EOFError or KeyboardInterrupt, raised at the first prompt (or while it was drawn)."""


def _key(bank_key: str) -> str:
    """The preview's key: the compiled bank's (the bank's bytes, quizgym and the libraries
    whose output it holds, the text parser among them) and this layout."""
    return hashlib.sha256(f"{bank_key}\0{PREVIEW_FORMAT}".encode()).hexdigest()


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
    from quizgym.model import QUESTION_TYPES
    from quizgym.practice.ui import RichUI
    from quizgym.richtext.parse import parse
    from quizgym.richtext.tex import tex_to_text
    from quizgym.types import choices_of, interaction_of, is_multiple, statement_of

    questions: list[dict[str, Any]] = []
    texts: set[str] = set()
    for question in book.bank.questions:
        draw = book.draw(question)
        record: dict[str, Any] = {
            "id": question.id,
            "type": question.type,
            "answer": interaction_of(question).kind,
            "tags": list(question.tags),
            "sha": content_sha(question),
            "static": not (draw.params or draw.derived or draw.where),
        }
        if record["static"]:
            slot = book.slots_of(question)[0]
            options = choices_of(question, slot.part)
            choices = options.choices if options is not None and options.lettered else ()
            record |= {
                "salt": draw.salt,
                "choices": draw.choices,
                "shuffled": draw.shuffled,
                "texts": [c.text for c in choices],
                "multiple": is_multiple(question),
                "prompt": question.prompt,
                "statement": statement_of(question),
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
    docs = {text: parse(text) for text in sorted(texts)}
    formulas = sorted({m.tex for doc in docs.values() for m in doc.formulas()})
    write(
        key,
        {
            "format": PREVIEW_FORMAT,
            "slug": book.bank.bank,
            "packs": list(book.bank.packs),
            "depends": depends or [],
            "types": list(QUESTION_TYPES),
            "questions": questions,
            "docs": {text: encode(doc) for text, doc in docs.items()},
            # as the terminal shows them, with small scripts and without (an ASCII terminal)
            "formulas": [
                [tex, tex_to_text(tex, True), tex_to_text(tex, False)] for tex in formulas
            ],
        },
    )


# --- read by the next one ------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Bank:
    """One bank's preview as read back: what :func:`first_item` works the first item out from."""

    slug: str
    questions: tuple[Mapping[str, Any], ...]
    """Each question's record, in bank order (see :func:`keep_preview`)."""
    types: tuple[str, ...]
    """The question types this quizgym knows (an unknown ``--type`` is the drill's to refuse)."""
    docs: Mapping[str, Any]
    """The first screens' bank texts, each parsed and encoded."""
    formulas: Mapping[tuple[str, bool], str]
    """Their formulas' texts, by TeX and ``small_scripts`` (see
    :func:`~quizgym.practice.ui.formula_text`)."""


_UNREADABLE = (OSError, UnicodeError, ValueError, KeyError, TypeError, AttributeError)
"""What reading a bank file or a record that is not a preview raises (a programming error is
not among them: it is not hidden by loading the drill instead)."""


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
        questions=tuple(MappingProxyType(dict(q)) for q in record["questions"]),
        types=tuple(str(t) for t in record["types"]),
        docs=MappingProxyType(dict(record["docs"])),
        formulas={
            (str(tex), small): str(text)
            for tex, *shown in record["formulas"]
            for small, text in zip((True, False), shown, strict=True)
        },
    )


def read_previews(names: Sequence[str]) -> list[_Bank] | None:
    """The previews of these banks (a path or a bundled name each); None unless every one has
    a preview that can be trusted (the drill then loads them as always, and reports what is
    wrong with one in its own words, before it asks anything)."""
    from quizgym.errors import QuizgymError

    try:
        banks = [_read(name) for name in names]
    except (QuizgymError, *_UNREADABLE):  # a missing or unreadable bank, a damaged record
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
) -> First | None:
    """The drill's first item, worked out from the banks' previews as the drill works it out;
    None when the drill must work it out itself (see the module docs).

    The banks' items are recorded in the progress database first, as the drill records them
    before it asks anything: a database another program keeps locked is reported here, before
    the student has typed an answer.

    Raises:
        StoreError: the progress database cannot be read or written.
    """
    try:
        infos = [_infos(bank) for bank in banks]
    except _UNREADABLE:
        return None  # a record that does not read as a preview: never trusted
    if any(t not in banks[0].types for t in types):
        return None  # the drill refuses the option, in its words
    wanted = set(tags)
    if wanted - {t for bank in banks for q in bank.questions for t in q["tags"]}:
        return None
    rows = [store.sync_items(bank.slug, info) for bank, info in zip(banks, infos, strict=True)]
    try:
        chosen = _first(banks, rows, store=store, now=now, new=new, limit=limit, tags=wanted,
                        types=types, cram=cram, seed=seed)  # fmt: skip
    except (*_UNREADABLE, ImportError, RecursionError):
        return None  # a record that does not read as a preview: never trusted
    return chosen


def _infos(bank: _Bank) -> list[ItemInfo]:
    """What the drill records of each question before it asks anything (store.sync_items)."""
    from quizgym.practice.store import ItemInfo

    return [
        ItemInfo(str(q["id"]), str(q["sha"]), str(q["type"]), tuple(str(t) for t in q["tags"]))
        for q in bank.questions
    ]


def _first(
    banks: list[_Bank],
    rows: list[dict[str, ItemRow]],
    *,
    store: Store,
    now: datetime,
    new: int,
    limit: int,
    tags: set[str],
    types: Sequence[str],
    cram: bool,
    seed: int | None,
) -> First | None:
    candidates: list[tuple[tuple[_Bank, Mapping[str, Any], Card | None], Card | None]] = []
    for bank, bank_rows in zip(banks, rows, strict=True):
        for question in bank.questions:
            if (tags and not tags & set(question["tags"])) or (
                types and question["type"] not in types
            ):
                continue
            card = bank_rows[question["id"]].card
            candidates.append(((bank, question, card), card))
    if not candidates:
        return None
    queue = order_queue(candidates, now=now, new=new, limit=limit, cram=cram)
    if not queue:
        return None
    bank, question, card = queue[0]
    if not question["static"]:
        return None  # its numbers are drawn with the expression language
    # As the drill draws it (secrets.randbelow(2**31)): 31 bits from the OS, without importing
    # secrets and random before the prompt.
    session_seed = seed if seed is not None else int.from_bytes(os.urandom(4), "big") >> 1
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
    label = slot_label(
        str(question["answer"]), multiple=view.multiple, part=part, units=question["units"]
    )
    _remember_texts(bank, view, slot)
    return First(view=view, slot=slot, label=label, seed=session_seed, sha=str(question["sha"]))


def _remember_texts(bank: _Bank, view: ItemView, slot: SlotView | None) -> None:
    """Hand the first screen's parsed texts (see :func:`keep_preview`) to the parser, so that
    showing it needs no markdown-it; the part's text with its units is made from its prompt,
    so its prompt is handed over first.

    Raises:
        ValueError: a stored text is not a parsed document.
    """
    from quizgym.practice.ui import RichUI, remember_formulas
    from quizgym.richtext.parse import remember

    remember_formulas(bank.formulas)
    texts = [view.prompt, *(text for _, text in view.choices)]
    if view.statement:
        texts.append(view.statement)
    if slot is not None:
        texts.append(slot.prompt or "")
    remember(_docs(bank, texts))
    if slot is not None:
        remember(_docs(bank, [RichUI.slot_text(slot)]))


def _docs(bank: _Bank, texts: list[str]) -> dict[str, Doc]:
    from quizgym.solver.cache import decode

    docs = {text: decode(bank.docs[text]) for text in texts if text in bank.docs}
    if not all(isinstance(doc, Doc) for doc in docs.values()):
        raise ValueError("a preview's text is not a parsed document")
    return docs


# --- showing it ----------------------------------------------------------------------------------


class Loader(Generic[T]):
    """Runs the loading of the drill in a background thread; :meth:`result` waits for it and
    returns what it made, or raises what it raised (in the calling thread).

    The load runs exactly once: in the thread when it has begun there, else in :meth:`result`
    (a thread that was never started, or whose start a Ctrl-C interrupted, then finds nothing
    left to do).
    """

    def __init__(self, load: Callable[[], T]) -> None:
        self._load = load
        self._claim = threading.Lock()
        self._done = threading.Event()
        self._value: list[T] = []
        self._error: BaseException | None = None
        self._started = False
        self._thread = threading.Thread(target=self._run, name="quizgym-drill-loader", daemon=True)

    def _run(self) -> None:
        if not self._claim.acquire(blocking=False):
            return  # the other thread is loading, or has loaded
        try:
            self._value.append(self._load())
        except BaseException as exc:  # handed to the caller in its own thread
            self._error = exc
        finally:
            self._done.set()

    def start(self) -> None:
        """Start loading in the background (once)."""
        if not self._started:
            self._started = True
            self._thread.start()

    def done(self) -> bool:
        """Whether loading has ended (made its result or raised)."""
        return self._done.is_set()

    def wait(self) -> None:
        """Wait until loading has ended (a Ctrl-C meanwhile is raised here)."""
        self._done.wait()

    def result(self) -> T:
        """What loading made (waiting for it; loading here when it has not begun).

        Raises:
            BaseException: whatever loading raised.
        """
        self._run()
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value[0]


_POLL = 0.02
"""How often (s) the first prompt looks up from stdin while the drill loads."""


def wait_for_line(loader: Loader[Any]) -> None:
    """Wait until the drill has loaded or a line (or the end of input) is waiting on stdin.

    Why not block in ``input()`` at once: while another thread runs, a Ctrl-C that lands after
    the main thread last looked for signals and before ``input()`` sleeps in ``read``/``select``
    is recorded but never acted on (only the main thread runs Python's signal handlers, and it
    would sleep on). Waiting here in short :func:`select.select` steps, in Python, acts on it
    within :data:`_POLL`. Once loading has ended ``input()`` reads as it always has. While
    readline is in use the terminal's echo is off meanwhile: what is typed early is not echoed
    twice (by the terminal now, by readline when it reads it).
    """
    if sys.platform == "win32":
        return  # select() takes sockets only there
    # Nothing is imported from here on (see the import of termios above).
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a file (a test's input): nothing to wait for
    restore = _echo_off(fd) if "readline" in sys.modules and os.isatty(fd) else None
    try:
        while not loader.done():
            if select.select([fd], [], [], _POLL)[0]:
                return
    finally:
        if restore is not None:
            restore()


def _echo_off(fd: int) -> Callable[[], None] | None:
    """Switch the terminal's echo off; returns what switches it back (None if it cannot)."""
    try:
        before = termios.tcgetattr(fd)
        quiet = termios.tcgetattr(fd)
        quiet[3] &= ~termios.ECHO
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
    except termios.error:
        return None

    def restore() -> None:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, before)

    return restore


def show_first(
    first: First, *, ui: RichUI, clock: Clock, now: datetime, loader: Loader[Any]
) -> Opening:
    """Show the first item, load the drill while the student reads it, and read the answer.

    A Ctrl-C or the end of input while the item is drawn or at its prompt is kept in the
    :class:`Opening` (the drill then ends the session with its summary, as it does at any
    prompt); the drill is loaded in any case.

    Loading the drill means importing the bank format (pydantic), the answer engine and its numbers
    (mpmath), reading the compiled bank back from the cache, markdown-it for the prompt and
    latex2mathml for its formulas. None of it is needed to *show* the first item, only to grade its
    answer. So when a bank has been drilled before with the same bytes and the same quizgym, its
    **preview** (a small record of plain data kept in the compiled-bank cache: each question's id,
    type, tags, content hash, what its first screen says, its bank text already parsed and its
    formulas as the terminal shows them) is enough to work out the first item exactly as the drill
    would — the same queue (:func:`~quizgym.practice.queue.order_queue` over the same rows), the
    same review seed and choice order (:mod:`quizgym.solver.draws`), the same
    :class:`~quizgym.practice.views.ItemView` — and to show it on the drill's own
    :class:`~quizgym.practice.ui.RichUI`. The drill is loaded in a background thread while the
    student reads, and then runs as always with the :class:`Opening`: it works out its first item
    itself, and when that is what was shown it does not show it again, keeps the time it was shown
    at, and takes the line already typed as its first answer (nothing is saved before that answer is
    graded, so nothing shown can be lost). When anything differs — the screen, or the question's
    content hash — it says the typed answer was not used and asks its own item.

    Errors the drill reports before asking anything still come first: the banks' items are recorded
    in the progress database before the prompt (a locked database), and a bank or pack that cannot
    be read means no preview. Should loading fail after a line was typed, the student is told that
    answer was not saved. While the drill loads, the prompt waits for the line in Python
    (:func:`wait_for_line`), so a Ctrl-C is acted on at once.

    Only questions whose first screen does not depend on drawn numbers are previewed (every type but
    a numeric question with parameters or derived values); for any other first item, a bank without
    a preview (its first drill, an edit, an upgrade), an option the preview cannot decide, or a
    damaged record, the drill starts as it always has.
    """
    shown_at = now
    typed: str | None = None
    answered_at = None
    stopped: EOFError | KeyboardInterrupt | None = None

    def meanwhile() -> None:
        # The drill loads once the prompt is on the screen: the first prompt never waits for it.
        loader.start()
        wait_for_line(loader)

    try:
        ui.show_item(first.view)
        shown_at = clock()
        if first.slot is not None:
            ui.show_slot(first.slot)
        typed = ui.ask(first.label, shown=meanwhile)
        answered_at = clock()
    except (EOFError, KeyboardInterrupt) as exc:
        stopped = exc
    return Opening(
        now=now,
        first=first,
        shown_at=shown_at,
        typed=typed if stopped is None else None,
        answered_at=answered_at,
        stopped=stopped,
    )
