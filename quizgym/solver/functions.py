"""Functions that keys and mistakes may call, beyond what a student may type.

``mlm_loss(p1, …, pk) = −Σ ln pᵢ`` (k ≥ 0: the empty mask set gives 0), ``nsp_loss(p) = −ln p``,
``uniform_loss(V) = ln V``; ``round`` rounds half up, ``floor`` and ``ceil``.
"""

from __future__ import annotations

import mpmath
import sympy
from mpmath import mpf

from quizgym.errors import AnswerParseError
from quizgym.expr import STUDENT_FUNCTIONS, Function, format_value

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
        "round", 1, 1, _round_half_up_mp, lambda x: sympy.floor(x + sympy.Rational(1, 2))
    ),
    "floor": Function("floor", 1, 1, mpmath.floor, sympy.floor),
    "ceil": Function("ceil", 1, 1, mpmath.ceil, sympy.ceiling),
}
"""Functions available in keys and mistakes (not in student answers).

``mlm_loss(p1, …, pk) = −Σ ln pᵢ`` (k ≥ 0: the empty mask set gives 0), ``nsp_loss(p) = −ln p``,
``uniform_loss(V) = ln V``; ``round`` rounds half up.
"""

KEY_FUNCTIONS: dict[str, Function] = {**STUDENT_FUNCTIONS, **DOMAIN_FUNCTIONS}

STEP_FUNCTIONS = frozenset({"round", "floor", "ceil"})
"""Functions whose result can jump at an exact value: a mistake that calls one is solved exactly."""
