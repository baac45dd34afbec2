"""Per-slot counts (:class:`Sums`) in; item and test statistics as Moodle's and Canvas's quiz
reports define them, distractors and rubric agreement out."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from quizgym.arrays import IntArray, sorted_unique
from quizgym.fairness import GroupStats, SplitTest, fairness
from quizgym.model import AnyQuestion
from quizgym.reliability import feldt_interval
from quizgym.types import choices_of

__all__ = [
    "ItemStats",
    "OptionStats",
    "Statistics",
    "Sums",
    "TagStats",
    "TestStats",
    "VariantStats",
    "PickStats",
    "WrongStats",
    "Agreement",
    "cohens_kappa",
    "rubric_agreement",
    "combine",
    "group_bounds",
    "SlotInfo",
    "random_guess_score",
]

FloatArray = npt.NDArray[np.float64]
OPTION_BLANK = -1
"""The option code of a blank answer in :attr:`Sums.options` (choices are 0, 1, …)."""
OPTION_UNREADABLE = -2
"""The option code of an answer that names no option (``ture``, ``E`` of four choices)."""
PICKS_ANSWERED = -1
"""In :attr:`Sums.picks`, the key of every student who gave a readable answer."""
DECIDED = "invalid, decided"
"""The key in :attr:`Sums.statuses` of unreadable answers a teacher scored."""
UNREADABLE_SHARE = 0.05
"""An item is flagged when at least this share of its answers (and 2) could not be read."""
MIN_VARIANT_N = 5
"""A version answered by fewer students is not shown on its own row (too few to tell)."""
WRONG_SHOWN = 5
"""The most common wrong answers listed per numeric item."""
GROUP_SHARE = 0.27
DUBIOUS_DE = 15.0  # Moodle's is_dubious_question threshold, in %


def random_guess_score(question: AnyQuestion, part: str | None = None) -> float | None:
    """Moodle's ``get_random_guess_score`` as a fraction: 1/2, 1/k, 0; None for multiple answers."""
    options = choices_of(question, part)
    return options.chance if options is not None else 0.0


@dataclass(frozen=True, kw_only=True)
class SlotInfo:
    """What the statistics need to know of an answer slot (small, and plain to pickle)."""

    id: str
    kind: str
    """The question type."""
    points: float
    options: tuple[str, ...] = ()
    """Labels of the options a student picks one of (true/false and single-answer choices)."""
    keys: tuple[bool, ...] = ()
    """Per option: whether it is a correct one."""
    random_guess: float | None = 0.0
    """Moodle's expected score from guessing, as a fraction (None for multiple answers)."""
    choices: tuple[str, ...] = ()
    """Multiple-answer slots: the choices, each of which a student may pick."""
    choice_keys: tuple[bool, ...] = ()
    """Multiple-answer slots: per choice, whether it is one to pick."""
    numeric: bool = False
    """Answers are numbers (a numeric question, or a numeric part)."""

    @classmethod
    def of(
        cls,
        slot_id: str,
        question: AnyQuestion,
        points: float,
        *,
        numeric: bool = False,
        part: str | None = None,
    ) -> SlotInfo:
        """The record of a slot of ``question`` worth ``points`` (``numeric``: its answers are
        numbers)."""
        options: tuple[str, ...] = ()
        keys: tuple[bool, ...] = ()
        choices: tuple[str, ...] = ()
        choice_keys: tuple[bool, ...] = ()
        picks = choices_of(question, part)
        if picks is not None and picks.multiple:
            choices = tuple(c.text for c in picks.choices)
            choice_keys = tuple(c.correct for c in picks.choices)
        elif picks is not None:
            options = tuple(c.text for c in picks.choices)
            keys = tuple(c.correct for c in picks.choices)
        return cls(
            id=slot_id,
            kind=question.type,
            points=points,
            options=options,
            keys=keys,
            random_guess=random_guess_score(question, part),
            choices=choices,
            choice_keys=choice_keys,
            numeric=numeric,
        )


@dataclass(eq=False)
class WrongCounts:
    """A numeric slot's wrong answers by (value as shown, tag), as columns: a slot of a large
    class has tens of thousands of distinct wrong values, of which only the most common are
    shown (:meth:`most_common`). Each part holds the shown values and tags once and a code of
    each per counted key; parts from partitions of a class are kept apart until then."""

    parts: list[tuple[list[str], list[str], IntArray, IntArray, IntArray]] = field(
        default_factory=list
    )
    """(shown values, tags, each key's value code, its tag code, its count), keys distinct."""

    def __add__(self, other: WrongCounts) -> WrongCounts:
        parts = [p for p in (*self.parts, *other.parts) if len(p[4])]
        merged = WrongCounts(parts)
        if len(parts) > _WRONG_PARTS:  # many pieces: counted together, as one part again
            return WrongCounts([_one_part(merged.counter())])
        return merged

    def counter(self) -> Counter[tuple[str, str]]:
        """Every key with its count, the parts' counts added."""
        out: Counter[tuple[str, str]] = Counter()
        for shown, tags, values, codes, counts in self.parts:
            keys = zip(
                [shown[v] for v in values.tolist()], [tags[t] for t in codes.tolist()], strict=True
            )
            for key, n in zip(keys, counts.tolist(), strict=True):
                out[key] += n
        return out

    def most_common(self, k: int) -> list[tuple[tuple[str, str], int]]:
        """The ``k`` most common keys with their counts, ties in the keys' order (as
        ``sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:k]``)."""
        parts = [p for p in self.parts if len(p[4])]
        if not parts:
            return []
        # keys of several parts may be the same: counted together first
        one = parts[0] if len(parts) == 1 else _one_part(self.counter())
        shown, tags, values, codes, counts = one
        least = np.partition(counts, len(counts) - min(k, len(counts)))[-min(k, len(counts))]
        often = np.flatnonzero(counts >= least).tolist()  # the k-th count's ties among them
        ranked = [((shown[values[i]], tags[codes[i]]), int(counts[i])) for i in often]
        return sorted(ranked, key=lambda kv: (-kv[1], kv[0]))[:k]


_WRONG_PARTS = 8
"""The most partitions' wrong values kept apart: a class graded in many pieces keeps memory for
its distinct wrong values, not for each piece's."""


def _one_part(
    counter: Counter[tuple[str, str]],
) -> tuple[list[str], list[str], IntArray, IntArray, IntArray]:
    """A :class:`WrongCounts` part holding these counts."""
    shown = sorted({value for value, _ in counter})
    tags = sorted({tag for _, tag in counter})
    at_shown = {value: k for k, value in enumerate(shown)}
    at_tag = {tag: k for k, tag in enumerate(tags)}
    values = np.array([at_shown[v] for v, _ in counter], dtype=np.int64)
    codes = np.array([at_tag[t] for _, t in counter], dtype=np.int64)
    return shown, tags, values, codes, np.array(list(counter.values()), dtype=np.int64)


SILENT_SHOWN = 50
"""Students who answered nothing named in the report at most (:attr:`Sums.silent` counts all)."""


@dataclass
class Sums:
    """Sufficient statistics of a partition; :meth:`merge` adds two of them."""

    slots: list[SlotInfo]
    n: int = 0
    totals: Counter[float] = field(default_factory=Counter)
    marks: list[Counter[tuple[float, float]]] = field(default_factory=list)
    options: list[Counter[tuple[int, float, float]]] = field(default_factory=list)
    tags: list[Counter[tuple[str, float]]] = field(default_factory=list)
    variants: list[Counter[tuple[str, float]]] = field(default_factory=list)
    statuses: list[Counter[str]] = field(default_factory=list)
    """Per slot: how many answers were correct, partial, incorrect, invalid or blank (as the
    machine graded them, before a teacher's review), and (:data:`DECIDED`) how many unreadable
    ones a teacher scored."""
    causes: list[Counter[str]] = field(default_factory=list)
    """Per slot: the unreadable answers by cause (``typed with %``)."""
    picks: list[Counter[tuple[int, float]]] = field(default_factory=list)
    """Per multiple-answer slot: (choice, total) for each choice a student picked, and
    (:data:`PICKS_ANSWERED`, total) for each student with a readable answer."""
    wrong: list[WrongCounts] = field(default_factory=list)
    """Per slot: its wrong (or partly right) numeric answers by (value as shown, matched
    mistake's tag or ''); the value is '' when the question varies (each student had their
    own). Empty for a slot that is not numeric."""
    groups: list[Counter[tuple[str, str, float, float]]] = field(default_factory=list)
    """Per slot: (split, group, mark, total) for each student, where a split is a way the
    versions of a varying question differ (a parameter, the version, where the right choice is
    shown: :mod:`quizgym.grading.splits`) and the group is the student's side of it. Empty for
    a slot that does not vary."""
    non_answers: Counter[str] = field(default_factory=Counter)
    """What students typed for no answer (``idk``, ``?``, ``-``), graded as blanks: the text
    (folded) and how many answers gave it, over every slot."""
    silent: int = 0
    """Students who answered nothing at all (every slot blank)."""
    silent_names: list[str] = field(default_factory=list)
    """The first :data:`SILENT_SHOWN` of them, in the order of the submissions."""

    def merge(self, other: Sums, *, order: bool = True) -> Sums:
        """The sums of both partitions.

        Keys stay sorted (as :func:`partial_sums` makes them), so the floating-point sums of
        :func:`combine` run in one order however the class was partitioned. Merging many
        partitions, pass ``order=False`` to all but the last merge: the counts are the same and
        the keys are sorted once.
        """

        def ordered(counter: Counter[Any]) -> Counter[Any]:
            return Counter(dict(sorted(counter.items()))) if order else counter

        def add(a: Sequence[Counter[Any]], b: Sequence[Counter[Any]]) -> list[Counter[Any]]:
            return [ordered(x + y) for x, y in zip(a, b, strict=True)]

        return Sums(
            slots=self.slots,
            n=self.n + other.n,
            totals=ordered(self.totals + other.totals),
            marks=add(self.marks, other.marks),
            options=add(self.options, other.options),
            tags=add(self.tags, other.tags),
            variants=add(self.variants, other.variants),
            statuses=add(self.statuses, other.statuses),
            causes=add(self.causes, other.causes),
            picks=add(self.picks, other.picks),
            wrong=[x + y for x, y in zip(self.wrong, other.wrong, strict=True)],
            groups=add(self.groups, other.groups)
            if self.groups and other.groups
            else self.groups or other.groups,
            non_answers=ordered(self.non_answers + other.non_answers),
            silent=self.silent + other.silent,
            silent_names=(self.silent_names + other.silent_names)[:SILENT_SHOWN],
        )


# --- results -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ItemStats:
    """Statistics of one slot (Moodle's definitions; percentages as Moodle displays them)."""

    question: str
    type: str
    n: int
    max_score: float
    mean: float
    facility: float
    """Mean mark / max mark, in %."""
    sd: float
    """Sample SD of the mark, in % of the max mark."""
    random_guess: float | None
    """Expected score from guessing, in %; None when not defined (multiple answers)."""
    intended_weight: float
    effective_weight: float | None
    """In %; None on negative covariance with the total (Moodle's ``negcovar``)."""
    discrimination: float | None
    """Item–rest Pearson correlation × 100 (Moodle's discrimination index)."""
    efficiency: float | None
    """Discriminative efficiency, in %."""
    pbis: float | None
    """Item–total Pearson correlation (point-biserial for 0/1 items)."""
    flags: tuple[str, ...]
    """Plain-language reasons the item itself deserves a look (its quality: the key, how it
    separates students, how hard it is); answers awaiting review are :attr:`pending`."""
    blank: int = 0
    """Students who gave no answer."""
    unreadable: int = 0
    """Answers that could not be read (graded 0 unless a teacher decided them)."""
    cause: str = ""
    """The most common cause of the unreadable answers."""
    decided: int = 0
    """Unreadable answers a teacher scored (``grade --review``)."""
    variant_split: str = ""
    """Of a varying slot, the split whose groups differ most surely (:mod:`quizgym.fairness`):
    a parameter's name, ``version`` or ``key position``; '' when none was tested."""
    variant_low: float | None = None
    """The facility of that split's hardest group, in %."""
    variant_high: float | None = None
    """The facility of that split's easiest group, in %."""
    variant_p: float | None = None
    """That split's p-value, Holm-adjusted over every test of the run."""
    pending: str = ""
    """Why the item's score waits on a teacher, when enough of its answers could not be read
    and await a decision (``14 of 55 answers could not be read, …``); '' otherwise. Kept apart
    from :attr:`flags`: the answers, not the item, need a look."""


@dataclass(frozen=True)
class OptionStats:
    """One option of a choice or true/false slot (or the blank row)."""

    question: str
    option: str
    is_key: bool
    credit: float
    n: int
    prop: float | None
    """Share of the students who answered (None for the blank row)."""
    mean_total: float | None
    mean_rest: float | None
    rpb_total: float | None
    rpb_rest: float | None
    p_upper: float | None
    p_lower: float | None
    d_ul: float | None
    flags: tuple[str, ...]


@dataclass(frozen=True)
class TagStats:
    """How often a misconception tag was matched on a slot, overall and by score group."""

    question: str
    tag: str
    n: int
    prop: float
    p_upper: float | None
    p_middle: float | None
    p_lower: float | None


@dataclass(frozen=True)
class VariantStats:
    """Difficulty of one variant of a parametric (or shuffled) slot.

    Versions answered by fewer than :data:`MIN_VARIANT_N` students share one row, whose
    ``variant`` says how many they are and ``pooled`` is how many.
    """

    question: str
    variant: str
    n: int
    facility: float
    pooled: int = 0


@dataclass(frozen=True)
class PickStats:
    """One choice of a multiple-answer slot: how often it was picked, overall and by group."""

    question: str
    option: str
    is_key: bool
    n: int
    """Students who picked it."""
    prop: float | None
    """Share of the students with a readable answer."""
    p_upper: float | None
    p_lower: float | None


@dataclass(frozen=True)
class WrongStats:
    """A wrong answer of a numeric slot, with how many gave it."""

    question: str
    answer: str
    """The value as typed (rounded to 6 significant digits), '' when each student had their own
    numbers."""
    tag: str
    """The misconception of the mistake it matched, or ''."""
    n: int


@dataclass(frozen=True)
class TestStats:
    """Whole-test statistics (Moodle's quiz calculator)."""

    n: int
    max_score: float
    mean: float
    median: float
    sd: float
    skewness: float | None
    kurtosis: float | None
    cic: float | None
    """Cronbach's α × 100 (KR-20 for 0/1 items)."""
    error_ratio: float | None
    standard_error: float | None
    """The standard error of measurement: SD × √(1 − α), in points."""
    upper_bound: float
    """Lowest total in the top 27 % group."""
    lower_bound: float
    """Totals strictly below this are the bottom 27 % group."""
    cic_low: float | None = None
    """The low end of Feldt's 95 % confidence interval of α, × 100."""
    cic_high: float | None = None
    """The high end of Feldt's 95 % confidence interval of α, × 100."""
    items: int = 0
    """The answer slots α is computed over."""


@dataclass(frozen=True)
class Statistics:
    """Everything :func:`combine` computes."""

    test: TestStats
    items: list[ItemStats]
    options: list[OptionStats]
    tags: list[TagStats]
    variants: list[VariantStats]
    picks: list[PickStats] = field(default_factory=list)
    wrong: list[WrongStats] = field(default_factory=list)
    groups: list[GroupStats] = field(default_factory=list)
    """Per varying slot and split, each group's facility and discrimination."""
    splits: list[SplitTest] = field(default_factory=list)
    """Per varying slot and split, whether its groups differ more than chance."""

    def counts(self, question: str) -> int:
        """How many rows the option table of ``question`` counts (its n, when it has one)."""
        return sum(o.n for o in self.options if o.question == question)


# --- combine -------------------------------------------------------------------------------------


def group_bounds(totals: Counter[float]) -> tuple[float, float]:
    """Canvas's 27 % groups: (lowest total of the top group, bound below which is the bottom).

    Ties at a boundary go to the higher group.
    """
    values = np.array(sorted(totals), dtype=np.float64)
    counts = np.array([totals[v] for v in values], dtype=np.int64)
    n = int(counts.sum())
    if n == 0:
        return math.inf, -math.inf
    k = max(1, int(round(GROUP_SHARE * n)))
    cumulative = np.cumsum(counts)
    # top: the k-th highest value and everything tied with it
    upper = float(values[np.searchsorted(cumulative, n - k + 1)])
    # bottom: below the (k+1)-th lowest value, so ties with it move up
    lower = float(values[min(int(np.searchsorted(cumulative, k + 1)), len(values) - 1)])
    if k >= n:
        lower = math.inf
    return upper, lower


def _weighted(counter: Counter[Any]) -> tuple[list[Any], FloatArray]:
    keys = list(counter)
    return keys, np.array([counter[k] for k in keys], dtype=np.float64)


def _safe(value: float) -> float | None:
    return None if not math.isfinite(value) else float(value)


def _test(sums: Sums, max_total: float, item_vars: Sequence[float]) -> TestStats:
    keys, w = _weighted(sums.totals)
    t = np.array(keys, dtype=np.float64)
    s = int(w.sum())
    mean = float((w * t).sum() / s) if s else math.nan
    order = np.argsort(t)
    t_sorted, w_sorted = t[order], w[order]
    cum = np.cumsum(w_sorted)
    if s:
        lo = t_sorted[np.searchsorted(cum, (s + 1) // 2)]
        hi = t_sorted[np.searchsorted(cum, s // 2 + 1)]
        median = float((lo + hi) / 2)
    else:
        median = math.nan
    d = t - mean
    m2, m3, m4 = ((w * d**k).sum() / s if s else math.nan for k in (2, 3, 4))
    k2 = s * m2 / (s - 1) if s > 1 else math.nan
    sd = math.sqrt(k2) if s > 1 else math.nan
    skew = kurt = None
    if s > 2 and k2 > 0:
        k3 = s**2 * m3 / ((s - 1) * (s - 2))
        skew = float(k3 / k2**1.5)
    if s > 3 and k2 > 0:
        k4 = s**2 * ((s + 1) * m4 - 3 * (s - 1) * m2**2) / ((s - 1) * (s - 2) * (s - 3))
        kurt = float(k4 / k2**2)
    p = len(item_vars)
    cic = error_ratio = standard_error = cic_low = cic_high = None
    if p > 1 and s > 1 and k2 > 0:
        cic = float(100 * p / (p - 1) * (1 - sum(item_vars) / k2))
        if cic <= 100:
            error_ratio = 100 * math.sqrt(max(0.0, 1 - cic / 100))
            standard_error = error_ratio / 100 * sd
        interval = feldt_interval(cic / 100, students=s, items=p)
        if interval is not None:
            cic_low, cic_high = 100 * interval[0], 100 * interval[1]
    upper, lower = group_bounds(sums.totals)
    return TestStats(
        n=s,
        max_score=max_total,
        mean=mean,
        median=median,
        sd=sd,
        skewness=skew,
        kurtosis=kurt,
        cic=cic,
        error_ratio=error_ratio,
        standard_error=standard_error,
        upper_bound=upper,
        lower_bound=lower,
        cic_low=cic_low,
        cic_high=cic_high,
        items=p,
    )


def _item_moments(
    marks: Counter[tuple[float, float]], s: int
) -> tuple[float, float, float, float, float, float]:
    """(mean x, V, Vy, C = cov(x, y), CT = cov(x, T), Cmax) with y = T − x."""
    keys, w = _weighted(marks)
    x = np.array([k[0] for k in keys], dtype=np.float64)
    t = np.array([k[1] for k in keys], dtype=np.float64)
    y = t - x
    xm, ym, tm = (float((w * a).sum() / s) for a in (x, y, t))
    d = s - 1
    if len(x) and (x == x[0]).all():
        # Every student the same mark: no variance, nor covariance with anything. Worked out,
        # a mark that is no binary fraction (0.3) leaves rounding noise in each sum, whose
        # ratios (discrimination, efficiency) would be noise printed as figures.
        vy = float((w * (y - ym) ** 2).sum() / d)
        return float(x[0]), 0.0, vy, 0.0, 0.0, 0.0
    v = float((w * (x - xm) ** 2).sum() / d)
    vy = float((w * (y - ym) ** 2).sum() / d)
    c = float((w * (x - xm) * (y - ym)).sum() / d)
    ct = float((w * (x - xm) * (t - tm)).sum() / d)
    # Cmax: pair the k-th smallest mark with the k-th smallest rest score (comonotone coupling)
    cmax = _coupled(x, y, w.astype(np.int64), xm, ym) / d
    return xm, v, vy, c, ct, cmax


def _coupled(
    x: FloatArray, y: FloatArray, counts: npt.NDArray[np.int64], xm: float, ym: float
) -> float:
    """``sum((sort(X) - xm) * (sort(Y) - ym))`` for the samples X and Y that hold each ``x[i]``
    and ``y[i]`` ``counts[i]`` times, without making them: both sorted samples are runs of
    equal values, and between two ends of runs (of either) the product is one number."""
    ux, ix = np.unique(x, return_inverse=True)
    uy, iy = np.unique(y, return_inverse=True)
    ends_x = np.cumsum(np.bincount(ix.reshape(-1), weights=counts, minlength=len(ux)))
    ends_y = np.cumsum(np.bincount(iy.reshape(-1), weights=counts, minlength=len(uy)))
    ends = sorted_unique(np.concatenate([ends_x, ends_y]))  # where either sample changes value
    ends = ends[ends > 0]
    lengths = np.diff(ends, prepend=0.0)
    at_x = np.searchsorted(ends_x, ends, side="left")  # the run each stretch lies in
    at_y = np.searchsorted(ends_y, ends, side="left")
    return float((lengths * (ux[at_x] - xm) * (uy[at_y] - ym)).sum())


def combine(sums: Sums) -> Statistics:
    """Compute every statistic from the (merged) sums of a class.

    Conventions (stated again in the report, because instructors compare with both LMSs):

    - item statistics follow Moodle (``question/classes/statistics/questions/calculator.php``):
      variances and covariances divide by s − 1; the discrimination index is the **item–rest**
      Pearson correlation (the item's mark against the rest of the test), ×100; discriminative
      efficiency divides the item–rest covariance by the largest one the two marginal distributions
      allow; effective weight uses cov(item, total);
    - test statistics follow Moodle's quiz calculator: sample SD, skewness k3/k2^1.5 and excess
      kurtosis k4/k2² with small-sample corrections, CIC (Cronbach's α, = KR-20 for 0/1 items),
      error ratio and standard error;
    - ``pbis`` is the **item–total** Pearson correlation (the item included), Canvas's convention;
      per-option point-biserials follow Canvas's formula with population SDs, over the students who
      answered the item, against the total (``rpb_total``) and against the rest (``rpb_rest``);
    - score groups are Canvas's top and bottom 27 % by total, ties going to the higher group;
    - agreement between the rubric's suggested scores and a teacher's is Cohen's κ
      (:func:`cohens_kappa`), unweighted or with linear weights for ordered scores.

    Everything is computed from :class:`Sums`: per slot, counts of (mark, total) pairs, of (option,
    mark, total) and of (tag, total), plus a histogram of totals. Sums of partitions merge by adding
    counts, in any order, so the statistics of a class graded in chunks are those of the whole.
    """
    s = sums.n
    max_total = float(sum(slot.points for slot in sums.slots))
    moments = [_item_moments(m, s) if s > 1 else (math.nan,) * 6 for m in sums.marks]
    test = _test(sums, max_total, [m[1] for m in moments])
    cts = np.array([m[4] for m in moments], dtype=np.float64)
    root_sum = float(np.sqrt(cts[cts >= 0]).sum()) if len(cts) else 0.0
    items: list[ItemStats] = []
    statuses = sums.statuses or [Counter() for _ in sums.slots]
    causes = sums.causes or [Counter() for _ in sums.slots]
    for slot, (xm, v, vy, c, ct, cmax), status, cause in zip(
        sums.slots, moments, statuses, causes, strict=True
    ):
        di = 100 * c / math.sqrt(v * vy) if v * vy > 0 else math.nan
        de = 100 * c / cmax if cmax > 0 else math.nan
        ew = 100 * math.sqrt(ct) / root_sum if ct >= 0 and root_sum > 0 else math.nan
        vt = test.sd**2 if math.isfinite(test.sd) else math.nan
        pbis = ct / math.sqrt(v * vt) if v * vt > 0 else math.nan
        guess = slot.random_guess
        facility = 100 * xm / slot.points
        item = ItemStats(
            question=slot.id,
            type=slot.kind,
            n=s,
            max_score=slot.points,
            mean=xm,
            facility=facility,
            sd=100 * math.sqrt(v) / slot.points if v == v else math.nan,
            random_guess=None if guess is None else 100 * guess,
            intended_weight=100 * slot.points / max_total if max_total else math.nan,
            effective_weight=_safe(ew),
            discrimination=_safe(di),
            efficiency=_safe(de),
            pbis=_safe(pbis),
            flags=(),
            blank=status.get("blank", 0),
            unreadable=status.get("invalid", 0),
            decided=status.get(DECIDED, 0),
            cause=_dominant(cause),
        )
        items.append(item)
    options = [
        o
        for slot, counter in zip(sums.slots, sums.options, strict=True)
        for o in _options(slot, counter, test)
    ]
    items = [_flag(item, [o for o in options if o.question == item.question]) for item in items]
    groups, splits = fairness(
        [(slot.id, slot.points) for slot in sums.slots],
        sums.groups or [Counter() for _ in sums.slots],
    )
    items = [_fair(item, [t for t in splits if t.question == item.question]) for item in items]
    tags = [
        t
        for slot, counter in zip(sums.slots, sums.tags, strict=True)
        for t in _tags(slot, counter, sums, test)
    ]
    variants = [
        row
        for slot, counter in zip(sums.slots, sums.variants, strict=True)
        if len({k[0] for k in counter}) > 1
        for row in _variant_rows(slot, counter)
    ]
    picks = [
        p
        for slot, counter in zip(
            sums.slots, sums.picks or [Counter()] * len(sums.slots), strict=True
        )
        for p in _picks(slot, counter, test)
    ]
    wrong = [
        WrongStats(slot.id, answer, tag, n)
        for slot, counter in zip(
            sums.slots, sums.wrong or [WrongCounts()] * len(sums.slots), strict=True
        )
        for (answer, tag), n in counter.most_common(WRONG_SHOWN)
    ]
    return Statistics(
        test=test,
        items=items,
        options=options,
        tags=tags,
        variants=variants,
        picks=picks,
        wrong=wrong,
        groups=groups,
        splits=splits,
    )


def _fair(item: ItemStats, tests: list[SplitTest]) -> ItemStats:
    """The item with its surest split's figures, and a flag when its variants differ."""
    if not tests:
        return item
    surest = min(tests, key=lambda t: (t.p_adjusted, -t.gap, t.split))
    flagged = sorted((t for t in tests if t.flagged), key=lambda t: (t.p_adjusted, -t.gap))
    flags = item.flags + ((flagged[0].flag(),) if flagged else ())  # the surest, once
    return replace(
        item,
        flags=flags,
        variant_split=surest.split,
        variant_low=surest.hardest.facility,
        variant_high=surest.easiest.facility,
        variant_p=surest.p_adjusted,
    )


def _dominant(causes: Counter[str]) -> str:
    """The most common cause (ties: the first in alphabetical order), or ''."""
    if not causes:
        return ""
    return min(causes.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def _variant_rows(slot: SlotInfo, counter: Counter[tuple[str, float]]) -> list[VariantStats]:
    """One row per version answered by enough students to tell; the others share one row."""
    rows: list[tuple[str, int, float]] = []
    few: list[tuple[str, int, float]] = []
    for label, n, total in _by_variant(counter):
        (rows if n >= MIN_VARIANT_N else few).append((label, n, total))
    out = [
        VariantStats(slot.id, label, n, 100 * total / n / slot.points) for label, n, total in rows
    ]
    if len(few) == 1 and not rows:
        label, n, total = few[0]
        out.append(VariantStats(slot.id, label, n, 100 * total / n / slot.points))
    elif few:
        n = sum(f[1] for f in few)
        total = sum(f[2] for f in few)
        out.append(
            VariantStats(
                slot.id,
                f"{len(few)} versions with fewer than {MIN_VARIANT_N} students each",
                n,
                100 * total / n / slot.points,
                pooled=len(few),
            )
        )
    return out


def _picks(slot: SlotInfo, counter: Counter[tuple[int, float]], test: TestStats) -> list[PickStats]:
    """Per choice of a multiple-answer slot: picked by how many, and by each score group."""
    if not counter or not slot.choices:
        return []

    def tally(choice: int) -> tuple[int, int, int]:
        rows = [(t, n) for (c, t), n in counter.items() if c == choice]
        every = sum(n for _, n in rows)
        up = sum(n for t, n in rows if t >= test.upper_bound)
        low = sum(n for t, n in rows if t < test.lower_bound)
        return every, up, low

    answered, n_up, n_low = tally(PICKS_ANSWERED)
    out = []
    for index, label in enumerate(slot.choices):
        n, up, low = tally(index)
        out.append(
            PickStats(
                question=slot.id,
                option=label,
                is_key=slot.choice_keys[index],
                n=n,
                prop=n / answered if answered else None,
                p_upper=up / n_up if n_up else None,
                p_lower=low / n_low if n_low else None,
            )
        )
    return out


def _by_variant(counter: Counter[tuple[str, float]]) -> list[tuple[str, int, float]]:
    out: dict[str, list[float]] = {}
    for (label, x), count in counter.items():
        entry = out.setdefault(label, [0, 0.0])
        entry[0] += count
        entry[1] += count * x
    return [(label, int(n), total) for label, (n, total) in sorted(out.items())]


def _options(
    slot: SlotInfo, counter: Counter[tuple[int, float, float]], test: TestStats
) -> list[OptionStats]:
    labels = slot.options
    if not labels or not counter:
        return []
    keys, w = _weighted(counter)
    opt = np.array([k[0] for k in keys], dtype=np.int64)
    x = np.array([k[1] for k in keys], dtype=np.float64)
    t = np.array([k[2] for k in keys], dtype=np.float64)
    rest = t - x
    answered = opt >= 0
    n_resp = float(w[answered].sum())
    upper = t >= test.upper_bound
    lower = t < test.lower_bound
    n_up = float(w[answered & upper].sum())
    n_low = float(w[answered & lower].sum())

    def pop_sd(a: FloatArray) -> float:
        mean = (w[answered] * a[answered]).sum() / n_resp
        return float(math.sqrt((w[answered] * (a[answered] - mean) ** 2).sum() / n_resp))

    sd_t = pop_sd(t) if n_resp else math.nan
    sd_r = pop_sd(rest) if n_resp else math.nan
    out = []
    rows = [(i, lab) for i, lab in enumerate(labels)]
    rows += [(OPTION_UNREADABLE, "(unreadable)"), (OPTION_BLANK, "(blank)")]
    for code, label in rows:
        chose = opt == code
        n = int(w[chose].sum())
        if code < 0 and n == 0:
            continue
        if code >= 0:
            is_key = slot.keys[code]
            credit = 1.0 / sum(slot.keys) if is_key else 0.0
        else:
            is_key, credit = False, 0.0
        share = n / n_resp if code >= 0 and n_resp else math.nan
        mean_t = float((w[chose] * t[chose]).sum() / n) if n else math.nan
        mean_r = float((w[chose] * rest[chose]).sum() / n) if n else math.nan
        rpb_t = rpb_r = math.nan
        others = answered & ~chose
        n_other = float(w[others].sum())
        if code >= 0 and n and n_other:
            m_other_t = float((w[others] * t[others]).sum() / n_other)
            m_other_r = float((w[others] * rest[others]).sum() / n_other)
            root = math.sqrt(share * (1 - share))
            rpb_t = (mean_t - m_other_t) / sd_t * root if sd_t > 0 else math.nan
            rpb_r = (mean_r - m_other_r) / sd_r * root if sd_r > 0 else math.nan
        p_up = float(w[chose & upper].sum()) / n_up if n_up and code >= 0 else math.nan
        p_low = float(w[chose & lower].sum()) / n_low if n_low and code >= 0 else math.nan
        flags = []
        if code >= 0 and not is_key and share < 0.05:
            flags.append("nonfunctioning")
        if code >= 0 and not is_key and rpb_r > 0:
            flags.append("positive_distractor")
        if is_key and rpb_r <= 0:
            flags.append("key_negative")
        out.append(
            OptionStats(
                question=slot.id,
                option=label,
                is_key=is_key,
                credit=credit,
                n=n,
                prop=_safe(share),
                mean_total=_safe(mean_t),
                mean_rest=_safe(mean_r),
                rpb_total=_safe(rpb_t),
                rpb_rest=_safe(rpb_r),
                p_upper=_safe(p_up),
                p_lower=_safe(p_low),
                d_ul=_safe(p_up - p_low),
                flags=tuple(flags),
            )
        )
    return out


def _tags(
    slot: SlotInfo, counter: Counter[tuple[str, float]], sums: Sums, test: TestStats
) -> list[TagStats]:
    if not counter:
        return []
    totals = sums.totals
    n_up = sum(c for t, c in totals.items() if t >= test.upper_bound)
    n_low = sum(c for t, c in totals.items() if t < test.lower_bound)
    n_mid = sums.n - n_up - n_low
    out = []
    for tag in sorted({k[0] for k in counter}):
        rows = [(t, c) for (g, t), c in counter.items() if g == tag]
        n = sum(c for _, c in rows)
        up = sum(c for t, c in rows if t >= test.upper_bound)
        low = sum(c for t, c in rows if t < test.lower_bound)
        out.append(
            TagStats(
                question=slot.id,
                tag=tag,
                n=n,
                prop=n / sums.n if sums.n else math.nan,
                p_upper=up / n_up if n_up else None,
                p_middle=(n - up - low) / n_mid if n_mid else None,
                p_lower=low / n_low if n_low else None,
            )
        )
    return out


def _flag(item: ItemStats, options: list[OptionStats]) -> ItemStats:
    """Attach plain-language reasons to look at an item."""
    flags = []
    pending = ""
    given = item.n - item.blank
    waiting = item.unreadable - item.decided
    if waiting and item.unreadable >= 2 and item.unreadable >= UNREADABLE_SHARE * given:
        how = f", most often {item.cause}" if item.cause else ""
        pending = (
            f"{item.unreadable} of {given} answers could not be read{how}: {waiting} score 0 "
            "until you decide them in review.csv"
        )
    if item.discrimination is not None and item.discrimination < 0:
        flags.append(
            "students who did well on the rest of the test did worse on this item "
            f"(discrimination {item.discrimination:.0f}%): check the key"
        )
    elif item.efficiency is not None and item.efficiency < DUBIOUS_DE:
        flags.append(
            f"it barely separates strong from weak students (discriminative efficiency "
            f"{item.efficiency:.0f}% < {DUBIOUS_DE:.0f}%)"
        )
    if item.facility >= 95:
        flags.append(f"almost everyone got it right (facility {item.facility:.0f}%)")
    guess = item.random_guess
    if guess is not None and item.facility <= max(guess, 20):
        flags.append(
            f"few students got it right (facility {item.facility:.0f}%, guessing gives "
            f"{guess:.0f}%)"
        )
    for option in options:
        if "positive_distractor" in option.flags and (option.rpb_rest or 0) > 0.05:
            flags.append(
                f"stronger students chose the wrong option {option.option!r} "
                f"(r_pb {option.rpb_rest:.2f}): is it also right?"
            )
    return ItemStats(**{**item.__dict__, "flags": tuple(flags), "pending": pending})


# --- agreement -----------------------------------------------------------------------------------


def cohens_kappa(
    first: Sequence[float],
    second: Sequence[float],
    *,
    weights: Literal["none", "linear"] = "none",
    categories: Sequence[float] | None = None,
) -> float | None:
    """Cohen's κ between two raters' scores of the same answers (the rubric's and a teacher's).

    With ``o`` the share of answers scored ``i`` by the first and ``j`` by the second rater,
    ``e`` the share expected by chance (the product of the two raters' marginal shares) and
    ``w`` a disagreement weight, ``κ = 1 − Σ w·o / Σ w·e``. Unweighted, ``w`` is 0 on the
    diagonal and 1 elsewhere, which is ``(p_o − p_e) / (1 − p_e)``; linear, ``w = |i − j| /
    (k − 1)`` with ``i``, ``j`` the positions of the scores among the ``k`` categories in
    increasing order (Cicchetti–Allison weights, for ordered scores such as 0, 1, 2, 3 points),
    so that 1 point apart costs less than 3. Scores are categories: equal only when exactly
    equal, so round them alike first.

    Args:
        first: one rater's scores, e.g. the rubric's suggestions.
        second: the other's for the same answers, in the same order.
        weights: ``none`` or ``linear``.
        categories: every score either rater could give (default: those given). Linear weights
            depend on it: a score nobody gave still stands between two others.

    Returns:
        κ: 1 for perfect agreement, 0 for what chance gives, below 0 for worse; None when it is
        undefined (no answers, or chance alone agrees fully: one category for everything).

    Raises:
        ValueError: the two lists differ in length, a score is not among ``categories``, or
            ``weights`` is neither ``none`` nor ``linear``.
    """
    if weights not in ("none", "linear"):
        raise ValueError(f"weights must be 'none' or 'linear', not {weights!r}")
    if len(first) != len(second):
        raise ValueError(f"the raters scored {len(first)} and {len(second)} answers")
    levels = sorted(set(categories) if categories is not None else {*first, *second})
    position = {value: i for i, value in enumerate(levels)}
    unknown = sorted({*first, *second} - position.keys())
    if unknown:
        raise ValueError(f"scores {unknown} are not among the categories {levels}")
    if not first or len(levels) < 2:
        return None
    k = len(levels)
    observed = np.zeros((k, k), dtype=np.float64)
    np.add.at(observed, ([position[v] for v in first], [position[v] for v in second]), 1.0)
    observed /= len(first)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    ranks = np.arange(k, dtype=np.float64)
    distance = np.abs(ranks[:, None] - ranks[None, :])
    weight = distance / (k - 1) if weights == "linear" else (distance > 0).astype(np.float64)
    chance = float((weight * expected).sum())
    if chance <= 1e-12:
        return None
    return 1.0 - float((weight * observed).sum()) / chance


@dataclass(frozen=True)
class Agreement:
    """How the rubric's suggested scores of one free-text slot agree with a teacher's."""

    question: str
    n: int
    """Answers a teacher scored."""
    same: float
    """Share of them the teacher scored exactly as the rubric suggested."""
    kappa: float | None
    """Cohen's κ with linear weights over the scores 0, 1, … points (None when undefined)."""


def rubric_agreement(
    question: str, pairs: Counter[tuple[float, float]], *, points: float
) -> Agreement:
    """The agreement of (suggested, teacher's) score pairs, each counted as often as given.

    Categories are every whole score from 0 to ``points`` (and any other score given), so a
    score nobody gave still stands between two that were.
    """
    first = [a for (a, _), n in pairs.items() for _ in range(n)]
    second = [b for (_, b), n in pairs.items() for _ in range(n)]
    steps = {float(k) for k in range(int(points) + 1)} if points == int(points) else set()
    categories = sorted(steps | set(first) | set(second))
    total = len(first)
    same = sum(n for (a, b), n in pairs.items() if a == b)
    return Agreement(
        question=question,
        n=total,
        same=same / total if total else math.nan,
        kappa=cohens_kappa(first, second, weights="linear", categories=categories),
    )
