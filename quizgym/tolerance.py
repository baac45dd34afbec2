"""A typed number, a key and a policy in, whether the number is close enough out, in scalar and
NumPy-array forms."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from types import MappingProxyType
from typing import TYPE_CHECKING

from quizgym import lazy

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]
    BoolArray = npt.NDArray[np.bool_]

from quizgym.model import (
    AbsTolerance,
    DecimalsTolerance,
    RelTolerance,
    SigfigsTolerance,
    Tolerance,
)

__all__ = [
    "AUTO_ABS",
    "AUTO_REL",
    "AUTO_SIGFIGS",
    "HINT_DECIMALS",
    "HINT_NONE",
    "HINT_SIGFIGS",
    "KIND_CODES",
    "Match",
    "auto_places",
    "compare",
    "compare_array",
    "describe",
    "hint_text",
    "interval",
    "is_exact",
    "rounds_to",
    "within_abs",
    "within_decimals",
    "within_rel",
    "within_sigfigs",
]

AUTO_REL = 1e-3
AUTO_ABS = 1e-9
AUTO_SIGFIGS = 3
EXACT_REL = 1e-9
EXACT_ABS = 1e-12

KIND_CODES: Mapping[str, int] = MappingProxyType({"decimal": 0, "expression": 1, "mixed": 2})
"""Codes of :attr:`quizgym.expr.Parsed.kind` for :func:`compare_array`."""

HINT_NONE, HINT_SIGFIGS, HINT_DECIMALS = 0, 1, 2
"""Hint codes of :func:`compare_array`; :func:`hint_text` turns them into words."""

_SLACK = 1e-12
"""A band's edge is widened by this fraction of the band plus the key: 1.95 is 0.05 from 2,
though in binary |1.95 − 2| = 0.050000000000000044. Far below any digit a person types."""
_UNIT_LIMIT = 2.0**52  # beyond this, key·10^d has no fractional digits left to round
_MAX_SHIFT = 300  # |decimals| used for rounding; 10^±300 is still a normal float
_ROUND_SLACK = 1e-9  # in units of the last digit: 2.345 is 2.34499999... in binary
_P10_LOW, _P10_HIGH = -345, 330
_P10: list[float] = [float(f"1e{k}") for k in range(_P10_LOW, _P10_HIGH + 1)]


@functools.cache
def _p10_array() -> FloatArray:
    return lazy.numpy.array(_P10, dtype=lazy.numpy.float64)


@dataclass(frozen=True)
class Match:
    """The outcome of one comparison."""

    ok: bool
    exact: bool
    """Equal to the key up to evaluation noise (relative 1e-9)."""
    hint: str | None
    """E.g. "Give at least 3 significant figures." when a too-short answer was wrong."""


# --- powers of ten, shared by both forms ---------------------------------------------------------


def _pow10(k: int) -> float:
    return _P10[min(max(k, _P10_LOW), _P10_HIGH) - _P10_LOW]


def _pow10_array(k: npt.NDArray[np.int64]) -> FloatArray:
    result: FloatArray = _p10_array()[lazy.numpy.clip(k, _P10_LOW, _P10_HIGH) - _P10_LOW]
    return result


def _order(a: float) -> int:
    """floor(log10(a)) for a finite a > 0, corrected so 10^k <= a < 10^(k+1) in the table."""
    k = math.floor(math.log10(a))
    return k - (_pow10(k) > a) + (_pow10(k + 1) <= a)


def _order_array(a: FloatArray) -> npt.NDArray[np.int64]:
    k = lazy.numpy.floor(lazy.numpy.log10(a)).astype(lazy.numpy.int64)
    corrected: npt.NDArray[np.int64] = (
        k - (_pow10_array(k) > a) + (_pow10_array(k + 1) <= a)
    ).astype(lazy.numpy.int64)
    return corrected


def _floor(x: float) -> float:
    return float(math.floor(x)) if math.isfinite(x) else x


# --- scalar policies ----------------------------------------------------------------------------


def is_exact(*, value: float, key: float) -> bool:
    """Whether ``value`` equals ``key`` up to evaluation noise (relative 1e-9)."""
    return abs(value - key) <= EXACT_REL * abs(key) + EXACT_ABS


def _edge(band: float, key: float) -> float:
    """A band with its edge made robust to binary noise (see ``_SLACK``)."""
    return band + _SLACK * (band + abs(key))


def within_rel(*, value: float, key: float, rel: float, atol: float = 0.0) -> bool:
    """``|value − key| ≤ atol + rel·|key|`` (``np.allclose`` with the key as reference), the
    edge included despite binary noise."""
    return abs(value - key) <= _edge(atol + rel * abs(key), key)


def within_abs(*, value: float, key: float, atol: float) -> bool:
    """``|value − key| ≤ atol``, the edge included despite binary noise (1.95 is within 0.05
    of 2)."""
    return abs(value - key) <= _edge(atol, key)


def within_sigfigs(*, value: float, key: float, digits: int) -> bool:
    """PrairieLearn ``sigfig``: strictly within 0.51 units of significant digit ``digits``."""
    exponent = -(digits - 1) if key == 0 else _order(abs(key)) - digits + 1
    eps = 0.51 * _pow10(exponent)
    return key - eps < value < key + eps


def within_decimals(*, value: float, key: float, digits: int) -> bool:
    """PrairieLearn ``decdig``: strictly within 0.51 units of the ``digits``-th decimal place."""
    eps = 0.51 * _pow10(-digits)
    return key - eps < value < key + eps


def rounds_to(*, value: float, key: float, decimals: int) -> bool:
    """Whether ``value`` (typed with ``decimals`` places) is ``key`` rounded half away from zero.

    Works on integers of last-digit units (``value·10^d`` as typed against
    ``floor(|key|·10^d + 0.5)``) with a slack of 1e-9 units, so a binary ``2.345`` still rounds
    to 2.35. ``decimals`` may be negative (``1.23e4`` is typed to the hundreds).
    """
    scale = _pow10(decimals)
    units = abs(key) * scale
    if not (abs(decimals) <= _MAX_SHIFT and units < _UNIT_LIMIT):
        return False
    typed = _floor(abs(value) * scale + 0.5)
    rounded = _floor(units + 0.5 + _ROUND_SLACK)
    return typed == rounded and (typed == 0 or (value < 0) == (key < 0))


# --- the comparator -------------------------------------------------------------------------------


def hint_text(*, code: int, tolerance: Tolerance) -> str | None:
    """The words of a hint code from :func:`compare_array`."""
    if code == HINT_SIGFIGS:
        n = tolerance.sigfigs if isinstance(tolerance, SigfigsTolerance) else AUTO_SIGFIGS
        return f"Give at least {n} significant figures."
    if code == HINT_DECIMALS and isinstance(tolerance, DecimalsTolerance):
        return f"Give at least {tolerance.decimals} decimal places."
    return None


def auto_places(*, decimals: int, sigfigs: int, zeros: int) -> int:
    """The place auto rounds a typed decimal to: its last digit, except that a whole number's
    trailing zeros may be only placeholders (1230 may be 3 figures: rounded to the tens), down
    to the three figures auto asks for."""
    return decimals - min(zeros, max(0, sigfigs - AUTO_SIGFIGS))


def _verdict(
    value: float,
    key: float,
    tolerance: Tolerance,
    kind: str,
    decimals: int,
    sigfigs: int,
    zeros: int = 0,
) -> tuple[bool, int]:
    """(ok, hint code) for finite value and key, once it is known the value is not exact."""
    typed = kind == "decimal"
    if tolerance == "auto":
        if typed:
            if sigfigs < AUTO_SIGFIGS:
                # Hint only when more digits would have made it right: 2.3 for 2.3026, not 3 for 12.
                close = rounds_to(value=value, key=key, decimals=decimals)
                return False, HINT_SIGFIGS if close else HINT_NONE
            near = within_rel(value=value, key=key, rel=AUTO_REL, atol=AUTO_ABS)
            places = auto_places(decimals=decimals, sigfigs=sigfigs, zeros=zeros)
            return near or rounds_to(value=value, key=key, decimals=places), HINT_NONE
        if kind == "mixed":
            return within_rel(value=value, key=key, rel=AUTO_REL, atol=AUTO_ABS), HINT_NONE
        return False, HINT_NONE
    if isinstance(tolerance, RelTolerance):
        return within_rel(value=value, key=key, rel=tolerance.rel, atol=tolerance.abs), HINT_NONE
    if isinstance(tolerance, AbsTolerance):
        return within_abs(value=value, key=key, atol=tolerance.abs), HINT_NONE
    if isinstance(tolerance, SigfigsTolerance):
        if within_sigfigs(value=value, key=key, digits=tolerance.sigfigs):
            return True, HINT_NONE
        short = typed and sigfigs < tolerance.sigfigs
        close = rounds_to(value=value, key=key, decimals=decimals)
        return False, HINT_SIGFIGS if short and close else HINT_NONE
    if within_decimals(value=value, key=key, digits=tolerance.decimals):
        return True, HINT_NONE
    short = typed and decimals < tolerance.decimals
    close = rounds_to(value=value, key=key, decimals=decimals)
    return False, HINT_DECIMALS if short and close else HINT_NONE


def compare(
    *,
    value: float | complex,
    key: float,
    tolerance: Tolerance,
    kind: str,
    decimals: int,
    sigfigs: int,
    zeros: int = 0,
) -> Match:
    """Compare a student's value with a key under a tolerance policy.

    One comparator serves the drill, the grader, mistakes and the exports (see DESIGN.md and
    ``numeric-answers.md`` §4–5). Policies:

    - ``"auto"`` (the default): an exact answer (``|s−t| ≤ 1e-9·|t| + 1e-12``) is always right. A
      plain decimal needs at least 3 significant figures and then is right when within a relative
      1e-3 (``|s−t| ≤ 1e-9 + 1e-3·|t|``) or when it is the key correctly rounded to the digits typed
      (half away from zero, so a sign error is caught by the same rule). An expression without
      decimal literals (``ln 10``) must be exact; a mixed one (``8*0.6931``) is within a relative
      1e-3.
    - ``RelTolerance`` ``|s−t| ≤ abs + rel·|t|``; ``AbsTolerance`` ``|s−t| ≤ abs``;
      ``SigfigsTolerance`` and ``DecimalsTolerance`` with PrairieLearn's ``sigfig``/``decdig``
      semantics (``eps = 0.51·10^−n``, strict). An exact answer is accepted under every policy.

    NaN, infinities and complex numbers are never right. The scalar functions and
    :func:`compare_array` do the same float64 operations in the same order, and powers of ten come
    from one shared table (``10.0**k`` and NumPy's ``power`` may differ in the last bit), so the two
    forms agree on every input; a property test holds them to it.

    Args:
        value: the student's value.
        key: the key (or a mistake's value: mistakes use the same comparator).
        tolerance: ``"auto"`` or one of the tolerance models.
        kind: how the answer was typed: ``decimal``, ``expression`` or ``mixed``.
        decimals: for a decimal, the decimal places typed (negative for ``1.23e4``).
        sigfigs: for a decimal, the significant figures typed.
        zeros: for a whole number typed without a point, its trailing zeros
            (:attr:`quizgym.expr.Parsed.zeros`).

    Returns:
        Whether it is accepted, whether it is exact, and a hint for a wrong answer.
    """
    if isinstance(value, complex) or isinstance(key, complex):
        return Match(ok=False, exact=False, hint=None)
    value, key = float(value), float(key)
    if not (math.isfinite(value) and math.isfinite(key)):
        return Match(ok=False, exact=False, hint=None)
    if is_exact(value=value, key=key):
        return Match(ok=True, exact=True, hint=None)
    ok, code = _verdict(value, key, tolerance, kind, decimals, sigfigs, zeros)
    return Match(ok=ok, exact=False, hint=None if ok else hint_text(code=code, tolerance=tolerance))


# --- the array form ----------------------------------------------------------------------------


def _rounds_to_array(s: FloatArray, t: FloatArray, decimals: npt.NDArray[np.int64]) -> BoolArray:
    scale = _pow10_array(decimals)
    units = lazy.numpy.abs(t) * scale
    usable = (lazy.numpy.abs(decimals) <= _MAX_SHIFT) & (units < _UNIT_LIMIT)
    typed = lazy.numpy.floor(lazy.numpy.abs(s) * scale + 0.5)
    rounded = lazy.numpy.floor(units + 0.5 + _ROUND_SLACK)
    same_sign = (typed == 0) | ((s < 0) == (t < 0))
    result: BoolArray = usable & (typed == rounded) & same_sign
    return result


def _edge_array(band: FloatArray | float, t: FloatArray) -> FloatArray:
    result: FloatArray = band + _SLACK * (band + lazy.numpy.abs(t))
    return result


def _within_rel_array(s: FloatArray, t: FloatArray, rel: float, atol: float) -> BoolArray:
    result: BoolArray = lazy.numpy.abs(s - t) <= _edge_array(atol + rel * lazy.numpy.abs(t), t)
    return result


def _strictly_within(s: FloatArray, t: FloatArray, eps: FloatArray) -> BoolArray:
    result: BoolArray = (t - eps < s) & (s < t + eps)
    return result


def compare_array(
    *,
    values: npt.ArrayLike,
    keys: npt.ArrayLike,
    tolerance: Tolerance,
    kinds: npt.ArrayLike,
    decimals: npt.ArrayLike,
    sigfigs: npt.ArrayLike,
    zeros: npt.ArrayLike = 0,
) -> tuple[BoolArray, npt.NDArray[np.int8]]:
    """Vectorized :func:`compare` over students × items; every argument broadcasts.

    Args:
        values: the students' values.
        keys: the keys, one for all or one per element (variants).
        tolerance: the policy, one for all elements.
        kinds: :data:`KIND_CODES` of each answer.
        decimals: decimal places typed (per element).
        sigfigs: significant figures typed (per element).
        zeros: trailing zeros of whole numbers typed (per element, see :func:`compare`).

    Returns:
        ``(ok, hint)``: a bool array, and an int8 array of hint codes (:data:`HINT_NONE`,
        :data:`HINT_SIGFIGS`, :data:`HINT_DECIMALS`), nonzero only where not ok.
    """
    raw_values, raw_keys = lazy.numpy.asarray(values), lazy.numpy.asarray(keys)
    shape = lazy.numpy.broadcast_shapes(
        raw_values.shape,
        raw_keys.shape,
        lazy.numpy.shape(kinds),
        lazy.numpy.shape(decimals),
        lazy.numpy.shape(sigfigs),
        lazy.numpy.shape(zeros),
    )
    if lazy.numpy.iscomplexobj(raw_values) or lazy.numpy.iscomplexobj(raw_keys):
        return lazy.numpy.zeros(shape, dtype=lazy.numpy.bool_), lazy.numpy.zeros(
            shape, dtype=lazy.numpy.int8
        )
    s = lazy.numpy.broadcast_to(raw_values.astype(lazy.numpy.float64), shape)
    t = lazy.numpy.broadcast_to(raw_keys.astype(lazy.numpy.float64), shape)
    kind = lazy.numpy.broadcast_to(lazy.numpy.asarray(kinds, dtype=lazy.numpy.int64), shape)
    dec = lazy.numpy.broadcast_to(lazy.numpy.asarray(decimals, dtype=lazy.numpy.int64), shape)
    sig = lazy.numpy.broadcast_to(lazy.numpy.asarray(sigfigs, dtype=lazy.numpy.int64), shape)
    zer = lazy.numpy.broadcast_to(lazy.numpy.asarray(zeros, dtype=lazy.numpy.int64), shape)
    typed = kind == KIND_CODES["decimal"]
    with lazy.numpy.errstate(all="ignore"):  # inf - inf and log10(0) are masked below
        finite = lazy.numpy.isfinite(s) & lazy.numpy.isfinite(t)
        exact = lazy.numpy.abs(s - t) <= EXACT_REL * lazy.numpy.abs(t) + EXACT_ABS
        no_hint = lazy.numpy.zeros(shape, dtype=lazy.numpy.int8)
        if tolerance == "auto":
            near = _within_rel_array(s, t, AUTO_REL, AUTO_ABS)
            short = typed & (sig < AUTO_SIGFIGS)
            close = _rounds_to_array(s, t, dec)
            places = dec - lazy.numpy.minimum(zer, lazy.numpy.maximum(0, sig - AUTO_SIGFIGS))
            decimal_ok = ~short & (near | _rounds_to_array(s, t, places))
            mixed_ok = (kind == KIND_CODES["mixed"]) & near
            ok = lazy.numpy.where(typed, decimal_ok, mixed_ok)
            hint = lazy.numpy.where(short & close, HINT_SIGFIGS, no_hint)
        elif isinstance(tolerance, RelTolerance):
            ok, hint = _within_rel_array(s, t, tolerance.rel, tolerance.abs), no_hint
        elif isinstance(tolerance, AbsTolerance):
            ok, hint = lazy.numpy.abs(s - t) <= _edge_array(tolerance.abs, t), no_hint
        elif isinstance(tolerance, SigfigsTolerance):
            digits = tolerance.sigfigs
            magnitude = lazy.numpy.abs(t)
            order = _order_array(lazy.numpy.where(magnitude > 0, magnitude, 1.0))
            exponent = lazy.numpy.where(magnitude > 0, order - digits + 1, -(digits - 1))
            ok = _strictly_within(s, t, 0.51 * _pow10_array(exponent))
            close = _rounds_to_array(s, t, dec)
            hint = lazy.numpy.where(typed & (sig < digits) & close, HINT_SIGFIGS, no_hint)
        else:
            eps = lazy.numpy.full(shape, 0.51 * _pow10(-tolerance.decimals))
            ok = _strictly_within(s, t, eps)
            close = _rounds_to_array(s, t, dec)
            hint = lazy.numpy.where(
                typed & (dec < tolerance.decimals) & close, HINT_DECIMALS, no_hint
            )
        accepted: BoolArray = finite & (exact | ok)
    hints = lazy.numpy.where(accepted | ~finite, no_hint, hint).astype(lazy.numpy.int8)
    return accepted, hints


# --- words and intervals ----------------------------------------------------------------------


def describe(tolerance: Tolerance) -> str:
    """Human text for answer keys and exports, e.g. ``±0.01``, ``to 3 significant figures``."""
    if tolerance == "auto":
        return "within 0.1% or correctly rounded (at least 3 significant figures)"
    if isinstance(tolerance, RelTolerance):
        text = f"within {tolerance.rel * 100:g}%"
        return f"{text} or ±{tolerance.abs:g}" if tolerance.abs else text
    if isinstance(tolerance, AbsTolerance):
        return f"±{tolerance.abs:g}"
    if isinstance(tolerance, SigfigsTolerance):
        n = tolerance.sigfigs
        return f"to {n} significant figure{'s' if n != 1 else ''}"
    n = tolerance.decimals
    return f"to {n} decimal place{'s' if n != 1 else ''}"


def _round_sigfigs(key: float, digits: int) -> float:
    """``key`` rounded half away from zero to ``digits`` significant figures, in decimal."""
    if key == 0:
        return 0.0
    quantum = Decimal(1).scaleb(_order(abs(key)) - digits + 1)
    # repr gives the shortest decimal that reads back as the key: "2.345", not 2.34499999...
    return float(Decimal(repr(key)).quantize(quantum, rounding=ROUND_HALF_UP))


def interval(*, key: float, tolerance: Tolerance) -> tuple[float, float]:
    """The closed interval of accepted decimal answers, for LMS formats that only take one.

    For ``"auto"`` this is the smallest interval holding every decimal answer auto accepts
    with at least 3 significant figures: the relative band ``key ± (1e-3·|key| + 1e-9)`` joined
    with the key rounded to 3 significant figures (``ln 10`` → [2.30, 2.304888]). A symmetric
    ``key ± half a unit of the 3rd figure`` would be simpler but would also accept mis-rounded
    4-figure answers such as 2.307. What an interval cannot express: the 3-figure minimum
    (``2.3`` equals ``2.30`` to an LMS) and exactness for expressions. The sigfigs and decimals
    policies are strict in :func:`compare`; their intervals here are closed.

    Raises:
        ValueError: the key is not finite.
    """
    if not math.isfinite(key):
        raise ValueError(f"no interval around a key of {key}")
    if tolerance == "auto":
        band = AUTO_REL * abs(key) + AUTO_ABS
        rounded = _round_sigfigs(key, AUTO_SIGFIGS)
        return min(key - band, rounded), max(key + band, rounded)
    if isinstance(tolerance, RelTolerance):
        band = tolerance.abs + tolerance.rel * abs(key)
    elif isinstance(tolerance, AbsTolerance):
        band = tolerance.abs
    elif isinstance(tolerance, SigfigsTolerance):
        digits = tolerance.sigfigs
        exponent = -(digits - 1) if key == 0 else _order(abs(key)) - digits + 1
        band = 0.51 * _pow10(exponent)
    else:
        band = 0.51 * _pow10(-tolerance.decimals)
    return key - band, key + band
