"""Per-variant fairness, Holm's correction, and α's confidence interval: simulated classes with
known difficulties (one with a deliberately harder variant) through the grader."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from quizgym.analysis import Statistics, combine
from quizgym.distributions import chi2_sf, f_quantile, holm, regularized_beta
from quizgym.fairness import LEVEL, fairness
from quizgym.grading.batch import grade_partition
from quizgym.grading.outputs import write_items
from quizgym.grading.readers import slot_ids
from quizgym.grading.splits import splits_of
from quizgym.grading.sums import partial_sums
from quizgym.grading.table import ClassAnswers
from quizgym.loader import parse_bank
from quizgym.reliability import feldt_interval
from quizgym.solver import compile_bank, variant_codes

BANK = """\
bank: fairness
title: Fairness
questions:
  - id: num-se
    type: numeric
    prompt: The standard error of a mean of {n} draws with SD 10?
    params:
      n: {choices: [25, 100]}
    answer: 10 / sqrt(n)
  - id: num-range
    type: numeric
    prompt: Twice {k}?
    params:
      k: {min: 1, max: 40, step: 1}
    answer: 2 * k
  - {id: t1, type: true_false, prompt: One., answer: true}
  - {id: t2, type: true_false, prompt: Two., answer: true}
  - {id: t3, type: true_false, prompt: Three., answer: true}
"""


def _simulate(
    students: int, facility: dict[float, float], *, seed: int, range_facility: float = 0.6
) -> Statistics:
    """A class whose answers to num-se are right with the chance its n gives (``facility``)."""
    bank = compile_bank(parse_bank(BANK, path="fairness.yaml"))
    names = [f"s{k:04d}" for k in range(students)]
    rng = np.random.default_rng(seed)
    ability = rng.normal(size=students)
    answers = ClassAnswers(slot_ids(bank.bank))
    columns = {slot: answers.mark_present(slot) for slot in answers.slots}
    rows = [answers.add_student(name, None, ("t", k)) for k, name in enumerate(names)]
    variants = {}
    for qid in ("num-se", "num-range"):
        found, codes = variant_codes(
            bank, bank.bank.question(qid), students=names, seeds=[None] * students
        )
        variants[qid] = [found[c] for c in codes.tolist()]
    for row, k in zip(rows, range(students), strict=True):
        n = float(variants["num-se"][k].params["n"])
        right = rng.random() < facility[n]
        columns["num-se"][row] = f"{10 / math.sqrt(n):.6g}" if right else "7"
        value = float(variants["num-range"][k].params["k"])
        columns["num-range"][row] = f"{2 * value:g}" if rng.random() < range_facility else "-1"
        for slot, b in (("t1", -0.5), ("t2", 0.0), ("t3", 0.5)):
            p = 1 / (1 + math.exp(-(ability[k] - b)))
            columns[slot][row] = "true" if rng.random() < p else "false"
    return combine(partial_sums(grade_partition(bank, answers)))


def test_a_harder_variant_is_flagged_in_the_items_and_items_csv(tmp_path: Path) -> None:
    stats = _simulate(300, {25.0: 0.41, 100.0: 0.82}, seed=1)
    item = next(i for i in stats.items if i.question == "num-se")
    flag = next(f for f in item.flags if f.startswith("variants with"))
    low = next(g for g in stats.groups if g.question == "num-se" and g.group == "n = 25")
    high = next(g for g in stats.groups if g.question == "num-se" and g.group == "n = 100")
    assert flag == (
        f"variants with n = 25 are answered right {low.facility:.0f}%, n = 100 "
        f"{high.facility:.0f}% (p < 0.001): one version may be harder than another"
    )
    assert 30 < low.facility < 52 and 72 < high.facility < 92
    assert (item.variant_split, item.variant_low, item.variant_high) == (
        "n",
        low.facility,
        high.facility,
    )
    assert item.variant_p is not None and item.variant_p < 0.001
    # the ranged parameter's students are binned into four ranges of k, none flagged
    ranged = [g.group for g in stats.groups if g.question == "num-range"]
    assert ranged == ["k 1–10", "k 11–20", "k 21–30", "k 31–40"]
    other = next(i for i in stats.items if i.question == "num-range")
    assert not [f for f in other.flags if f.startswith("variants")]
    write_items(tmp_path / "items.csv", stats)
    lines = (tmp_path / "items.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0].endswith(
        '"flags","variant_split","variant_facility_low","variant_facility_high","variant_p"'
    )
    assert lines[1].startswith('"num-se"') and '"n","' in lines[1]
    assert lines[3].startswith('"t1"') and lines[3].endswith('"","","",""')


def test_equal_variants_through_the_grader_are_not_flagged() -> None:
    stats = _simulate(300, {25.0: 0.6, 100.0: 0.6}, seed=2)
    assert not [f for i in stats.items for f in i.flags if f.startswith("variants")]
    assert {t.question for t in stats.splits} == {"num-se", "num-range"}


def _counter(
    rng: np.random.Generator, sizes: list[int], facilities: list[float]
) -> Counter[tuple[str, str, float, float]]:
    out: Counter[tuple[str, str, float, float]] = Counter()
    for k, (size, facility) in enumerate(zip(sizes, facilities, strict=True)):
        right = int(rng.binomial(size, facility))
        out["n", f"n = {k}", 1.0, 1.0] += right
        out["n", f"n = {k}", 0.0, 0.0] += size - right
    return out


@pytest.mark.parametrize(
    ("sizes", "method"),
    [([60, 60, 60], "chi-square"), ([6, 9, 7], "exact")],
)
def test_the_false_flag_rate_of_equal_variants_is_at_most_the_level(
    sizes: list[int], method: str
) -> None:
    rng = np.random.default_rng(11)
    repeats = 200
    rejected = 0
    for r in range(repeats):
        counter = _counter(rng, sizes, [0.7] * len(sizes))
        _, tests = fairness([(f"q{r}", 1.0)], [counter])
        if not tests:
            continue
        (test,) = tests
        assert test.method == method
        rejected += test.p < LEVEL
    # at most the level, give or take two binomial standard errors
    assert rejected / repeats <= LEVEL + 2 * math.sqrt(LEVEL * (1 - LEVEL) / repeats)


def test_holm_keeps_the_chance_of_any_false_flag_in_a_report_at_the_level() -> None:
    rng = np.random.default_rng(5)
    repeats, slots = 100, 8
    any_flag = any_raw = 0
    for _ in range(repeats):
        counters = [_counter(rng, [40, 40], [0.5, 0.5]) for _ in range(slots)]
        _, tests = fairness([(f"q{k}", 1.0) for k in range(slots)], counters)
        any_flag += any(t.p_adjusted < LEVEL for t in tests)
        any_raw += any(t.p < LEVEL for t in tests)
    assert any_flag / repeats <= LEVEL + 2 * math.sqrt(LEVEL * (1 - LEVEL) / repeats)
    assert any_raw > any_flag  # uncorrected, eight tests flag far more often than 5%


def test_a_real_difference_is_found_by_the_exact_test_too() -> None:
    rng = np.random.default_rng(3)
    counter = _counter(rng, [8, 8], [0.05, 0.95])
    _, (test,) = fairness([("q", 1.0)], [counter])
    assert test.method == "exact" and test.p < 0.01


def test_holm_by_hand() -> None:
    assert holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert holm([]) == []


def test_distributions_match_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for x, df in itertools.product([0.01, 0.5, 3.0, 7.8, 50.0, 400.0], [1, 2, 3, 7, 30, 300]):
        assert chi2_sf(x, df) == pytest.approx(stats.chi2.sf(x, df), rel=1e-9, abs=1e-300)
    for q, d1, d2 in itertools.product(
        [0.001, 0.025, 0.5, 0.975], [1, 4, 99, 1999], [3, 40, 1900, 58000]
    ):
        assert f_quantile(q, d1, d2) == pytest.approx(stats.f.ppf(q, d1, d2), rel=1e-9)
    assert regularized_beta(2.5, 4.0, 0.3) == pytest.approx(stats.beta.cdf(0.3, 2.5, 4.0))


def test_feldt_interval_is_pingouins_formula() -> None:
    stats = pytest.importorskip("scipy.stats")
    n, k, alpha = 120, 12, 0.81
    d1, d2 = n - 1, (n - 1) * (k - 1)
    low = 1 - (1 - alpha) * stats.f.ppf(0.975, d1, d2)
    high = 1 - (1 - alpha) * stats.f.ppf(0.025, d1, d2)
    assert feldt_interval(alpha, students=n, items=k) == pytest.approx((low, high), rel=1e-9)
    assert feldt_interval(1.0, students=n, items=k) is None
    assert feldt_interval(0.5, students=1, items=k) is None


def test_feldt_interval_covers_the_true_alpha_of_simulated_classes() -> None:
    # Parallel items: true score T ~ N(0, 1), error N(0, σ²): α = kρ / (1 + (k − 1)ρ),
    # ρ = 1 / (1 + σ²).
    rng = np.random.default_rng(9)
    n, k, sigma = 80, 6, 1.5
    rho = 1 / (1 + sigma**2)
    true_alpha = k * rho / (1 + (k - 1) * rho)
    covered, repeats = 0, 300
    for _ in range(repeats):
        x = rng.normal(size=(n, 1)) + rng.normal(scale=sigma, size=(n, k))
        alpha = k / (k - 1) * (1 - x.var(axis=0, ddof=1).sum() / x.sum(axis=1).var(ddof=1))
        interval = feldt_interval(float(alpha), students=n, items=k)
        assert interval is not None
        covered += interval[0] <= true_alpha <= interval[1]
    assert 0.91 <= covered / repeats <= 0.99


def test_the_report_states_alpha_with_its_interval_and_the_sem() -> None:
    from quizgym.render.report import render_report

    stats = _simulate(200, {25.0: 0.6, 100.0: 0.6}, seed=4)
    test = stats.test
    assert test.cic is not None and test.cic_low is not None and test.cic_high is not None
    assert test.cic_low < test.cic < test.cic_high
    bank = parse_bank(BANK, path="fairness.yaml")
    html = render_report(
        bank=bank, stats=stats, totals=Counter({1.0: 200}), rejected_rows=0,
        ignored_columns=0, students=200,
    )  # fmt: skip
    assert f"(95% CI {test.cic_low:.1f}–{test.cic_high:.1f})" in html
    assert test.standard_error is not None
    assert f"The standard error of measurement is {test.standard_error:.2f} points" in html
    assert 'id="fairness"' in html and "No question's variants differ beyond chance" in html


def test_a_report_without_varying_questions_has_no_fairness_section() -> None:
    from quizgym.render.report import render_report

    yaml = "bank: plain\ntitle: Plain\nquestions:\n" + "".join(
        f"  - {{id: t{k}, type: true_false, prompt: P{k}., answer: true}}\n" for k in range(3)
    )
    bank = compile_bank(parse_bank(yaml, path="plain.yaml"))
    answers = ClassAnswers(slot_ids(bank.bank))
    columns = {slot: answers.mark_present(slot) for slot in answers.slots}
    for k in range(30):
        row = answers.add_student(f"s{k}", None, ("t", k))
        for j, slot in enumerate(answers.slots):
            columns[slot][row] = "true" if (k + j) % 3 else "false"
    stats = combine(partial_sums(grade_partition(bank, answers)))
    assert stats.splits == [] and stats.groups == []
    html = render_report(
        bank=bank.bank, stats=stats, totals=Counter({1.0: 30}), rejected_rows=0,
        ignored_columns=0, students=30,
    )  # fmt: skip
    assert 'id="fairness"' not in html


def test_splits_of_a_shuffled_choice_name_where_the_right_choice_is_shown() -> None:
    yaml = """\
bank: shuffled
title: Shuffled
questions:
  - id: mc
    type: multiple_choice
    shuffle: true
    prompt: Which?
    choices:
      - {text: Right, correct: true}
      - {text: Wrong}
      - {text: Also wrong}
"""
    bank = compile_bank(parse_bank(yaml, path="shuffled.yaml"))
    question = bank.bank.question("mc")
    found, _ = variant_codes(
        bank, question, students=[f"s{k}" for k in range(40)], seeds=[None] * 40
    )
    splits = dict(splits_of(question, found))
    assert set(splits) == {"version", "key position"}
    for variant, label in zip(found, splits["key position"], strict=True):
        assert label == f"right choice shown as {'ABC'[variant.order.index(0)]}"
    assert splits["version"] == [v.label for v in found]
