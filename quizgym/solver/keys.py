"""A key in the expression language in; its exact sympy form tidied for people, its 30-digit value
and ``quizgym solve``'s answer out."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from quizgym import lazy
from quizgym.errors import AnswerParseError
from quizgym.expr import (
    DPS,
    EXACT_BITS,
    ROOT_COST,
    ExactLimitError,
    Parsed,
    calls,
    check_budget,
    evaluate,
    exact_bits,
    exact_budget,
    format_value,
    rational_value,
    root_size,
    to_sympy,
    to_text,
)
from quizgym.solver.exact import (
    LogForm,
    evaluates,
    log_reads_back,
    quick_log,
    reads_back,
    shown_value,
)
from quizgym.solver.functions import STEP_FUNCTIONS, FunctionTable

if TYPE_CHECKING:
    import mpmath
    import sympy

__all__ = [
    "Key",
    "Solution",
    "display",
    "display_text",
    "exact_key",
    "in_range",
    "solve",
    "tidy",
    "to_mpf",
]


@dataclass(frozen=True)
class Key:
    """An exact key: its 30-digit value and how it reads, and the sympy form it came from.

    The value and the two texts are all that graders, documents and exports need, so a key can be
    stored and read back without sympy (``exact`` is then None).
    """

    value: mpmath.mpf
    text: str
    """The exact form in our notation, e.g. ``ln 10``, ``8 ln 2``, ``4.8`` (not ``24/5``)."""
    shown: str
    """How the key is shown to people: ``ln 10 ≈ 2.3026``, ``1.5``, ``6``."""
    exact: sympy.Expr | None = field(
        default=None, compare=False, repr=False, metadata={"stored": False}
    )
    """The tidied sympy expression (None for a key read back from storage)."""

    @classmethod
    def of(
        cls,
        exact: sympy.Expr,
        *,
        value: mpmath.mpf | None = None,
        decimal: int | None = None,
    ) -> Key:
        """The key of an exact, finite, real expression (already tidied), whose 30-digit value
        the caller may have computed already; with ``decimal``, shown as a decimal to that many
        significant figures instead of its exact form (``display: decimal``)."""
        value = to_mpf(exact) if value is None else value
        if decimal is not None:
            shown = format_value(value, decimal)
            return cls(value=value, text=shown, shown=shown, exact=exact)
        if _is_terminating(exact):
            plain = format_value(value, 15)
            text = _terminating_text(exact, plain)
            if text == plain:
                return cls(value=value, text=plain, shown=plain, exact=exact)
            # More digits than 15: show them all (a key of 10^49 is not 1e49 rounded).
            return cls(
                value=value, text=text, shown=f"{text} ≈ {format_value(value, 5)}", exact=exact
            )
        text = display(exact)
        approx = format_value(value, 5)
        shown = approx if text == approx or _is_plain_number(text) else f"{text} ≈ {approx}"
        return cls(value=value, text=text, shown=shown, exact=exact)

    @property
    def number(self) -> float:
        """The key as a float, for comparisons."""
        return float(self.value)

    def __str__(self) -> str:
        return self.shown


def _is_terminating(expr: sympy.Expr) -> bool:
    """A rational with a finite decimal expansion (3/2 → 1.5): shown as that decimal."""
    if not expr.is_Rational:
        return False
    q = int(expr.q)
    for prime in (2, 5):
        while q % prime == 0:
            q //= prime
    return q == 1


def _terminating_text(expr: sympy.Expr, plain: str) -> str:
    """A terminating rational written out exactly: ``plain`` (its 15-digit form) when that is
    exact, else every digit, in the same notation: a whole number digit by digit, a fraction
    such as 2^-60 as ``8.67361737988403547205962240695953369140625e-19``."""
    p, q = int(expr.p), int(expr.q)
    twos = fives = 0
    while q % 2 == 0:
        q, twos = q // 2, twos + 1
    while q % 5 == 0:
        q, fives = q // 5, fives + 1
    scale = max(twos, fives)  # value = p · 2^(scale - twos) · 5^(scale - fives) / 10^scale
    units = p * 2 ** (scale - twos) * 5 ** (scale - fives)
    sign, digits = ("-" if units < 0 else ""), str(abs(units))
    stripped = digits.rstrip("0")
    if len(stripped) <= 15:
        return plain
    if scale == 0 and len(digits) <= 100:
        return sign + digits  # a whole number, digit by digit
    scale -= len(digits) - len(stripped)
    exponent = len(stripped) - 1 - scale
    if "e" in plain:
        mantissa = stripped[0] + "." + stripped[1:]
        return f"{sign}{mantissa}e{exponent}"
    if scale <= 0:
        return sign + stripped + "0" * -scale
    whole, fraction = stripped[:-scale] or "0", stripped[-scale:].rjust(scale, "0")
    return f"{sign}{whole}.{fraction}"


def _is_plain_number(text: str) -> bool:
    return re.fullmatch(r"-?\d+(\.\d+)?", text) is not None


_BARE = r"(ln|log10|log2|exp|sqrt)"


def display(expr: sympy.Expr) -> str:
    """Print an exact expression for people: ``8*ln(2)`` → ``8 ln 2``, ``ln(10)`` → ``ln 10``.

    The text reads back as the same value under the answer grammar, and reads the same to a
    person: a bare ``ln 2`` only where nothing follows it that could belong to its argument
    (``ln(2)/3``, never ``ln 2/3``; ``(8 sqrt 10)/3``, never ``8 sqrt 10/3``; ``ln(3)^2``).
    """
    return display_text(to_text(expr))


def display_text(text: str) -> str:
    """:func:`display` of an expression already printed by :func:`~quizgym.expr.to_text`."""
    # A coefficient times a bare call, divided: group the product, "(8 sqrt 10)/3".
    text = re.sub(rf"(?<![\w.)^])(\d+)\*{_BARE}\((\d+)\)(?=/)", r"(\1 \2 \3)", text)
    text = re.sub(rf"\b{_BARE}\((\d+)\)(?=$|[ ),])", r"\1 \2", text)
    return re.sub(r"(\d)\*(ln|log10|log2|exp|sqrt|pi|e)\b", r"\1 \2", text)


def tidy(expr: sympy.Expr) -> sympy.Expr:
    """Bring a key into its most readable exact form (``ln 10``, ``8 ln 2``, ``ln(10/9)``).

    A sum of logarithms becomes one multiple of a single log when it can (``8 ln 2``), else one
    log of a rational (``ln(125/24)``); products and quotients are tidied factor by factor, so
    a ratio of losses reads ``ln(10/9)/ln(100/99)``.
    """
    if not expr.has(lazy.sympy.log):
        return lazy.sympy.nsimplify(expr) if expr.is_Float else expr
    if _is_log_term(expr):
        # Already one logarithm: ln 40000 stays ln 40000 (not 2 ln 200); −ln(9/10) reads ln(10/9).
        coefficient, log = expr.as_coeff_Mul()
        if isinstance(log, lazy.sympy.log) and log.args[0].is_Rational and 0 < log.args[0] < 1:
            return -coefficient * lazy.sympy.log(1 / log.args[0])
        return expr
    check_budget()
    if isinstance(expr, lazy.sympy.Mul | lazy.sympy.Pow):
        return expr.func(*(tidy(arg) for arg in expr.args))
    if not _logs_factor_quickly(expr):
        return expr  # expand_log factors the integers in ln(a)/ln(b): not for large ones
    expanded = lazy.sympy.expand_log(expr, force=True)
    if not isinstance(expanded, lazy.sympy.Add):
        return expanded
    if not _combines_small(expr):
        return expr  # tidying is for reading: a form too large to combine stays as written
    check_budget()
    combined = lazy.sympy.logcombine(expr, force=True)
    if isinstance(combined, lazy.sympy.log):
        return combined
    if (
        isinstance(combined, lazy.sympy.Mul)
        and combined.args[0] == -1
        and isinstance(combined.args[1], lazy.sympy.log)
    ):
        return lazy.sympy.log(1 / combined.args[1].args[0], evaluate=True)
    return expr


_FACTOR_BITS = 64
"""sympy's expand_log factors the integers of a quotient of logarithms: quick below 2^64."""


def _logs_factor_quickly(expr: sympy.Expr) -> bool:
    """Whether every logarithm's argument is built from integers below 2^64."""
    return all(exact_bits(log.args[0]) <= _FACTOR_BITS for log in expr.atoms(lazy.sympy.log))


def _combines_small(expr: sympy.Expr) -> bool:
    """Whether ``logcombine`` stays small: it raises each log's argument to its coefficient.

    ``ln(2)·10^1000 + ln(3)`` would become ``ln(3·2^(10^1000))``; roots count as in
    :func:`~quizgym.expr.root_size`.
    """
    bits = 0
    for term in lazy.sympy.Add.make_args(expr):
        coefficient, rest = term.as_coeff_Mul()
        for factor in lazy.sympy.Mul.make_args(rest):
            if not isinstance(factor, lazy.sympy.log):
                continue
            size = exact_bits(factor.args[0]) + root_size(factor.args[0])
            if coefficient.is_Rational:
                bits += abs(int(coefficient.p)) * size
                if int(coefficient.q) * size > ROOT_COST:
                    return False
            else:
                bits += size
    return bits <= EXACT_BITS


def _is_log_term(expr: sympy.Expr) -> bool:
    """``c * ln(x)``: a number times one logarithm."""
    if isinstance(expr, lazy.sympy.log):
        return True
    if isinstance(expr, lazy.sympy.Mul):
        logs = [a for a in expr.args if isinstance(a, lazy.sympy.log)]
        return len(logs) == 1 and all(
            a.is_number and not a.has(lazy.sympy.log) for a in expr.args if a not in logs
        )
    return False


@functools.cache
def _largest() -> mpmath.mpf:
    """Keys are compared as floats (binary64 ends near 1.8e308): a larger key could not be
    graded. Made at mpmath's default precision, as when it was made on import."""
    with lazy.mpmath.workprec(53):
        return lazy.mpmath.mpf("1e300")


def to_mpf(expr: sympy.Expr) -> mpmath.mpf:
    """An exact expression as a 30-digit mpmath number (the conversion keeps all 30 digits)."""
    with lazy.mpmath.workdps(DPS):
        return lazy.mpmath.mpf(lazy.sympy.N(expr, DPS))


def exact_key(parsed: Parsed, env: Mapping[str, sympy.Expr], *, decimal: int | None = None) -> Key:
    """Evaluate a parsed key exactly (``decimal``: shown as a decimal to so many figures).

    Keys are written in the expression language (:mod:`quizgym.expr`) and become exact sympy
    expressions, so the key to ``mlm_loss(0.2, 0.5)`` reads ``ln 10 ≈ 2.3026``.

    Raises:
        AnswerParseError: the key cannot be evaluated (e.g. a probability outside (0, 1]).
    """
    exact = to_sympy(parsed, env)
    check_budget()
    exact = tidy(exact)  # bounded on its own: it skips a combination that would be too large
    check_budget()
    value = to_mpf(exact) if exact.is_real else None
    if value is None or not lazy.mpmath.isfinite(value):
        raise AnswerParseError(f"the key evaluates to {exact}, not a finite real number")
    in_range(value, "the key")
    return Key.of(exact, value=value, decimal=decimal)


def in_range(value: mpmath.mpf, what: str) -> mpmath.mpf:
    """Refuse a value that floats cannot hold: answers are compared in binary64.

    Raises:
        ExactLimitError: ``|value|`` is above 1e300 or a nonzero value below 1e-300.
    """
    if value and not 1 / _largest() <= abs(value) <= _largest():
        raise ExactLimitError(
            f"{what} is {format_value(value, 5)}, beyond the range answers are compared in "
            "(1e-300 to 1e300 in size)"
        )
    return value


@dataclass(frozen=True)
class Solution:
    """How ``quizgym solve`` reads an expression.

    ``exact`` is shown only when it reads back, in our own language, as ``value``: an exact form
    that cannot be worked out, or that does not read back, is left out with a ``note``.
    """

    read_as: str
    exact: str | None
    raw: mpmath.mpf | Fraction | LogForm
    """The value as worked out: a 30-digit number, or the exact fraction of plain arithmetic
    or the exact logarithm (shown without mpmath; :attr:`value` works it out to 30 digits)."""
    note: str | None = None
    digits: str | None = None
    """The value as shown, when it was found without mpmath."""

    @functools.cached_property
    def value(self) -> mpmath.mpf:
        """The value to 30 digits."""
        if isinstance(self.raw, Fraction):
            with lazy.mpmath.workdps(DPS):
                return lazy.mpmath.mpf(self.raw.numerator) / self.raw.denominator
        if isinstance(self.raw, LogForm):
            return self.raw.value()
        return self.raw

    def __str__(self) -> str:
        digits = self.digits if self.digits is not None else format_value(self.value, 16)
        lines = [f"read as: {self.read_as}"]
        if self.exact is not None and self.exact not in {digits, self.read_as}:
            lines.append(f"exact:   {self.exact}")
        lines.append(f"value:   {digits}")
        if self.note:
            lines.append(f"note:    {self.note}")
        return "\n".join(lines)


SOLVE_SECONDS = 5.0
"""How long ``solve`` may work on an exact form before it gives the value alone."""


def solve(text: str, *, table: FunctionTable | None = None) -> Solution:
    """Read an expression as the grader does (keys' vocabulary included) and evaluate it.

    The value is the exact form's, to 30 digits, when there is one (as for a key: rounding
    functions decide exact halves exactly); else the guarded 30-digit evaluation's.

    Args:
        text: the expression.
        table: the functions and constants of a bank or of packs (``solve --pack``); the
            language's own when None.

    Raises:
        AnswerParseError: the text cannot be read or evaluated.
    """
    table = table or FunctionTable.plain()
    parsed = table.parse(text)
    if evaluates(parsed):  # plain arithmetic that surely evaluates: no mpmath, no sympy
        rational = rational_value(parsed)
        if rational is not None:
            shown = str(rational)  # as sympy prints a rational: 23/10, -3, 1/3
            try:
                again = table.parse(shown)
            except AnswerParseError:
                again = None
            if again is not None and reads_back(again, rational):
                return Solution(
                    read_as=parsed.canonical,
                    exact=shown,
                    raw=rational,
                    digits=shown_value(rational),
                )
            # else: worked out with mpmath below, which says why the exact form is left out
    form = quick_log(parsed)
    digits = form.digits() if form is not None else None
    if form is not None and digits is not None:  # one logarithm: no mpmath, no sympy
        shown = display_text(form.text)
        try:
            again = table.parse(shown)
        except AnswerParseError:
            again = None
        if again is not None and log_reads_back(again, form):
            return Solution(read_as=parsed.canonical, exact=shown, raw=form, digits=digits)
    # Else as the grader's keys are worked out (exact_key): sympy's value, not a better one.
    approx = evaluate(parsed)
    rational = rational_value(parsed)
    if rational is not None:  # plain arithmetic on decimals: exact without sympy
        with lazy.mpmath.workdps(DPS):
            value = lazy.mpmath.mpf(rational.numerator) / rational.denominator
        shown = str(rational)  # as sympy prints a rational: 23/10, -3, 1/3
    else:
        try:
            with exact_budget(SOLVE_SECONDS, what="the exact form"):
                exact = to_sympy(parsed)
                value = to_mpf(exact)
                check_budget()
                try:
                    shown = display(tidy(exact))
                except ValueError as exc:  # an integer longer than Python writes out
                    if "integer string conversion" not in str(exc):
                        raise
                    note = "the exact form is too long to show (an integer of over 4,300 digits)"
                    return Solution(read_as=parsed.canonical, exact=None, raw=value, note=note)
        except (AnswerParseError, ArithmeticError) as exc:  # ArithmeticError: sympy's evalf
            reason = exc.message if isinstance(exc, AnswerParseError) else str(exc)
            note = f"no exact form: {reason.rstrip('.')}"
            if calls(parsed) & STEP_FUNCTIONS:
                note += (
                    "; the value is rounded from 30-digit arithmetic, which an exact half can fool"
                )
            return Solution(read_as=parsed.canonical, exact=None, raw=approx, note=note)
    if not _reads_as(shown, value, table):
        note = (
            f"the exact form ({len(shown):,} characters) is too long to show"
            if len(shown) > 200
            else "the exact form is left out: it would not read back as this value"
        )
        return Solution(read_as=parsed.canonical, exact=None, raw=value, note=note)
    return Solution(read_as=parsed.canonical, exact=shown, raw=value)


def _reads_as(text: str, value: mpmath.mpf, table: FunctionTable) -> bool:
    """Whether printed text reads back, in our language, as ``value`` (to 25 digits)."""
    try:
        again = evaluate(table.parse(text))
    except AnswerParseError:
        return False
    with lazy.mpmath.workdps(DPS):
        return bool(abs(again - value) <= abs(value) * lazy.mpmath.mpf(10) ** -25)
