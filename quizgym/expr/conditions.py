"""A key's ``where:`` constraint or function requirement in, a :class:`Condition` out, and whether
drawn values satisfy it (:func:`holds`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from quizgym import lazy
from quizgym.errors import AnswerParseError
from quizgym.expr.base import DPS, MAX_LENGTH, Constant, Function, Parsed, _at_53_bits
from quizgym.expr.evaluate import evaluate
from quizgym.expr.exact import exact_sign, rational_value, to_sympy
from quizgym.expr.parse import parse
from quizgym.expr.vocabulary import STUDENT_FUNCTIONS

if TYPE_CHECKING:
    from mpmath import mpf


_COMPARISONS = {"<=": "<=", ">=": ">=", "==": "==", "!=": "!=", "<": "<", ">": ">",
                "\u2264": "<=", "\u2265": ">=", "\u2260": "!="}  # fmt: skip


@dataclass(frozen=True)
class Condition:
    """A comparison in the expression language: ``sxx > sx^2 / n``, ``0 < p <= 1`` (chained)."""

    source: str
    sides: tuple[Parsed, ...]
    ops: tuple[str, ...]
    """``<``, ``<=``, ``>``, ``>=``, ``==`` or ``!=`` between consecutive sides."""

    @property
    def names(self) -> frozenset[str]:
        """The free names the condition uses."""
        return frozenset().union(*(side.names for side in self.sides))


def parse_condition(
    text: str,
    *,
    names: Collection[str] = (),
    functions: Mapping[str, Function] = STUDENT_FUNCTIONS,
    constants: Mapping[str, Constant] | None = None,
) -> Condition:
    """Read a comparison: expressions joined by ``< <= > >= == !=`` (``≤ ≥ ≠`` too).

    Raises:
        AnswerParseError: it is no comparison, or a side cannot be read (``offset`` into text).
    """
    if len(text) > MAX_LENGTH:
        raise AnswerParseError(f"The text is too long (at most {MAX_LENGTH} characters).", 0)
    pieces: list[tuple[int, int]] = []  # (start, end) of each side
    ops: list[str] = []
    depth, start, i = 0, 0, 0
    while i < len(text):
        ch = text[i]
        depth += (ch == "(") - (ch == ")")
        two = text[i : i + 2]
        op = two if two in _COMPARISONS else ch if ch in _COMPARISONS else None
        if op is not None and depth == 0:
            pieces.append((start, i))
            ops.append(_COMPARISONS[op])
            i += len(op)
            start = i
            continue
        if ch == "=" and depth == 0:
            raise AnswerParseError("Write == to compare (a single = is not a comparison).", i)
        i += 1
    pieces.append((start, len(text)))
    if not ops:
        raise AnswerParseError("A condition compares two expressions: a < b, x >= 0, n != 3.", 0)
    sides = []
    for a, b in pieces:
        try:
            sides.append(parse(text[a:b], names=names, functions=functions, constants=constants))
        except AnswerParseError as exc:
            raise AnswerParseError(
                exc.message, a if exc.offset is None else a + exc.offset
            ) from exc
    return Condition(text, tuple(sides), tuple(ops))


def _close() -> mpf:
    return _at_53_bits(_close_53)


def _close_53() -> mpf:
    return lazy.mpmath.mpf(10) ** (5 - DPS)


def holds(
    condition: Condition,
    values: Mapping[str, mpf] | None = None,
    exact: Mapping[str, Any] | None = None,
) -> bool:
    """Whether a condition holds for these values (30-digit evaluation).

    Two sides equal to 25 digits are compared exactly when ``exact`` gives the names' exact
    values (Fractions, or sympy where they are irrational: ``sqrt(2)^2 == 2``), and taken as
    equal otherwise.

    Raises:
        AnswerParseError: a side cannot be evaluated.
    """
    numbers = [evaluate(side, values) for side in condition.sides]
    for k, op in enumerate(condition.ops):
        a, b = numbers[k], numbers[k + 1]
        with lazy.mpmath.workdps(DPS):
            near = abs(a - b) <= (abs(a) + abs(b)) * _close()
            sign = 0 if near else (1 if a > b else -1)
        if near and exact is not None:
            left, right = condition.sides[k], condition.sides[k + 1]
            p, q = rational_value(left, exact), rational_value(right, exact)
            if p is not None and q is not None:  # rational sides: decided without sympy
                sign = (p > q) - (p < q)
            else:
                difference = to_sympy(left, exact) - to_sympy(right, exact)
                sign = 0 if difference.is_zero else exact_sign(difference, "the condition")
        ok = {
            "<": sign < 0,
            "<=": sign <= 0,
            ">": sign > 0,
            ">=": sign >= 0,
            "==": sign == 0,
            "!=": sign != 0,
        }[op]
        if not ok:
            return False
    return True
