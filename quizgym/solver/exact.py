"""Plain arithmetic or one logarithm in, ``quizgym solve``'s answer out without mpmath: the same
answer, from the exact fraction."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from quizgym.expr import STUDENT_FUNCTIONS
from quizgym.expr.base import (
    DPS,
    EXACT_BITS,
    MAX_LOG2,
    Parsed,
    _Binary,
    _Call,
    _Node,
    _Num,
    _Unary,
    tidy_digits,
)

if TYPE_CHECKING:
    import mpmath

__all__ = [
    "LogForm",
    "evaluates",
    "ln_bounds",
    "log_form",
    "log_reads_back",
    "quick_log",
    "reads_back",
    "round_to_mpf",
    "shown_value",
]

PREC = 103
"""mpmath's precision in bits at 30 digits (``mpmath.libmp.dps_to_prec(30)``)."""

_ULP = Fraction(1, 2**100)
"""The bound on one operation's relative rounding error: 8 times what correct rounding at 103
bits allows, so the bound holds however mpmath reaches its last bit."""

_POW_ULP = Fraction(1, 2**88)
"""The bound on an integer power's own rounding (mpmath works at a few more bits, then rounds)."""

_POWER_LIMIT = 64  # as expr.rational_value: larger exponents are not plain arithmetic here
_BIG = Fraction(2**MAX_LOG2)
_TINY = Fraction(1, 2**MAX_LOG2)

_Bounded = tuple[Fraction, Fraction]
"""An exact value and a bound on how far mpmath's 30-digit value of it can be."""


def evaluates(parsed: Parsed) -> bool:
    """Whether :func:`quizgym.expr.evaluate` surely succeeds on plain arithmetic: numbers,
    signs, ``+ - * /`` and integer powers (False for anything else, and whenever rounding could
    change one of its guards' decisions).

    ``solve`` shows plain arithmetic on decimals (``2.30``, ``1/3``, ``-2^-3``) from its exact
    fraction, and its value as the fraction rounded once to 30 digits. Two things needed mpmath:

    - **Whether the expression can be evaluated at all.** ``solve`` first evaluates with the guarded
      30-digit walker (:func:`quizgym.expr.evaluate`), which refuses a division by zero, a zero or
      negative power of zero, or a value beyond 2^±4096, judged on *rounded* values: ``1/(1 + 10^-40
      - 1)`` divides by a rounded zero. :func:`evaluates` walks the tree exactly, with a bound on
      how far mpmath's rounded value can be from each exact one (mpmath rounds each operation
      correctly at 103 bits; the bound allows 2^-100 an operation), and answers True only when every
      guard decides the same for every value within the bound; when in doubt it answers False and
      the caller evaluates with mpmath as before.
    - **The value's 16 digits.** :func:`shown_value` rounds the fraction to 103 bits as ``mpf(p) /
      q`` does (the numerator first, then the quotient, each to nearest, ties to even) and prints
      the result with mpmath's own digit algorithm (``libmp.to_str``: truncate to 19 digits, then
      round on the 17th), followed by :func:`quizgym.expr.format_value`'s tidying.

    ``tests/test_fast_paths.py`` holds both to mpmath on random arithmetic and random fractions.
    """
    return _walk(parsed.tree) is not None


def reads_back(parsed: Parsed, value: Fraction) -> bool:
    """Whether ``parsed`` (a printed fraction, read again) surely evaluates with mpmath to
    within 10^-25 of ``value`` rounded to 30 digits, as ``solve`` requires of an exact form it
    shows; False when that cannot be told without mpmath."""
    bounded = _walk(parsed.tree)
    if bounded is None or bounded[0] != value:
        return False
    error = bounded[1]
    if not value:
        return not error
    # |again - value| <= |again - exact| + |exact - value| and value is within 2^-102 of it;
    # a margin of 2 for the comparison's own rounding
    return 2 * (error + abs(value) / 2**100) <= abs(value) / 10**25


def _representable(value: Fraction) -> bool:
    """Whether a 103-bit binary float holds ``value`` exactly."""
    if not value:
        return True
    q = value.denominator
    if q & (q - 1):  # not a power of two
        return False
    p = abs(value.numerator)
    return (p >> ((p & -p).bit_length() - 1)).bit_length() <= PREC


def _in_range(bounded: _Bounded) -> _Bounded | None:
    """The walker's guard on every value (0, or 2^-4096 ≤ |x| < 2^4096), surely passed."""
    value, error = bounded
    if not value:
        return bounded if not error else None  # mpmath's value may be a tiny nonzero number
    size = abs(value)
    if size - error < _TINY or size + error >= _BIG:
        return None
    return bounded


def _rounded(value: Fraction, error: Fraction, exact_inputs: bool) -> _Bounded:
    """The bound after one correctly rounded operation whose exact inputs give ``value`` (up
    to ``error`` from its inputs' errors)."""
    if exact_inputs and _representable(value):
        return value, Fraction(0)
    return value, error + _ULP * (abs(value) + error)


def _literal(node: _Num) -> _Bounded:
    value = Fraction(node.mantissa) * Fraction(10) ** node.exponent
    if node.exponent >= 0:  # mpf(mantissa * 10^exponent): one rounding
        return _rounded(value, Fraction(0), True)
    # mpf(mantissa) / 10^k: the mantissa rounded, then the quotient
    mantissa = _rounded(Fraction(node.mantissa), Fraction(0), True)
    if not mantissa[1] and _representable(value):
        return value, Fraction(0)
    return value, 3 * _ULP * abs(value)


def _walk(node: _Node) -> _Bounded | None:
    if isinstance(node, _Num):
        return _in_range(_literal(node))
    if isinstance(node, _Unary):
        operand = _walk(node.operand)
        if operand is None:
            return None
        return operand if node.op == "+" else (-operand[0], operand[1])
    if not isinstance(node, _Binary):
        return None  # a call, a constant, a name: not plain arithmetic
    left = _walk(node.left)
    right = _walk(node.right) if left is not None else None
    if left is None or right is None:
        return None
    (a, ea), (b, eb) = left, right
    exact = not ea and not eb
    if node.op in "+-":
        value = a + b if node.op == "+" else a - b
        result = _rounded(value, ea + eb, exact)
    elif node.op == "*":
        propagated = abs(a) * eb + abs(b) * ea + ea * eb
        result = _rounded(a * b, propagated, exact)
    elif node.op == "/":
        least = abs(b) - eb
        if not b or least <= 0:
            return None  # mpmath's divisor may be zero
        propagated = (abs(a) * eb + abs(b) * ea) / (abs(b) * least)
        if exact and _representable(a / b):
            result = (a / b, Fraction(0))
        else:
            result = (a / b, propagated + _ULP * (abs(a) + ea) / least)
    else:
        power = _power(a, ea, b, eb)
        if power is None:
            return None
        result = power
    if max(abs(result[0].numerator).bit_length(), result[0].denominator.bit_length()) > EXACT_BITS:
        return None  # as rational_value: too large for the exact path
    return _in_range(result)


def _power(a: Fraction, ea: Fraction, b: Fraction, eb: Fraction) -> _Bounded | None:
    """``a^b`` for an exponent that mpmath holds exactly as the same integer."""
    if eb or b.denominator != 1 or abs(b) > _POWER_LIMIT:
        return None
    n = int(b)
    if _bits(a) * abs(n) > EXACT_BITS:
        return None  # refused by sympy's guard and rational_value alike, with their reason
    if not a:
        if ea or n <= 0:
            return None  # 0^0 and 0^-n are refused; a rounded zero may not be zero
        return Fraction(0), Fraction(0)
    if abs(a) <= ea:
        return None
    # The walker refuses |b|·|log2 |a|| > 4096, computed at 30 digits: decide it far from the line.
    low, high = abs(a) - ea, abs(a) + ea
    reach = abs(n) * max(abs(_log2(low)), abs(_log2(high)))
    if reach > MAX_LOG2 - 1e-6:
        return None
    value = a**n
    if not n:
        return value, Fraction(0)
    relative = ea / low  # how far mpmath's base is from a, relative to it
    if abs(n) * relative > Fraction(1, 2):
        return None
    if not ea and _representable(value) and (n > 0 or n == -1):
        return value, Fraction(0)  # an exact power (or reciprocal) that fits is exact in mpmath
    # (1 + r)^n - 1 <= 2·n·r while n·r <= 1/2; then the power's own rounding.
    return value, abs(value) * (2 * abs(n) * relative + 2 * _POW_ULP)


def _log2(x: Fraction) -> float:
    return math.log2(x.numerator) - math.log2(x.denominator)


def _round_int(p: int, q: int, prec: int) -> tuple[int, int]:
    """``p/q`` (p, q > 0) rounded to ``prec`` bits, to nearest, ties to even: (m, e), m·2^e."""
    shift = prec - (p.bit_length() - q.bit_length()) + 1
    num, den = (p << shift, q) if shift >= 0 else (p, q << -shift)
    m, rest = divmod(num, den)
    while m.bit_length() > prec:  # one bit too many at most twice: shift it into the rest
        rest, den = rest + (m & 1) * den, den * 2
        m >>= 1
        shift -= 1
    twice = 2 * rest
    if twice > den or (twice == den and m & 1):
        m += 1
        if m.bit_length() > prec:
            m >>= 1
            shift -= 1
    return m, -shift


def _nearest(value: Fraction) -> tuple[int, int]:
    """A positive rational rounded once to 103 bits, as (odd mantissa, exponent)."""
    m, e = _round_int(value.numerator, value.denominator, PREC)
    while not m & 1:
        m, e = m >> 1, e + 1
    return m, e


def round_to_mpf(value: Fraction) -> tuple[int, int, int]:
    """``mpmath.mpf(value.numerator) / value.denominator`` at 30 digits, as (sign, man, exp):
    the value is ``(-1)^sign · man · 2^exp`` with ``man`` odd (0, 0, 0 for zero)."""
    if not value:
        return 0, 0, 0
    sign = int(value < 0)
    m, e = _round_int(abs(value.numerator), 1, PREC)  # mpf(p) rounds p to 103 bits
    if e >= 0:
        m, e = _round_int(m << e, value.denominator, PREC)
    else:
        m, e2 = _round_int(m, value.denominator << -e, PREC)
        e = e2
    while not m & 1:
        m, e = m >> 1, e + 1
    return sign, m, e


def _to_str(sign: int, man: int, exp: int, dps: int) -> str | None:
    """mpmath's ``libmp.to_str`` of a nonzero raw mpf to ``dps`` digits with its defaults;
    None where it would take its other branch (an exponent beyond 2^±3500)."""
    bc = man.bit_length()
    # to_digits_exp(s, dps + 3): truncate toward zero to dps + 3 digits
    digits_wanted = dps + 3
    if abs(exp + bc) > 3500:
        return None
    bitprec = int(digits_wanted * math.log(10, 2)) + 10
    fixprec = max(bitprec - exp - bc, 0)
    fixdps = int(fixprec / math.log(10, 2) + 0.5)
    offset = exp + fixprec
    fixed = man << offset if offset >= 0 else man >> -offset
    digits = str(fixed * 10**fixdps >> fixprec)
    exponent = len(digits) - fixdps - 1
    # to_str: round on the first digit beyond dps
    if len(digits) > dps and digits[dps] in "56789":
        digits = digits[:dps]
        i = dps - 1
        while i >= 0 and digits[i] == "9":
            i -= 1
        if i >= 0:
            digits = digits[:i] + str(int(digits[i]) + 1) + "0" * (dps - i - 1)
        else:
            digits = "1" + "0" * (dps - 1)
            exponent += 1
    else:
        digits = digits[:dps]
    min_fixed, max_fixed = min(-(dps // 3), -5), dps
    if min_fixed < exponent < max_fixed:
        if exponent < 0:
            digits = "0" * -exponent + digits
            split = 1
        else:
            split = exponent + 1
            if split > dps:
                digits += "0" * (split - dps)
        exponent = 0
    else:
        split = 1
    digits = digits[:split] + "." + digits[split:]
    digits = digits.rstrip("0")
    if digits[-1] == ".":
        digits += "0"
    text = ("-" if sign else "") + digits
    if exponent == 0:
        return text
    return f"{text}e+{exponent}" if exponent > 0 else f"{text}e{exponent}"


def shown_value(value: Fraction, digits: int = 16) -> str | None:
    """``format_value(mpf(p) / q, digits)`` at 30 digits, without mpmath; None for a value
    beyond 2^±3500, which the caller shows with mpmath."""
    if not value:
        return "0"
    text = _to_str(*round_to_mpf(value), digits)
    return None if text is None else tidy_digits(text)


# --- one logarithm: c·ln(a), as sympy forms, tidies and prints it ---------------------------------

_LOG_BITS = 2000
"""Largest numerator or denominator the logarithm path takes (sympy's guards start at 8192 bits;
larger ones go to sympy, which works them out or says why not)."""


@dataclass(frozen=True, kw_only=True)
class LogForm:
    """An exact value ``coefficient · ln(argument)``: sympy's ``Mul(c, log(a))`` once tidied."""

    coefficient: Fraction
    """Nonzero."""
    argument: Fraction
    """Greater than 1 (tidying writes ``c·ln(a)`` for a < 1 as ``-c·ln(1/a)``)."""

    @property
    def text(self) -> str:
        """The form as quizgym's sympy printer prints it: ``ln(10)``, ``-2*ln(3/2)/3``."""
        c = self.coefficient
        sign = "-" if c < 0 else ""
        factors = [str(abs(c.numerator))] if abs(c.numerator) != 1 else []
        factors.append(f"ln({self.argument})")
        text = sign + "*".join(factors)
        return text if c.denominator == 1 else f"{text}/{c.denominator}"

    def digits(self, digits: int = 16) -> str | None:
        """The value as ``solve`` shows it (``format_value(value, 16)``) for every 30-digit
        value within 10^-28 of the exact one, worked out without mpmath; None when two such
        values would show differently (the exact value is that close to a rounding boundary).

        Rounding to 103 bits and mpmath's digits are both monotone, so the same text at the two
        ends of the interval is the text of every 30-digit value inside it.
        """
        low, high = ln_bounds(self.argument)
        size = abs(self.coefficient)
        margin = Fraction(1, 10**28)
        ends = [_nearest(size * low * (1 - margin)), _nearest(size * high * (1 + margin))]
        texts = {_to_str(0, m, e, digits) for m, e in ends}
        if len(texts) != 1 or None in texts:
            return None
        (text,) = texts
        assert text is not None
        sign = "-" if self.coefficient < 0 else ""
        return sign + tidy_digits(text)

    def value(self) -> mpmath.mpf:
        """The value to 30 digits: worked out with 200 bits beyond the argument's size (so that
        ``ln(a)`` keeps them even for ``a`` close to 1), then rounded."""
        import mpmath

        p, q = self.argument.numerator, self.argument.denominator
        c = self.coefficient
        with mpmath.workprec(200 + max(p.bit_length(), q.bit_length())):
            exact = mpmath.log(mpmath.mpf(p) / q) * c.numerator / c.denominator
        with mpmath.workdps(DPS):
            return +exact


_Term = tuple[Fraction, Fraction | None]
"""(c, a): the value c·ln(a) with a in sympy's form of a logarithm's argument, or the rational
c when a is None."""


def log_form(parsed: Parsed) -> LogForm | None:
    """The exact form of one logarithm of a rational times a rational (``ln 10``, ``8 ln 2``,
    ``-ln 0.9``, ``ln(2)/3``, ``ln 2 + ln 2``), as :func:`quizgym.expr.to_sympy` and
    :func:`~quizgym.solver.keys.tidy` make it; None for anything else (sums of different
    logarithms, other functions, constants, names, a rational result, large numbers), which
    sympy works out as before.

    Call it once :func:`quizgym.expr.evaluate` has succeeded: arguments are then positive and no
    divisor is zero.
    """
    term = _term(parsed.tree)
    if term is None:
        return None
    c, a = term
    if a is None:
        return None
    if a < 1:  # tidy: -ln(9/10) reads ln(10/9)
        c, a = -c, 1 / a
    return LogForm(coefficient=c, argument=a)


def _small(value: Fraction) -> bool:
    return max(abs(value.numerator).bit_length(), value.denominator.bit_length()) <= _LOG_BITS


def _log_of(a: Fraction) -> _Term | None:
    """sympy's ``log`` of a positive rational: 0 for 1, ``-log(q)`` for 1/q, else itself."""
    if a <= 0:
        return None
    if a == 1:
        return Fraction(0), None
    if a.numerator == 1:
        return Fraction(-1), Fraction(a.denominator)
    return Fraction(1), a


def _term(node: _Node) -> _Term | None:  # noqa: PLR0911  # one return per case of the tree
    if isinstance(node, _Num):
        value = Fraction(node.mantissa) * Fraction(10) ** node.exponent
        return (value, None) if _small(value) else None
    if isinstance(node, _Unary):
        operand = _term(node.operand)
        if operand is None or node.op == "+":
            return operand
        return -operand[0], operand[1]
    if isinstance(node, _Call):
        if node.function is not STUDENT_FUNCTIONS["ln"] or len(node.args) != 1:
            return None
        inner = _term(node.args[0])
        if inner is None or inner[1] is not None:
            return None
        return _log_of(inner[0])
    if not isinstance(node, _Binary):
        return None
    left = _term(node.left)
    right = _term(node.right) if left is not None else None
    if left is None or right is None:
        return None
    (c, a), (d, b) = left, right
    if node.op in "+-":
        if a != b and c and d:  # different logarithms, or a logarithm and a rational
            return None
        if not c:
            c, a = Fraction(0), b
        total = c + d if node.op == "+" else c - d
        return _kept(total, a if total else None)
    if node.op == "*":
        if a is not None and b is not None:
            return None  # a product of logarithms
        product = c * d
        return _kept(product, (a or b) if product else None)
    if node.op == "/":
        if b is not None or not d:
            return None
        return _kept(c / d, a if c else None)
    # a power: of rationals, with a small integer exponent (as expr.rational_value)
    if a is not None or b is not None or d.denominator != 1 or abs(d) > _POWER_LIMIT:
        return None
    if (not c and d <= 0) or _bits(c) * abs(int(d)) > EXACT_BITS:
        return None  # as sympy's guard of an exact power: "too many digits"
    return _kept(c ** int(d), None)


def _bits(value: Fraction) -> int:
    """The size sympy's guards measure a rational by (``expr.exact_bits``)."""
    return max(abs(value.numerator).bit_length(), value.denominator.bit_length())


def _kept(value: Fraction, argument: Fraction | None) -> _Term | None:
    return (value, argument) if _small(value) else None


# --- the logarithm's value without mpmath ---------------------------------------------------------

_LOG_ULP = Fraction(1, 2**95)
"""The bound on the relative error of mpmath's logarithm at 103 bits (it aims at correct
rounding, 2^-103; the bound leaves it 2^8 of room)."""

_LN_MARGIN_BITS = 30
"""Units in the last place of the integer logarithm's fixed point allowed for its rounding
(each series term floors once: fewer than 2^22 units for a numerator of 2000 bits)."""


def _atanh_fixed(z: Fraction, bits: int) -> int:
    """``atanh(z) · 2^bits`` for |z| ≤ 1/3, to within 2^9 units (each term floored)."""
    negative = z < 0
    z = abs(z)
    square = z * z
    term = z.numerator * 2**bits // z.denominator
    total, n = 0, 0
    while term:
        total += term // (2 * n + 1)
        term = term * square.numerator // square.denominator
        n += 1
    return -total if negative else total


@functools.lru_cache(maxsize=256)  # a form's digits and its read-back ask for the same
def ln_bounds(value: Fraction) -> tuple[Fraction, Fraction]:
    """``ln(value)`` for a positive rational, as an interval ``lo ≤ ln(value) ≤ hi`` of width
    2^-(270 + bits of the value), with integer arithmetic (ln = k ln 2 + 2 atanh((y-1)/(y+1)))."""
    p, q = value.numerator, value.denominator
    size = max(p.bit_length(), q.bit_length())
    bits = 300 + 2 * size
    k = p.bit_length() - q.bit_length()
    y = value / Fraction(2) ** k  # in (1/2, 2)
    if y > Fraction(4, 3):
        y, k = y / 2, k + 1
    elif y < Fraction(2, 3):
        y, k = y * 2, k - 1
    fixed = 2 * _atanh_fixed((y - 1) / (y + 1), bits) + k * 2 * _atanh_fixed(Fraction(1, 3), bits)
    margin = 2**_LN_MARGIN_BITS
    return Fraction(fixed - margin, 2**bits), Fraction(fixed + margin, 2**bits)


@dataclass(frozen=True, kw_only=True)
class _Walked:
    """A node of one logarithm's tree: its exact value ``c·ln(a)`` (or ``c``), bounds on the
    exact value's size, and a bound on how far mpmath's value of the node can be from it."""

    c: Fraction
    a: Fraction | None
    low: Fraction
    """A lower bound of |exact value|."""
    high: Fraction
    error: Fraction


def _size(c: Fraction, a: Fraction | None) -> tuple[Fraction, Fraction]:
    if a is None:
        return abs(c), abs(c)
    lo, hi = ln_bounds(a)
    ends = sorted((abs(lo), abs(hi)))
    low = ends[0] if lo * hi > 0 else Fraction(0)
    return abs(c) * low, abs(c) * ends[1]


def _checked_walk(walked: _Walked) -> _Walked | None:
    """The walker's range guard on the node's value, surely passed."""
    if not walked.c:
        return walked if not walked.error else None
    if walked.low - walked.error < _TINY or walked.high + walked.error >= _BIG:
        return None
    return walked


def _has_call(node: _Node) -> bool:
    if isinstance(node, _Call):
        return True
    if isinstance(node, _Unary):
        return _has_call(node.operand)
    if isinstance(node, _Binary):
        return _has_call(node.left) or _has_call(node.right)
    return False


def _log_walk(node: _Node) -> _Walked | None:  # noqa: PLR0911  # one return per case
    """mpmath's evaluation of one logarithm's tree, bounded as :func:`_walk` bounds plain
    arithmetic; None outside :func:`log_form`'s shapes or when a guard could go either way."""
    if not _has_call(node):
        bounded = _walk(node)
        if bounded is None or not _small(bounded[0]):
            return None
        value, error = bounded
        return _Walked(c=value, a=None, low=abs(value), high=abs(value), error=error)
    if isinstance(node, _Unary):
        inner = _log_walk(node.operand)
        if inner is None or node.op == "+":
            return inner
        return _Walked(c=-inner.c, a=inner.a, low=inner.low, high=inner.high, error=inner.error)
    if isinstance(node, _Call):
        return _log_call(node)
    if not isinstance(node, _Binary):
        return None
    left = _log_walk(node.left)
    right = _log_walk(node.right) if left is not None else None
    if left is None or right is None:
        return None
    combined = _combine(node.op, (left.c, left.a), (right.c, right.a))
    if combined is None:
        return None
    c, a = combined
    low, high = _size(c, a)
    e1, e2 = left.error, right.error
    if node.op in "+-":
        error = e1 + e2 + _ULP * (high + e1 + e2)
    elif node.op == "*":
        propagated = left.high * e2 + right.high * e1 + e1 * e2
        error = propagated + _ULP * (high + propagated)
    else:  # "/" by a rational (combine refuses a logarithm below the line)
        divisor = abs(right.c)
        least = divisor - e2
        if least <= 0:
            return None
        propagated = (left.high * e2 + divisor * e1) / (divisor * least)
        error = propagated + _ULP * (left.high + e1) / least
    return _checked_walk(_Walked(c=c, a=a, low=low, high=high, error=error))


def _log_call(node: _Call) -> _Walked | None:
    if node.function is not STUDENT_FUNCTIONS["ln"] or len(node.args) != 1:
        return None
    if _has_call(node.args[0]):
        return None
    bounded = _walk(node.args[0])
    if bounded is None:
        return None
    x, ex = bounded
    if x - ex <= 0 or not _small(x):
        return None  # mpmath's argument may not be positive
    term = _log_of(x)
    if term is None:
        return None
    c, a = term
    if a is None:  # ln 1: mpmath's is 0 only for an argument of exactly 1
        return (
            _Walked(c=c, a=None, low=Fraction(0), high=Fraction(0), error=Fraction(0))
            if not ex
            else None
        )
    low, high = _size(c, a)
    moved = ex / (x - ex)  # |ln x' - ln x| <= |x' - x| / min(x, x')
    error = moved + _LOG_ULP * (high + moved)
    return _checked_walk(_Walked(c=c, a=a, low=low, high=high, error=error))


def _combine(op: str, left: _Term, right: _Term) -> _Term | None:
    """Two terms joined as :func:`_term` joins them (the same cases, the same refusals)."""
    (c, a), (d, b) = left, right
    if op in "+-":
        if a != b and c and d:
            return None
        if not c:
            c, a = Fraction(0), b
        total = c + d if op == "+" else c - d
        return _kept(total, a if total else None)
    if op == "*":
        if a is not None and b is not None:
            return None
        product = c * d
        return _kept(product, (a or b) if product else None)
    if op == "/":
        if b is not None or not d:
            return None
        return _kept(c / d, a if c else None)
    return None  # powers only of rationals, which _walk takes whole


def quick_log(parsed: Parsed) -> LogForm | None:
    """:func:`log_form` of an expression that :func:`quizgym.expr.evaluate` surely evaluates
    (its guards decided for every value within the bound of mpmath's rounding); None otherwise."""
    walked = _log_walk(parsed.tree)
    if walked is None or walked.a is None:
        return None
    form = log_form(parsed)
    if form is None:
        return None
    return form


def log_reads_back(parsed: Parsed, form: LogForm) -> bool:
    """Whether ``parsed`` (a printed form, read again) surely evaluates with mpmath to within
    10^-25 of every 30-digit value of ``form`` (sympy's among them), as ``solve`` requires of an
    exact form it shows; False when that cannot be told without mpmath."""
    walked = _log_walk(parsed.tree)
    again = log_form(parsed)
    if walked is None or again != form:
        return False
    # |again' - value| <= error + 2^-99 |exact|; a margin of 2 for the comparison's rounding
    return 2 * (walked.error + walked.high / 2**99) <= walked.low / 10**25
