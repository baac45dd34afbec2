"""A scheduler tuned to one student: their review log (the progress database) in; FSRS parameters
fitted to it once it is long enough (the defaults until then), and the retention they predict,
out."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from fsrs import Card, Rating, Scheduler, State

__all__ = [
    "MIN_REVIEWS",
    "Review",
    "Tuning",
    "fit_parameters",
    "histories",
    "log_loss",
    "predicted_retention",
    "tuning_for",
]

MIN_REVIEWS = 400
"""Reviews a day or more after the item's previous answer needed before parameters are fitted."""
DEFAULT_PARAMETERS: tuple[float, ...] = tuple(Scheduler().parameters)

Review = tuple[int, datetime]
"""One scheduled answer: its rating (1 Again … 4 Easy) and when it was given (UTC)."""


@dataclass(frozen=True)
class Tuning:
    """The parameters a student's drill schedules with, and where they came from."""

    parameters: tuple[float, ...]
    fitted: bool
    reviews: int
    """Reviews a day or more apart in the log."""
    why: str
    """What the parameters are, in a sentence (``fitted to your 612 reviews``)."""


def histories(conn: sqlite3.Connection) -> list[list[Review]]:
    """Each item's scheduled answers in the order given (every bank of the database)."""
    out: dict[tuple[str, str], list[Review]] = {}
    cursor = conn.execute(
        "SELECT bank_id, item_id, rating, answered_at FROM attempt WHERE scheduled = 1 ORDER BY id"
    )
    for bank, item, rating, answered_at in cursor:
        out.setdefault((bank, item), []).append((int(rating), datetime.fromisoformat(answered_at)))
    return list(out.values())


def _days(later: datetime, earlier: datetime) -> int:
    return max(0, (later - earlier) // timedelta(days=1))


def long_term_reviews(history: Sequence[Sequence[Review]]) -> int:
    """Answers a day or more after the item's previous one."""
    return sum(
        1
        for reviews in history
        for (_, before), (_, after) in zip(reviews, reviews[1:], strict=False)
        if _days(after, before) >= 1
    )


def fit_parameters(history: Sequence[Sequence[Review]]) -> tuple[float, ...] | None:
    """FSRS parameters fitted to these histories; None without ``fsrs-rs-python``.

    Each history gives one training item per answer after its first: the answers up to it,
    of which the last is the recall to predict (fsrs-rs's convention).

    The fit is fsrs-rs's optimizer (``fsrs-rs-python``, the ``tune`` extra: a small Rust wheel, no
    PyTorch), which minimises the log loss of predicted recall over the student's own reviews, the
    method of Ye, Su & Cao (2022), "A stochastic shortest path algorithm for optimizing spaced
    repetition scheduling", KDD '22, and of Anki's FSRS optimizer. Each item's scheduled answers are
    one history: ratings with the whole days elapsed since the previous answer (0 the same day).
    Until :data:`MIN_REVIEWS` reviews a day or more apart are logged, or without the extra, the
    defaults stay: a few dozen reviews would fit noise.
    """
    try:
        from fsrs_rs_python import FSRS, FSRSItem, FSRSReview
    except ImportError:
        return None
    items = []
    for reviews in history:
        steps = []
        for k, (rating, at) in enumerate(reviews):
            steps.append(FSRSReview(rating, _days(at, reviews[k - 1][1]) if k else 0))
            if k:
                item = FSRSItem(steps[:])
                if item.long_term_review_cnt() > 0:
                    items.append(item)
    if not items:
        return None
    fitted = FSRS(list(DEFAULT_PARAMETERS)).compute_parameters(items)
    return tuple(float(p) for p in fitted)


def tuning_for(conn: sqlite3.Connection) -> Tuning:
    """The parameters for this database's student: fitted once the log is long enough."""
    log = histories(conn)
    reviews = long_term_reviews(log)
    if reviews < MIN_REVIEWS:
        return Tuning(
            DEFAULT_PARAMETERS,
            False,
            reviews,
            f"FSRS's default parameters: yours are fitted once {MIN_REVIEWS} reviews a day or "
            f"more apart are logged ({reviews} so far)",
        )
    fitted = fit_parameters(log)
    if fitted is None:
        return Tuning(
            DEFAULT_PARAMETERS,
            False,
            reviews,
            'FSRS\'s default parameters: pip install "quizgym[tune]" to fit them to your '
            f"{reviews} reviews",
        )
    return Tuning(fitted, True, reviews, f"FSRS parameters fitted to your {reviews} reviews")


def _rating(value: int) -> Rating:
    return Rating(min(4, max(1, value)))


def log_loss(parameters: Sequence[float], history: Sequence[Sequence[Review]]) -> float:
    """The log loss of the recalls these parameters predict, replayed through the scheduler.

    Every answer a day or more after the previous one of its item is predicted from the card
    the earlier answers made (its retrievability then) and counts as recalled unless rated
    Again.
    """
    scheduler = Scheduler(parameters=tuple(parameters), enable_fuzzing=False)
    total, count = 0.0, 0
    for reviews in history:
        card = Card(card_id=1, due=reviews[0][1])
        for k, (rating, at) in enumerate(reviews):
            if k and _days(at, reviews[k - 1][1]) >= 1:
                p = min(max(scheduler.get_card_retrievability(card, at), 1e-6), 1 - 1e-6)
                total -= math.log(p) if rating > 1 else math.log(1 - p)
                count += 1
            card, _ = scheduler.review_card(card, _rating(rating), review_datetime=at)
    return total / count if count else math.nan


def predicted_retention(
    cards: Sequence[Card], parameters: Sequence[float], now: datetime
) -> float | None:
    """The share of these items' learned ones (in review) a student would recall now, as the
    parameters predict it (the mean retrievability); None when none is learned yet."""
    scheduler = Scheduler(parameters=tuple(parameters), enable_fuzzing=False)
    learned = [c for c in cards if c.state == State.Review]
    if not learned:
        return None
    return sum(scheduler.get_card_retrievability(c, now) for c in learned) / len(learned)
