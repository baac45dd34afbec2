"""A scheduler tuned to the student: on a generated review history the fitted FSRS parameters
predict held-out recalls better than the defaults; the drill uses them; ``stats`` shows the
retention they predict."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from fsrs import Card, Rating, Scheduler
from practice_helpers import run

from quizgym.cli import cli
from quizgym.practice.stats import bank_stats
from quizgym.practice.store import Answer, ItemInfo, Store
from quizgym.practice.tuning import (
    DEFAULT_PARAMETERS,
    MIN_REVIEWS,
    Review,
    fit_parameters,
    histories,
    log_loss,
    long_term_reviews,
    tuning_for,
)

pytest.importorskip("fsrs_rs_python")

START = datetime(2026, 1, 1, 9, tzinfo=UTC)

# A forgetful student: their memories start far weaker than FSRS's defaults assume.
TRUE = list(DEFAULT_PARAMETERS)
TRUE[0:4] = [0.05, 0.15, 0.5, 2.0]
TRUE[8], TRUE[20] = 1.2, 0.3


def _history(rng: random.Random, card_id: int, reviews: int = 10) -> list[Review]:
    """One item's answers: due dates from the default scheduler (what the drill did), answered
    somewhat late or early, each recalled with the chance the student's true memory gives."""
    truth = Scheduler(parameters=tuple(TRUE), enable_fuzzing=False)
    default = Scheduler(enable_fuzzing=False)
    now = START + timedelta(days=rng.randrange(30), hours=rng.random() * 8)
    real, shown = Card(card_id=card_id, due=now), Card(card_id=card_id, due=now)
    out: list[Review] = []
    for _ in range(reviews):
        p = truth.get_card_retrievability(real, now) if out else 0.6
        rating = Rating.Good if rng.random() < p else Rating.Again
        out.append((int(rating), now))
        real, _ = truth.review_card(real, rating, review_datetime=now)
        shown, _ = default.review_card(shown, rating, review_datetime=now)
        now += (shown.due - now) * rng.uniform(0.8, 2.5) + timedelta(hours=rng.random() * 4)
    return out


def test_fitted_parameters_predict_held_out_recalls_better_than_the_defaults() -> None:
    rng = random.Random(1)
    generated = [_history(rng, k) for k in range(300)]
    train, held_out = generated[:220], generated[220:]
    assert long_term_reviews(train) >= MIN_REVIEWS
    fitted = fit_parameters(train)
    assert fitted is not None and len(fitted) == len(DEFAULT_PARAMETERS)
    ours, defaults = log_loss(fitted, held_out), log_loss(DEFAULT_PARAMETERS, held_out)
    assert ours < defaults - 0.01
    assert log_loss(TRUE, held_out) < defaults  # the truth does better still than the defaults


def _store_with(path: Path, generated: list[list[Review]]) -> Store:
    """A progress database whose log holds these histories, each item's cards moved by the
    scheduler as a drill moves them."""
    store = Store.open(path)
    store.sync_items(
        "made-up", [ItemInfo(f"q{k}", "sha", "true_false") for k in range(len(generated))]
    )
    session = store.start_session(banks=["made-up"], mode="review", now=START)
    scheduler = Scheduler(enable_fuzzing=False)
    for k, reviews in enumerate(generated):
        for rating, at in reviews:
            answer = Answer(
                session_id=session, bank_id="made-up", item_id=f"q{k}", content_sha="sha",
                answered_at=at, response="t", verdict="correct" if rating > 1 else "incorrect",
                score=1.0 if rating > 1 else 0.0, rating=rating,
            )  # fmt: skip

            def review(
                before: Card | None, rating: int = rating, at: datetime = at, k: int = k
            ) -> Card:
                card = before if before is not None else Card(card_id=k + 1, due=at)
                return scheduler.review_card(card, Rating(rating), review_datetime=at)[0]

            store.record(answer, review=review)
    return store


def test_the_defaults_stay_until_the_log_is_long_enough(tmp_path: Path) -> None:
    rng = random.Random(2)
    store = _store_with(tmp_path / "short.sqlite3", [_history(rng, k, 4) for k in range(20)])
    try:
        tuning = tuning_for(store.conn)
    finally:
        store.close()
    assert not tuning.fitted and tuning.parameters == DEFAULT_PARAMETERS
    assert tuning.why == (
        f"FSRS's default parameters: yours are fitted once {MIN_REVIEWS} reviews a day or more "
        f"apart are logged ({tuning.reviews} so far)"
    )
    assert 0 < tuning.reviews < MIN_REVIEWS


def test_the_drill_schedules_with_the_students_fitted_parameters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(3)
    db = tmp_path / "long.sqlite3"
    store = _store_with(db, [_history(rng, k) for k in range(120)])
    try:
        assert len(histories(store.conn)) == 120
        tuning = tuning_for(store.conn)
    finally:
        store.close()
    assert tuning.fitted and tuning.parameters != DEFAULT_PARAMETERS
    assert tuning.why == f"FSRS parameters fitted to your {tuning.reviews} reviews"
    import quizgym.practice.drill as drill

    used: list[tuple[float, ...]] = []

    class Spy(Scheduler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            used.append(tuple(self.parameters))

    monkeypatch.setattr(drill, "Scheduler", Spy)
    result = run(db, ["q"])
    assert result.exit_code == 0, result.output
    assert used == [tuning.parameters]


def test_stats_show_the_retention_the_parameters_predict(tmp_path: Path) -> None:
    rng = random.Random(4)
    db = tmp_path / "p.sqlite3"
    store = _store_with(db, [_history(rng, k, 5) for k in range(12)])
    now = START + timedelta(days=60)
    try:
        (bank,) = bank_stats(store=store, now=now)
        cards = [row.card for row in store.rows(bank_id="made-up") if row.card is not None]
    finally:
        store.close()
    scheduler = Scheduler(enable_fuzzing=False)
    learned = [c for c in cards if c.state.name == "Review"]
    assert learned
    expected = sum(scheduler.get_card_retrievability(c, now) for c in learned) / len(learned)
    everything = bank.tags[0]
    assert everything.learned == len(learned)
    assert everything.predicted == pytest.approx(expected)
    result = CliRunner().invoke(
        cli,
        ["stats"],
        env={"QUIZGYM_DB": str(db), "QUIZGYM_NOW": now.isoformat(), "COLUMNS": "120"},
    )
    assert result.exit_code == 0, result.output
    assert f"{round(100 * expected)}% of {len(learned)}" in result.output
    assert "Predicted: recall of the learned items now, by FSRS's default parameters" in (
        " ".join(result.output.split())
    )
