"""One numeric blank (its key and tolerance) in, the closed runs of decimals the answer engine
accepts out, as ranges an LMS can hold."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING

from quizgym.expr import Reading, read_answer
from quizgym.model import Tolerance
from quizgym.tolerance import AUTO_ABS, AUTO_REL, AUTO_SIGFIGS, compare, interval

if TYPE_CHECKING:
    from quizgym.solver import CompiledBank

_WINDOW = 6
"""Grid steps searched on each side of an analytic edge (the engine's edge is within one)."""
_SCAN = 64
"""An interval of at most this many grid points is scanned point by point."""


@dataclass(frozen=True, kw_only=True)
class Grid:
    """The decimals an LMS tells apart: a fixed number of decimal places, or of figures."""

    places: int | None = None
    """Canvas: every answer is rounded to this many decimal places before scoring."""
    digits: int = 12
    """Otherwise: a step in the ``digits``-th significant figure of the largest end."""

    def step(self, near: float) -> Decimal:
        """The grid step around numbers of magnitude ``near``."""
        if self.places is not None:
            return Decimal(1).scaleb(-self.places)
        if near == 0 or not math.isfinite(near):
            return Decimal(1).scaleb(-self.digits)
        return Decimal(1).scaleb(math.floor(math.log10(abs(near))) - self.digits + 1)


FINE = Grid(digits=12)
"""Moodle, GIFT and QTI 2.1: any answer typed with up to 12 significant figures is exact."""
CANVAS = Grid(places=4)
"""Canvas classic quizzes: ``val.toFixed(4)`` on the numeric answer box (see scoring.py)."""


@dataclass(frozen=True, kw_only=True)
class Run:
    """A closed run ``low ≤ x ≤ high`` of accepted grid decimals (``low == high``: one number)."""

    low: Decimal
    high: Decimal
    step: Decimal
    """The grid step: the nearest refused decimals are ``low − step`` and ``high + step``."""

    def __contains__(self, value: Decimal) -> bool:
        """Whether ``value`` lies in the run."""
        return self.low <= value <= self.high


def number_text(value: Decimal) -> str:
    """A decimal as plain positional text without trailing zeros: ``2.30`` → ``2.3``."""
    if value == 0:
        return "0"
    text = format(value.normalize(), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def typed_text(value: Decimal) -> str:
    """How a student types ``value``: positional, padded to 3 significant figures (``2.30``).

    A number with fewer figures (``2.3``) is refused by ``auto`` for want of figures, which is
    how the student typed it, not what it is; every LMS sees only the number.
    """
    text = number_text(value)
    significant = len(text.replace("-", "").replace(".", "").lstrip("0"))
    if value == 0 or significant >= AUTO_SIGFIGS:
        return text
    missing = AUTO_SIGFIGS - significant
    return text + ("" if "." in text else ".") + "0" * missing


def engine_accepts(text: str, *, target: float, tolerance: Tolerance) -> bool:
    """Whether the engine accepts ``text`` for ``target`` (a key or a mistake's value)."""
    reading = read_answer(text)
    if not isinstance(reading, Reading):
        return False
    parsed = reading.parsed
    return compare(
        value=float(reading.value),
        key=target,
        tolerance=tolerance,
        kind=parsed.kind,
        decimals=parsed.decimals,
        sigfigs=parsed.sigfigs,
        zeros=parsed.zeros,
    ).ok


def accepted_runs(*, target: float, tolerance: Tolerance, grid: Grid) -> tuple[Run, ...]:
    """The runs of grid decimals the engine accepts for ``target``, sorted, disjoint.

    An LMS compares a number with ranges; the engine compares a typed text with a key. The two agree
    when the ranges hold exactly the decimals the engine accepts, so the ranges are found by asking
    the engine itself (:func:`quizgym.tolerance.compare` on the text a student would type), one grid
    step at a time near each edge, never by re-deriving its rules here:

    - ``auto``: the band ``key ± (1e-3·|key| + 1e-9)`` and, when it lies outside the band, the key
      rounded to 3 significant figures (ln 10 → 2.30 and [2.300283, 2.304888], but not 2.3001);
    - ``rel``, ``abs``, ``sigfigs``, ``decimals``: one interval, with the engine's own edges (strict
      for sigfigs and decimals, whatever its float arithmetic says at the exact edge);
    - every policy: the exact band (relative 1e-9), which matters only for tiny tolerances.

    The grid is what the LMS tells apart: the 12th significant digit for an LMS that compares
    numbers as typed (Moodle, QTI 2.1 players), 4 decimal places for Canvas, whose quiz page rounds
    every numeric answer to 4 places before it is scored. A typed answer with more digits than the
    grid counts as its nearest grid point.

    Args:
        target: the key (or a mistake's value, which the engine compares the same way).
        tolerance: the slot's policy.
        grid: what the LMS tells apart.

    Returns:
        The runs, disjoint, the one holding ``target`` first; empty when no grid decimal is
        accepted (a key far finer than the grid).
    """
    if not math.isfinite(target):
        return ()
    if tolerance == "auto":
        band = AUTO_REL * abs(target) + AUTO_ABS
        low, high = target - band, target + band
    else:
        low, high = interval(key=target, tolerance=tolerance)
    exact = 1e-9 * abs(target) + 1e-12  # quizgym.tolerance's exact band
    low, high = min(low, target - exact), max(high, target + exact)
    step = grid.step(max(abs(low), abs(high)))

    def accepts(n: int) -> bool:
        return engine_accepts(typed_text(n * step), target=target, tolerance=tolerance)

    spans: list[tuple[int, int]] = []  # (first, last) grid indices, as edges: never enumerated
    first, last = _floor(low, step), _ceil(high, step)
    if last - first <= _SCAN:
        spans += [(n, n) for n in range(first - 2, last + 3) if accepts(n)]
    else:
        lower = [n for n in range(first - _WINDOW, first + _WINDOW + 1) if accepts(n)]
        upper = [n for n in range(last - _WINDOW, last + _WINDOW + 1) if accepts(n)]
        if lower and upper:
            spans.append((min(lower), max(upper)))
    if tolerance == "auto":
        centre = _nearest(_round_figures(target, AUTO_SIGFIGS), step)
        spans += [(n, n) for n in (centre - 1, centre, centre + 1) if accepts(n)]
    # The run holding the target comes first: an LMS shows its first answer as "the" answer.
    runs = _runs(spans, step)
    exact_target = Decimal(repr(target))
    return tuple(sorted(runs, key=lambda r: (exact_target not in r, r.low)))


def _floor(x: float, step: Decimal) -> int:
    return int((Decimal(repr(x)) / step).to_integral_value(rounding="ROUND_FLOOR"))


def _ceil(x: float, step: Decimal) -> int:
    return int((Decimal(repr(x)) / step).to_integral_value(rounding="ROUND_CEILING"))


def _nearest(x: Decimal, step: Decimal) -> int:
    return int((x / step).to_integral_value(rounding=ROUND_HALF_UP))


def _round_figures(x: float, digits: int) -> Decimal:
    """``x`` rounded half away from zero to ``digits`` significant figures, from its repr."""
    value = Decimal(repr(x))
    if value == 0:
        return value
    return value.quantize(Decimal(1).scaleb(value.adjusted() - digits + 1), rounding=ROUND_HALF_UP)


def _runs(spans: list[tuple[int, int]], step: Decimal) -> tuple[Run, ...]:
    merged: list[list[int]] = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], last)
        else:
            merged.append([first, last])
    return tuple(Run(low=a * step, high=b * step, step=step) for a, b in merged)


__all__ = [
    "CANVAS",
    "FINE",
    "Grid",
    "Run",
    "accepted_runs",
    "describe_runs",
    "engine_accepts",
    "number_text",
    "runs_of",
    "typed_text",
]


def runs_of(
    bank: CompiledBank, *, target: float, tolerance: Tolerance, grid: Grid
) -> tuple[Run, ...]:
    """:func:`~quizgym.accept.accepted_runs`, worked out once per bank and kept with the
    compiled bank (so a warm export reads them from the cache instead of asking the engine)."""
    return bank.memo(
        "accepted_runs",
        (target, tolerance, grid),
        lambda: accepted_runs(target=target, tolerance=tolerance, grid=grid),
    )


def describe_runs(runs: Iterable[Run]) -> str:
    """Runs as a teacher reads them: ``1.38491 to 1.38768, 1.39`` ("nothing" for none)."""
    parts = [
        number_text(r.low) if r.low == r.high else f"{number_text(r.low)} to {number_text(r.high)}"
        for r in runs
    ]
    return ", ".join(parts) if parts else "nothing"
