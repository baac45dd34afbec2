"""A parsed expression in, its exact sympy form out (:func:`to_sympy`), or a refusal when that form
would be too large to work out."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from quizgym import lazy
from quizgym.errors import AnswerParseError
from quizgym.expr.base import (
    _ROOT_BITS,
    DPS,
    EXACT_BITS,
    ROOT_COST,
    ExactLimitError,
    Parsed,
    _Binary,
    _Const,
    _Name,
    _Node,
    _Num,
    _Unary,
    check_budget,
    format_value,
)
from quizgym.expr.evaluate import _guard, _literal, _mp_binary, _mp_call

if TYPE_CHECKING:
    import sympy
    from mpmath import mpf


def _exp_guard(x: sympy.Expr, offset: int | None) -> None:
    """exp(c·ln a) evaluates to the power a^c: hold it to the guards of a power first."""
    for term in lazy.sympy.Add.make_args(lazy.sympy.expand_mul(x) if x.is_Mul else x):
        coefficient, rest = term.as_coeff_Mul()
        logs = [f for f in lazy.sympy.Mul.make_args(rest) if isinstance(f, lazy.sympy.log)]
        for log in logs:
            _power_guard(log.args[0], coefficient, offset)


def exact_sign(x: sympy.Expr, what: str) -> int:
    """The sign of an exact number (-1, 0 or 1), decided by evaluation to 30 digits.

    Raises:
        ExactLimitError: the number is too close to zero to tell (sympy would then try to prove
            it zero, which can take unbounded time).
    """
    if x.is_Rational:
        return int(lazy.sympy.sign(x))
    check_budget()
    try:
        value = x.evalf(DPS, strict=True)
    except (ArithmeticError, ValueError) as exc:
        raise ExactLimitError(
            f"{what}: the sign of {_short(x)} cannot be decided exactly (it is too close to 0)."
        ) from exc
    if not value.is_Number or value.is_zero:
        raise ExactLimitError(f"{what}: the sign of {_short(x)} cannot be decided exactly.")
    return 1 if value > 0 else -1


def _short(x: sympy.Expr) -> str:
    text = to_text(x)
    return text if len(text) <= 60 else text[:57] + "..."


def exact_node(parsed: Parsed, env: Mapping[str, Any]) -> sympy.Expr:
    """The exact form of an expression inside an exact evaluation under way (a written
    function's body): the same guarded walk as :func:`to_sympy`."""
    exact, _ = _sym_eval(parsed.tree, env)
    return exact


def exact_bits(expr: sympy.Expr) -> int:
    """Size of the largest exact rational inside ``expr``, in bits."""
    sizes = [
        max(abs(int(r.p)).bit_length(), int(r.q).bit_length())
        for r in expr.atoms(lazy.sympy.Rational)
    ]
    return max(sizes, default=1)


_TOO_MANY_DIGITS = "The exact value has too many digits to work with."


def root_size(*exprs: sympy.Expr) -> int:
    """What sympy may build from the exact roots in ``exprs``: degree times digits, in bits.

    The degrees of all roots of rationals (``2^(1/3)``, ``sqrt(5)``) combine by their least common
    multiple and the bases by their sizes, as they would if sympy multiplied them together.
    """
    degree, bits = 1, 0
    bases: set[sympy.Expr] = set()
    for expr in exprs:
        for power in expr.atoms(lazy.sympy.Pow):
            base, exponent = power.args
            if base.is_Rational and exponent.is_Rational and not exponent.is_Integer:
                degree = math.lcm(degree, int(exponent.q))
                if base not in bases:
                    bases.add(base)
                    bits += exact_bits(base)
    return degree * bits if bases else 0


def _root_refusal(degree: int, offset: int | None) -> ExactLimitError:
    shown = str(degree) if degree < 10**7 else format_value(degree, 3)
    return ExactLimitError(
        f"The exact value needs a root of degree {shown} of a number this large, too much to "
        "work out exactly; use an exponent with fewer decimals.",
        offset,
    )


_ROOT_RESULT_BITS = 2048
"""sympy factors the integer it leaves under a root again: quick below 2^2048, seconds at 2^8192."""


def _sympy_root_bits(m: int, p: int, q: int) -> int:
    """The size, in bits, of the integer sympy leaves under the root when it evaluates m^(p/q)
    (m ≥ 1, p/q in lowest terms, q > 1): its own algorithm (``Integer._eval_power``: factor m
    up to 2^15, reduce each prime's exponent p·e modulo q, take out their common divisor),
    mirrored so that the size is known before sympy builds it. 0 when nothing is built."""
    if m <= 1 or lazy.sympy.integer_nthroot(m, q)[1]:
        return 0
    power = lazy.sympy.perfect_power(m)
    factors = (
        {int(power[0]): int(power[1])}
        if power
        else {int(k): int(v) for k, v in lazy.sympy.Integer(m).factors(limit=2**15).items()}
    )
    left = {}
    for prime, exponent in factors.items():
        remainder = exponent * p % q
        if remainder and math.gcd(remainder, q) == 1:
            left[prime] = remainder
    if not left:
        return 0
    common = math.gcd(*left.values())
    bits = sum(prime.bit_length() * (e // common) for prime, e in left.items())
    return 0 if bits <= m.bit_length() else bits


def _rational_root_guard(a: sympy.Rational, b: sympy.Rational, offset: int | None) -> None:
    """Refuse the rational ``a`` to the non-integer rational ``b`` when sympy would build (and
    then factor) a large integer to simplify it: (12345…/10^75)^(0.3874…) would take hours."""
    if exact_bits(a) > _ROOT_BITS:
        raise ExactLimitError("A root of a number this large cannot be taken exactly.", offset)
    p, q = abs(int(b.p)), int(b.q)
    if not a:
        return  # 0^b: 0, or refused by the walker for b ≤ 0
    if a.is_negative or b.is_negative:
        a = abs(a) if not b.is_negative else 1 / abs(a)
    # (n/d)^(p/q) is n^(p/q) · d^((q - p mod q)/q) / d^k: the denominator gets the complement.
    for m, numerator in ((abs(int(a.p)), p), (int(a.q), q - p % q)):
        if _sympy_root_bits(m, numerator, q) > _ROOT_RESULT_BITS:
            raise _root_refusal(q, offset)


def _root_guard(a: sympy.Expr, b: sympy.Expr, offset: int | None) -> None:
    """Refuse ``a^b`` (b a non-integer rational) when sympy's exact root would be too large."""
    if not (b.is_Rational and not b.is_Integer):
        return
    # A product splits over its factors ((pi/N)^r = pi^r·N^(-r)), powers of rationals among them.
    for factor in lazy.sympy.Mul.make_args(a):
        base, exponent = factor.as_base_exp()
        if base.is_Rational and exponent.is_Rational:
            combined = exponent * b
            if not combined.is_Integer:
                _rational_root_guard(base, combined, offset)
    # The rest (roots inside sums, nested roots) only by their degree and size.
    if int(b.q) * root_size(a) > ROOT_COST:
        raise _root_refusal(int(b.q), offset)


def _merge_guard(a: sympy.Expr, b: sympy.Expr, op: str, offset: int) -> None:
    """sympy merges roots as it multiplies: 2^(1/3)·2^(1/5) = 2^(8/15), √2·√3 = √6. Hold each
    merge it would make to the guard of the root it produces."""
    sign = 1 if op == "*" else -1
    left = [f.as_base_exp() for f in lazy.sympy.Mul.make_args(a) if f.is_Pow]
    right = [f.as_base_exp() for f in lazy.sympy.Mul.make_args(b) if f.is_Pow]
    for base, exponent in left:
        for other, power in right:
            if not (base.is_Rational and other.is_Rational):
                continue
            if not (exponent.is_Rational and power.is_Rational):
                continue
            if base == other:
                merged, merged_exponent = base, exponent + sign * power
            elif exponent == sign * power:
                merged, merged_exponent = base * other, exponent
            else:
                continue
            if not merged_exponent.is_Integer:
                _rational_root_guard(merged, merged_exponent, offset)
    if root_size(a, b) > ROOT_COST:
        raise ExactLimitError("The exact value combines roots of too high a degree.", offset)


def _power_guard(a: sympy.Expr, b: sympy.Expr, offset: int | None) -> None:
    """The checks made before sympy computes ``a^b`` exactly."""
    if b.is_Rational:
        # sympy evaluates powers of fractions eagerly: (1000001/10^6)^(10^9) is a modest number
        # but a fraction with billions of digits. Bound its size before building it.
        if -(-abs(int(b.p)) // int(b.q)) * exact_bits(a) > EXACT_BITS:
            raise ExactLimitError(_TOO_MANY_DIGITS, offset)
        if not b.is_Integer and a.is_Rational:
            _rational_root_guard(a, b, offset)
        _root_guard(a, b, offset)
    else:
        # sympy still does exact arithmetic on the rationals inside an irrational exponent
        # ((x^(1/3))^(y^r) can become a root of degree r.q): hold each one to the root guard.
        for r in b.atoms(lazy.sympy.Rational):
            _root_guard(a, r, offset)
    # (e^u)^b is e^(u·b), and e^(c·ln a) is a^c: (exp(0.5918))^ln(N) becomes N^0.5918.
    for factor in lazy.sympy.Mul.make_args(a):
        if factor is lazy.sympy.E:
            _exp_guard(b, offset)
        elif isinstance(factor, lazy.sympy.exp):
            _exp_guard(factor.args[0] * b, offset)


def _checked(expr: sympy.Expr, offset: int) -> sympy.Expr:
    if exact_bits(expr) > EXACT_BITS:
        raise ExactLimitError(_TOO_MANY_DIGITS, offset)
    if root_size(expr) > ROOT_COST:
        degree = max(
            int(power.args[1].q)
            for power in expr.atoms(lazy.sympy.Pow)
            if power.args[0].is_Rational and power.args[1].is_Rational
        )
        raise _root_refusal(degree, offset)
    return expr


def _sym_power(a: sympy.Expr, b: sympy.Expr, offset: int) -> sympy.Expr:
    _power_guard(a, b, offset)
    return a**b


def _sym_value(name: str, value: Any, offset: int) -> tuple[sympy.Expr, mpf | None]:
    if isinstance(value, Fraction):  # a variant's parameter or rational derived value
        value = lazy.sympy.Rational(value.numerator, value.denominator)
    if isinstance(value, bool) or not isinstance(value, lazy.sympy.Basic | int):
        raise AnswerParseError(f"{name} has no exact value.", offset)
    expr = lazy.sympy.Integer(value) if isinstance(value, int) else value
    if not expr.free_symbols:
        approx = expr.evalf(DPS)
        if not (approx.is_Number and approx.is_finite and approx.is_extended_real):
            raise AnswerParseError(f"{name} is not a finite real number.", offset)
        return expr, _guard(lazy.mpmath.mpf(approx), offset)
    return expr, None


def _sym_eval(node: _Node, env: Mapping[str, Any]) -> tuple[sympy.Expr, mpf | None]:
    """The exact form of a node, and its guarded mpmath value (None if it has free symbols)."""
    check_budget(node.offset)
    if isinstance(node, _Num):
        exact = lazy.sympy.Rational(
            node.mantissa * 10 ** max(node.exponent, 0), 10 ** max(-node.exponent, 0)
        )
        return exact, _guard(_literal(node), node.offset)
    if isinstance(node, _Const):
        return node.constant.sym, node.constant.mp()
    if isinstance(node, _Name):
        if node.name not in env:
            raise AnswerParseError(f"{node.name} has no value here.", node.offset)
        return _sym_value(node.name, env[node.name], node.offset)
    if isinstance(node, _Unary):
        exact, approx = _sym_eval(node.operand, env)
        if node.op == "+":
            return exact, approx
        return -exact, None if approx is None else -approx
    if isinstance(node, _Binary):
        (a, a_mp), (b, b_mp) = _sym_eval(node.left, env), _sym_eval(node.right, env)
        approx = None
        if a_mp is not None and b_mp is not None:
            approx = _mp_binary(node.op, a_mp, b_mp, node.offset)  # checks before sympy computes
        elif node.op == "/" and b.is_zero:
            raise AnswerParseError("Division by zero.", node.offset)
        if node.op in "*/":
            _merge_guard(a, b, node.op, node.offset)
        if node.op == "+":
            exact = a + b
        elif node.op == "-":
            exact = a - b
        elif node.op == "*":
            exact = a * b
        elif node.op == "/":
            exact = a / b
        else:
            exact = _sym_power(a, b, node.offset)
        return _checked(exact, node.offset), approx
    pairs = [_sym_eval(arg, env) for arg in node.args]
    values = [p[1] for p in pairs]
    approx = None
    if all(v is not None for v in values):
        approx = _mp_call(node.function, values, node.offset)
    try:
        exact = node.function.sym(*(p[0] for p in pairs))
    except AnswerParseError as exc:  # ExactLimitError stays one
        where = node.offset if exc.offset is None or node.function.written else exc.offset
        raise type(exc)(exc.message, where) from exc
    except (ArithmeticError, ValueError, TypeError) as exc:
        raise AnswerParseError(
            f"{node.function.name} cannot be evaluated here ({exc}).", node.offset
        ) from exc
    return _checked(exact, node.offset), approx


def to_sympy(parsed: Parsed, env: Mapping[str, sympy.Expr] | None = None) -> sympy.Expr:
    """Build the exact sympy expression of a parsed expression, from the checked tree.

    Decimal literals become rationals (``0.2`` → ``1/5``), ``ln``/``log`` → ``sympy.log``,
    ``e`` → ``sympy.E``. Every node is first evaluated with the same guarded mpmath walker as
    :func:`evaluate` (so sympy's automatic evaluation only ever sees numbers below 2**4096), and
    exact powers and roots are refused when the fraction they would produce is too large.

    Args:
        parsed: the result of :func:`parse`.
        env: exact values of the free names (sympy expressions or ints; symbols are allowed).

    Returns:
        The exact expression.

    Raises:
        AnswerParseError: as :func:`evaluate`, or the exact form would be too large.
    """
    with lazy.mpmath.workdps(DPS):
        exact, _ = _sym_eval(parsed.tree, env or {})
    if exact.has(lazy.sympy.zoo, lazy.sympy.nan, lazy.sympy.oo, -lazy.sympy.oo):
        raise AnswerParseError("The result is not a finite number.", 0)
    return exact


_POWER_LIMIT = 64
"""Largest integer exponent :func:`rational_value` takes (larger ones go to sympy's guards)."""


def rational_value(parsed: Parsed, env: Mapping[str, object] | None = None) -> Fraction | None:
    """The exact value of plain arithmetic without sympy: decimals, names whose values are
    :class:`~fractions.Fraction`, signs, ``+ - * /`` and small integer powers. None for anything
    else (functions, constants, a name with another value), and for a value larger than
    :func:`to_sympy` takes, which then works it out or refuses it with its reason.

    Call it once :func:`evaluate` has succeeded on the same values: every value is then in range
    and no divisor is zero.
    """
    return _rational(parsed.tree, env or {})


def _rational(node: _Node, env: Mapping[str, object]) -> Fraction | None:
    if isinstance(node, _Num):
        value = Fraction(node.mantissa) * Fraction(10) ** node.exponent
    elif isinstance(node, _Name):
        found = env.get(node.name)
        if not isinstance(found, Fraction):
            return None
        value = found
    elif isinstance(node, _Unary):
        operand = _rational(node.operand, env)
        if operand is None:
            return None
        value = operand if node.op == "+" else -operand
    elif isinstance(node, _Binary):
        a = _rational(node.left, env)
        b = _rational(node.right, env) if a is not None else None
        if a is None or b is None:
            return None
        if node.op == "+":
            value = a + b
        elif node.op == "-":
            value = a - b
        elif node.op == "*":
            value = a * b
        elif node.op == "/":
            if not b:
                return None
            value = a / b
        else:
            if b.denominator != 1 or abs(b) > _POWER_LIMIT or (a == 0 and b < 0):
                return None
            size = max(abs(a.numerator).bit_length(), a.denominator.bit_length()) * abs(int(b))
            if size > EXACT_BITS:
                return None
            value = a ** int(b)
    else:
        return None
    if max(abs(value.numerator).bit_length(), value.denominator.bit_length()) > EXACT_BITS:
        return None  # to_sympy refuses it, and says why
    return value


@functools.cache
def _printer() -> type:
    """sympy's str printer in our notation (made on first use: it subclasses a sympy class)."""

    class _Printer(lazy.sympy.printing.str.StrPrinter):  # type: ignore[misc]  # sympy is untyped
        """sympy's str printer in our notation: ln, e, ^, abs.

        sympy dispatches on ``_print_<ClassName>``, hence the method names.
        """

        def _print_log(self, expr: sympy.Expr) -> str:
            return f"ln({self._print(expr.args[0])})"

        def _print_Exp1(self, expr: sympy.Expr) -> str:  # noqa: N802
            return "e"

        def _print_NormalCDF(self, expr: sympy.Expr) -> str:  # noqa: N802
            return f"normal_cdf({self._print(expr.args[0])})"

        def _print_factorial(self, expr: sympy.Expr) -> str:
            return f"factorial({self._print(expr.args[0])})"

        def _print_binomial(self, expr: sympy.Expr) -> str:
            return f"comb({self._print(expr.args[0])}, {self._print(expr.args[1])})"

        def _print_floor(self, expr: sympy.Expr) -> str:
            return f"floor({self._print(expr.args[0])})"

        def _print_ceiling(self, expr: sympy.Expr) -> str:
            return f"ceil({self._print(expr.args[0])})"

        def _print_Min(self, expr: sympy.Expr) -> str:  # noqa: N802
            return f"min({', '.join(self._print(a) for a in expr.args)})"

        def _print_Max(self, expr: sympy.Expr) -> str:  # noqa: N802
            return f"max({', '.join(self._print(a) for a in expr.args)})"

        def _print_Abs(self, expr: sympy.Expr) -> str:  # noqa: N802
            return f"abs({self._print(expr.args[0])})"

        def _print_Pow(self, expr: sympy.Expr, rational: bool = False) -> str:  # noqa: N802
            text: str = super()._print_Pow(expr, rational)
            return text.replace("**", "^")

    return _Printer


def to_text(expr: sympy.Expr) -> str:
    """Print a sympy expression the way our language reads it: ``ln(10)``, ``8*ln(2)``."""
    text: str = _printer()().doprint(expr)
    return text
