"""A parsed expression in, its value to 30 digits out (:func:`evaluate`, mpmath), every step held
below 2^4096."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from quizgym import lazy
from quizgym.errors import AnswerParseError
from quizgym.expr.base import (
    _TOO_BIG,
    DPS,
    MAX_LOG2,
    Function,
    Parsed,
    _big,
    _Binary,
    _Call,
    _Const,
    _Name,
    _Node,
    _Num,
    _tiny,
    _Unary,
    _walk,
)

if TYPE_CHECKING:
    from mpmath import mpf


def _guard(x: Any, offset: int | None) -> mpf:
    """Every intermediate value: a real, finite mpf with 2**-4096 <= |x| < 2**4096 (or 0)."""
    if not isinstance(x, lazy.mpmath.mpf):
        if isinstance(x, int | float):
            x = lazy.mpmath.mpf(x)
        else:
            raise AnswerParseError("The result is not a real number.", offset)
    if not lazy.mpmath.isfinite(x):
        raise AnswerParseError("The result is not a finite number.", offset)
    if x and not _tiny() <= abs(x) < _big():
        raise AnswerParseError(_TOO_BIG, offset)
    return x


def _literal(node: _Num) -> mpf:
    if node.exponent >= 0:
        return lazy.mpmath.mpf(node.mantissa * 10**node.exponent)
    return lazy.mpmath.mpf(node.mantissa) / 10 ** (-node.exponent)


def _mp_binary(op: str, a: mpf, b: mpf, offset: int) -> mpf:
    if op == "+":
        result = a + b
    elif op == "-":
        result = a - b
    elif op == "*":
        result = a * b
    elif op == "/":
        if not b:
            raise AnswerParseError("Division by zero.", offset)
        result = a / b
    else:
        result = _mp_power(a, b, offset)
    return _guard(result, offset)


def _mp_power(a: mpf, b: mpf, offset: int) -> mpf:
    if not a:
        if b <= 0:
            raise AnswerParseError("0 cannot be raised to a zero or negative power.", offset)
        return lazy.mpmath.mpf(0)
    if a < 0 and not lazy.mpmath.isint(b):
        raise AnswerParseError("A negative number cannot be raised to a fractional power.", offset)
    # Bound the result before computing it: |a^b| = 2^(b·log2|a|).
    if abs(b) * abs(lazy.mpmath.log(abs(a), 2)) > MAX_LOG2:
        raise AnswerParseError(_TOO_BIG, offset)
    return lazy.mpmath.power(a, b)


def _mp_call(function: Function, args: list[mpf], offset: int) -> mpf:
    try:
        result = function.mp(*args)
    except AnswerParseError as exc:
        where = offset if exc.offset is None or function.written else exc.offset
        raise AnswerParseError(exc.message, where) from exc
    except (ArithmeticError, ValueError, TypeError) as exc:
        raise AnswerParseError(
            f"{function.name} cannot be evaluated here ({exc}).", offset
        ) from exc
    return _guard(result, offset)


def _mp_env(env: Mapping[str, Any] | None) -> dict[str, mpf]:
    values: dict[str, mpf] = {}
    for name, value in (env or {}).items():
        try:
            if isinstance(value, Fraction):  # exact: the division rounds once, at 30 digits
                value = lazy.mpmath.mpf(value.numerator) / value.denominator
            number = value if isinstance(value, lazy.mpmath.mpf) else lazy.mpmath.mpf(value)
            values[name] = _guard(number, None)
        except (TypeError, ValueError) as exc:
            raise AnswerParseError(f"{name} has no numeric value.", None) from exc
    return values


def _mp_eval(node: _Node, env: Mapping[str, mpf]) -> mpf:
    if isinstance(node, _Num):
        return _guard(_literal(node), node.offset)
    if isinstance(node, _Const):
        return node.constant.mp()
    if isinstance(node, _Name):
        if node.name not in env:
            raise AnswerParseError(f"{node.name} has no value here.", node.offset)
        return env[node.name]
    if isinstance(node, _Unary):
        value = _mp_eval(node.operand, env)
        return -value if node.op == "-" else value
    if isinstance(node, _Binary):
        left = _mp_eval(node.left, env)
        return _mp_binary(node.op, left, _mp_eval(node.right, env), node.offset)
    return _mp_call(node.function, [_mp_eval(a, env) for a in node.args], node.offset)


def cost(parsed: Parsed) -> int:
    """How many tree nodes evaluating an expression visits, the bodies of the written functions
    it calls included (see :mod:`quizgym.solver.functions`)."""
    return sum(node.function.cost if isinstance(node, _Call) else 1 for node in _walk(parsed.tree))


def evaluate_node(parsed: Parsed, values: Mapping[str, mpf]) -> mpf:
    """Evaluate an expression inside an evaluation already under way (a written function's
    body, called with its arguments): the same guarded walker, at the working precision."""
    return _mp_eval(parsed.tree, values)


def evaluate(parsed: Parsed, env: Mapping[str, mpf] | None = None) -> mpf:
    """Evaluate a parsed expression with mpmath at 30 digits, bounding every step.

    Args:
        parsed: the result of :func:`parse`.
        env: values of the free names (mpf, int or float).

    Returns:
        The value, a real finite mpf.

    Raises:
        AnswerParseError: a name has no value, an operation is undefined (``ln(-1)``,
            ``1/0``, ``0^0``), or a value leaves the range 2**-4096 .. 2**4096.
    """
    with lazy.mpmath.workdps(DPS):
        return _mp_eval(parsed.tree, _mp_env(env))
