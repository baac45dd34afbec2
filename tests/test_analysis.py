"""Item and test statistics: by hand on a small class, Moodle's formulas on a simulated one."""

from __future__ import annotations

import math
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quizgym.analysis import Statistics, combine, group_bounds
from quizgym.grading.batch import grade_partition, partitions
from quizgym.grading.readers import slot_ids
from quizgym.grading.sums import count as _count
from quizgym.grading.sums import partial_sums
from quizgym.grading.table import ClassAnswers
from quizgym.loader import parse_bank
from quizgym.model import Bank

SMALL = """\
bank: small
title: Small
questions:
  - {id: q1, type: true_false, prompt: One., answer: true}
  - {id: q2, type: true_false, prompt: Two., answer: true}
  - {id: q3, type: true_false, prompt: Three., answer: true}
"""

# Marks (1 = "true", right; 0 = "false") of five students on three items; totals 3, 2, 2, 1, 0.
MARKS = [[1, 1, 1], [1, 1, 0], [1, 0, 1], [0, 1, 0], [0, 0, 0]]


def _class(bank: Bank, rows: list[list[str | None]]) -> ClassAnswers:
    """Students s1, s2, … answering every slot of the bank, one row of cells each."""
    answers = ClassAnswers(slot_ids(bank))
    for slot in answers.slots:
        answers.mark_present(slot)
    for k, cells in enumerate(rows):
        row = answers.add_student(f"s{k + 1}", None, ("t", k))
        for slot, cell in zip(answers.slots, cells, strict=True):
            answers.mark_present(slot)[row] = cell
    return answers


def _stats(yaml: str, rows: list[list[str | None]], *, chunk: int | None = None) -> Statistics:
    bank = parse_bank(yaml, path="bank.yaml")
    answers = _class(bank, rows)
    parts = partitions(answers, size=chunk or len(rows))
    sums = partial_sums(grade_partition(bank, parts[0]))
    for part in parts[1:]:
        sums = sums.merge(partial_sums(grade_partition(bank, part)))
    return combine(sums)


@pytest.fixture(scope="module")
def small() -> Statistics:
    rows = [["true" if m else "false" for m in marks] for marks in MARKS]
    return _stats(SMALL, rows, chunk=2)  # in three partitions: the sums must merge exactly


def test_item_statistics_by_hand(small: Statistics) -> None:
    q1, q2, q3 = small.items
    # q1: x = (1,1,1,0,0), rest y = T − x = (2,1,1,1,0); x̄ = .6, ȳ = 1 (all ÷ s−1 = 4)
    # V = (3·.16 + 2·.36)/4 = .3; Vy = (1+0+0+0+1)/4 = .5; C = (.4·1 + (−.6)(−1))/4 = .25
    assert q1.facility == pytest.approx(60)
    assert q1.sd == pytest.approx(100 * math.sqrt(0.3))
    assert q1.discrimination == pytest.approx(100 * 0.25 / math.sqrt(0.3 * 0.5))  # 64.55
    # sorted x (0,0,1,1,1) with sorted y (0,1,1,1,2): Cmax = ((−.6)(−1) + .4·1)/4 = .25 → DE 100
    assert q1.efficiency == pytest.approx(100)
    # q2: x = (1,1,0,1,0), y = (2,1,2,0,0): C = 0 → DI 0, DE 0
    assert q2.discrimination == pytest.approx(0)
    assert q2.efficiency == pytest.approx(0)
    # q3: x = (1,0,1,0,0), y = (2,2,1,1,0): C = .15, Vy = .7, Cmax = .4
    assert q3.facility == pytest.approx(40)
    assert q3.discrimination == pytest.approx(100 * 0.15 / math.sqrt(0.3 * 0.7))  # 32.73
    assert q3.efficiency == pytest.approx(37.5)
    # cov(x, T) = .55, .3, .45; EW = 100·√CT/Σ√CT
    assert [i.effective_weight for i in small.items] == pytest.approx(
        [37.834605, 27.942707, 34.222688], abs=1e-5
    )
    # item–total r = CT/√(V·var T), var T = 1.3
    assert q1.pbis == pytest.approx(0.55 / math.sqrt(0.3 * 1.3))
    assert [i.random_guess for i in small.items] == [50, 50, 50]
    assert [i.intended_weight for i in small.items] == pytest.approx([100 / 3] * 3)


def test_test_statistics_by_hand(small: Statistics) -> None:
    test = small.test
    # totals 3, 2, 2, 1, 0: mean 1.6, median 2, k2 = Σd²/4 = 5.2/4 = 1.3
    assert test.mean == pytest.approx(1.6)
    assert test.median == 2
    assert test.sd == pytest.approx(math.sqrt(1.3))
    # m3 = Σd³/5 = −.384·… : k3 = s²m3/((s−1)(s−2)) = −0.6; skewness = −0.6/1.3^1.5
    assert test.skewness == pytest.approx(-0.6 / 1.3**1.5)
    # k4 = s²((s+1)m4 − 3(s−1)m2²)/((s−1)(s−2)(s−3)) = −0.3; kurtosis = k4/k2² = −30/169
    assert test.kurtosis == pytest.approx(-30 / 169)
    # CIC = 100·3/2·(1 − (.3+.3+.3)/1.3) = 600/13; ER = 100√(1 − α); SE = ER/100·SD
    assert test.cic == pytest.approx(600 / 13)
    assert test.error_ratio == pytest.approx(100 * math.sqrt(1 - 6 / 13))
    assert test.standard_error == pytest.approx(math.sqrt(1 - 6 / 13) * math.sqrt(1.3))


def test_distractors_by_hand(small: Statistics) -> None:
    true, false = [o for o in small.options if o.question == "q3"]
    assert (true.option, true.is_key, true.n, false.n) == ("true", True, 2, 3)
    assert true.prop == pytest.approx(0.4)
    # chose "true": totals 3, 2 (mean 2.5); the others 2, 1, 0 (mean 1); population SD √1.04
    assert true.mean_total == pytest.approx(2.5)
    assert true.rpb_total == pytest.approx((2.5 - 1) / math.sqrt(1.04) * math.sqrt(0.4 * 0.6))
    # against the rest score: (1.5 − 1)/√.56·√.24 = the item's discrimination index / 100
    assert true.rpb_rest == pytest.approx(0.5 / math.sqrt(0.56) * math.sqrt(0.24))
    assert true.rpb_rest == pytest.approx(small.items[2].discrimination / 100)
    # 27 % of 5 → 1 student per group: top s1 (total 3), bottom s5 (total 0)
    assert (true.p_upper, true.p_lower) == (1.0, 0.0)
    assert false.flags == ()
    assert true.flags == ()


@pytest.mark.parametrize(
    ("totals", "expected"),
    [
        ({3: 1, 2: 2, 1: 1, 0: 1}, (3, 1)),  # one student per group
        ({2: 3, 1: 1, 0: 1}, (2, 1)),  # the top group takes every tie at 2
        ({1: 4, 0: 1}, (1, 1)),  # the bottom student is alone below the ties
        ({5: 10}, (5, 5)),  # everyone tied: everyone is "top", nobody "bottom"
    ],
)
def test_score_groups_send_ties_upward(
    totals: dict[float, int], expected: tuple[float, float]
) -> None:
    from collections import Counter

    assert group_bounds(Counter(totals)) == expected


# --- Moodle's formulas on a simulated class -------------------------------------------------------

SIMULATED = """\
bank: simulated
title: Simulated
questions:
  - {id: tf1, type: true_false, prompt: One., answer: true}
  - {id: tf2, type: true_false, prompt: Two., answer: false, points: 2}
  - id: mc1
    type: multiple_choice
    prompt: Three.
    choices: [{text: a, correct: true}, {text: b}, {text: c}, {text: d}]
  - id: multi
    type: multiple_choice
    multiple: true
    prompt: Four.
    choices: [{text: a, correct: true}, {text: b, correct: true}, {text: c}]
  - id: essay
    type: free_text
    prompt: Five.
    model_answer: alpha beta gamma
    rubric:
      - {criterion: a, any_of: [alpha]}
      - {criterion: b, any_of: [beta]}
      - {criterion: c, any_of: [gamma]}
"""


def _moodle_literal(marks: list[list[float]]) -> dict[str, list[float | None] | float]:
    """A line-by-line port of Moodle's per-question and quiz calculators (plain loops)."""
    s, p = len(marks), len(marks[0])
    totals = [sum(row) for row in marks]
    t_mean = sum(totals) / s
    out: dict[str, list[float | None] | float] = {"di": [], "de": [], "ew": [], "facility_raw": []}
    cts = []
    variances = []
    for i in range(p):
        x = [row[i] for row in marks]
        y = [totals[a] - x[a] for a in range(s)]
        xm, ym = sum(x) / s, sum(y) / s
        v = sum((a - xm) ** 2 for a in x) / (s - 1)
        vy = sum((b - ym) ** 2 for b in y) / (s - 1)
        c = sum((a - xm) * (b - ym) for a, b in zip(x, y, strict=True)) / (s - 1)
        cmax = sum((a - xm) * (b - ym) for a, b in zip(sorted(x), sorted(y), strict=True)) / (s - 1)
        ct = sum((a - xm) * (t - t_mean) for a, t in zip(x, totals, strict=True)) / (s - 1)
        out["di"].append(100 * c / math.sqrt(v * vy) if v * vy else None)  # type: ignore[union-attr]
        out["de"].append(100 * c / cmax if cmax else None)  # type: ignore[union-attr]
        cts.append(ct)
        variances.append(v)
    root = sum(math.sqrt(ct) for ct in cts if ct >= 0)
    out["ew"] = [100 * math.sqrt(ct) / root if ct >= 0 else None for ct in cts]
    k2 = sum((t - t_mean) ** 2 for t in totals) / (s - 1)
    out["cic"] = 100 * p / (p - 1) * (1 - sum(variances) / k2)
    ordered = sorted(totals)
    out["median"] = (ordered[(s - 1) // 2] + ordered[s // 2]) / 2
    return out


def test_matches_moodle_formulas_on_a_simulated_class() -> None:
    rng = random.Random(7)
    rows = []
    for _ in range(300):
        ability = rng.random()

        def right(p: float, ability: float = ability) -> bool:
            return rng.random() < 0.2 + 0.7 * ability * p

        rows.append(
            [
                "true" if right(1) else "false",
                "false" if right(0.9) else rng.choice(["true", ""]),
                "a" if right(0.8) else rng.choice(["b", "c", "d", "zz"]),
                rng.choice(["a,b", "a", "b", "a,c", "c", ""]) if right(1) else "c",
                " ".join(w for w in ("alpha", "beta", "gamma") if right(0.8)),
            ]
        )
    stats = _stats(SIMULATED, rows, chunk=64)
    bank = parse_bank(SIMULATED, path="bank.yaml")
    marks = grade_partition(bank, _class(bank, rows)).scores.tolist()
    moodle = _moodle_literal(marks)
    assert [i.discrimination for i in stats.items] == pytest.approx(moodle["di"])
    assert [i.efficiency for i in stats.items] == pytest.approx(moodle["de"])
    assert [i.effective_weight for i in stats.items] == pytest.approx(moodle["ew"])
    assert stats.test.cic == pytest.approx(moodle["cic"])
    assert stats.test.median == moodle["median"]
    # the simulated abilities make every item discriminate
    assert all((i.discrimination or 0) > 5 for i in stats.items)
    # the multiple-answer item has no random-guess score (Moodle returns null)
    assert [i.random_guess for i in stats.items] == [50, 50, 25, None, 0]


def test_variant_difficulty_and_misconception_tags() -> None:
    quiz = Path(__file__).parent / "data" / "grade" / "quiz.yaml"
    bank = parse_bank(quiz.read_text(encoding="utf-8"), path=str(quiz))
    answers = ClassAnswers(slot_ids(bank))
    for slot in ("num-loss", "mc-causal"):
        answers.mark_present(slot)
    for k in range(60):
        row = answers.add_student(f"s{k}", None, ("t", k))
        answers.answers["num-loss"][row] = "0.6931"  # right only for p = 0.5
        answers.answers["mc-causal"][row] = "BERT"
    stats = combine(partial_sums(grade_partition(bank, answers)))
    variants = {v.variant: v.facility for v in stats.variants if v.question == "num-loss"}
    # ln 2 is the key for p = 0.5, half the key for p = 0.25 (a mistake worth half credit)
    assert variants == {"p=0.1": 0, "p=0.25": 50, "p=0.5": 100}
    orders = {v.variant for v in stats.variants if v.question == "mc-causal"}
    assert orders == {"order ABC", "order ACB", "order BAC", "order BCA", "order CAB", "order CBA"}
    tags = [(t.question, t.tag, t.n) for t in stats.tags]
    assert tags == [("mc-causal", "bert-is-causal", 60), ("num-loss", "halved", tags[1][2])]
    assert 0 < tags[1][2] < 60


@pytest.mark.parametrize("distinct", [3, 5000])
def test_counts_of_rows_dense_or_sparse(distinct: int) -> None:
    # Few distinct values are counted in a dense table, many by sorting: both give the counts of
    # each distinct row.
    rng = random.Random(distinct)
    marks = [rng.randrange(distinct) / 4 for _ in range(3000)]
    totals = [rng.randrange(distinct) * 0.5 for _ in range(3000)]
    options = [rng.randrange(-3, 4) for _ in range(3000)]
    expected = Counter(zip(options, marks, totals, strict=True))
    assert _count(np.array(options), np.array(marks), np.array(totals)) == expected


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.25]),
            st.sampled_from([x / 2 for x in range(24)]),
            st.integers(0, 40),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_the_coupled_sum_is_that_of_the_sorted_samples(
    rows: list[tuple[float, float, int]],
) -> None:
    """Cmax's sum, worked out from the runs of equal values, is the one over the samples."""
    from quizgym.analysis import _coupled

    x, y, counts = (np.array(c) for c in zip(*rows, strict=True))
    if not counts.sum():
        return
    xm, ym = float((x * counts).sum() / counts.sum()), float((y * counts).sum() / counts.sum())
    samples = (np.sort(np.repeat(x, counts)) - xm) * (np.sort(np.repeat(y, counts)) - ym)
    assert _coupled(x, y, counts.astype(np.int64), xm, ym) == pytest.approx(
        float(samples.sum()), rel=1e-12, abs=1e-9
    )


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(
        st.dictionaries(
            st.tuples(st.sampled_from(["1.5", "2", "-0.3", "7e-05"]), st.sampled_from(["", "t"])),
            st.integers(1, 5),
            max_size=8,
        ),
        max_size=12,  # past WrongCounts' parts kept apart: counted together
    ),
    k=st.integers(1, 6),
)
def test_a_slots_most_common_wrong_values_are_those_of_its_counts(
    parts: list[dict[tuple[str, str], int]], k: int
) -> None:
    """Whether the class was one part or several (whose keys may be the same), the most common
    wrong values are those of all the counts added, ties in the keys' order."""
    from quizgym.analysis import WrongCounts

    total: Counter[tuple[str, str]] = Counter()
    wrong = WrongCounts()
    for part in parts:
        shown = sorted({v for v, _ in part})
        tags = sorted({t for _, t in part})
        keys = list(part)
        wrong = wrong + WrongCounts(
            [
                (
                    shown,
                    tags,
                    np.array([shown.index(v) for v, _ in keys], dtype=np.int64),
                    np.array([tags.index(t) for _, t in keys], dtype=np.int64),
                    np.array([part[key] for key in keys], dtype=np.int64),
                )
            ]
        )
        total.update(part)
    assert wrong.counter() == total
    assert wrong.most_common(k) == sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))[:k]


@pytest.mark.parametrize("mark", [0.0, 1.0, 0.3, 1 / 3, 0.1])
def test_an_item_everyone_scored_alike_has_no_variance_whatever_its_mark(mark: float) -> None:
    """A mark that is no binary fraction (0.3) must not turn rounding noise into an efficiency
    or a discrimination: every student scored alike, so the item tells them apart by nothing."""
    from quizgym.analysis import _item_moments

    rng = random.Random(4)
    marks = Counter((mark, mark + rng.choice([0.0, 1.0, 2.0, 2.5])) for _ in range(403))
    xm, v, _, c, ct, cmax = _item_moments(marks, 403)
    assert (xm, v, c, ct, cmax) == (mark, 0.0, 0.0, 0.0, 0.0)
