"""The drill: queue, answer loop and scheduling, with all input and output injected.

The drill never grades, draws variants or computes keys itself: it asks the answer engine
(:mod:`quizgym.answers`, :mod:`quizgym.solver`) and hands the results to a
:class:`DrillUI`. Scheduling is py-fsrs; storage is :class:`~quizgym.practice.store.Store`.

Rating an answer (DESIGN: ``drill.md`` §3):

========================================  ======
outcome                                   rating
========================================  ======
wrong, revealed (``!``) or skipped (``s``)  Again
correct, no hint                          Good
correct after a hint; partly right ≥ 50%  Hard
``e`` pressed after a correct answer      Easy
free text                                 the student's own mark (rubric as suggestion)
========================================  ======

Only an item that is due (or a learning step due within :data:`LEARN_AHEAD`) is reviewed by
the scheduler; anything else (``--all``, a wrong item retried early) is logged with
``scheduled=0`` and leaves the schedule alone (fsrs4anki#707).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from fsrs import Card, Rating, Scheduler, State

from quizgym.answers import Status, Verdict, grade_response, shown_choices
from quizgym.model import (
    LETTERS,
    Bank,
    FreeText,
    MultipleChoice,
    Numeric,
    SpotTheError,
    TrueFalse,
)
from quizgym.practice.store import Attempt, ItemInfo, ItemRow, Store
from quizgym.practice.views import (
    Clock,
    ItemView,
    Outcome,
    SlotView,
    Summary,
    clock_from,
    utc_now,
    when,
)
from quizgym.selection import check_filters, matches
from quizgym.solver import CompiledBank, Variant, compiled, prompt_of

LEARN_AHEAD = timedelta(minutes=20)
"""Learning/relearning steps due this soon count as due (Anki's learn-ahead limit)."""
RETRY_GAP = 3
"""A wrong item comes back after this many other items (or at the end)."""
COMMANDS = "? hint · ! reveal · s skip · u undo · q quit"

AnyQuestion = TrueFalse | MultipleChoice | SpotTheError | FreeText | Numeric


class DrillUI(Protocol):
    """Everything the drill says and asks; implemented by :class:`quizgym.practice.ui.RichUI`."""

    def ask(self, label: str) -> str:
        """Read one line (raises EOFError when input ends)."""

    def show_item(self, view: ItemView) -> None:
        """Show an item's prompt (and choices)."""

    def show_slot(self, slot: SlotView) -> None:
        """Show a part's own prompt before asking it."""

    def show_note(self, text: str) -> None:
        """A short message (re-ask reasons, hints, undo)."""

    def show_verdict(self, verdict: Verdict, *, label: str | None, revealed: bool) -> None:
        """How one answer was read and graded, with the correct answer."""

    def show_free_text(self, question: FreeText, verdict: Verdict) -> None:
        """The model answer and rubric after a free-text answer."""

    def show_outcome(self, outcome: Outcome) -> None:
        """The item's explanation and its next review."""

    def show_summary(self, summary: Summary) -> None:
        """The end-of-session summary."""


class _QuitError(Exception):
    """The student typed ``q``."""


class _UndoError(Exception):
    """The student typed ``u``."""


# --- the queue --------------------------------------------------------------------------------


@dataclass
class Entry:
    """An item waiting in the queue."""

    book: CompiledBank
    question: AnyQuestion
    row: ItemRow
    new: bool
    retry: bool = False

    @property
    def bank(self) -> Bank:
        """The item's bank."""
        return self.book.bank


@dataclass
class Done:
    """An answered item, kept for undo and the summary."""

    entry: Entry
    attempt_id: int
    verdict: str
    tag: str | None
    requeued: Entry | None
    position: int


def content_sha(question: AnyQuestion) -> str:
    """A hash of everything a question says (flags edits; progress stays keyed by id)."""
    text = json.dumps(question.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def review_seed(seed: int, bank_id: str, item_id: str, reviews: int) -> int:
    """The variant seed of an item's review: fresh numbers each time it is logged again.

    ``reviews`` is how many answers to the item are already logged, so a new review draws new
    numbers even under a fixed ``--seed``, while the same seed and history give the same ones.
    """
    digest = hashlib.sha256(f"{seed}\x1f{bank_id}\x1f{item_id}\x1f{reviews}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


def explanation_for(
    bank: Bank | CompiledBank, question: AnyQuestion, variant: Variant
) -> str | None:
    """The explanation for this variant: placeholders filled; a worked example written for the
    default numbers says which numbers it uses when the student saw others.
    """
    if not question.explanation:
        return None
    text = variant.fill(question.explanation)
    default = compiled(bank).variant(question)
    if text == question.explanation and variant.params and variant.params != default.params:
        numbers = ", ".join(
            f"{name} = {default.fill('{' + name + '}')}" for name in sorted(default.params)
        )
        text = f"(worked for {numbers}) {text}"
    return text


def is_due(card: Card | None, now: datetime) -> bool:
    """New items are due; learning steps within :data:`LEARN_AHEAD`; others at their due time."""
    if card is None:
        return True
    if card.state in (State.Learning, State.Relearning):
        return card.due <= now + LEARN_AHEAD
    return card.due <= now


def build_queue(
    banks: Sequence[Bank | CompiledBank],
    rows: Sequence[dict[str, ItemRow]],
    *,
    now: datetime,
    new: int,
    limit: int,
    tags: Sequence[str],
    types: Sequence[str],
    cram: bool,
) -> list[Entry]:
    """Due items first (most overdue first), then up to ``new`` new ones, ``limit`` in all.

    With ``cram``, items already learned but not due come after the due ones (soonest first).
    """
    due: list[tuple[datetime, int, Entry]] = []
    fresh: list[Entry] = []
    later: list[tuple[datetime, int, Entry]] = []
    order = 0
    for book, bank_rows in zip(map(compiled, banks), rows, strict=True):
        for question in book.bank.questions:
            if not matches(question, tags=tags, types=types):
                continue
            row = bank_rows[question.id]
            entry = Entry(book, question, row, new=row.card is None)
            order += 1
            if row.card is None:
                fresh.append(entry)
            elif is_due(row.card, now):
                due.append((row.card.due, order, entry))
            elif cram:
                later.append((row.card.due, order, entry))
    queue = [e for *_, e in sorted(due, key=lambda t: t[:2])]
    queue += [e for *_, e in sorted(later, key=lambda t: t[:2])]
    queue += fresh[: max(new, 0)]
    return queue[: max(limit, 0)]


# --- the session ------------------------------------------------------------------------------


def _rating_for(score: float, hinted: bool) -> Rating:
    if score >= 1:
        return Rating.Hard if hinted else Rating.Good
    return Rating.Hard if score >= 0.5 else Rating.Again


def _verdict_word(statuses: Sequence[Status], score: float) -> str:
    if all(s is Status.CORRECT for s in statuses):
        return "correct"
    return "partial" if score > 0 else "incorrect"


class Drill:
    """One practice session over one or more banks."""

    def __init__(
        self,
        *,
        store: Store,
        ui: DrillUI,
        clock: Clock,
        scheduler: Scheduler,
        seed: int,
    ) -> None:
        self.store = store
        self.ui = ui
        self.clock = clock
        self.scheduler = scheduler
        self.seed = seed
        self.queue: list[Entry] = []
        self.done: list[Done] = []
        self.position = 0

    def run(self, queue: list[Entry], session_id: int) -> Summary:
        """Drill the queue until it is empty or the student quits (``q``, EOF, Ctrl-C)."""
        self.queue = queue
        self.session_id = session_id
        started = self.clock()
        quit_early = False
        try:
            while self.position < len(self.queue):
                entry = self.queue[self.position]
                try:
                    self._item(entry)
                except _UndoError:
                    self._undo()
        except (_QuitError, EOFError, KeyboardInterrupt):
            quit_early = True
        return self._summary(started, quit_early=quit_early)

    # one item ------------------------------------------------------------------------------

    def _ask(self, label: str) -> str:
        while True:
            text = self.ui.ask(label).strip()
            if text == "q":
                raise _QuitError
            if text == "u":
                if self.done:
                    raise _UndoError
                self.ui.show_note("Nothing to undo yet.")
                continue
            return text

    def _item(self, entry: Entry) -> None:
        question = entry.question
        count = self.store.attempt_count(entry.bank.bank, question.id)
        draw = review_seed(self.seed, entry.bank.bank, question.id, count)
        variant = entry.book.variant(question, seed=draw)
        self.ui.show_item(self._view(entry, variant))
        shown_at = self.clock()
        hints = 0
        revealed = skipped = False
        verdicts: list[Verdict] = []
        responses: dict[str, str] = {}
        earlier: dict[str, str] = {}
        for slot in entry.book.slots_of(question):
            part_id = slot.part
            if part_id is not None and not skipped:
                self.ui.show_slot(SlotView(part_id, variant.fill(slot.prompt), slot.units))
            label = self._label(question, part_id)
            while True:
                text = "" if revealed or skipped else self._ask(label)
                if text == "?":
                    hint = slot.hint
                    if hint and hints == 0:
                        hints = 1
                    shown = f"Hint: {variant.fill(hint)}" if hint else "No hint for this one."
                    self.ui.show_note(shown)
                    continue
                if text in ("!", "s") or revealed or skipped:
                    revealed = revealed or text == "!"
                    skipped = skipped or text == "s"
                    verdict = grade_response(
                        entry.book, question, None, variant=variant, part=part_id
                    )
                    break
                if not text:
                    self.ui.show_note(f"Type your answer, or {COMMANDS}.")
                    continue
                verdict = grade_response(
                    entry.book, question, text, variant=variant, part=part_id, earlier=earlier
                )
                if verdict.status is Status.INVALID:
                    self.ui.show_note(verdict.feedback or "That cannot be read as an answer.")
                    continue
                responses[part_id or ""] = text
                if part_id is not None:
                    earlier[part_id] = text
                break
            verdicts.append(verdict)
            if skipped:
                continue
            if isinstance(question, FreeText) and not revealed:
                self.ui.show_free_text(question, verdict)
            else:
                self.ui.show_verdict(verdict, label=part_id, revealed=revealed)
        score = sum(v.score for v in verdicts) / (sum(v.max_score for v in verdicts) or 1)
        tag = next((v.tag for v in verdicts if v.tag and not v.is_correct), None)
        if revealed or skipped:
            word, rating = ("revealed" if revealed else "skipped"), Rating.Again
        elif isinstance(question, FreeText):
            rating = self._self_mark(score)
            word = {1: "incorrect", 2: "partial"}.get(int(rating), "correct")
        else:
            word = _verdict_word([v.status for v in verdicts], score)
            rating = _rating_for(score, hints > 0)
        response = (
            None
            if not responses
            else responses.get("")
            if list(responses) == [""]
            else json.dumps(responses, ensure_ascii=False)
        )
        self._finish(
            entry,
            word=word,
            rating=rating,
            score=None if isinstance(question, FreeText) else score,
            response=response,
            hints=hints,
            tag=tag,
            shown_at=shown_at,
            explanation=explanation_for(entry.book, question, variant),
        )

    def _self_mark(self, score: float) -> Rating:
        suggestion = 1 if score < 0.5 else 2 if score < 1 else 3
        label = f"Your mark: 1 again · 2 hard · 3 good · 4 easy [{suggestion}]"
        while True:
            text = self._ask(label)
            if not text:
                return Rating(suggestion)
            if text in ("1", "2", "3", "4"):
                return Rating(int(text))
            self.ui.show_note("Type 1, 2, 3 or 4 (Enter takes the suggestion).")

    def _finish(
        self,
        entry: Entry,
        *,
        word: str,
        rating: Rating,
        score: float | None,
        response: str | None,
        hints: int,
        tag: str | None,
        shown_at: datetime,
        explanation: str | None,
    ) -> None:
        now = self.clock()
        before = entry.row.card
        scheduled = is_due(before, now)
        duration = max(0, int((now - shown_at).total_seconds() * 1000))
        after = self._review(entry, before, rating, now, duration) if scheduled else before
        attempt = Attempt(
            session_id=self.session_id,
            bank_id=entry.bank.bank,
            item_id=entry.question.id,
            content_sha=entry.row.content_sha,
            answered_at=now,
            response=response,
            verdict=word,
            score=score,
            rating=int(rating),
            hints_used=hints,
            duration_ms=duration,
            scheduled=scheduled,
            tag=tag,
            card_before=before,
            card_after=after,
        )
        attempt_id = self.store.record(attempt)
        entry.row.card = after
        requeued = None
        if rating == Rating.Again and word != "skipped":
            requeued = Entry(entry.book, entry.question, entry.row, new=False, retry=True)
            self.queue.insert(min(self.position + 1 + RETRY_GAP, len(self.queue)), requeued)
        self.done.append(Done(entry, attempt_id, word, tag, requeued, self.position))
        self.position += 1
        question = entry.question
        easy_ok = scheduled and word == "correct" and rating != Rating.Easy
        self.ui.show_outcome(
            Outcome(
                verdict=word,
                rating=rating,
                scheduled=scheduled,
                next_due=after.due if after is not None and scheduled else None,
                now=now,
                explanation=explanation,
                correction=question.correction if isinstance(question, SpotTheError) else None,
                can_mark_easy=easy_ok,
            )
        )
        self._after(entry, attempt, attempt_id, easy_ok=easy_ok)

    def _after(self, entry: Entry, attempt: Attempt, attempt_id: int, *, easy_ok: bool) -> None:
        label = (
            "Enter: next · e easy · u undo · q quit" if easy_ok else "Enter: next · u undo · q quit"
        )
        while True:
            text = self._ask(label)
            if text == "e" and easy_ok:
                card = self._review(
                    entry,
                    attempt.card_before,
                    Rating.Easy,
                    attempt.answered_at,
                    attempt.duration_ms,
                )
                self.store.rerate(attempt_id, rating=int(Rating.Easy), card_after=card)
                entry.row.card = card
                self.ui.show_note(
                    f"Marked easy: next review {when(card.due, attempt.answered_at)}."
                )
                return
            if not text:
                return
            self.ui.show_note(f"Press Enter for the next item ({label}).")

    def _review(
        self, entry: Entry, before: Card | None, rating: Rating, now: datetime, ms: int | None
    ) -> Card:
        card, _ = self.scheduler.review_card(
            before if before is not None else Card(card_id=entry.row.card_id, due=now),
            rating,
            review_datetime=now,
            review_duration=ms,
        )
        return card

    def _undo(self) -> None:
        last = self.done.pop()
        self.store.undo(last.attempt_id)
        last.entry.row.card = self.store.row(last.entry.bank.bank, last.entry.question.id).card
        if last.requeued is not None and last.requeued in self.queue:
            self.queue.remove(last.requeued)
        self.position = last.position
        self.ui.show_note(f"Undone: {last.entry.question.id} ({last.verdict}); ask it again.")

    # views ---------------------------------------------------------------------------------

    def _view(self, entry: Entry, variant: Variant) -> ItemView:
        question = entry.question
        choices: tuple[tuple[str, str], ...] = ()
        if isinstance(question, MultipleChoice | SpotTheError):
            order = shown_choices(question, variant)
            choices = tuple((LETTERS[k], question.choices[i].text) for k, i in enumerate(order))
        return ItemView(
            bank=entry.bank.bank,
            item_id=question.id,
            kind=question.type,
            position=self.position + 1,
            total=len(self.queue),
            right=sum(d.verdict == "correct" for d in self.done),
            wrong=sum(d.verdict not in {"correct", "partial"} for d in self.done),
            partial=sum(d.verdict == "partial" for d in self.done),
            new=entry.new,
            retry=entry.retry,
            prompt=prompt_of(question, variant),
            statement=question.statement if isinstance(question, SpotTheError) else None,
            choices=choices,
            multiple=isinstance(question, MultipleChoice) and question.multiple,
        )

    @staticmethod
    def _label(question: AnyQuestion, part_id: str | None) -> str:
        if isinstance(question, TrueFalse):
            return "True or false? (t/f)"
        if isinstance(question, MultipleChoice) and question.multiple:
            return "Your choices (e.g. A C)"
        if isinstance(question, MultipleChoice | SpotTheError):
            return "Your choice"
        if isinstance(question, FreeText):
            return "Your answer (one line)"
        return f"{part_id} =" if part_id else "Your answer"

    def _summary(self, started: datetime, *, quit_early: bool) -> Summary:
        now = self.clock()
        words = Counter(d.verdict for d in self.done)
        tags = Counter(d.tag for d in self.done if d.tag)
        missed = tuple(
            dict.fromkeys(d.entry.question.id for d in self.done if d.verdict != "correct")
        )
        cards = [
            e.row.card
            for e in {id(e.row): e for e in self._all_entries()}.values()
            if e.row.card is not None
        ]
        upcoming = sorted(c.due for c in cards if c.due > now)
        return Summary(
            answered=len(self.done),
            right=words["correct"],
            partial=words["partial"],
            wrong=len(self.done) - words["correct"] - words["partial"],
            seconds=(now - started).total_seconds(),
            misconceptions=tuple(sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))),
            missed=missed,
            due_now=sum(1 for c in cards if c.due <= now),
            due_day=sum(1 for c in cards if c.due <= now + timedelta(days=1)),
            next_due=upcoming[0] if upcoming else None,
            now=now,
            quit_early=quit_early,
        )

    def _all_entries(self) -> list[Entry]:
        return [d.entry for d in self.done] + self.queue


def practice(
    banks: Sequence[Bank | CompiledBank],
    *,
    store: Store,
    ui: DrillUI,
    clock: Clock = utc_now,
    new: int = 10,
    limit: int = 20,
    tags: Sequence[str] = (),
    types: Sequence[str] = (),
    cram: bool = False,
    seed: int | None = None,
) -> Summary:
    """Run one practice session and return its summary (every answer is already stored).

    Args:
        banks: the banks to drill (each compiled once here when it is not yet).
        store: the progress database.
        ui: what shows items and reads answers.
        clock: the time source (UTC); ``QUIZGYM_NOW`` freezes it.
        new: at most this many never-seen items.
        limit: at most this many items in all (wrong ones returning do not count).
        tags: only items with one of these tags.
        types: only items of these types.
        cram: also drill learned items that are not due; those answers leave the schedule alone.
        seed: makes variants, order and intervals reproducible (disables FSRS interval fuzz).

    Raises:
        QuizgymError: an unknown type, or nothing matches the filters.
    """
    books = [compiled(bank) for bank in banks]
    plain = [book.bank for book in books]
    check_filters(plain, tags=tags, types=types)
    now = clock()
    rows = [
        store.sync_items(
            bank.bank,
            [ItemInfo(q.id, content_sha(q), q.type, tuple(q.tags)) for q in bank.questions],
        )
        for bank in plain
    ]
    queue = build_queue(
        books, rows, now=now, new=new, limit=limit, tags=tags, types=types, cram=cram
    )
    scheduler = Scheduler(enable_fuzzing=seed is None)
    session_seed = seed if seed is not None else secrets.randbelow(2**31)
    drill = Drill(store=store, ui=ui, clock=clock, scheduler=scheduler, seed=session_seed)
    session_id = store.start_session(
        banks=[b.bank for b in plain], mode="cram" if cram else "review", now=now
    )
    summary = drill.run(queue, session_id)
    store.end_session(session_id, now=clock())
    ui.show_summary(summary)
    return summary


__all__ = [
    "LEARN_AHEAD",
    "Drill",
    "DrillUI",
    "ItemView",
    "Outcome",
    "SlotView",
    "Summary",
    "build_queue",
    "clock_from",
    "content_sha",
    "explanation_for",
    "is_due",
    "practice",
    "review_seed",
    "utc_now",
    "when",
]
