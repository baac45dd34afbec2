"""A queue of items in; each prompt, graded answer and rescheduled card out, with all input and
output injected."""

from __future__ import annotations

import json
import secrets
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from fsrs import Card, Rating, Scheduler

from quizgym.answers import Status, Verdict, grade_response, shown_choices
from quizgym.meaning import likely, too_few_figures
from quizgym.model import LETTERS, AnyQuestion, Bank
from quizgym.practice.queue import (
    LEARN_AHEAD,
    content_sha,
    is_due,
    order_queue,
    review_seed,
    slot_label,
)
from quizgym.practice.store import (
    Answer,
    ItemInfo,
    ItemRow,
    Logged,
    Store,
    StoreError,
    holding_ctrl_c,
)
from quizgym.practice.tuning import tuning_for
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
from quizgym.solver import CompiledBank, Slot, Variant, compiled, prompt_of
from quizgym.types import (
    TextInteraction,
    choices_of,
    correction_of,
    drawn_prompt,
    interaction_of,
    is_multiple,
    pairing_of,
    statement_of,
    text_of,
)

if TYPE_CHECKING:
    from quizgym.practice.preview import Opening

RETRY_GAP = 3
"""A wrong item comes back after this many other items (or at the end)."""
COMMANDS = "? hint · ! reveal · s skip · u undo · q quit"


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

    def show_free_text(self, text: TextInteraction, verdict: Verdict) -> None:
        """The model answer and rubric after a free-text answer."""

    def show_outcome(self, outcome: Outcome) -> None:
        """The item's explanation and its next review."""

    def show_summary(self, summary: Summary) -> None:
        """The end-of-session summary."""


class _QuitError(Exception):
    """The student typed ``q``."""


class _UndoError(Exception):
    """The student typed ``u``."""


class _UnsavedError(Exception):
    """An answer could not be saved: the session stops before showing its verdict."""

    def __init__(self, item_id: str, error: StoreError) -> None:
        super().__init__(str(error))
        self.item_id = item_id
        self.error = error


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
    """Due items first (most overdue first), then up to ``new`` new ones, ``limit`` in all
    (:func:`~quizgym.practice.queue.order_queue`).

    With ``cram``, items already learned but not due come after the due ones (soonest first).
    """
    candidates: list[tuple[Entry, Card | None]] = []
    for book, bank_rows in zip(map(compiled, banks), rows, strict=True):
        for question in book.bank.questions:
            if not matches(question, tags=tags, types=types):
                continue
            row = bank_rows[question.id]
            candidates.append((Entry(book, question, row, new=row.card is None), row.card))
    return order_queue(candidates, now=now, new=new, limit=limit, cram=cram)


# --- the session ------------------------------------------------------------------------------


def rating_for(score: float, hinted: bool) -> Rating:
    """The rating an answer's score gives (the table in the module's docstring)."""
    if score >= 1:
        return Rating.Hard if hinted else Rating.Good
    return Rating.Hard if score >= 0.5 else Rating.Again


def verdict_word(statuses: Sequence[Status], score: float) -> str:
    """An item's verdict from its slots': correct, partial or incorrect."""
    if all(s is Status.CORRECT for s in statuses):
        return "correct"
    return "partial" if score > 0 else "incorrect"


def _self_mark_word(rating: Rating) -> str:
    return {Rating.Again: "incorrect", Rating.Hard: "partial"}.get(rating, "correct")


def _suggested_mark(score: float) -> Rating:
    """The rubric's suggestion for a free-text answer: < 50 % Again, < 100 % Hard, else Good."""
    return Rating.Again if score < 0.5 else Rating.Hard if score < 1 else Rating.Good


@dataclass
class _Turn:
    """One item being asked: its slots, what has been answered and hinted, what is saved."""

    entry: Entry
    variant: Variant
    slots: tuple[Slot, ...]
    shown_at: datetime
    hints: int = 0
    revealed: bool = False
    skipped: bool = False
    verdicts: list[Verdict] = field(default_factory=list)
    responses: dict[str, str] = field(default_factory=dict)
    earlier: dict[str, str] = field(default_factory=dict)
    self_mark: Rating | None = None
    """Free text: the student's own mark, once given (the rubric's suggestion until then)."""
    done: Done | None = None
    """The saved attempt, from the first graded slot on."""
    logged: Logged | None = None
    saved_at: datetime | None = None
    """When the attempt was first saved: its answer time, and the time it is scheduled from."""
    duration_ms: int = 0
    figures: set[str] = field(default_factory=set)
    """The slots whose answer was sent back once for more figures (``0.17`` for 1/6)."""

    @property
    def question(self) -> AnyQuestion:
        """The item's question."""
        return self.entry.question

    @property
    def free_text(self) -> bool:
        """A free-text answer the student marks themself (not revealed or skipped)."""
        return self.self_marked and not (self.revealed or self.skipped)

    @property
    def self_marked(self) -> bool:
        """Whether the student marks the answer themself (a text scored by a rubric)."""
        return text_of(self.question) is not None

    def grade(self) -> tuple[str, Rating, float | None, str | None]:
        """(verdict word, rating, score, misconception) of the answers so far.

        Parts not answered yet count as no answer: that is the grade the attempt keeps if the
        session ends here.
        """
        pending = self.slots[len(self.verdicts) :]
        total = sum(v.max_score for v in self.verdicts) + sum(s.points for s in pending)
        score = sum(v.score for v in self.verdicts) / (total or 1)
        tag = next((v.tag for v in self.verdicts if v.tag and not v.is_correct), None)
        logged_score = None if self.self_marked else score
        if self.revealed or self.skipped:
            word = "revealed" if self.revealed else "skipped"
            return word, Rating.Again, logged_score, tag
        if self.free_text:
            rating = self.self_mark or _suggested_mark(score)
            return _self_mark_word(rating), rating, None, tag
        statuses = [v.status for v in self.verdicts] + [Status.BLANK] * len(pending)
        return verdict_word(statuses, score), rating_for(score, self.hints > 0), score, tag

    def response(self) -> str | None:
        """The answer as logged: the text, or a JSON object of the parts answered."""
        if not self.responses:
            return None
        if list(self.responses) == [""]:
            return self.responses[""]
        return json.dumps(self.responses, ensure_ascii=False)


class Drill:
    """One practice session over one or more banks.

    Commit before show: every graded answer — each part of a multi-part question as it comes,
    a free-text answer before its self-mark — is saved (:meth:`_save`) before its verdict or
    the model answer is printed, and later parts or the self-mark revise that saved attempt. A
    session stopped at any prompt (``q``, Ctrl-C, EOF, SIGKILL) keeps everything it showed.

    The drill never grades, draws variants or computes keys itself: it asks the answer engine
    (:mod:`quizgym.answers`, :mod:`quizgym.solver`) and hands the results to a :class:`DrillUI`.
    Scheduling is py-fsrs; storage is :class:`~quizgym.practice.store.Store`.

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

    Only an item that is due (or a learning step due within :data:`LEARN_AHEAD`) is reviewed by the
    scheduler; anything else (``--all``, a wrong item retried early) is logged with ``scheduled=0``
    and leaves the schedule alone (fsrs4anki#707).
    """

    def __init__(
        self,
        *,
        store: Store,
        ui: DrillUI,
        clock: Clock,
        scheduler: Scheduler,
        seed: int,
        opening: Opening | None = None,
    ) -> None:
        self.store = store
        self.ui = ui
        self.clock = clock
        self.scheduler = scheduler
        self.seed = seed
        self.queue: list[Entry] = []
        self.done: list[Done] = []
        self.position = 0
        self.failure: StoreError | None = None
        """The write that stopped the session, if one failed."""
        self.opening = opening
        """The first item as shown before the drill was loaded (used once, by :meth:`_start`)."""
        self._typed: str | None = None
        """The line typed at the opening's prompt, which :meth:`_read` hands back first."""
        self._typed_at: datetime | None = None
        self._line_at: datetime | None = None
        """When the last line was read: an answer's time (whatever is done after Enter)."""
        self._part_shown = False
        """The opening showed the first part's prompt already."""

    def run(self, queue: list[Entry], session_id: int) -> Summary:
        """Drill the queue until it is empty, the student quits (``q``, EOF, Ctrl-C) or an
        answer cannot be saved."""
        self.queue = queue
        self.session_id = session_id
        started = self.opening.now if self.opening is not None else self.clock()
        quit_early = False
        unsaved = None
        try:
            while self.position < len(self.queue):
                entry = self.queue[self.position]
                try:
                    self._item(entry)
                except _UndoError:
                    self._undo()
        except (_QuitError, EOFError, KeyboardInterrupt):
            quit_early = True
        except _UnsavedError as exc:
            quit_early, unsaved, self.failure = True, exc.item_id, exc.error
        except StoreError as exc:  # a read failed: every answer so far is saved
            quit_early, self.failure = True, exc
        return self._summary(started, quit_early=quit_early, unsaved=unsaved)

    # one item ------------------------------------------------------------------------------

    def _ask(self, label: str) -> str:
        while True:
            text = self._read(label).strip()
            if text == "q":
                raise _QuitError
            if text == "u":
                if self.done:
                    raise _UndoError
                self.ui.show_note("Nothing to undo yet.")
                continue
            return text

    def _read(self, label: str) -> str:
        """The next line: what was typed at the opening's prompt, once, else a new one."""
        if self._typed is not None:
            text, self._typed = self._typed, None
            self._line_at = self._typed_at
            return text
        text = self.ui.ask(label)
        self._line_at = self.clock()
        return text

    def _item(self, entry: Entry) -> None:
        """Ask every slot of an item, saving each graded one before showing it, then conclude."""
        turn = self._start(entry)
        while len(turn.verdicts) < len(turn.slots):
            graded = self._ask_slot(turn, turn.slots[len(turn.verdicts)])
            turn.verdicts += [verdict for _, verdict in graded]
            self._save(turn)
            self._show(turn, graded)
        if turn.free_text:
            turn.self_mark = self._self_mark(turn)
            self._save(turn)
        self._conclude(turn)

    def _start(self, entry: Entry) -> _Turn:
        """Draw this review's variant and show the item."""
        question = entry.question
        count = self.store.attempt_count(entry.bank.bank, question.id)
        variant = entry.book.variant(
            question, seed=review_seed(self.seed, entry.bank.bank, question.id, count)
        )
        view, slots = self._view(entry, variant), entry.book.slots_of(question)
        opening, self.opening = self.opening, None
        if opening is not None:
            if opening.stopped is not None:
                raise opening.stopped  # Ctrl-C or EOF at the first prompt: the session ends
            typed = opening.typed or ""
            if typed.strip() == "q":
                raise _QuitError
            if self._opened(opening, view, question, slots[0], variant):
                # On the screen already: its answer is the next line, timed from the screen.
                self._typed, self._typed_at = typed, opening.answered_at
                self._part_shown = opening.first.slot is not None
                return _Turn(entry, variant, slots, shown_at=opening.shown_at)
            self.ui.show_note(
                f"The first question changed while the drill was loading (another drill on"
                f" this progress file may have answered it), so your answer “{typed.strip()}”"
                " was not used. Here it is as it is now: please answer again."
            )
        self.ui.show_item(view)
        return _Turn(entry, variant, slots, shown_at=self.clock())

    def _opened(
        self, opening: Opening, view: ItemView, question: AnyQuestion, slot: Slot, variant: Variant
    ) -> bool:
        """Whether the opening showed exactly this item, part and label, for this question's
        content (a question edited, or drawn for another review, is not the one answered)."""
        part = (
            SlotView(slot.part, variant.fill(slot.prompt), slot.units)
            if slot.part is not None
            else None
        )
        label = self._label(question, slot.part, slot.units)
        shown = opening.first
        return (shown.view, shown.slot, shown.label, shown.sha) == (
            view,
            part,
            label,
            content_sha(question),
        )

    def _ask_slot(self, turn: _Turn, slot: Slot) -> list[tuple[Slot, Verdict]]:
        """Ask one slot until it has an answer; ``!``/``s`` settle it and every slot after it.

        Hints and unreadable answers are handled here and asked again; nothing is saved yet.
        """
        question, variant = turn.question, turn.variant
        if slot.part is not None and not self._part_shown:
            self.ui.show_slot(SlotView(slot.part, variant.fill(slot.prompt), slot.units))
        self._part_shown = False
        label = self._label(question, slot.part, slot.units)
        while True:
            text = self._ask(label)
            if text == "?":
                if slot.hint:
                    turn.hints = max(turn.hints, 1)
                self.ui.show_note(
                    f"Hint: {variant.fill(slot.hint)}" if slot.hint else "No hint for this one."
                )
                continue
            if text in ("!", "s"):
                turn.revealed, turn.skipped = text == "!", text == "s"
                rest = turn.slots[turn.slots.index(slot) :]
                return [(s, self._grade(turn, s, None)) for s in rest]
            if not text:
                self.ui.show_note(f"Type your answer, or {COMMANDS}.")
                continue
            verdict = self._grade(turn, slot, text)
            if verdict.status is Status.BLANK:  # "idk", "-", "n/a": no answer
                self.ui.show_note(f"That is no answer. Type your answer, or {COMMANDS}.")
                continue
            if verdict.status is Status.INVALID:
                self.ui.show_note(self._unreadable(turn, slot, text, verdict))
                continue
            if slot.id not in turn.figures and too_few_figures(slot, verdict):
                turn.figures.add(slot.id)  # once: typed again, it is graded as it is
                self.ui.show_note(
                    f"{text} agrees with the answer as far as it goes. {verdict.feedback}"
                    " Type it again with more figures."
                )
                continue
            turn.responses[slot.part or ""] = text
            if slot.part is not None:
                turn.earlier[slot.part] = text
            return [(slot, verdict)]

    def _unreadable(self, turn: _Turn, slot: Slot, text: str, verdict: Verdict) -> str:
        """What the student is told of an answer that could not be read: what they probably
        meant, asked (``did you mean true?``), when it can be told; else why it did not read."""
        try:
            found = likely(
                turn.entry.book, turn.question, text, variant=turn.variant, part=slot.part
            )
        except Exception:  # a suggestion only: the reason it did not read is still said
            found = None
        if found is None or not found.question:
            return verdict.feedback or "That cannot be read as an answer."
        return f"“{text}” could not be read: {found.question} Type it the way you mean it."

    def _grade(self, turn: _Turn, slot: Slot, text: str | None) -> Verdict:
        """The engine's verdict; an engine failure on one answer is reported, never fatal."""
        try:
            return grade_response(
                turn.entry.book,
                turn.question,
                text,
                variant=turn.variant,
                part=slot.part,
                earlier=turn.earlier,
            )
        except Exception as exc:  # per-answer isolation: the session goes on
            return Verdict(
                question=slot.id,
                status=Status.INVALID,
                score=0.0,
                max_score=slot.points,
                feedback=f"Your answer could not be graded ({type(exc).__name__}: {exc}); this"
                " is a bug in quizgym. Type it another way, or s to skip.",
            )

    def _show(self, turn: _Turn, graded: list[tuple[Slot, Verdict]]) -> None:
        """Show what was just saved: verdicts (answers when revealed), the model answer."""
        if turn.skipped:
            return
        for k, (slot, verdict) in enumerate(graded):
            if k and slot.part is not None:  # later parts settled by a reveal
                self.ui.show_slot(SlotView(slot.part, turn.variant.fill(slot.prompt), slot.units))
            if turn.free_text:
                text = text_of(turn.question)
                assert text is not None
                self.ui.show_free_text(text, verdict)
            else:
                self.ui.show_verdict(verdict, label=slot.part, revealed=turn.revealed)

    def _self_mark(self, turn: _Turn) -> Rating:
        suggestion = int(turn.grade()[1])
        label = f"Your mark: 1 again · 2 hard · 3 good · 4 easy [{suggestion}]"
        while True:
            text = self._ask(label)
            if not text:
                return Rating(suggestion)
            if text in ("1", "2", "3", "4"):
                return Rating(int(text))
            self.ui.show_note("Type 1, 2, 3 or 4 (Enter takes the suggestion).")

    def _save(self, turn: _Turn, *, easy: bool = False) -> Logged:
        """Commit the item's answers so far: the first time as a new attempt, then as revisions.

        Args:
            turn: the item being asked.
            easy: re-rate the (correct) answer Easy, keeping its time and duration.

        Raises:
            _UnsavedError: the database could not be written; nothing more is shown.
        """
        entry = turn.entry
        word, graded, score, tag = turn.grade()
        rating = Rating.Easy if easy else graded
        now = self._line_at if self._line_at is not None else self.clock()
        if not easy:
            turn.duration_ms = max(0, int((now - turn.shown_at).total_seconds() * 1000))
        at, ms = turn.saved_at or now, turn.duration_ms
        answer = Answer(
            session_id=self.session_id,
            bank_id=entry.bank.bank,
            item_id=entry.question.id,
            content_sha=entry.row.content_sha,
            answered_at=at,
            response=turn.response(),
            verdict=word,
            score=score,
            rating=int(rating),
            hints_used=turn.hints,
            duration_ms=ms,
            tag=tag,
        )

        def review(before: Card | None) -> Card:
            return self._review(entry, before, rating, at, ms)

        # Ctrl-C waits until the attempt is both committed and counted in the summary.
        with holding_ctrl_c():
            logged = self._write(turn, answer, review)
        entry.row.card = logged.card
        if logged.overtaken and not (turn.logged is not None and turn.logged.overtaken):
            self.ui.show_note(
                f"Another drill has answered {entry.question.id} since: your answer is logged,"
                " its schedule stands."
            )
        turn.logged = logged
        return logged

    def _write(self, turn: _Turn, answer: Answer, review: Callable[[Card | None], Card]) -> Logged:
        """Record the turn's first answer, or revise its attempt; keep :attr:`done` in step."""
        entry, at = turn.entry, answer.answered_at
        try:
            if turn.done is None:
                logged = self.store.record(
                    answer, review=lambda before: review(before) if is_due(before, at) else None
                )
                turn.saved_at = at
                turn.done = Done(
                    entry, logged.attempt_id, answer.verdict, answer.tag, None, self.position
                )
                self.done.append(turn.done)
            else:
                logged = self.store.revise(turn.done.attempt_id, answer, review=review)
                turn.done.verdict, turn.done.tag = answer.verdict, answer.tag
        except StoreError as exc:
            raise _UnsavedError(entry.question.id, exc) from exc
        return logged

    def _conclude(self, turn: _Turn) -> None:
        """Requeue a failed item, show the outcome, and wait for Enter (or ``e``)."""
        entry, logged, done = turn.entry, turn.logged, turn.done
        assert logged is not None and done is not None
        word, rating, _, _ = turn.grade()
        if rating == Rating.Again and word != "skipped":
            done.requeued = Entry(entry.book, entry.question, entry.row, new=False, retry=True)
            self.queue.insert(min(self.position + 1 + RETRY_GAP, len(self.queue)), done.requeued)
        self.position += 1
        question = entry.question
        easy_ok = (
            logged.scheduled
            and not logged.overtaken
            and word == "correct"
            and rating != Rating.Easy
        )
        card = logged.card
        self.ui.show_outcome(
            Outcome(
                verdict=word,
                rating=rating,
                scheduled=logged.scheduled,
                next_due=card.due if card is not None and logged.scheduled else None,
                now=self.clock(),
                explanation=explanation_for(entry.book, question, turn.variant),
                correction=correction_of(question),
                can_mark_easy=easy_ok,
            )
        )
        self._after(turn, easy_ok=easy_ok)

    def _after(self, turn: _Turn, *, easy_ok: bool) -> None:
        label = (
            "Enter: next · e easy · u undo · q quit" if easy_ok else "Enter: next · u undo · q quit"
        )
        while True:
            text = self._ask(label)
            if text == "e" and easy_ok:
                logged = self._save(turn, easy=True)
                if not logged.overtaken and logged.card is not None:
                    self.ui.show_note(
                        f"Marked easy: next review {when(logged.card.due, self.clock())}."
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
        last = self.done[-1]
        item = last.entry.question.id
        try:
            undone = self.store.undo(last.attempt_id)
        except StoreError as exc:
            raise _UnsavedError(item, exc) from exc
        if not undone:
            self.ui.show_note(
                f"Not undone: another drill has answered {item} since, and its review stands."
            )
            self.position = max(self.position, last.position + 1)
            return
        self.done.pop()
        last.entry.row.card = self.store.row(last.entry.bank.bank, item).card
        if last.requeued is not None and last.requeued in self.queue:
            self.queue.remove(last.requeued)
        self.position = last.position
        self.ui.show_note(f"Undone: {item} ({last.verdict}); ask it again.")

    # views ---------------------------------------------------------------------------------

    def _view(self, entry: Entry, variant: Variant) -> ItemView:
        question = entry.question
        choices: tuple[tuple[str, str], ...] = ()
        pairing = pairing_of(question)
        options = choices_of(question, pairing.items[0].id if pairing else None)
        if options is not None and options.lettered:  # a matching item's: the answers
            order = shown_choices(options, variant)
            choices = tuple((LETTERS[k], options.choices[i].text) for k, i in enumerate(order))
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
            prompt=drawn_prompt(question, prompt_of(question, variant)),
            statement=statement_of(question),
            choices=choices,
            multiple=is_multiple(question),
        )

    @staticmethod
    def _label(question: AnyQuestion, part_id: str | None, units: str | None = None) -> str:
        answer = interaction_of(question).kind
        return slot_label(answer, multiple=is_multiple(question), part=part_id, units=units)

    def _summary(self, started: datetime, *, quit_early: bool, unsaved: str | None) -> Summary:
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
            unsaved=unsaved,
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
    opening: Opening | None = None,
) -> Summary:
    """Run one practice session and return its summary (every answer is already stored).

    Each answer is committed before its verdict is shown. When one cannot be (a full disk, a
    read-only file), the session stops at once: the summary says which answer was not saved,
    and the error is raised after it.

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
        opening: the first item as shown before the drill was loaded
            (:mod:`~quizgym.practice.preview`): its session start and seed are the session's,
            and when the drill's first item is the one shown, the answer typed there is its
            first answer.

    Raises:
        QuizgymError: an unknown type, or nothing matches the filters.
        StoreError: the progress database cannot be read or written.
    """
    books = [compiled(bank) for bank in banks]
    plain = [book.bank for book in books]
    check_filters(plain, tags=tags, types=types)
    now = opening.now if opening is not None else clock()
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
    with store.guard("read your review history"):
        tuning = tuning_for(store.conn)  # the student's own parameters once the log is long
    scheduler = Scheduler(parameters=tuning.parameters, enable_fuzzing=seed is None)
    if opening is not None:
        session_seed = opening.first.seed
    else:
        session_seed = seed if seed is not None else secrets.randbelow(2**31)
    drill = Drill(
        store=store, ui=ui, clock=clock, scheduler=scheduler, seed=session_seed, opening=opening
    )
    session_id = store.start_session(
        banks=[b.bank for b in plain], mode="cram" if cram else "review", now=now
    )
    summary = drill.run(queue, session_id)
    failure = drill.failure
    if failure is None:
        try:
            store.end_session(session_id, now=clock())
        except StoreError as exc:  # every answer is saved; only the session's end time is not
            failure = exc
    ui.show_summary(summary)
    if failure is not None:
        raise failure
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
