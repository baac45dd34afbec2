"""Paths that skip sympy give exactly what sympy gives.

``quizgym solve`` works out plain arithmetic on decimals with exact fractions, and parameter
values are shown from exact fractions: both are held here to the sympy forms they replace.
"""

from __future__ import annotations

from fractions import Fraction

import sympy
from hypothesis import given
from hypothesis import strategies as st

from quizgym.expr import format_value
from quizgym.model import ParamRange
from quizgym.solver import keys, param_values, show_number, to_mpf

DECIMALS = st.decimals(
    min_value=-1000, max_value=1000, allow_nan=False, allow_infinity=False, places=4
).map(lambda d: format(d.normalize(), "f"))


@st.composite
def arithmetic(draw: st.DrawFn, depth: int = 3) -> str:
    """Plain arithmetic a student types: decimals, signs, + - * /, small integer powers."""
    if depth == 0 or draw(st.booleans()):
        return draw(DECIMALS)
    op = draw(st.sampled_from(["+", "-", "*", "/", "^"]))
    left = draw(arithmetic(depth - 1))
    right = str(draw(st.integers(-4, 4))) if op == "^" else draw(arithmetic(depth - 1))
    sign = draw(st.sampled_from(["", "-"]))
    return f"{sign}({left}) {op} ({right})"


@given(arithmetic())
def test_solving_plain_arithmetic_without_sympy_agrees_with_sympy(text: str) -> None:
    try:
        fast = str(keys.solve(text))
    except keys.AnswerParseError as exc:
        fast = f"refused: {exc.message}"
    original = keys.rational_value
    keys.rational_value = lambda parsed, env=None: None  # type: ignore[assignment]  # the sympy path, as before
    try:
        slow = str(keys.solve(text))
    except keys.AnswerParseError as exc:
        slow = f"refused: {exc.message}"
    finally:
        keys.rational_value = original
    assert fast == slow


def _shown_by_sympy(value: float) -> str:
    """How a parameter was shown when its values were sympy rationals."""
    exact = sympy.Integer(int(value)) if float(value).is_integer() else sympy.Rational(repr(value))
    return str(int(exact)) if exact.is_Integer else format_value(to_mpf(exact), 15)


@given(st.floats(min_value=-1e20, max_value=1e20, allow_nan=False))
def test_a_parameter_is_shown_as_its_exact_sympy_value_was(x: float) -> None:
    assert show_number(param_values(x)[0]) == _shown_by_sympy(x)


def test_ranges_keep_their_exact_steps() -> None:
    values = param_values(ParamRange(min=0.1, max=0.3, step=0.05))
    assert list(values) == [Fraction(k, 20) for k in (2, 3, 4, 5, 6)]
    assert [show_number(v) for v in values] == ["0.1", "0.15", "0.2", "0.25", "0.3"]
