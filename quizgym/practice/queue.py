"""The progress store's rows in; what the drill decides before any answer (due-ness, the queue's
order, each review's seed, the label an answer is asked with) out."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, TypeVar

from fsrs import Card, State

if TYPE_CHECKING:
    from quizgym.model import QuestionBase

__all__ = ["LEARN_AHEAD", "content_sha", "is_due", "order_queue", "review_seed", "slot_label"]

LEARN_AHEAD = timedelta(minutes=20)
"""Learning/relearning steps due this soon count as due (Anki's learn-ahead limit)."""

T = TypeVar("T")


def content_sha(question: QuestionBase) -> str:
    """A hash of everything a question says (flags edits; progress stays keyed by id)."""
    text = json.dumps(question.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def is_due(card: Card | None, now: datetime) -> bool:
    """New items are due; learning steps within :data:`LEARN_AHEAD`; others at their due time."""
    if card is None:
        return True
    if card.state in (State.Learning, State.Relearning):
        return card.due <= now + LEARN_AHEAD
    return card.due <= now


def order_queue(
    items: Iterable[tuple[T, Card | None]], *, now: datetime, new: int, limit: int, cram: bool
) -> list[T]:
    """Due items first (most overdue first), then up to ``new`` new ones, ``limit`` in all.

    With ``cram``, items already learned but not due come after the due ones (soonest first).
    ``items`` are the candidates in bank order, each with its card (None: never reviewed).

    Light (fsrs's card, :mod:`hashlib`): the first prompt is worked out with it before the answer
    engine is loaded, and the drill itself uses the same code.
    """
    due: list[tuple[datetime, int, T]] = []
    fresh: list[T] = []
    later: list[tuple[datetime, int, T]] = []
    for order, (item, card) in enumerate(items, 1):
        if card is None:
            fresh.append(item)
        elif is_due(card, now):
            due.append((card.due, order, item))
        elif cram:
            later.append((card.due, order, item))
    queue = [e for *_, e in sorted(due, key=lambda t: t[:2])]
    queue += [e for *_, e in sorted(later, key=lambda t: t[:2])]
    queue += fresh[: max(new, 0)]
    return queue[: max(limit, 0)]


def review_seed(seed: int, bank_id: str, item_id: str, reviews: int) -> int:
    """The variant seed of an item's review: fresh numbers each time it is logged again.

    ``reviews`` is how many answers to the item are already logged, so a new review draws new
    numbers even under a fixed ``--seed``, while the same seed and history give the same ones.
    """
    digest = hashlib.sha256(f"{seed}\x1f{bank_id}\x1f{item_id}\x1f{reviews}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


def slot_label(kind: str, *, multiple: bool, part: str | None, units: str | None) -> str:
    """What an answer is asked with: by the kind of answer box (``truth``, ``choice``, ``text``
    or ``number``, a question type's interaction), and for a number its part or units."""
    if kind == "truth":
        return "True or false? (t/f)"
    if kind == "choice" and multiple:
        return "Your choices (e.g. A C)"
    if kind == "choice":
        return "Your choice"
    if kind == "pairing":
        return "Its answer (a letter)"
    if kind == "text":
        return "Your answer (one line)"
    if part:  # the part's prompt, shown just above, names its units
        return f"{part} ="
    return f"Your answer in {units}" if units else "Your answer"
