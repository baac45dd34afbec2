"""A drill's item, outcome and clock in, what the drill shows as plain records out, light enough for
``quizgym stats`` (no answer engine)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from fsrs import Rating

from quizgym.errors import QuizgymError

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The wall clock, in UTC (what py-fsrs requires)."""
    return datetime.now(UTC)


def clock_from(text: str | None) -> Clock:
    """A frozen clock at an ISO-8601 time (``QUIZGYM_NOW``), or the wall clock when None.

    Raises:
        QuizgymError: the text is not an ISO-8601 time.
    """
    if not text:
        return utc_now
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise QuizgymError(f"QUIZGYM_NOW={text!r} is not an ISO-8601 time") from exc
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return lambda: moment


# --- what the UI is shown ---------------------------------------------------------------------


@dataclass(frozen=True)
class ItemView:
    """One item as the student first sees it."""

    bank: str
    item_id: str
    kind: str
    position: int
    total: int
    right: int
    wrong: int
    new: bool
    retry: bool
    prompt: str
    statement: str | None = None
    choices: tuple[tuple[str, str], ...] = ()
    """(letter, text) in the order shown."""
    multiple: bool = False
    partial: int = 0
    """Items answered partly right so far (the header counts them apart)."""


@dataclass(frozen=True)
class SlotView:
    """One answer slot: the question itself, or a part of a numeric question."""

    label: str
    prompt: str | None = None
    units: str | None = None


@dataclass(frozen=True)
class Outcome:
    """How an item went, shown after the last slot."""

    verdict: str
    rating: Rating
    scheduled: bool
    next_due: datetime | None
    now: datetime
    explanation: str | None
    correction: str | None
    can_mark_easy: bool


@dataclass(frozen=True)
class Summary:
    """The end of a session."""

    answered: int
    right: int
    partial: int
    wrong: int
    seconds: float
    misconceptions: tuple[tuple[str, int], ...]
    missed: tuple[str, ...]
    due_now: int
    due_day: int
    next_due: datetime | None
    now: datetime
    quit_early: bool
    unsaved: str | None = None
    """The item whose answer could not be saved (the session stopped there), if any."""


def when(due: datetime, now: datetime) -> str:
    """``in 10 min``, ``in 2 days``: a due time relative to now, rounded to its unit.

    A unit is chosen after rounding, so 59.9 s reads ``in 1 min`` (not ``in 60 s``) and 23.9 h
    ``in 1 day``.
    """
    seconds = (due - now).total_seconds()
    if seconds <= 0:
        return "now"
    if round(seconds) < 60:
        return f"in {seconds:.0f} s"
    if round(seconds / 60) < 60:
        return f"in {seconds / 60:.0f} min"
    if round(seconds / 3600) < 24:
        return f"in {seconds / 3600:.0f} h"
    days = round(seconds / 86400)
    return f"in {days} day" + ("" if days == 1 else "s")
