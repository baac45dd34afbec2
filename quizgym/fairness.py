"""Per slot, counts of (split, group, mark, total) in; per group facility and discrimination, and
per split a test of whether the groups differ more than chance (corrected for the number of tests),
out."""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from quizgym.distributions import chi2_sf, holm

__all__ = [
    "LEVEL",
    "MIN_GAP",
    "GroupStats",
    "SplitTest",
    "fairness",
]

LEVEL = 0.05
"""The family-wise error rate of the fairness flags (after Holm's correction)."""
MIN_GAP = 5.0
"""The least difference in facility (points of %) between groups that is flagged."""
MIN_GROUP_N = 5
"""A group answered by fewer students is left out of its split's test (too few to tell)."""
MIN_EXPECTED = 5.0
"""The least expected count of every cell for the chi-square approximation."""
RESAMPLES = 2_000
"""Random tables of the exact test."""

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class GroupStats:
    """The students of one group of a split: how many, and how they did."""

    question: str
    split: str
    group: str
    n: int
    facility: float
    """Mean mark / max mark, in %."""
    discrimination: float | None
    """Item–rest Pearson correlation × 100 within the group (None when undefined)."""


@dataclass(frozen=True)
class SplitTest:
    """Whether the groups of one split of a slot differ more than chance."""

    question: str
    split: str
    groups: int
    """Groups tested (those with at least :data:`MIN_GROUP_N` students)."""
    n: int
    statistic: float
    """Pearson's chi-square statistic of the groups × marks table."""
    df: int
    method: str
    """``chi-square`` or ``exact`` (random tables with the same margins)."""
    p: float
    p_adjusted: float
    """Holm-adjusted over every test of the run."""
    hardest: GroupStats
    easiest: GroupStats
    binary: bool
    """Every mark is 0 or the maximum (so facility is the share answered right)."""

    @property
    def gap(self) -> float:
        """Points of facility between the easiest and the hardest group."""
        return self.easiest.facility - self.hardest.facility

    @property
    def shown_p(self) -> str:
        """The p-value as the report shows it (``< 0.001``, ``0.012``)."""
        return show_p(self.p).removeprefix("= ")

    @property
    def shown_p_adjusted(self) -> str:
        """The adjusted p-value as the report shows it."""
        return show_p(self.p_adjusted).removeprefix("= ")

    @property
    def flagged(self) -> bool:
        """The groups differ beyond chance, by at least :data:`MIN_GAP` points."""
        return self.p_adjusted < LEVEL and self.gap >= MIN_GAP

    def flag(self) -> str:
        """The flag's sentence (``variants with n = 25 are answered right 41%, …``)."""
        how = "are answered right" if self.binary else "score on average"
        return (
            f"variants with {self.hardest.group} {how} {self.hardest.facility:.0f}%, "
            f"{self.easiest.group} {self.easiest.facility:.0f}% (p {show_p(self.p_adjusted)}): "
            "one version may be harder than another"
        )


def show_p(p: float) -> str:
    """``< 0.001``, ``= 0.012``, ``= 0.34``."""
    if p < 0.001:
        return "< 0.001"
    return f"= {p:.3f}" if p < 0.01 else f"= {p:.2f}"


def fairness(
    slots: Sequence[tuple[str, float]],
    counters: Sequence[Counter[tuple[str, str, float, float]]],
) -> tuple[list[GroupStats], list[SplitTest]]:
    """Every group's figures and every split's test (Holm-adjusted over all of them).

    A split is a way the versions of a varying question differ (a parameter's value, the whole
    version, where the right choice is shown: :mod:`quizgym.grading.splits`). Its test is of
    independence between the group and the mark in the groups × marks table (groups of fewer than
    :data:`MIN_GROUP_N` students are left out):

    - Pearson's chi-square test when every expected count is at least :data:`MIN_EXPECTED`
      (Cochran's rule, as R's ``chisq.test`` warns below it);
    - otherwise an exact test: the chi-square statistic of :data:`RESAMPLES` tables with the same
      margins drawn at random (the students' marks shuffled among the groups), p = (1 + tables at
      least as extreme) / (1 + resamples) (Hope 1968; R's ``chisq.test(simulate.p.value = TRUE)``).
      The shuffles are seeded by the slot and the split, so a class gives the same p every run.

    Every test of the run is then corrected with Holm's method (:func:`quizgym.distributions.holm`),
    so that the chance of any false flag in the report is at most :data:`LEVEL`. A slot is flagged
    when its adjusted p is below :data:`LEVEL` and its easiest and hardest groups are at least
    :data:`MIN_GAP` points of facility apart (a large class makes a difference of one point
    significant; it would not make the question unfair).

    Args:
        slots: per slot, (id, max mark).
        counters: per slot, its (split, group, mark, total) counts (:attr:`Sums.groups`).
    """
    groups: list[GroupStats] = []
    raw: list[tuple[str, str, int, int, float, int, str, float, GroupStats, GroupStats, bool]] = []
    for (slot, points), counter in zip(slots, counters, strict=True):
        by_split: dict[str, dict[str, Counter[tuple[float, float]]]] = {}
        for (split, group, mark, total), n in counter.items():
            by_split.setdefault(split, {}).setdefault(group, Counter())[mark, total] += n
        for split, members in by_split.items():
            if len(members) < 2:
                continue
            ordered = sorted(members.items(), key=lambda kv: _natural(kv[0]))
            stats = [_group(slot, split, g, c, points) for g, c in ordered]
            groups += stats
            tested = [(s, members[s.group]) for s in stats if s.n >= MIN_GROUP_N]
            if len(tested) < 2:
                continue
            marks = sorted({m for _, c in tested for m, _ in c})
            if len(marks) < 2:
                continue  # everyone the same mark: nothing to compare
            table = np.array(
                [
                    [sum(n for (m, _), n in c.items() if m == mark) for mark in marks]
                    for _, c in tested
                ],
                dtype=np.int64,
            )
            statistic, df, method, p = _test(table, seed=f"{slot}\x1f{split}")
            ranked = sorted((s for s, _ in tested), key=lambda s: (s.facility, s.group))
            binary = all(m in (0.0, points) for m in marks)
            raw.append(
                (slot, split, len(tested), int(table.sum()), statistic, df, method, p,
                 ranked[0], ranked[-1], binary)
            )  # fmt: skip
    adjusted = holm([r[7] for r in raw])
    tests = [
        SplitTest(
            question=slot,
            split=split,
            groups=k,
            n=n,
            statistic=statistic,
            df=df,
            method=method,
            p=p,
            p_adjusted=q,
            hardest=hardest,
            easiest=easiest,
            binary=binary,
        )
        for (slot, split, k, n, statistic, df, method, p, hardest, easiest, binary), q in zip(
            raw, adjusted, strict=True
        )
    ]
    return groups, tests


_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")


def _natural(label: str) -> list[tuple[int, float, str]]:
    """A key that orders ``n = 9`` before ``n = 10``: numbers by value, the rest as text."""
    parts = _NUMBER.split(label)
    return [(1, float(p), "") if k % 2 else (0, 0.0, p) for k, p in enumerate(parts)]


def _group(
    slot: str, split: str, group: str, counter: Counter[tuple[float, float]], points: float
) -> GroupStats:
    keys = list(counter)
    w = np.array([counter[k] for k in keys], dtype=np.float64)
    x = np.array([k[0] for k in keys], dtype=np.float64)
    y = np.array([k[1] - k[0] for k in keys], dtype=np.float64)  # the rest of the test
    n = float(w.sum())
    xm, ym = float((w * x).sum() / n), float((w * y).sum() / n)
    discrimination = None
    if n > 1:
        v = float((w * (x - xm) ** 2).sum())
        vy = float((w * (y - ym) ** 2).sum())
        c = float((w * (x - xm) * (y - ym)).sum())
        if v * vy > 0 and not (x == x[0]).all():
            discrimination = 100 * c / math.sqrt(v * vy)
    return GroupStats(slot, split, group, int(n), 100 * xm / points if points else math.nan,
                      discrimination)  # fmt: skip


def _chi2(table: IntArray, expected: FloatArray) -> float:
    return float(((table - expected) ** 2 / expected).sum())


def _test(table: IntArray, *, seed: str) -> tuple[float, int, str, float]:
    """(statistic, degrees of freedom, method, p) of independence in a groups × marks table."""
    rows = table.sum(axis=1)
    columns = table.sum(axis=0)
    n = int(table.sum())
    expected = np.outer(rows, columns) / n
    statistic = _chi2(table, expected)
    df = (table.shape[0] - 1) * (table.shape[1] - 1)
    expected = expected.astype(np.float64)
    if expected.min() >= MIN_EXPECTED:
        return statistic, df, "chi-square", chi2_sf(statistic, df)
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))
    resampled = _chi2_many(_random_tables(rows, columns, rng), expected)
    extreme = int((resampled >= statistic - 1e-9 * max(1.0, statistic)).sum())
    return statistic, df, "exact", (1 + extreme) / (1 + RESAMPLES)


def _random_tables(rows: IntArray, columns: IntArray, rng: np.random.Generator) -> IntArray:
    """:data:`RESAMPLES` tables with these margins, each as likely as it is when the marks are
    shuffled among the students: each cell drawn from the hypergeometric distribution of what
    is left of its row and column (the work grows with the cells, not with the students)."""
    r, c = len(rows), len(columns)
    tables = np.zeros((RESAMPLES, r, c), dtype=np.int64)
    remaining = np.tile(columns.astype(np.int64), (RESAMPLES, 1))
    for i in range(r - 1):
        left = np.full(RESAMPLES, int(rows[i]), dtype=np.int64)
        for j in range(c - 1):
            others = remaining[:, j + 1 :].sum(axis=1)
            draw = rng.hypergeometric(remaining[:, j], others, left)
            tables[:, i, j] = draw
            left -= draw
            remaining[:, j] -= draw
        tables[:, i, c - 1] = left
        remaining[:, c - 1] -= left
    tables[:, r - 1, :] = remaining
    return tables


def _chi2_many(tables: IntArray, expected: FloatArray) -> FloatArray:
    out: FloatArray = ((tables - expected) ** 2 / expected).sum(axis=(1, 2))
    return out
