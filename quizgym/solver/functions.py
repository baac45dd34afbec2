"""Functions that keys and mistakes may call, beyond what a student may type.

``mlm_loss(p1, …, pk) = −Σ ln pᵢ`` (k ≥ 0: the empty mask set gives 0), ``nsp_loss(p) = −ln p``,
``uniform_loss(V) = ln V``; ``round`` rounds half up, ``floor`` and ``ceil``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import mpmath
from mpmath import mpf

from quizgym.errors import AnswerParseError
from quizgym.expr import (
    DPS,
    STUDENT_FUNCTIONS,
    ExactLimitError,
    Function,
    check_budget,
    format_value,
    root_size,
)
from quizgym.lazy import lazy

if TYPE_CHECKING:
    import sympy
else:
    sympy = lazy("sympy")  # exact keys only

__all__ = ["DOMAIN_FUNCTIONS", "KEY_FUNCTIONS", "STEP_FUNCTIONS"]


def _probability_mp(p: mpf) -> mpf:
    if not 0 < p <= 1:
        raise AnswerParseError(f"a probability must lie in (0, 1], got {format_value(p)}")
    return p


def _probability_sym(p: sympy.Expr) -> sympy.Expr:
    if not (p.is_number and 0 < p <= 1):
        raise AnswerParseError(f"a probability must lie in (0, 1], got {p}")
    return p


def _mlm_mp(*ps: mpf) -> mpf:
    return -mpmath.fsum(mpmath.log(_probability_mp(p)) for p in ps) if ps else mpmath.mpf(0)


def _mlm_sym(*ps: sympy.Expr) -> sympy.Expr:
    return -sympy.Add(*(sympy.log(_probability_sym(p)) for p in ps))


def _vocab_mp(v: mpf) -> mpf:
    if v < 1:
        raise AnswerParseError(f"a vocabulary size must be at least 1, got {format_value(v)}")
    return mpmath.log(v)


def _vocab_sym(v: sympy.Expr) -> sympy.Expr:
    if not (v.is_number and v >= 1):
        raise AnswerParseError(f"a vocabulary size must be at least 1, got {v}")
    return sympy.log(v)


def _round_half_up_mp(x: mpf) -> mpf:
    return mpmath.floor(x + mpmath.mpf("0.5"))


def _integer_part(x: sympy.Expr, name: str, *, up: bool) -> sympy.Expr:
    from sympy.core.evalf import PrecisionExhausted

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
        return sympy.ceiling(x) if up else sympy.floor(x)
    if x.is_Rational:
        p, q = int(x.p), int(x.q)
        return sympy.Integer(-(-p // q) if up else p // q)
    check_budget()
    try:
        size = mpmath.mpf(sympy.N(x, 15))
        whole = 0 if not size else max(0, int(mpmath.log10(abs(size))) + 1)
        digits = whole + DPS + 10
        value = x.evalf(digits, strict=True)
        with mpmath.workdps(digits + 5):
            number = mpmath.mpf(value)
            below = int(mpmath.floor(number))
            fraction = number - below
            decided = fraction > mpmath.mpf(10) ** -DPS and 1 - fraction > mpmath.mpf(10) ** -DPS
    except PrecisionExhausted as exc:
        raise ExactLimitError(
            f"{name}(...) cannot be decided exactly: its argument cannot be told apart from 0."
        ) from exc
    except (ArithmeticError, ValueError, TypeError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ExactLimitError(f"{name}(...) cannot be decided exactly here ({reason}).") from exc
    if decided:
        return sympy.Integer(below + 1 if up else below)
    if (
        root_size(x) <= 16
        and max((abs(int(r.p)).bit_length() for r in x.atoms(sympy.Rational)), default=1) <= 256
    ):
        exact = sympy.ceiling(x) if up else sympy.floor(x)
        check_budget()
        if exact.is_Integer:
            return exact
    raise ExactLimitError(
        f"{name}(...) cannot be decided exactly: its argument is within 1e-{DPS} of the "
        f"integer {below if fraction < 0.5 else below + 1}, and may or may not equal it."
    )


DOMAIN_FUNCTIONS: dict[str, Function] = {
    "mlm_loss": Function("mlm_loss", 0, None, _mlm_mp, _mlm_sym),
    "nsp_loss": Function(
        "nsp_loss",
        1,
        1,
        lambda p: -mpmath.log(_probability_mp(p)),
        lambda p: -sympy.log(_probability_sym(p)),
    ),
    "uniform_loss": Function("uniform_loss", 1, 1, _vocab_mp, _vocab_sym),
    "round": Function(
        "round",
        1,
        1,
        _round_half_up_mp,
        lambda x: _integer_part(x + sympy.Rational(1, 2), "round", up=False),
    ),
    "floor": Function("floor", 1, 1, mpmath.floor, lambda x: _integer_part(x, "floor", up=False)),
    "ceil": Function("ceil", 1, 1, mpmath.ceil, lambda x: _integer_part(x, "ceil", up=True)),
}
"""Functions available in keys and mistakes (not in student answers).

``mlm_loss(p1, …, pk) = −Σ ln pᵢ`` (k ≥ 0: the empty mask set gives 0), ``nsp_loss(p) = −ln p``,
``uniform_loss(V) = ln V``; ``round`` rounds half up.
"""

KEY_FUNCTIONS: dict[str, Function] = {**STUDENT_FUNCTIONS, **DOMAIN_FUNCTIONS}

STEP_FUNCTIONS = frozenset({"round", "floor", "ceil"})
"""Functions whose result can jump at an exact value: a mistake that calls one is solved exactly."""
