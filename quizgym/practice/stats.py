"""The progress database in, ``quizgym stats``'s progress per bank and tag out."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from fsrs import Card, Scheduler, State

from quizgym.practice.store import Store
from quizgym.practice.tuning import tuning_for

FORECAST_DAYS = 7
MOST_MISSED = 5
LEECH_LAPSES = 8
"""Anki's leech threshold: an item forgotten this often after it was learned is a leech."""


@dataclass
class TagStats:
    """Counts for one tag (or ``all``) of one bank."""

    tag: str
    items: int = 0
    answers: int = 0
    correct: int = 0
    reviews: int = 0
    recalled: int = 0
    due_today: int = 0
    due_week: int = 0
    learned: int = 0
    """Items in review (learned), whose recall the scheduler predicts."""
    recall: float = 0.0
    """The sum of the learned items' predicted chances of recall now."""

    @property
    def accuracy(self) -> float | None:
        """Share of answers fully right."""
        return self.correct / self.answers if self.answers else None

    @property
    def retention(self) -> float | None:
        """Share of due reviews of learned items that were recalled."""
        return self.recalled / self.reviews if self.reviews else None

    @property
    def predicted(self) -> float | None:
        """The share of the learned items the scheduler predicts would be recalled now."""
        return self.recall / self.learned if self.learned else None


@dataclass
class BankStats:
    """Progress on one bank."""

    bank: str
    tags: list[TagStats]
    forecast: list[tuple[str, int]]
    """(local day, items due that day) for today and the next days; today includes overdue."""
    streak: int
    missed: list[tuple[str, int]] = field(default_factory=list)
    new: int = 0
    leeches: list[tuple[str, int]] = field(default_factory=list)
    """Items forgotten :data:`LEECH_LAPSES` times or more once learned, and how often."""
    scheduler: str = ""
    """What the predictions (and the drill's intervals) use: fitted or default parameters."""


def _end_of_day(now: datetime, days: int) -> float:
    local = now.astimezone()
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    return (midnight + timedelta(days=days + 1)).timestamp()


def streak_of(days: set[str], now: datetime) -> int:
    """Consecutive local days with answers, ending today (or yesterday, if today has none yet)."""
    day = now.astimezone().date()
    if day.isoformat() not in days:
        day -= timedelta(days=1)
    count = 0
    while day.isoformat() in days:
        count += 1
        day -= timedelta(days=1)
    return count


def bank_stats(*, store: Store, now: datetime, banks: tuple[str, ...] = ()) -> list[BankStats]:
    """Progress per bank (all banks in the database when ``banks`` is empty).

    Accuracy counts every logged answer (extra practice too); *retention* counts only scheduled
    reviews of items already in the Review state, passed with Hard or better ("true retention",
    fsrs4anki#614); *predicted* is the share of the learned items the scheduler expects recalled now
    (their mean retrievability), with the student's own fitted parameters once their log is long
    enough (:mod:`quizgym.practice.tuning`). Days for the forecast and the streak are local calendar
    days.

    Args:
        store: the progress database.
        now: the current time (UTC).
        banks: bank slugs to report.
    """
    conn = store.conn
    known = [b for (b,) in conn.execute("SELECT DISTINCT bank_id FROM item ORDER BY bank_id")]
    wanted = list(banks) if banks else known
    ends = [_end_of_day(now, d) for d in range(FORECAST_DAYS + 1)]
    tuning = tuning_for(conn)
    scheduler = Scheduler(parameters=tuning.parameters, enable_fuzzing=False)
    result = []
    for bank in wanted:
        by_tag: dict[str, TagStats] = {}
        tags_of: dict[str, list[str]] = {}
        forecast = [0] * (FORECAST_DAYS + 1)
        new = 0

        def stats(tag: str, table: dict[str, TagStats] = by_tag) -> TagStats:
            return table.setdefault(tag, TagStats(tag))

        items = conn.execute(
            "SELECT item_id, tags, due_ts, lapses, fsrs_card FROM item WHERE bank_id = ?"
            " ORDER BY card_id",
            (bank,),
        )
        leeches: list[tuple[str, int]] = []
        for item_id, tags, due_ts, lapses, card_json in items:
            card = Card.from_json(card_json) if card_json else None
            recall = (
                scheduler.get_card_retrievability(card, now)
                if card is not None and card.state == State.Review
                else None
            )
            if lapses >= LEECH_LAPSES:
                leeches.append((item_id, lapses))
            keys = ["all", *tags.split()]
            tags_of[item_id] = keys
            day = next(
                (d for d, end in enumerate(ends) if due_ts is not None and due_ts < end), None
            )
            if due_ts is None:
                new += 1
            elif day is not None:
                forecast[day] += 1
            for key in keys:
                entry = stats(key)
                entry.items += 1
                entry.due_today += day == 0
                entry.due_week += day is not None
                if recall is not None:
                    entry.learned += 1
                    entry.recall += recall
        missed: Counter[str] = Counter()
        days: set[str] = set()
        attempts = conn.execute(
            "SELECT item_id, verdict, rating, scheduled, card_before, answered_at FROM attempt"
            " WHERE bank_id = ? ORDER BY id",
            (bank,),
        )
        for item_id, verdict, rating, scheduled, before, answered_at in attempts:
            days.add(datetime.fromisoformat(answered_at).astimezone().date().isoformat())
            if verdict not in ("correct", "skipped"):
                missed[item_id] += 1
            review = (
                bool(scheduled)
                and before is not None
                and json.loads(before)["state"] == State.Review
            )
            for key in tags_of.get(item_id, ["all"]):
                entry = stats(key)
                entry.answers += 1
                entry.correct += verdict == "correct"
                entry.reviews += review
                entry.recalled += review and rating >= 2
        local_days = [
            (datetime.fromtimestamp(end - 1, tz=UTC).astimezone().date().isoformat(), n)
            for end, n in zip(ends, forecast, strict=True)
        ]
        ordered = [by_tag.pop("all", TagStats("all"))] + sorted(
            by_tag.values(), key=lambda s: s.tag
        )
        result.append(
            BankStats(
                bank=bank,
                tags=ordered,
                forecast=local_days,
                streak=streak_of(days, now),
                missed=sorted(missed.items(), key=lambda kv: (-kv[1], kv[0]))[:MOST_MISSED],
                new=new,
                leeches=sorted(leeches, key=lambda kv: (-kv[1], kv[0])),
                scheduler=tuning.why,
            )
        )
    return result
