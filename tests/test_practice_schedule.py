"""Scheduling with a fixed clock: due dates move as FSRS says, and only on due reviews.

The expected intervals are py-fsrs 6.3's with default parameters and fuzzing off, as verified in
the drill reference (``drill.md`` §3): a new card rated Again/Hard/Good/Easy is due after
1 min / 5 min 30 s / 10 min / 8 days; Good on its 10-minute step graduates it to Review for
2 days (stability ≈ 2.307); a Review card forgotten on its due date relearns in 10 min.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from practice_helpers import T0, key_for, rows, run

START = datetime.fromisoformat(T0)


def _due(db: Path, item: str) -> timedelta:
    (due_ts,) = rows(db, "SELECT due_ts FROM item WHERE item_id = ?", item)[0]
    return timedelta(seconds=due_ts - START.timestamp())


def _at(delta: timedelta) -> str:
    return (START + delta).isoformat()


@pytest.mark.parametrize(
    ("answers", "interval", "rating"),
    [
        (["A", ""], timedelta(minutes=1), 1),  # wrong → Again
        (["!", ""], timedelta(minutes=1), 1),  # revealed → Again
        (["B", ""], timedelta(minutes=10), 3),  # right → Good
        (["B", "e"], timedelta(days=8), 4),  # right, then e → Easy
    ],
)
def test_first_review_intervals(
    tmp_path: Path, answers: list[str], interval: timedelta, rating: int
) -> None:
    db = tmp_path / "p.sqlite3"
    run(db, [*answers, "q"], "--new", "1")
    assert _due(db, "mc-def-sequence") == interval
    assert rows(db, "SELECT rating FROM attempt") == [(rating,)]


def test_hinted_answer_is_hard_five_and_a_half_minutes(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    run(db, ["?", "0", "", "q"], "--type", "numeric", "--limit", "1")
    assert _due(db, "edge-zero-masked-loss") == timedelta(minutes=5, seconds=30)


def test_good_twice_graduates_to_review_then_a_lapse_relearns(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    run(db, ["B", "", "q"], "--new", "1")
    # 10 minutes later the learning step is due: Good graduates it to Review for 2 days.
    run(db, ["B", "", "q"], "--new", "0", now=_at(timedelta(minutes=10)))
    assert _due(db, "mc-def-sequence") == timedelta(minutes=10, days=2)
    card = json.loads(rows(db, "SELECT fsrs_card FROM item WHERE item_id='mc-def-sequence'")[0][0])
    assert card["state"] == 2 and card["stability"] == pytest.approx(2.307, abs=1e-3)
    # On its due date it is forgotten: a lapse, relearning in 10 minutes.
    due = timedelta(minutes=10, days=2)
    run(db, ["A", "", "q"], "--new", "0", now=_at(due))
    assert _due(db, "mc-def-sequence") == due + timedelta(minutes=10)
    assert rows(db, "SELECT state, lapses FROM item WHERE item_id='mc-def-sequence'") == [(3, 1)]


def test_items_not_due_are_not_asked_and_extra_practice_leaves_the_schedule(
    tmp_path: Path,
) -> None:
    db = tmp_path / "p.sqlite3"
    run(db, ["B", "", "q"], "--new", "1")
    run(db, ["B", "", "q"], "--new", "0", now=_at(timedelta(minutes=10)))
    before = _due(db, "mc-def-sequence")
    later = _at(timedelta(hours=1))
    nothing = run(db, ["q"], "--new", "0", now=later)
    assert "Answered 0" in nothing.output
    cram = run(db, ["A", "", "q"], "--new", "0", "--all", "--limit", "1", now=later)
    assert "Extra practice: logged, schedule unchanged." in cram.output
    assert _due(db, "mc-def-sequence") == before
    assert rows(db, "SELECT verdict, scheduled FROM attempt ORDER BY id DESC LIMIT 1") == [
        ("incorrect", 0)
    ]
    assert rows(db, "SELECT mode FROM session ORDER BY id DESC LIMIT 1") == [("cram",)]


def test_learning_steps_due_within_twenty_minutes_are_reviewed(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    run(db, ["B", "", "q"], "--new", "1")  # due in 10 min
    result = run(db, ["B", "", "q"], "--new", "0", now=_at(timedelta(minutes=1)))
    assert "mc-def-sequence" in result.output
    assert rows(db, "SELECT scheduled FROM attempt ORDER BY id") == [(1,), (1,)]


def test_due_items_come_before_new_ones_most_overdue_first(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    # mc-def-sequence right (due in 10 min), then mc-def-masked-set wrong (due in 1 min).
    run(db, ["B", "", "A", "", "q"], "--new", "2")
    reveal_each = ["!", ""] * 3 + ["q"]
    result = run(db, reveal_each, "--new", "1", now=_at(timedelta(minutes=30)))
    shown = re.findall(r"^╰─+ ([a-z0-9-]+) ─╯$", result.output, flags=re.MULTILINE)
    # the most overdue first, then the other due item, then the new one
    assert shown[:3] == ["mc-def-masked-set", "mc-def-sequence", "mc-def-corrupted-input"]


def test_parametric_items_draw_fresh_numbers_at_each_review(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    first, second = key_for("num-uniform-baseline"), key_for("num-uniform-baseline", reviews=1)
    assert first.text != second.text  # the engine's draws for review 0 and review 1 differ
    args = ("--type", "numeric", "--tag", "softmax")
    one = run(db, [first.text, "", "q"], *args)
    two = run(db, [second.text, "", "q"], *args, "--new", "0", now=_at(timedelta(minutes=10)))
    assert "✓ Correct" in one.output and "✓ Correct" in two.output
    assert f"Answer: {first}" in one.output and f"Answer: {second}" in two.output


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0, "now"),
        (30, "in 30 s"),
        (59.4, "in 59 s"),
        (59.9, "in 1 min"),  # the summary's clock runs a few ms after the answer's
        (330, "in 6 min"),
        (3599, "in 1 h"),
        (5 * 3600, "in 5 h"),
        (86399, "in 1 day"),
        (2 * 86400 + 600, "in 2 days"),
    ],
)
def test_due_times_are_rounded_to_their_unit(seconds: float, shown: str) -> None:
    from quizgym.practice.views import when

    assert when(START + timedelta(seconds=seconds), START) == shown
