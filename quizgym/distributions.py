"""Tail probabilities and quantiles of the chi-square and F distributions, and Holm's correction:
numbers in, probabilities (or adjusted p-values) out, in pure Python."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["chi2_sf", "f_cdf", "f_quantile", "holm", "regularized_beta"]

_EPS = 1e-15
_TINY = 1e-300
_ITERATIONS = 10_000


def _gamma_series(a: float, x: float) -> float:
    """P(a, x) by its series (converges fast for x < a + 1)."""
    term = total = 1.0 / a
    ap = a
    for _ in range(_ITERATIONS):
        ap += 1
        term *= x / ap
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_fraction(a: float, x: float) -> float:
    """Q(a, x) by its continued fraction (converges fast for x ≥ a + 1)."""
    b = x + 1 - a
    c = 1 / _TINY
    d = 1 / b
    h = d
    for i in range(1, _ITERATIONS):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < _EPS:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def chi2_sf(x: float, df: float) -> float:
    """P(X ≥ x) for X chi-square distributed with ``df`` degrees of freedom.

    ``quizgym grade`` needs these for every run (a reliability interval, tests of whether variants
    differ); scipy would add its import to each run for four functions. They follow the textbook
    methods: the regularized incomplete gamma function by its series and continued fraction, the
    regularized incomplete beta function by Lentz's continued fraction (Press et al., *Numerical
    Recipes*, 3rd ed., §6.2 and §6.4), and an F quantile by bisection on the CDF. A test holds them
    to scipy's to 1e-9.
    """
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, not {df}")
    if x <= 0:
        return 1.0
    a, half = df / 2, x / 2
    if half < a + 1:
        return max(0.0, 1.0 - _gamma_series(a, half))
    return _gamma_fraction(a, half)


def _beta_fraction(a: float, b: float, x: float) -> float:
    qab, qap, qam = a + b, a + 1, a - 1
    c = 1.0
    d = 1 - qab * x / qap
    d = _TINY if abs(d) < _TINY else d
    d = 1 / d
    h = d
    for m in range(1, _ITERATIONS):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1 + aa * d
        d = _TINY if abs(d) < _TINY else d
        c = 1 + aa / c
        c = _TINY if abs(c) < _TINY else c
        d = 1 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1 + aa * d
        d = _TINY if abs(d) < _TINY else d
        c = 1 + aa / c
        c = _TINY if abs(c) < _TINY else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < _EPS:
            break
    return h


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the CDF at ``x`` of a Beta(a, b) variable."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1 - front * _beta_fraction(b, a, 1 - x) / b


def f_cdf(x: float, d1: float, d2: float) -> float:
    """P(F ≤ x) for F with (``d1``, ``d2``) degrees of freedom."""
    if x <= 0:
        return 0.0
    return regularized_beta(d1 / 2, d2 / 2, d1 * x / (d1 * x + d2))


def f_quantile(q: float, d1: float, d2: float) -> float:
    """The ``q``-quantile of F with (``d1``, ``d2``) degrees of freedom (0 < q < 1)."""
    if not 0 < q < 1:
        raise ValueError(f"a quantile needs 0 < q < 1, not {q}")
    low, high = 0.0, 1.0
    while f_cdf(high, d1, d2) < q:
        low, high = high, high * 2
    for _ in range(200):  # bisection: the CDF is monotone; 200 halvings reach float precision
        middle = (low + high) / 2
        if f_cdf(middle, d1, d2) < q:
            low = middle
        else:
            high = middle
        if high - low <= 1e-14 * high:
            break
    return (low + high) / 2


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979), in the order given.

    With the m p-values sorted, p_(1) ≤ … ≤ p_(m), the adjusted p_(i) is
    ``max over j ≤ i of min(1, (m − j + 1) · p_(j))``: rejecting where it is below a level
    keeps the chance of any false flag among the m tests at that level.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
