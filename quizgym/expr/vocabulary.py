"""The functions a student or a key may call (``ln``, ``sin``, ``comb``, …) and the constants ``e``
and ``pi``, each as a guarded mpmath value and an exact sympy form."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from quizgym import lazy
from quizgym.errors import AnswerParseError
from quizgym.expr.base import (
    _ROOT_BITS,
    DPS,
    MAX_LOG2,
    Constant,
    ExactLimitError,
    Function,
    _at_53_bits,
    check_budget,
    format_value,
)
from quizgym.expr.exact import (
    _exp_guard,
    _power_guard,
    _root_guard,
    _short,
    exact_bits,
    exact_sign,
    root_size,
)

if TYPE_CHECKING:
    import sympy
    from mpmath import mpf


def _positive(name: str, x: mpf) -> mpf:
    if x <= 0:
        raise AnswerParseError(f"{name} needs a positive number, but got {format_value(x)}.")
    return x


def _mp_sqrt(x: mpf) -> mpf:
    if x < 0:
        raise AnswerParseError(
            f"sqrt needs a number that is not negative, but got {format_value(x)}."
        )
    return lazy.mpmath.sqrt(x)


def _exp_limit() -> mpf:
    """exp(x) < 2**4096  ⇔  x < 4096·ln 2 ≈ 2839.8."""
    return _at_53_bits(_exp_limit_53)


def _exp_limit_53() -> mpf:
    return MAX_LOG2 * lazy.mpmath.log(2)


def _mp_exp(x: mpf) -> mpf:
    if abs(x) >= _exp_limit():
        raise AnswerParseError(
            f"exp argument too large: exp(x) needs |x| < 2839, but got {format_value(x)}."
        )
    return lazy.mpmath.exp(x)


def _sym_sqrt(x: sympy.Expr) -> sympy.Expr:
    if exact_bits(x) > _ROOT_BITS:
        raise ExactLimitError("sqrt of a number this large cannot be taken exactly.")
    _root_guard(x, lazy.sympy.Rational(1, 2), None)
    return lazy.sympy.sqrt(x)


def _sym_abs(x: sympy.Expr) -> sympy.Expr:
    # sympy.Abs decides the sign through its assumptions, which for a number too close to zero
    # to tell by evaluation compute its minimal polynomial (unbounded time for a high root).
    if x.free_symbols:
        return lazy.sympy.Abs(x)
    return x if exact_sign(x, "abs") >= 0 else -x


def _sym_exp(x: sympy.Expr) -> sympy.Expr:
    _exp_guard(x, None)
    return lazy.sympy.exp(x)


_LN = Function(
    "ln", 1, 1, lambda x: lazy.mpmath.log(_positive("ln", x)), lambda x: lazy.sympy.log(x)
)
_LOG10 = Function(
    "log10",
    1,
    1,
    lambda x: lazy.mpmath.log10(_positive("log10", x)),
    lambda x: lazy.sympy.log(x, 10),
)


#
# Each function below bounds its work before doing it, as the walker does for powers: a
# factorial or binomial coefficient by the size of its result (from log-gamma, never by
# computing it), hyperbolic functions by their argument like exp, and every exact form is
# either sympy's own closed form (sin(pi/6) = 1/2) or left unevaluated (gamma(1/3)), never a
# search. The mpmath side runs first for every node, so the exact side only ever sees
# arguments whose value is known to be in range.


def _ln2() -> mpf:
    return _at_53_bits(_ln2_53)


def _ln2_53() -> mpf:
    return lazy.mpmath.log(2)


def _whole(name: str, x: mpf, *, least: int = 0) -> int:
    """The integer value of an argument that must be a whole number of at least ``least``."""
    if not lazy.mpmath.isint(x) or x < least:
        raise AnswerParseError(f"{name} needs a whole number ≥ {least}, but got {format_value(x)}.")
    return int(x)


def _bounded_log2(name: str, log_e: mpf) -> None:
    """Refuse a result whose natural log says it lies beyond 2^4096."""
    if abs(log_e) / _ln2() > MAX_LOG2:
        raise AnswerParseError(
            f"{name}: the result is too large or too small to work with (beyond 2^4096)."
        )


def _mp_tan(x: mpf) -> mpf:
    if abs(lazy.mpmath.cos(x)) < lazy.mpmath.mpf(10) ** (5 - DPS):
        raise AnswerParseError(
            f"tan is undefined at odd multiples of pi/2 (got {format_value(x)})."
        )
    return lazy.mpmath.tan(x)


_QUARTER = {0: (0, 1), 1: (1, 0), 2: (0, -1), 3: (-1, 0)}  # sin and cos at k·90°


def _degrees(name: str, x: mpf) -> tuple[mpf, mpf]:
    """sin and cos of x degrees, exact at multiples of 90° (sind(180) is 0, not 1e-31)."""
    turn = lazy.mpmath.fmod(x, 360)
    if lazy.mpmath.isint(turn / 90):
        s, c = _QUARTER[int(turn / 90) % 4]
        return lazy.mpmath.mpf(s), lazy.mpmath.mpf(c)
    angle = lazy.mpmath.radians(turn)
    return lazy.mpmath.sin(angle), lazy.mpmath.cos(angle)


def _mp_tand(x: mpf) -> mpf:
    s, c = _degrees("tand", x)
    if not c:
        raise AnswerParseError(f"tand is undefined at odd multiples of 90 (got {format_value(x)}).")
    return s / c


def _unit_interval(name: str, x: mpf) -> mpf:
    if abs(x) > 1:
        raise AnswerParseError(f"{name} needs a number from -1 to 1, but got {format_value(x)}.")
    return x


def _mp_atan2(y: mpf, x: mpf) -> mpf:
    if not x and not y:
        raise AnswerParseError("atan2(0, 0) is undefined.")
    return lazy.mpmath.atan2(y, x)


def _sym_atan2(y: sympy.Expr, x: sympy.Expr) -> sympy.Expr:
    # sympy's atan2 decides the quadrant through assumptions; the signs decided by evaluation
    # (exact_sign) give the same closed forms without them.
    if y.free_symbols or x.free_symbols:
        return lazy.sympy.atan2(y, x)
    sx = 0 if x.is_zero else exact_sign(x, "atan2")
    sy = 0 if y.is_zero else exact_sign(y, "atan2")
    if sx > 0:
        return lazy.sympy.atan(y / x)
    if sx < 0:
        return lazy.sympy.atan(y / x) + (lazy.sympy.pi if sy >= 0 else -lazy.sympy.pi)
    if sy == 0:
        raise AnswerParseError("atan2(0, 0) is undefined.")
    return lazy.sympy.pi / 2 if sy > 0 else -lazy.sympy.pi / 2


def _mp_hyperbolic(name: str, f: Callable[[mpf], mpf]) -> Callable[[mpf], mpf]:
    def mp(x: mpf) -> mpf:
        if abs(x) >= _exp_limit():
            raise AnswerParseError(
                f"{name} argument too large: it needs |x| < 2839, but got {format_value(x)}."
            )
        return f(x)

    return mp


def _sym_hyperbolic(f: Callable[[sympy.Expr], sympy.Expr]) -> Callable[[sympy.Expr], sympy.Expr]:
    def sym(x: sympy.Expr) -> sympy.Expr:
        _exp_guard(x, None)  # sinh(c·ln a) evaluates to powers of a
        return f(x)

    return sym


def _sym_integer(name: str, x: sympy.Expr, *, least: int = 0) -> sympy.Integer:
    if not x.is_Integer or x < least:
        raise AnswerParseError(
            f"{name} needs a whole number ≥ {least} written exactly, but got {_short(x)}."
        )
    return x


def _mp_factorial(n: mpf) -> mpf:
    k = _whole("factorial", n)
    _bounded_log2("factorial", lazy.mpmath.loggamma(k + 1))
    return lazy.mpmath.factorial(k)


def _sym_factorial(n: sympy.Expr) -> sympy.Expr:
    return lazy.sympy.factorial(_sym_integer("factorial", n))


def _counting(name: str, n: mpf, k: mpf) -> tuple[int, int]:
    return _whole(name, n), _whole(name, k)


def _comb_log2_below(whole: int, pick: int) -> float:
    """A lower bound of log2 C(n, k) for k ≤ n/2, computed without cancellation: C(n, k) ≥
    (n/k)^k. (A difference of log-gammas of 10^300 has no digits left at 30.)"""
    return pick * math.log2(whole / pick) if pick else 0.0


def _mp_comb(n: mpf, k: mpf) -> mpf:
    whole, pick = _counting("comb", n, k)
    if pick > whole:
        return lazy.mpmath.mpf(0)
    pick = min(pick, whole - pick)
    if _comb_log2_below(whole, pick) > MAX_LOG2:
        _bounded_log2("comb", lazy.mpmath.mpf(2 * MAX_LOG2))
    # Within the bound, k ≤ 4096 and C(n, k) < 2^(4096 + 1.45·k): quick as an integer.
    return lazy.mpmath.mpf(math.comb(whole, pick))


def _mp_perm(n: mpf, k: mpf) -> mpf:
    whole, pick = _counting("perm", n, k)
    if pick > whole:
        return lazy.mpmath.mpf(0)
    # n!/(n-k)! ≥ (n - k + 1)^k, computed without cancellation.
    if pick and pick * math.log2(whole - pick + 1) > MAX_LOG2:
        _bounded_log2("perm", lazy.mpmath.mpf(2 * MAX_LOG2))
    return lazy.mpmath.mpf(math.perm(whole, pick))


def _sym_comb(n: sympy.Expr, k: sympy.Expr) -> sympy.Expr:
    return lazy.sympy.binomial(_sym_integer("comb", n), _sym_integer("comb", k))


def _sym_perm(n: sympy.Expr, k: sympy.Expr) -> sympy.Expr:
    whole, pick = _sym_integer("perm", n), _sym_integer("perm", k)
    if pick > whole:
        return lazy.sympy.Integer(0)
    return lazy.sympy.ff(whole, pick)


def _mp_gamma(x: mpf) -> mpf:
    if x <= 0 and lazy.mpmath.isint(x):
        raise AnswerParseError(
            f"gamma is undefined at 0 and the negative whole numbers (got {format_value(x)})."
        )
    # |Γ(x)| from log-gamma, by reflection below 1/2: π / (|sin πx| · Γ(1 − x)).
    size = lazy.mpmath.loggamma(x) if x >= lazy.mpmath.mpf("0.5") else -lazy.mpmath.loggamma(1 - x)
    _bounded_log2("gamma", lazy.mpmath.re(size))
    return lazy.mpmath.gamma(x)


def _mp_erfc(x: mpf) -> mpf:
    if x > 64:  # erfc(x) < e^(-x²): past 64 it is below 2^-4096 · … (refused as too small)
        raise AnswerParseError(
            f"erfc({format_value(x)}) is too small to work with (below 2^-4096)."
        )
    return lazy.mpmath.erfc(x)


def _normal_args(name: str, args: tuple[mpf, ...]) -> mpf:
    """z = (x - mu) / sigma of normal_cdf(x[, mu[, sigma]]) (mu 0 and sigma 1 by default)."""
    x = args[0]
    mu = args[1] if len(args) > 1 else lazy.mpmath.mpf(0)
    sigma = args[2] if len(args) > 2 else lazy.mpmath.mpf(1)
    if sigma <= 0:
        raise AnswerParseError(f"{name} needs sigma > 0, but got {format_value(sigma)}.")
    return (x - mu) / sigma


def _mp_normal_cdf(*args: mpf) -> mpf:
    z = _normal_args("normal_cdf", args)
    if z < -64:
        raise AnswerParseError("normal_cdf: the result is too small to work with (below 2^-4096).")
    return lazy.mpmath.erfc(-z / lazy.mpmath.sqrt(2)) / 2


def _mp_normal_pdf(*args: mpf) -> mpf:
    z = _normal_args("normal_pdf", args)
    sigma = args[2] if len(args) == 3 else lazy.mpmath.mpf(1)
    if abs(z) > 75:
        raise AnswerParseError("normal_pdf: the result is too small to work with (below 2^-4096).")
    return lazy.mpmath.exp(-(z**2) / 2) / (sigma * lazy.mpmath.sqrt(2 * lazy.mpmath.pi))


def _sym_normal(args: tuple[sympy.Expr, ...]) -> tuple[sympy.Expr, sympy.Expr]:
    x = args[0]
    mu = args[1] if len(args) > 1 else lazy.sympy.Integer(0)
    sigma = args[2] if len(args) > 2 else lazy.sympy.Integer(1)
    return (x - mu) / sigma, sigma


@functools.cache
def _normal_cdf_class() -> type:
    """The class of Φ in exact forms (made on first use: it subclasses a sympy class)."""

    class NormalCDF(lazy.sympy.Function):  # type: ignore[misc]  # sympy is untyped
        """Φ(z), the standard normal distribution function, kept whole in exact forms so that a
        key reads ``normal_cdf(49/25) ≈ 0.975`` rather than a sum with ``erfc``."""

        nargs = 1

        @classmethod
        def eval(cls, z: sympy.Expr) -> sympy.Expr | None:
            # sympy's hook for simplifying Φ(z) on construction (not Python's eval): z is a
            # sympy object built from quizgym's own parse tree, never text.
            if z.is_zero:
                return lazy.sympy.Rational(1, 2)
            return None

        def _eval_evalf(self, prec: int) -> sympy.Expr:
            return (lazy.sympy.erfc(-self.args[0] / lazy.sympy.sqrt(2)) / 2)._eval_evalf(prec)

        def _eval_is_real(self) -> bool | None:
            real: bool | None = self.args[0].is_real
            return real

        def _eval_is_positive(self) -> bool | None:
            real: bool | None = self.args[0].is_real
            return real

    return NormalCDF


def _sym_normal_cdf(*args: sympy.Expr) -> sympy.Expr:
    z, _ = _sym_normal(args)
    result: sympy.Expr = _normal_cdf_class()(z)
    return result


def _sym_normal_pdf(*args: sympy.Expr) -> sympy.Expr:
    z, sigma = _sym_normal(args)
    _power_guard(z, lazy.sympy.Integer(2), None)
    return lazy.sympy.exp(-(z**2) / 2) / (sigma * lazy.sympy.sqrt(2 * lazy.sympy.pi))


def _probability(name: str, p: mpf) -> mpf:
    if not 0 <= p <= 1:
        raise AnswerParseError(
            f"{name} needs a probability from 0 to 1, but got {format_value(p)}."
        )
    return p


def _mp_binom_pmf(k: mpf, n: mpf, p: mpf) -> mpf:
    trials, hits = _whole("binom_pmf", n), _whole("binom_pmf", k)
    p = _probability("binom_pmf", p)
    if hits > trials:
        return lazy.mpmath.mpf(0)
    if p in (0, 1):
        return lazy.mpmath.mpf(1 if hits == (0 if p == 0 else trials) else 0)
    # A probability is at most 1: only "too small" can happen. C(n, k) ≤ (e·n/k)^k bounds it
    # from above without the cancellation of a difference of huge log-gammas.
    pick = min(hits, trials - hits)
    comb_above = pick * math.log2(math.e * trials / pick) if pick else 0.0
    log2_p = float((hits * lazy.mpmath.log(p) + (trials - hits) * lazy.mpmath.log(1 - p)) / _ln2())
    if comb_above + log2_p < -MAX_LOG2:
        _bounded_log2("binom_pmf", lazy.mpmath.mpf(2 * MAX_LOG2))
    return (
        lazy.mpmath.binomial(trials, hits)
        * lazy.mpmath.power(p, hits)
        * lazy.mpmath.power(1 - p, trials - hits)
    )


def _sym_binom_pmf(k: sympy.Expr, n: sympy.Expr, p: sympy.Expr) -> sympy.Expr:
    trials, hits = _sym_integer("binom_pmf", n), _sym_integer("binom_pmf", k)
    if hits > trials:
        return lazy.sympy.Integer(0)
    _power_guard(p, hits, None)
    _power_guard(1 - p, trials - hits, None)
    return lazy.sympy.binomial(trials, hits) * p**hits * (1 - p) ** (trials - hits)


def _mp_extreme(name: str) -> Callable[..., mpf]:
    pick = max if name == "max" else min

    def mp(*args: mpf) -> mpf:
        return pick(args)

    return mp


def _sym_extreme(name: str) -> Callable[..., sympy.Expr]:
    def sym(*args: sympy.Expr) -> sympy.Expr:
        if any(a.free_symbols for a in args):
            return (lazy.sympy.Max if name == "max" else lazy.sympy.Min)(*args)
        best = args[0]
        for other in args[1:]:
            difference = other - best
            sign = 0 if difference.is_zero else exact_sign(difference, name)
            if (sign > 0) if name == "max" else (sign < 0):
                best = other
        return best

    return sym


def _round_digits(digits: mpf | sympy.Expr) -> int:
    if isinstance(digits, lazy.mpmath.mpf):
        whole = bool(lazy.mpmath.isint(digits))
    else:
        whole = bool(getattr(digits, "is_Integer", 0))
    if not whole:
        raise AnswerParseError("round(x, n) needs a whole number of digits n.")
    n = int(digits)
    if abs(n) > 300:
        raise AnswerParseError("round(x, n) rounds to at most 300 digits either side of the point.")
    return n


def _snap(x: mpf) -> mpf:
    """x, or the integer it is within 30-digit noise of: 2.345·100 + 0.5 is 234.99999… in
    binary, and must round as the exact 235 does (the exact side decides keys exactly)."""
    nearest = lazy.mpmath.nint(x)
    return nearest if abs(x - nearest) <= (abs(x) + 1) * lazy.mpmath.mpf(10) ** (5 - DPS) else x


def _mp_floor(x: mpf) -> mpf:
    return lazy.mpmath.floor(_snap(x))


def _mp_ceil(x: mpf) -> mpf:
    return lazy.mpmath.ceil(_snap(x))


def _mp_round(x: mpf, digits: mpf | None = None) -> mpf:
    if digits is None:
        return _mp_floor(x + lazy.mpmath.mpf("0.5"))
    scale = lazy.mpmath.mpf(10) ** _round_digits(digits)
    return _mp_floor(x * scale + lazy.mpmath.mpf("0.5")) / scale


def _sym_round(x: sympy.Expr, digits: sympy.Expr | None = None) -> sympy.Expr:
    half = lazy.sympy.Rational(1, 2)
    if digits is None:
        return _integer_part(x + half, "round", up=False)
    scale = lazy.sympy.Integer(10) ** _round_digits(digits)
    return _integer_part(x * scale + half, "round", up=False) / scale


def _integer_part(x: sympy.Expr, name: str, *, up: bool) -> sympy.Expr:
    """``floor(x)`` (or ``ceil`` when ``up``) of an exact number, in bounded time.

    sympy's own floor and ceiling can take unbounded time and memory (``floor(ln(2)·10^250)``
    expands the logarithm's power, ``ceil(0.5^(4e-218))`` proves a number of huge degree is not
    an integer). A rational is rounded with integers; any other number is evaluated to 30 digits
    past its decimal point and rounded when that decides it. A number within 10^-30 of an
    integer is left to sympy only when it is small and without high roots (``ln(8)/ln(2)`` is
    exactly 3), and refused otherwise.

    Raises:
        ExactLimitError: which side of an integer the number lies on cannot be decided.
    """
    if x.free_symbols:
        return lazy.sympy.ceiling(x) if up else lazy.sympy.floor(x)
    if x.is_Rational:
        p, q = int(x.p), int(x.q)
        return lazy.sympy.Integer(-(-p // q) if up else p // q)
    check_budget()
    try:
        size = lazy.mpmath.mpf(lazy.sympy.N(x, 15))
        whole = 0 if not size else max(0, int(lazy.mpmath.log10(abs(size))) + 1)
        digits = whole + DPS + 10
        value = x.evalf(digits, strict=True)
        with lazy.mpmath.workdps(digits + 5):
            number = lazy.mpmath.mpf(value)
            below = int(lazy.mpmath.floor(number))
            fraction = number - below
            decided = (
                fraction > lazy.mpmath.mpf(10) ** -DPS
                and 1 - fraction > lazy.mpmath.mpf(10) ** -DPS
            )
    except _precision_exhausted() as exc:
        raise ExactLimitError(
            f"{name}(...) cannot be decided exactly: its argument cannot be told apart from 0."
        ) from exc
    except (ArithmeticError, ValueError, TypeError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ExactLimitError(f"{name}(...) cannot be decided exactly here ({reason}).") from exc
    if decided:
        return lazy.sympy.Integer(below + 1 if up else below)
    if (
        root_size(x) <= 16
        and max((abs(int(r.p)).bit_length() for r in x.atoms(lazy.sympy.Rational)), default=1)
        <= 256
    ):
        exact = lazy.sympy.ceiling(x) if up else lazy.sympy.floor(x)
        check_budget()
        if exact.is_Integer:
            return exact
    raise ExactLimitError(
        f"{name}(...) cannot be decided exactly: its argument is within 1e-{DPS} of the "
        f"integer {below if fraction < 0.5 else below + 1}, and may or may not equal it."
    )


def _precision_exhausted() -> type[Exception]:
    exception: type[Exception] = lazy.sympy.core.evalf.PrecisionExhausted
    return exception


def _sympy(name: str) -> Callable[..., sympy.Expr]:
    """sympy's function ``name``, looked up when a key is solved (not when the table is made)."""

    def call(*args: sympy.Expr) -> sympy.Expr:
        value: sympy.Expr = getattr(lazy.sympy, name)(*args)
        return value

    return call


def _mp(name: str) -> Callable[..., mpf]:
    """mpmath's function ``name``, looked up when it is called (mpmath is imported on first use)."""

    def call(*args: mpf) -> mpf:
        value: mpf = getattr(lazy.mpmath, name)(*args)
        return value

    return call


def _fn(name: str, mp: Callable[..., mpf], sym: Callable[..., sympy.Expr], low: int = 1,
        high: int | None = 1) -> Function:  # fmt: skip
    return Function(name, low, high, mp, sym)


def _deg(f: Callable[[sympy.Expr], sympy.Expr]) -> Callable[[sympy.Expr], sympy.Expr]:
    return lambda x: f(lazy.sympy.pi * x / 180)


_SIN, _COS, _TAN = _sympy("sin"), _sympy("cos"), _sympy("tan")


STUDENT_FUNCTIONS: Mapping[str, Function] = MappingProxyType(
    {
        "ln": _LN,
        "log": _LN,  # natural log, as in sympy, mpmath, PyTorch and PrairieLearn
        "log10": _LOG10,
        "lg": _LOG10,
        "log2": _fn(
            "log2",
            lambda x: lazy.mpmath.log(_positive("log2", x), 2),
            lambda x: lazy.sympy.log(x, 2),
        ),
        "exp": _fn("exp", _mp_exp, _sym_exp),
        "sqrt": _fn("sqrt", _mp_sqrt, _sym_sqrt),
        "abs": _fn("abs", abs, _sym_abs),
        # trigonometry, in radians; sind, cosd and tand take degrees
        "sin": _fn("sin", _mp("sin"), _SIN),
        "cos": _fn("cos", _mp("cos"), _COS),
        "tan": _fn("tan", _mp_tan, _TAN),
        "asin": _fn("asin", lambda x: lazy.mpmath.asin(_unit_interval("asin", x)), _sympy("asin")),
        "acos": _fn("acos", lambda x: lazy.mpmath.acos(_unit_interval("acos", x)), _sympy("acos")),
        "atan": _fn("atan", _mp("atan"), _sympy("atan")),
        "atan2": _fn("atan2", _mp_atan2, _sym_atan2, 2, 2),
        "sind": _fn("sind", lambda x: _degrees("sind", x)[0], _deg(_SIN)),
        "cosd": _fn("cosd", lambda x: _degrees("cosd", x)[1], _deg(_COS)),
        "tand": _fn("tand", _mp_tand, _deg(_TAN)),
        "sinh": _fn("sinh", _mp_hyperbolic("sinh", _mp("sinh")), _sym_hyperbolic(_sympy("sinh"))),
        "cosh": _fn("cosh", _mp_hyperbolic("cosh", _mp("cosh")), _sym_hyperbolic(_sympy("cosh"))),
        "tanh": _fn("tanh", _mp("tanh"), _sym_hyperbolic(_sympy("tanh"))),
        # counting and probability
        "factorial": _fn("factorial", _mp_factorial, _sym_factorial),
        "comb": _fn("comb", _mp_comb, _sym_comb, 2, 2),
        "perm": _fn("perm", _mp_perm, _sym_perm, 2, 2),
        "gamma": _fn("gamma", _mp_gamma, _sympy("gamma")),
        "erf": _fn("erf", _mp("erf"), _sympy("erf")),
        "erfc": _fn("erfc", _mp_erfc, _sympy("erfc")),
        "normal_cdf": _fn("normal_cdf", _mp_normal_cdf, _sym_normal_cdf, 1, 3),
        "normal_pdf": _fn("normal_pdf", _mp_normal_pdf, _sym_normal_pdf, 1, 3),
        "binom_pmf": _fn("binom_pmf", _mp_binom_pmf, _sym_binom_pmf, 3, 3),
        # choosing and rounding (round rounds half up)
        "min": _fn("min", _mp_extreme("min"), _sym_extreme("min"), 1, None),
        "max": _fn("max", _mp_extreme("max"), _sym_extreme("max"), 1, None),
        "floor": _fn("floor", _mp_floor, lambda x: _integer_part(x, "floor", up=False)),
        "ceil": _fn("ceil", _mp_ceil, lambda x: _integer_part(x, "ceil", up=True)),
        "round": _fn("round", _mp_round, _sym_round, 1, 2),
    }
)
"""Functions of the language, for students and keys alike (see docs/answers.md)."""

STEP_FUNCTIONS = frozenset({"round", "floor", "ceil"})
"""Functions whose result can jump at an exact value: a mistake that calls one is solved exactly."""

CONSTANTS: Mapping[str, Constant] = MappingProxyType(
    {
        "e": Constant("e", lambda: +lazy.mpmath.e, "E"),
        "pi": Constant("pi", lambda: +lazy.mpmath.pi, "pi"),
    }
)

_NAME_RE = re.compile(r"[a-z_][a-z0-9_]*")
