"""The one safe expression language: keys, mistakes and student answers all go through it.

Pipeline (see ``numeric-answers.md`` §3)::

    raw → normalize → tokenize → parse (own recursive descent, implicit *) → checked tree
        → evaluate (guarded mpmath, 30 digits)  or  to_sympy (exact, same guards)

Student mode is :func:`parse` with its defaults (numbers, ``+ - * / ^ **``, parentheses, ``ln``,
``log`` (= ``ln``), ``log10``, ``lg``, ``log2``, ``exp``, ``sqrt``, ``abs``, ``e``, ``pi``).
Author mode (keys and mistakes) passes extra ``names`` (parameters, earlier part ids) and a wider
function table (domain functions such as ``mlm_loss(p1, p2)``).

Decision: evaluation runs in-process, without a worker process. The reference recommends a worker
with rlimits because sympy/mpmath can hang inside one C-level or big-integer call. Here nothing
reaches such a call: student text never meets sympy (only our tree does, through
:func:`to_sympy`, for keys), there is no factorial or other unbounded function in the
vocabulary, and the walker bounds every operation's *result* before computing it (``|b|·log2|a|``
for powers, the argument of ``exp``) and every intermediate value after it, so each mpmath call
works on 30-digit numbers below 2^4096. The input is capped at 300 characters, 150 tree nodes and
20 levels of nesting before any evaluation.
"""

# Threat model (why this module looks the way it does):
# - Student text is hostile. sympy's string parsers run Python's own evaluator on their input
#   (code execution: "__import__('os').system('id')"), and eager big-number arithmetic hangs the
#   process ("9**9**9", "exp(exp(exp(10)))", "factorial(10**6)"). So no string ever reaches
#   sympy, Python's evaluator or float(): we tokenize with a closed vocabulary, build our own tree,
#   and construct mpmath/sympy numbers from token digits (ints), never from the raw text.
# - Bounding each literal exponent is not enough: "((9**9)**9999)**9999" passes a per-exponent
#   check. We bound the result magnitude |b|*log2|a| <= 4096 of every power before computing it,
#   and check |x| < 2**4096 (and x == 0 or |x| >= 2**-4096) after every operation.
# - Parsers themselves can be attacked: CPython's parser overflows on 200 nested parentheses and
#   on 100,000 unary minus signs; regex engines can backtrack. We cap the length (300 characters)
#   before anything else, nest at most 20 levels, build at most 150 nodes, and use only regexes
#   without nested quantifiers.
# - Silent misreading is a threat too: "2³" must not become 23, "10⁻³" not 10-3, "1,000" is
#   ambiguous (1000 or 1.0?), "2,30" is not. Superscripts are rewritten before NFKC, ambiguous
#   separators are refused with an explanation, and every reading is echoed (Reading.read_as).
# - Exact keys (to_sympy) trigger sympy's automatic evaluation, which works on exact rationals:
#   (1.000001)^(10^9) is a modest number but a gigantic fraction. Before each exact power we bound
#   the size of the fraction it would produce, and refuse roots of very large fractions.

from __future__ import annotations

import functools
import math
import re
import threading
import time
import unicodedata
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from quizgym.errors import AnswerParseError
from quizgym.lazy import lazy

if TYPE_CHECKING:
    import signal

    import mpmath
    import sympy
    from mpmath import mpf
else:
    signal = lazy("signal")  # the alarm of an exact budget (sympy's work), not for reading
    # Imported when a value is first computed to 30 digits: parsing, and plain arithmetic
    # worked out with exact fractions (``quizgym solve 2.30``), need no mpmath.
    mpmath = lazy("mpmath")
    sympy = lazy("sympy")  # exact keys only: reading and evaluating answers never needs it

__all__ = [
    "CONSTANTS",
    "Condition",
    "Constant",
    "DPS",
    "EXACT_BITS",
    "ROOT_COST",
    "ExactBudgetError",
    "ExactLimitError",
    "Function",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "PLAIN_NUMBER",
    "MAX_NODES",
    "ParseFailure",
    "Parsed",
    "MAX_UNIT_LENGTH",
    "Reading",
    "STUDENT_FUNCTIONS",
    "calls",
    "evaluate",
    "exact_bits",
    "exact_budget",
    "exact_sign",
    "format_value",
    "holds",
    "parse",
    "parse_condition",
    "read_answer",
    "check_budget",
    "cost",
    "evaluate_node",
    "exact_node",
    "root_size",
    "rational_value",
    "tidy_digits",
    "to_sympy",
    "work_seconds",
    "to_text",
    "tree_call",
]

MAX_LENGTH = 300
"""Longest accepted input, in characters, checked before anything else."""
MAX_NODES = 150
"""Most tree nodes (numbers, names, operations, calls) in one expression."""
MAX_DEPTH = 20
"""Deepest nesting of parentheses, calls, signs and exponents."""
DPS = 30
"""Decimal digits mpmath works with."""
MAX_LOG2 = 4096
"""Every value stays below 2**MAX_LOG2 in magnitude (and nonzero values above its inverse)."""

_MAX_NORMALIZED = 2 * MAX_LENGTH  # NFKC may expand a character ("π" → "pi", "½" → "(1/2)")
_MAX_LITERAL_LOG10 = 1233  # 2**4096 ≈ 1.04e1233
EXACT_BITS = 8192
"""Numerators and denominators stay below 2**8192 (~2466 digits) in :func:`to_sympy`."""
_ROOT_BITS = 256  # sympy factors the base of a root; above ~256 bits that takes > 10 ms
# sympy simplifies an exact root a^(p/q) by factoring a and multiplying its prime factors raised
# to powers below q: integers of up to q·bits(a) bits. Roots that combine (2^(1/3)·2^(1/5) =
# 2^(8/15)) multiply their degrees. Bound q·bits before every power and product: 2^16 keeps each
# under a millisecond and allows every root a key needs (x^0.25, 10^0.3, 1.05^(1/12)).
ROOT_COST = 2**16
"""Most ``degree · bits`` of the exact roots in a value (see :func:`root_size`)."""


@functools.cache
def _big() -> mpf:
    return mpmath.ldexp(1, MAX_LOG2)


@functools.cache
def _tiny() -> mpf:
    return mpmath.ldexp(1, -MAX_LOG2)


@functools.cache
def _at_53_bits(make: Callable[[], mpf]) -> mpf:
    """A limit made at mpmath's default precision (53 bits), as it was when this module made
    its limits on import: the same number whatever precision is in force on first use."""
    with mpmath.workprec(53):
        return make()


_TOO_BIG = "The number is too large or too small to work with (beyond 2^4096)."
_ONE_ARGUMENT = "Functions take one argument; use log10(x) or log2(x) for other bases."
_PERCENT = "A percent sign belongs after a number, as its unit: 15.3%."
_TWO_NUMBERS = "Two numbers separated by a space; use * to multiply."
_AMBIGUOUS_COMMA = (
    "{text} is ambiguous: write it with a decimal point (e.g. {point}) "
    "or without separators (e.g. {plain})."
)


class ExactLimitError(AnswerParseError):
    """An exact form refused because working it out would exceed a size or time budget.

    Raised only by the exact side (:func:`to_sympy` and the functions keys call): such a key is
    refused, never silently replaced by something else.
    """


class ExactBudgetError(ExactLimitError):
    """An exact form refused because its time budget (CPU seconds, see :func:`work_seconds`)
    ran out: unlike a size guard's refusal, it says how much work was allowed, not a fact about
    the key alone, so nothing that raised one is kept between runs."""


def work_seconds() -> float:
    """The CPU seconds this thread has worked: what every budget counts.

    Not the wall clock: a busy machine delays the work without adding to it, so a key or an
    answer is accepted or refused alike on a loaded machine and a quiet one. Not the process's
    either: another thread's work (a server's other requests) is not this one's.
    """
    return time.thread_time()


@dataclass(frozen=True)
class _Deadline:
    at: float
    """:func:`work_seconds` past which the budget is spent."""
    seconds: float
    what: str


_DEADLINE: ContextVar[_Deadline | None] = ContextVar("quizgym_exact_deadline", default=None)


@contextmanager
def exact_budget(
    seconds: float, *, what: str = "the exact value", limit: float | None = None
) -> Iterator[None]:
    """Bound the CPU time (:func:`work_seconds`) of exact work done inside the block.

    The work is checked between its steps (every node of :func:`to_sympy`, every stage of the
    solver's tidying), each of which the size guards keep short: past the deadline the next check
    raises :class:`ExactBudgetError`. In the main thread a profiling alarm (``ITIMER_PROF``,
    which counts CPU time too) also interrupts a step that runs on past the deadline (sympy's
    internals are pure Python), so nothing is left running. An enclosing budget that ends sooner
    still applies.

    Args:
        seconds: the CPU time allowed from now.
        what: how the message names the work (``the key``).
        limit: the budget the message states, when it is not ``seconds`` (the rest of a
            larger budget).
    """
    outer = _DEADLINE.get()
    deadline = _Deadline(
        at=work_seconds() + seconds, seconds=seconds if limit is None else limit, what=what
    )
    if outer is not None and outer.at < deadline.at:
        deadline = outer
    token = _DEADLINE.set(deadline)
    alarm = outer is None and _can_interrupt()
    if alarm:
        previous = signal.signal(signal.SIGPROF, _on_alarm)
        # Repeating: sympy catches some exceptions broadly and would carry on after one; and the
        # process's CPU time, which the timer counts, can run ahead of this thread's.
        signal.setitimer(signal.ITIMER_PROF, max(seconds, 0.0) + _ALARM_GRACE, _ALARM_GRACE)
    try:
        yield
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, previous)
        _DEADLINE.reset(token)


_ALARM_GRACE = 0.5
"""CPU seconds past the deadline before the alarm interrupts sympy mid-step."""


def _can_interrupt() -> bool:
    """Whether an alarm can interrupt exact work here: only the main thread receives signals,
    and an interval timer someone else set (a profiler's) is left alone."""
    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)
        and signal.getsignal(signal.SIGPROF) in (signal.SIG_DFL, signal.SIG_IGN, None)
    )


def _on_alarm(signum: int, frame: object) -> None:
    """The size guards keep sympy's steps short, but not all of its internal ones (minimal
    polynomials, factoring inside assumptions): past the deadline, the alarm ends the step by
    raising inside it, so nothing is left running. Pure-Python sympy unwinds cleanly. An alarm
    that comes early (other threads' CPU time counts for the timer) waits for the next one."""
    deadline = _DEADLINE.get()
    if deadline is not None and work_seconds() <= deadline.at:
        return
    what = deadline.what if deadline else "the exact value"
    seconds = f" ({deadline.seconds:g} s)" if deadline else ""
    raise ExactBudgetError(
        f"working out {what} exactly took longer than its budget{seconds}; simplify it"
    )


def check_budget(offset: int | None = None) -> None:
    """Raise :class:`ExactBudgetError` when the current :func:`exact_budget` is spent."""
    deadline = _DEADLINE.get()
    if deadline is not None and work_seconds() > deadline.at:
        raise ExactBudgetError(
            f"working out {deadline.what} exactly took longer than its budget "
            f"({deadline.seconds:g} s); simplify it",
            offset,
        )


# --- vocabulary -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Function:
    """A callable name in the language.

    The table key is how it is typed; ``name`` is how it is printed (``log`` prints as ``ln``).
    """

    name: str
    min_args: int
    max_args: int | None
    """None = any number of arguments."""
    mp: Callable[..., mpf]
    """Guarded mpmath implementation; raises AnswerParseError outside its domain."""
    sym: Callable[..., sympy.Expr]
    """Exact sympy implementation."""
    cost: int = 1
    """Tree nodes one call evaluates (a function written in the language: its body's)."""
    written: bool = False
    """Written in the language (a pack's or bank's): its errors point at the call, not into
    its body."""


@dataclass(frozen=True)
class Constant:
    """A named constant: ``e`` or ``pi``, or a bank's or pack's (``g = 9.81``)."""

    name: str
    mp: Callable[[], mpf]
    """The value at the working precision."""
    symbol: str = ""
    """sympy's name for it (``E``, ``pi``): looked up when an exact form is built."""
    exact: Fraction | None = None
    """A rational constant's exact value (a bank's ``9.81`` is 981/100); None for ``symbol``."""

    @property
    def sym(self) -> sympy.Expr:
        """The exact constant."""
        if self.exact is not None:
            return sympy.Rational(self.exact.numerator, self.exact.denominator)
        value: sympy.Expr = getattr(sympy, self.symbol)
        return value


def _positive(name: str, x: mpf) -> mpf:
    if x <= 0:
        raise AnswerParseError(f"{name} needs a positive number, but got {format_value(x)}.")
    return x


def _mp_sqrt(x: mpf) -> mpf:
    if x < 0:
        raise AnswerParseError(
            f"sqrt needs a number that is not negative, but got {format_value(x)}."
        )
    return mpmath.sqrt(x)


def _exp_limit() -> mpf:
    """exp(x) < 2**4096  ⇔  x < 4096·ln 2 ≈ 2839.8."""
    return _at_53_bits(_exp_limit_53)


def _exp_limit_53() -> mpf:
    return MAX_LOG2 * mpmath.log(2)


def _mp_exp(x: mpf) -> mpf:
    if abs(x) >= _exp_limit():
        raise AnswerParseError(
            f"exp argument too large: exp(x) needs |x| < 2839, but got {format_value(x)}."
        )
    return mpmath.exp(x)


def _sym_sqrt(x: sympy.Expr) -> sympy.Expr:
    if exact_bits(x) > _ROOT_BITS:
        raise ExactLimitError("sqrt of a number this large cannot be taken exactly.")
    _root_guard(x, sympy.Rational(1, 2), None)
    return sympy.sqrt(x)


def _sym_abs(x: sympy.Expr) -> sympy.Expr:
    # sympy.Abs decides the sign through its assumptions, which for a number too close to zero
    # to tell by evaluation compute its minimal polynomial (unbounded time for a high root).
    if x.free_symbols:
        return sympy.Abs(x)
    return x if exact_sign(x, "abs") >= 0 else -x


def _sym_exp(x: sympy.Expr) -> sympy.Expr:
    _exp_guard(x, None)
    return sympy.exp(x)


def _exp_guard(x: sympy.Expr, offset: int | None) -> None:
    """exp(c·ln a) evaluates to the power a^c: hold it to the guards of a power first."""
    for term in sympy.Add.make_args(sympy.expand_mul(x) if x.is_Mul else x):
        coefficient, rest = term.as_coeff_Mul()
        logs = [f for f in sympy.Mul.make_args(rest) if isinstance(f, sympy.log)]
        for log in logs:
            _power_guard(log.args[0], coefficient, offset)


def exact_sign(x: sympy.Expr, what: str) -> int:
    """The sign of an exact number (-1, 0 or 1), decided by evaluation to 30 digits.

    Raises:
        ExactLimitError: the number is too close to zero to tell (sympy would then try to prove
            it zero, which can take unbounded time).
    """
    if x.is_Rational:
        return int(sympy.sign(x))
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


_LN = Function("ln", 1, 1, lambda x: mpmath.log(_positive("ln", x)), lambda x: sympy.log(x))
_LOG10 = Function(
    "log10", 1, 1, lambda x: mpmath.log10(_positive("log10", x)), lambda x: sympy.log(x, 10)
)


# --- the wider vocabulary: trigonometry, counting, probability, rounding ---------------------
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
    return mpmath.log(2)


def _whole(name: str, x: mpf, *, least: int = 0) -> int:
    """The integer value of an argument that must be a whole number of at least ``least``."""
    if not mpmath.isint(x) or x < least:
        raise AnswerParseError(f"{name} needs a whole number ≥ {least}, but got {format_value(x)}.")
    return int(x)


def _bounded_log2(name: str, log_e: mpf) -> None:
    """Refuse a result whose natural log says it lies beyond 2^4096."""
    if abs(log_e) / _ln2() > MAX_LOG2:
        raise AnswerParseError(
            f"{name}: the result is too large or too small to work with (beyond 2^4096)."
        )


def _mp_tan(x: mpf) -> mpf:
    if abs(mpmath.cos(x)) < mpmath.mpf(10) ** (5 - DPS):
        raise AnswerParseError(
            f"tan is undefined at odd multiples of pi/2 (got {format_value(x)})."
        )
    return mpmath.tan(x)


_QUARTER = {0: (0, 1), 1: (1, 0), 2: (0, -1), 3: (-1, 0)}  # sin and cos at k·90°


def _degrees(name: str, x: mpf) -> tuple[mpf, mpf]:
    """sin and cos of x degrees, exact at multiples of 90° (sind(180) is 0, not 1e-31)."""
    turn = mpmath.fmod(x, 360)
    if mpmath.isint(turn / 90):
        s, c = _QUARTER[int(turn / 90) % 4]
        return mpmath.mpf(s), mpmath.mpf(c)
    angle = mpmath.radians(turn)
    return mpmath.sin(angle), mpmath.cos(angle)


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
    return mpmath.atan2(y, x)


def _sym_atan2(y: sympy.Expr, x: sympy.Expr) -> sympy.Expr:
    # sympy's atan2 decides the quadrant through assumptions; the signs decided by evaluation
    # (exact_sign) give the same closed forms without them.
    if y.free_symbols or x.free_symbols:
        return sympy.atan2(y, x)
    sx = 0 if x.is_zero else exact_sign(x, "atan2")
    sy = 0 if y.is_zero else exact_sign(y, "atan2")
    if sx > 0:
        return sympy.atan(y / x)
    if sx < 0:
        return sympy.atan(y / x) + (sympy.pi if sy >= 0 else -sympy.pi)
    if sy == 0:
        raise AnswerParseError("atan2(0, 0) is undefined.")
    return sympy.pi / 2 if sy > 0 else -sympy.pi / 2


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
    _bounded_log2("factorial", mpmath.loggamma(k + 1))
    return mpmath.factorial(k)


def _sym_factorial(n: sympy.Expr) -> sympy.Expr:
    return sympy.factorial(_sym_integer("factorial", n))


def _counting(name: str, n: mpf, k: mpf) -> tuple[int, int]:
    return _whole(name, n), _whole(name, k)


def _comb_log2_below(whole: int, pick: int) -> float:
    """A lower bound of log2 C(n, k) for k ≤ n/2, computed without cancellation: C(n, k) ≥
    (n/k)^k. (A difference of log-gammas of 10^300 has no digits left at 30.)"""
    return pick * math.log2(whole / pick) if pick else 0.0


def _mp_comb(n: mpf, k: mpf) -> mpf:
    whole, pick = _counting("comb", n, k)
    if pick > whole:
        return mpmath.mpf(0)
    pick = min(pick, whole - pick)
    if _comb_log2_below(whole, pick) > MAX_LOG2:
        _bounded_log2("comb", mpmath.mpf(2 * MAX_LOG2))
    # Within the bound, k ≤ 4096 and C(n, k) < 2^(4096 + 1.45·k): quick as an integer.
    return mpmath.mpf(math.comb(whole, pick))


def _mp_perm(n: mpf, k: mpf) -> mpf:
    whole, pick = _counting("perm", n, k)
    if pick > whole:
        return mpmath.mpf(0)
    # n!/(n-k)! ≥ (n - k + 1)^k, computed without cancellation.
    if pick and pick * math.log2(whole - pick + 1) > MAX_LOG2:
        _bounded_log2("perm", mpmath.mpf(2 * MAX_LOG2))
    return mpmath.mpf(math.perm(whole, pick))


def _sym_comb(n: sympy.Expr, k: sympy.Expr) -> sympy.Expr:
    return sympy.binomial(_sym_integer("comb", n), _sym_integer("comb", k))


def _sym_perm(n: sympy.Expr, k: sympy.Expr) -> sympy.Expr:
    whole, pick = _sym_integer("perm", n), _sym_integer("perm", k)
    if pick > whole:
        return sympy.Integer(0)
    return sympy.ff(whole, pick)


def _mp_gamma(x: mpf) -> mpf:
    if x <= 0 and mpmath.isint(x):
        raise AnswerParseError(
            f"gamma is undefined at 0 and the negative whole numbers (got {format_value(x)})."
        )
    # |Γ(x)| from log-gamma, by reflection below 1/2: π / (|sin πx| · Γ(1 − x)).
    size = mpmath.loggamma(x) if x >= mpmath.mpf("0.5") else -mpmath.loggamma(1 - x)
    _bounded_log2("gamma", mpmath.re(size))
    return mpmath.gamma(x)


def _mp_erfc(x: mpf) -> mpf:
    if x > 64:  # erfc(x) < e^(-x²): past 64 it is below 2^-4096 · … (refused as too small)
        raise AnswerParseError(
            f"erfc({format_value(x)}) is too small to work with (below 2^-4096)."
        )
    return mpmath.erfc(x)


def _normal_args(name: str, args: tuple[mpf, ...]) -> mpf:
    """z = (x - mu) / sigma of normal_cdf(x[, mu[, sigma]]) (mu 0 and sigma 1 by default)."""
    x = args[0]
    mu = args[1] if len(args) > 1 else mpmath.mpf(0)
    sigma = args[2] if len(args) > 2 else mpmath.mpf(1)
    if sigma <= 0:
        raise AnswerParseError(f"{name} needs sigma > 0, but got {format_value(sigma)}.")
    return (x - mu) / sigma


def _mp_normal_cdf(*args: mpf) -> mpf:
    z = _normal_args("normal_cdf", args)
    if z < -64:
        raise AnswerParseError("normal_cdf: the result is too small to work with (below 2^-4096).")
    return mpmath.erfc(-z / mpmath.sqrt(2)) / 2


def _mp_normal_pdf(*args: mpf) -> mpf:
    z = _normal_args("normal_pdf", args)
    sigma = args[2] if len(args) == 3 else mpmath.mpf(1)
    if abs(z) > 75:
        raise AnswerParseError("normal_pdf: the result is too small to work with (below 2^-4096).")
    return mpmath.exp(-(z**2) / 2) / (sigma * mpmath.sqrt(2 * mpmath.pi))


def _sym_normal(args: tuple[sympy.Expr, ...]) -> tuple[sympy.Expr, sympy.Expr]:
    x = args[0]
    mu = args[1] if len(args) > 1 else sympy.Integer(0)
    sigma = args[2] if len(args) > 2 else sympy.Integer(1)
    return (x - mu) / sigma, sigma


@functools.cache
def _normal_cdf_class() -> type:
    """The class of Φ in exact forms (made on first use: it subclasses a sympy class)."""

    class NormalCDF(sympy.Function):  # type: ignore[misc]  # sympy is untyped
        """Φ(z), the standard normal distribution function, kept whole in exact forms so that a
        key reads ``normal_cdf(49/25) ≈ 0.975`` rather than a sum with ``erfc``."""

        nargs = 1

        @classmethod
        def eval(cls, z: sympy.Expr) -> sympy.Expr | None:
            # sympy's hook for simplifying Φ(z) on construction (not Python's eval): z is a
            # sympy object built from quizgym's own parse tree, never text.
            if z.is_zero:
                return sympy.Rational(1, 2)
            return None

        def _eval_evalf(self, prec: int) -> sympy.Expr:
            return (sympy.erfc(-self.args[0] / sympy.sqrt(2)) / 2)._eval_evalf(prec)

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
    _power_guard(z, sympy.Integer(2), None)
    return sympy.exp(-(z**2) / 2) / (sigma * sympy.sqrt(2 * sympy.pi))


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
        return mpmath.mpf(0)
    if p in (0, 1):
        return mpmath.mpf(1 if hits == (0 if p == 0 else trials) else 0)
    # A probability is at most 1: only "too small" can happen. C(n, k) ≤ (e·n/k)^k bounds it
    # from above without the cancellation of a difference of huge log-gammas.
    pick = min(hits, trials - hits)
    comb_above = pick * math.log2(math.e * trials / pick) if pick else 0.0
    log2_p = float((hits * mpmath.log(p) + (trials - hits) * mpmath.log(1 - p)) / _ln2())
    if comb_above + log2_p < -MAX_LOG2:
        _bounded_log2("binom_pmf", mpmath.mpf(2 * MAX_LOG2))
    return (
        mpmath.binomial(trials, hits) * mpmath.power(p, hits) * mpmath.power(1 - p, trials - hits)
    )


def _sym_binom_pmf(k: sympy.Expr, n: sympy.Expr, p: sympy.Expr) -> sympy.Expr:
    trials, hits = _sym_integer("binom_pmf", n), _sym_integer("binom_pmf", k)
    if hits > trials:
        return sympy.Integer(0)
    _power_guard(p, hits, None)
    _power_guard(1 - p, trials - hits, None)
    return sympy.binomial(trials, hits) * p**hits * (1 - p) ** (trials - hits)


def _mp_extreme(name: str) -> Callable[..., mpf]:
    pick = max if name == "max" else min

    def mp(*args: mpf) -> mpf:
        return pick(args)

    return mp


def _sym_extreme(name: str) -> Callable[..., sympy.Expr]:
    def sym(*args: sympy.Expr) -> sympy.Expr:
        if any(a.free_symbols for a in args):
            return (sympy.Max if name == "max" else sympy.Min)(*args)
        best = args[0]
        for other in args[1:]:
            difference = other - best
            sign = 0 if difference.is_zero else exact_sign(difference, name)
            if (sign > 0) if name == "max" else (sign < 0):
                best = other
        return best

    return sym


def _round_digits(digits: mpf | sympy.Expr) -> int:
    if isinstance(digits, mpmath.mpf):
        whole = bool(mpmath.isint(digits))
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
    nearest = mpmath.nint(x)
    return nearest if abs(x - nearest) <= (abs(x) + 1) * mpmath.mpf(10) ** (5 - DPS) else x


def _mp_floor(x: mpf) -> mpf:
    return mpmath.floor(_snap(x))


def _mp_ceil(x: mpf) -> mpf:
    return mpmath.ceil(_snap(x))


def _mp_round(x: mpf, digits: mpf | None = None) -> mpf:
    if digits is None:
        return _mp_floor(x + mpmath.mpf("0.5"))
    scale = mpmath.mpf(10) ** _round_digits(digits)
    return _mp_floor(x * scale + mpmath.mpf("0.5")) / scale


def _sym_round(x: sympy.Expr, digits: sympy.Expr | None = None) -> sympy.Expr:
    half = sympy.Rational(1, 2)
    if digits is None:
        return _integer_part(x + half, "round", up=False)
    scale = sympy.Integer(10) ** _round_digits(digits)
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
    except _precision_exhausted() as exc:
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


def _precision_exhausted() -> type[Exception]:
    from sympy.core.evalf import PrecisionExhausted

    exception: type[Exception] = PrecisionExhausted
    return exception


def _sympy(name: str) -> Callable[..., sympy.Expr]:
    """sympy's function ``name``, looked up when a key is solved (not when the table is made)."""

    def call(*args: sympy.Expr) -> sympy.Expr:
        value: sympy.Expr = getattr(sympy, name)(*args)
        return value

    return call


def _mp(name: str) -> Callable[..., mpf]:
    """mpmath's function ``name``, looked up when it is called (mpmath is imported on first use)."""

    def call(*args: mpf) -> mpf:
        value: mpf = getattr(mpmath, name)(*args)
        return value

    return call


def _fn(name: str, mp: Callable[..., mpf], sym: Callable[..., sympy.Expr], low: int = 1,
        high: int | None = 1) -> Function:  # fmt: skip
    return Function(name, low, high, mp, sym)


def _deg(f: Callable[[sympy.Expr], sympy.Expr]) -> Callable[[sympy.Expr], sympy.Expr]:
    return lambda x: f(sympy.pi * x / 180)


_SIN, _COS, _TAN = _sympy("sin"), _sympy("cos"), _sympy("tan")


STUDENT_FUNCTIONS: Mapping[str, Function] = MappingProxyType(
    {
        "ln": _LN,
        "log": _LN,  # natural log, as in sympy, mpmath, PyTorch and PrairieLearn
        "log10": _LOG10,
        "lg": _LOG10,
        "log2": _fn(
            "log2", lambda x: mpmath.log(_positive("log2", x), 2), lambda x: sympy.log(x, 2)
        ),
        "exp": _fn("exp", _mp_exp, _sym_exp),
        "sqrt": _fn("sqrt", _mp_sqrt, _sym_sqrt),
        "abs": _fn("abs", abs, _sym_abs),
        # trigonometry, in radians; sind, cosd and tand take degrees
        "sin": _fn("sin", _mp("sin"), _SIN),
        "cos": _fn("cos", _mp("cos"), _COS),
        "tan": _fn("tan", _mp_tan, _TAN),
        "asin": _fn("asin", lambda x: mpmath.asin(_unit_interval("asin", x)), _sympy("asin")),
        "acos": _fn("acos", lambda x: mpmath.acos(_unit_interval("acos", x)), _sympy("acos")),
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
        "e": Constant("e", lambda: +mpmath.e, "E"),
        "pi": Constant("pi", lambda: +mpmath.pi, "pi"),
    }
)

_NAME_RE = re.compile(r"[a-z_][a-z0-9_]*")


# --- the checked tree -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Num:
    mantissa: int
    exponent: int  # value = mantissa * 10**exponent, exactly as typed
    text: str  # canonical spelling: digits as typed, "." for the separator, no grouping
    decimal: bool  # typed with a decimal separator
    decimals: int
    sigfigs: int
    comma: bool  # typed with a decimal comma
    offset: int
    grouped: bool = False  # typed with thousands separators (12,345.6, 12 345, 1.234.567)
    zeros: int = 0  # trailing zeros of a whole number typed without a point or exponent


@dataclass(frozen=True, slots=True)
class _Const:
    constant: Constant
    offset: int


@dataclass(frozen=True, slots=True)
class _Name:
    name: str
    offset: int


@dataclass(frozen=True, slots=True)
class _Unary:
    op: str
    operand: _Node
    offset: int


@dataclass(frozen=True, slots=True)
class _Binary:
    op: str  # + - * / ^
    left: _Node
    right: _Node
    offset: int


@dataclass(frozen=True, slots=True)
class _Call:
    function: Function
    args: tuple[_Node, ...]
    offset: int


_Node = _Num | _Const | _Name | _Unary | _Binary | _Call


@dataclass(frozen=True)
class Parsed:
    """A checked expression and how it was read."""

    source: str
    """The raw text."""
    canonical: str
    """How it was read, e.g. ``8*ln(2)``, ``2.30``, ``-ln(0.2) - ln(0.5)``."""
    kind: Literal["decimal", "expression", "mixed"]
    """``decimal``: one plain (optionally signed) decimal literal; ``expression``: no literal with
    a decimal separator; ``mixed``: an expression with decimal literals (``8*0.6931``)."""
    decimals: int
    """For a decimal: the place of the last digit typed, as decimal places: ``2.30`` → 2,
    ``2.5e-3`` → 4, ``30000`` → 0, ``1.23e4`` → -2 (typed to the hundreds); else 0."""
    sigfigs: int
    """For a decimal: significant figures typed (trailing zeros count); else 0."""
    names: frozenset[str]
    """Free names used (parameters, part ids); empty for student answers."""
    tree: _Node = field(repr=False)
    """The checked tree (internal)."""
    grouped: bool = False
    """A number was typed with thousands separators (``12,345.6``, ``12 345``)."""
    zeros: int = 0
    """For a decimal typed as a whole number (``1200``, no point, no exponent): its trailing
    zeros, which may or may not be significant (1200 may be given to 2, 3 or 4 figures)."""


def tree_call(parsed: Parsed) -> tuple[str, int] | None:
    """``(name, argument count)`` when an expression is one call of a function with plain
    arguments (``mlm_loss(p1, p2)``, no call inside them); None otherwise."""
    tree = parsed.tree
    if not isinstance(tree, _Call):
        return None
    if any(isinstance(node, _Call) for arg in tree.args for node in _walk(arg)):
        return None
    return tree.function.name, len(tree.args)


def calls(parsed: Parsed) -> frozenset[str]:
    """The names of the functions an expression calls."""
    found: set[str] = set()
    todo: list[_Node] = [parsed.tree]
    while todo:
        node = todo.pop()
        if isinstance(node, _Call):
            found.add(node.function.name)
            todo.extend(node.args)
        elif isinstance(node, _Unary):
            todo.append(node.operand)
        elif isinstance(node, _Binary):
            todo.extend((node.left, node.right))
    return frozenset(found)


# --- normalize ----------------------------------------------------------------------------------

_SUPERSCRIPTS = {
    **{chr(0x2070 + d): str(d) for d in (0, 4, 5, 6, 7, 8, 9)},
    "\u00b9": "1",
    "\u00b2": "2",
    "\u00b3": "3",
    "\u207a": "+",
    "\u207b": "-",
    "\u207d": "(",
    "\u207e": ")",
}
_CHAR_MAP = {
    **dict.fromkeys("\u2212\u2010\u2011\u2012\u2013\u2014\ufe63\uff0d", "-"),
    **dict.fromkeys("\u00d7\u00b7\u22c5\u2219\u2217", "*"),
    **dict.fromkeys("\u00f7\u2215\u2044", "/"),
    **dict.fromkeys("\t\n\r\f\v", " "),
    "\u03c0": "pi",
    # unit symbols, as the units library spells them (NFKC has already made µ into μ, the
    # ohm sign into Ω and the angstrom sign into Å)
    "\u03bc": "u",
    "\u00b0": "deg",
    "\u03a9": "ohm",
    "\u00c5": "angstrom",
}
_PREFIX_RE = re.compile(r" *(?:[A-Za-z_][A-Za-z0-9_]* *)?[=\u2248~] *")
# "1.5 x 10^-3": a letter x between a number and a power of ten is a multiplication sign.
_TIMES_TEN_RE = re.compile(r"(?<=[0-9.]) ?[xX] ?(?=10 ?\^)")


def _normalize(source: str, names: Collection[str] = ()) -> tuple[str, list[int]]:
    """Map raw text to ASCII, keeping for each output character the source offset it came from.

    ``1.5 x 10^-3`` reads as ``1.5 * 10^-3``, unless ``x`` is one of ``names`` (a parameter
    called x: ``3 x 10^2`` is then 3·x·10²)."""
    if len(source) > MAX_LENGTH:
        raise AnswerParseError(
            f"The text is too long ({len(source)} characters; at most {MAX_LENGTH}).", MAX_LENGTH
        )
    if source.isascii() and source.isprintable():
        # Printable ASCII, most answers: each character folds to itself (a test holds it).
        text, where = source, list(range(len(source)))
    else:
        text, where = _fold(source)
    times_ten = () if "x" in names or "X" in names else _TIMES_TEN_RE.finditer(text)
    for match in reversed(list(times_ten)):
        a, b = match.span()
        text = text[:a] + "*" + text[b:]
        where[a:b] = [where[a]]
    start, end = 0, len(text)
    prefix = _PREFIX_RE.match(text)
    if prefix:  # "≈ 2.30", "L = 2.30", "L_MLM ≈ 2.3026"
        start = prefix.end()
    while start < end and text[start] == " ":
        start += 1
    while end > start and text[end - 1] == " ":
        end -= 1
    if start == end:
        raise AnswerParseError("There is no number or expression to read.", None)
    text, offsets = text[start:end], where[start:end]
    for k, ch in enumerate(text):
        if not " " <= ch <= "~":
            raise AnswerParseError(
                f"The character {ch!r} (U+{ord(ch):04X}) is not allowed.", offsets[k]
            )
    return text, offsets


def _fold(source: str) -> tuple[str, list[int]]:
    """Superscripts, NFKC and the character map: the text in ASCII, with each character's
    offset in the source.

    Raises:
        AnswerParseError: a mixed number written with a vulgar fraction; text that grows past
            twice the longest answer.
    """
    chars: list[str] = []
    where: list[int] = []

    def emit(text: str, offset: int) -> None:
        chars.extend(text)
        where.extend([offset] * len(text))

    i = 0
    while i < len(source):
        if source[i] in _SUPERSCRIPTS:
            # Before NFKC, which would silently turn "2³" into "23" and "10⁻³" into "10-3".
            start = i
            while i < len(source) and source[i] in _SUPERSCRIPTS:
                i += 1
            emit("^(", start)
            for k in range(start, i):
                emit(_SUPERSCRIPTS[source[k]], k)
            emit(")", i - 1)
            continue
        folded = unicodedata.normalize("NFKC", source[i])
        if len(folded) > 1 and "\u2044" in folded:  # a vulgar fraction, "½" → "(1/2)"
            if chars and chars[-1].isdigit():
                raise AnswerParseError("Write a mixed number such as 1½ as 1 + 1/2.", i)
            folded = "(" + folded + ")"
        for ch in folded:
            emit(_CHAR_MAP.get(ch, ch), i)
        i += 1
        if len(chars) > _MAX_NORMALIZED:
            raise AnswerParseError(f"The text is too long (at most {MAX_LENGTH} characters).", i)
    return "".join(chars), where


# --- tokenize -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Token:
    kind: Literal["num", "name", "func", "const", "op", "(", ")", ",", "end"]
    text: str
    offset: int  # in the source
    num: _Num | None = None
    function: Function | None = None
    constant: Constant | None = None


_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EXPONENT_RE = re.compile(r"[eE]([+-]?)([0-9]+)")


class _Tokenizer:
    def __init__(
        self,
        text: str,
        offsets: list[int],
        names: frozenset[str],
        functions: Mapping[str, Function],
        constants: Mapping[str, Constant] = CONSTANTS,
    ) -> None:
        self.text = text
        self.offsets = offsets
        self.names = names
        self.functions = functions
        self.constants = constants
        self.end_offset = offsets[-1] + 1

    def at(self, i: int) -> int:
        return self.offsets[i] if i < len(self.offsets) else self.end_offset

    def tokens(self) -> list[_Token]:
        text, out = self.text, []
        contexts: list[bool] = []  # per open parenthesis: does "," separate arguments there?
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == " ":
                i += 1
            elif ch.isdigit() or (ch == "." and text[i + 1 : i + 2].isdigit()):
                allow_comma = not (contexts and contexts[-1])
                num, i = self.number(i, allow_comma=allow_comma)
                out.append(_Token("num", num.text, num.offset, num=num))
            elif ch.isalpha() or ch == "_":
                token, i = self.identifier(i)
                out.append(token)
            elif ch == "*" and text[i + 1 : i + 2] == "*":
                out.append(_Token("op", "^", self.at(i)))
                i += 2
            elif ch in "+-*/^":
                out.append(_Token("op", ch, self.at(i)))
                i += 1
            elif ch == "(":
                previous = out[-1] if out else None
                contexts.append(
                    previous is not None
                    and previous.function is not None
                    and previous.function.max_args != 1
                )
                out.append(_Token("(", ch, self.at(i)))
                i += 1
            elif ch == ")":
                if contexts:
                    contexts.pop()
                out.append(_Token(")", ch, self.at(i)))
                i += 1
            elif ch == ",":
                out.append(_Token(",", ch, self.at(i)))
                i += 1
            elif ch == "%":
                raise AnswerParseError(_PERCENT, self.at(i))
            elif ch == "!":
                if text[i + 1 : i + 2] == "!":
                    raise AnswerParseError(
                        "n!! (a double factorial) is not supported; for (n!)! write "
                        "factorial(factorial(n)).",
                        self.at(i),
                    )
                out.append(_Token("op", "!", self.at(i)))
                i += 1
            else:
                raise AnswerParseError(f"Unexpected character {ch!r}.", self.at(i))
        out.append(_Token("end", "", self.end_offset))
        return out

    def number(self, i: int, *, allow_comma: bool) -> tuple[_Num, int]:
        """Read a number: digits, one decimal separator, digit groups, e-notation."""
        text, j = self.text, i
        while j < len(text):
            ch = text[j]
            nxt = text[j + 1 : j + 2]
            if ch.isdigit() or ch == ".":
                j += 1
            elif ch in ", " and nxt.isdigit() and text[j - 1].isdigit():
                # A comma between digits may be a decimal comma, a space a digit group; both
                # are judged below once the whole run is known.
                if ch == "," and not allow_comma:
                    break
                j += 1
            else:
                break
        body = text[i:j]
        offset = self.at(i)
        exp_sign, exp_digits = "", ""
        match = _EXPONENT_RE.match(text, j)
        if match:
            exp_sign, exp_digits = match.group(1), match.group(2)
            j = match.end()
        body, separator, grouped = _separators(body, offset)
        whole, _, fraction = body.partition(separator) if separator else (body, "", "")
        if (
            separator == ","
            and len(fraction.split(" ")[0]) == 3
            and re.fullmatch(r"[1-9][0-9]{0,2}", whole)
        ):
            # "1,000" and "2,302": thousands separator or decimal comma? Refuse to guess.
            raise AnswerParseError(
                _AMBIGUOUS_COMMA.format(
                    text=body, point=body.replace(",", "."), plain=body.replace(",", "")
                ),
                offset,
            )
        if not _grouped(whole, first=True) or not _grouped(fraction, first=False):
            raise AnswerParseError(_TWO_NUMBERS, self.at(i + text[i:j].index(" ")))
        grouped = grouped or " " in whole or " " in fraction
        whole, fraction = whole.replace(" ", ""), fraction.replace(" ", "")
        digits = whole + fraction
        if len(exp_digits.lstrip("0")) > 6:
            raise AnswerParseError(_TOO_BIG, offset)
        exponent = int(exp_sign + exp_digits) if exp_digits else 0
        mantissa = int(digits)
        if mantissa and not (
            -_MAX_LITERAL_LOG10
            <= len(str(mantissa)) - 1 + exponent - len(fraction)
            < _MAX_LITERAL_LOG10
        ):
            raise AnswerParseError(_TOO_BIG, offset)
        significant = digits.lstrip("0")
        canonical = (whole or "0") + ("." + fraction if separator else "")
        if exp_digits:
            canonical += "e" + ("-" if exp_sign == "-" else "") + (exp_digits.lstrip("0") or "0")
        num = _Num(
            mantissa=mantissa,
            # 0e999999 is 0: never let a zero carry its exponent into 10**exponent.
            exponent=exponent - len(fraction) if mantissa else 0,
            text=canonical,
            decimal=bool(separator),
            decimals=len(fraction) - exponent,  # "2.5e-3" → 4, "1.23e4" → -2
            sigfigs=len(significant) if significant else max(1, len(fraction)),
            comma=separator == ",",
            offset=offset,
            grouped=grouped,
            zeros=len(whole) - len(whole.rstrip("0")) if not separator and not exp_digits else 0,
        )
        return num, j

    def identifier(self, i: int) -> tuple[_Token, int]:
        match = _IDENT_RE.match(self.text, i)
        assert match is not None  # called on a letter or underscore
        word = match.group()
        low = word.lower()
        offset = self.at(i)
        if low in self.names:
            return _Token("name", low, offset), match.end()
        if low in self.functions:
            return _Token("func", low, offset, function=self.functions[low]), match.end()
        if low in self.constants:
            return _Token("const", low, offset, constant=self.constants[low]), match.end()
        # "8ln2", "sqrt2": a function name glued to its number; "log28" could be log(28) or
        # log2(8), so a glued name is split only when exactly one split exists.
        # ("f10(": a call of a name that ends in digits, never f1 applied to 0.)
        called = self.text[match.end() : match.end() + 1] == "("
        splits = [
            f
            for f in self.functions
            if not called and low.startswith(f) and low[len(f) :].isdigit()
        ]
        if len(splits) == 1:
            name = splits[0]
            return _Token("func", name, offset, function=self.functions[name]), i + len(name)
        if splits:
            options = " or ".join(f"{f}({low[len(f) :]})" for f in sorted(splits))
            raise AnswerParseError(f"{word} is ambiguous: write {options}.", offset)
        if word.startswith("_"):
            raise AnswerParseError("Unexpected character '_'.", offset)
        shown = word if len(word) <= 20 else word[:20] + "..."
        close = _closest(low, frozenset({*self.functions, *self.constants, *self.names}))
        if close:
            hint = f"; did you mean {close}?"
        elif self.names:
            values = sorted({*self.constants, *self.names})
            hint = f"; the names here are {', '.join(values)}, and the functions."
        else:
            hint = (
                "; an answer is a number or an expression of numbers, e and pi, and functions "
                "such as ln, sqrt, sin (a unit goes after the number: 10 m/s)."
            )
        raise AnswerParseError(f"Unknown name {shown!r}{hint}", offset)


@functools.lru_cache(maxsize=4096)
def _closest(word: str, known: frozenset[str]) -> str | None:
    """The known name closest to an unknown word, if one is close (memoized: a class types the
    same unknown word, a unit the question does not name, thousands of times)."""
    import difflib  # a misspelt name only

    close = difflib.get_close_matches(word, sorted(known), n=1, cutoff=0.75)
    return close[0] if close else None


def _separators(body: str, offset: int) -> tuple[str, str, bool]:
    """Judge the separators of a digit run: ``(body with thousands separators removed, the
    decimal separator or '', whether thousands separators were removed)``.

    One separator that appears once is a decimal one (``2,30``; ``1,000`` is judged ambiguous
    by the caller). Thousands separators are read only where nothing else is possible: the same
    separator more than once (``1,234,567``, ``1.234.567``), or both kinds with the decimal one
    last (``12,345.6``, ``1.234,5``), each group of exactly three digits after a first group of
    one to three.
    """
    points, commas = body.count("."), body.count(",")
    if not (points > 1 or commas > 1 or (points and commas)):
        return body, "." if points else "," if commas else "", False
    last = max(body.rfind("."), body.rfind(","))
    tail_separator = body[last]
    thousands = "," if tail_separator == "." else "."
    if points and commas and body.count(tail_separator) == 1:
        head, tail = body[:last], body[last + 1 :]
    elif not (points and commas):
        head, tail, tail_separator, thousands = body, "", "", tail_separator
    else:
        head, tail = body, ""
    groups = head.replace(" ", "").split(thousands)
    if (
        (tail_separator and tail_separator in head)
        or not 1 <= len(groups[0]) <= 3
        or not all(len(g) == 3 and g.isdigit() for g in groups[1:])
        or not groups[0].isdigit()
    ):
        if points and commas:
            raise AnswerParseError(
                f"{body} mixes '.' and ',' (mixed separators) in a way that is not a thousands "
                "separator; write the number with a decimal point only, e.g. 1000.5.",
                offset,
            )
        kind = "decimal point" if thousands == "." else "comma"
        raise AnswerParseError(
            f"{body} has more than one {kind}, not in groups of three digits; write numbers "
            "without thousands separators.",
            offset,
        )
    plain = "".join(groups)
    if tail_separator:
        return f"{plain}{tail_separator}{tail}", tail_separator, True
    return plain, "", True


def _grouped(part: str, *, first: bool) -> bool:
    """Whether spaces in a digit run are digit grouping: "30 000", or "539 816 3" after a point."""
    if " " not in part:
        return True
    groups = part.split(" ")
    if first:
        return 1 <= len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:])
    return all(len(g) == 3 for g in groups[:-1]) and 1 <= len(groups[-1]) <= 3


# --- parse ------------------------------------------------------------------------------------

_ATOM_START = frozenset({"num", "name", "func", "const", "("})


class _Parser:
    """Recursive descent; precedence low to high: + -, * / (and implicit *), unary sign, ^."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.depth = 0
        self.nodes = 0

    # token helpers
    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def take(self) -> _Token:
        token = self.peek()
        self.pos += 1
        return token

    def node(self, node: _Node) -> _Node:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise AnswerParseError(
                f"The expression is too complex (more than {MAX_NODES} parts).", node.offset
            )
        return node

    def nested(self, offset: int) -> _Nesting:
        return _Nesting(self, offset)

    # grammar
    def parse(self) -> _Node:
        tree = self.sum()
        token = self.peek()
        if token.kind != "end":
            raise AnswerParseError(self.unexpected(token), token.offset)
        return tree

    def sum(self) -> _Node:
        tree = self.product()
        while self.peek().kind == "op" and self.peek().text in "+-":
            op = self.take()
            tree = self.node(_Binary(op.text, tree, self.product(), op.offset))
        return tree

    def product(self) -> _Node:
        tree = self.signed()
        while True:
            token = self.peek()
            if token.kind == "op" and token.text in "*/":
                self.take()
                tree = self.node(_Binary(token.text, tree, self.signed(), token.offset))
            elif token.kind in _ATOM_START:
                # Implicit multiplication: "8 ln 2", "2(3)", "(2)(3)", "2 pi", "2e".
                if token.kind == "num" and self.tokens[self.pos - 1].kind == "num":
                    raise AnswerParseError(_TWO_NUMBERS, token.offset)
                tree = self.node(_Binary("*", tree, self.power(), token.offset))
            else:
                return tree

    def signed(self) -> _Node:
        token = self.peek()
        if token.kind == "op" and token.text in "+-":
            self.take()
            with self.nested(token.offset):
                return self.node(_Unary(token.text, self.signed(), token.offset))
        return self.power()

    def power(self) -> _Node:
        base = self.factorial(self.atom())
        token = self.peek()
        if token.kind == "op" and token.text == "^":
            self.take()
            with self.nested(token.offset):
                # Right-associative, and the exponent may carry a sign: 2^3^2 = 2^9, 10^-3.
                return self.node(_Binary("^", base, self.signed(), token.offset))
        return base

    def factorial(self, base: _Node) -> _Node:
        """``n!``: binds tighter than ``^`` (``2^3!`` is 2^6) and than a sign (``-3!`` is −6)."""
        token = self.peek()
        if token.kind == "op" and token.text == "!":
            self.take()
            return self.node(_Call(STUDENT_FUNCTIONS["factorial"], (base,), token.offset))
        return base

    def atom(self) -> _Node:
        token = self.take()
        if token.kind == "num":
            assert token.num is not None
            return self.node(token.num)
        if token.kind == "const":
            assert token.constant is not None
            return self.node(_Const(token.constant, token.offset))
        if token.kind == "name":
            return self.node(_Name(token.text, token.offset))
        if token.kind == "(":
            with self.nested(token.offset):
                if self.peek().kind == ")":
                    raise AnswerParseError("Empty parentheses.", token.offset)
                inner = self.sum()
                self.close(token)
            return inner
        if token.kind == "func":
            return self.call(token)
        self.pos -= 1
        raise AnswerParseError(self.unexpected(token), token.offset)

    def close(self, opening: _Token) -> None:
        token = self.peek()
        if token.kind == ")":
            self.take()
            return
        if token.kind == "end":
            raise AnswerParseError("A '(' is never closed; add ')'.", opening.offset)
        if token.kind == ",":
            raise AnswerParseError(
                "Unexpected ','; write decimals as 2.30 or 2,30 (no space).", token.offset
            )
        raise AnswerParseError(self.unexpected(token), token.offset)

    def call(self, token: _Token) -> _Node:
        function = token.function
        assert function is not None
        if self.peek().kind == "(":
            opening = self.take()
            with self.nested(opening.offset):
                args: list[_Node] = []
                if self.peek().kind != ")":
                    args.append(self.sum())
                    while self.peek().kind == ",":
                        comma = self.take()
                        if function.max_args == 1:
                            message = (
                                _ONE_ARGUMENT
                                if function in STUDENT_FUNCTIONS.values()
                                else f"{function.name}() takes one argument."
                            )
                            raise AnswerParseError(message, comma.offset)
                        args.append(self.sum())
                self.close(opening)
            self.check_arity(function, len(args), token)
            return self.node(_Call(function, tuple(args), token.offset))
        return self.bare_call(token, function)

    def bare_call(self, token: _Token, function: Function) -> _Node:
        """``ln 10``: a one-argument function applied to a single number, name or constant."""
        name = function.name
        argument = self.peek()
        if function.max_args != 1:
            raise AnswerParseError(f"Write {name}(...) with parentheses.", token.offset)
        if argument.kind == "func":
            raise AnswerParseError(
                f"Use parentheses with nested functions, e.g. {name}({argument.text}(2)).",
                argument.offset,
            )
        if argument.kind not in {"num", "name", "const"}:
            raise AnswerParseError(
                f"{name} needs its argument in parentheses here, e.g. {name}(10).", token.offset
            )
        with self.nested(token.offset):
            arg = self.atom()
        after = self.peek()
        if after.kind == "op" and after.text == "^":
            raise AnswerParseError(
                f"{token.text} {argument.text}^... is ambiguous; use parentheses: "
                f"{name}({argument.text}^2) or {name}({argument.text})^2.",
                after.offset,
            )
        if after.kind == "op" and after.text == "!":
            raise AnswerParseError(
                f"{token.text} {argument.text}! is ambiguous; use parentheses: "
                f"{name}({argument.text}!) or {name}({argument.text})!.",
                after.offset,
            )
        if after.kind in _ATOM_START:
            raise AnswerParseError(
                f"{token.text} {argument.text} {after.text}... is ambiguous; use parentheses, "
                f"e.g. {name}({argument.text}) * {after.text}.",
                after.offset,
            )
        return self.node(_Call(function, (arg,), token.offset))

    @staticmethod
    def check_arity(function: Function, count: int, token: _Token) -> None:
        if function.min_args <= count and (function.max_args is None or count <= function.max_args):
            return
        if function.max_args == 1:
            raise AnswerParseError(f"{function.name} needs one argument.", token.offset)
        most = "any number of" if function.max_args is None else f"at most {function.max_args}"
        raise AnswerParseError(
            f"{function.name} takes at least {function.min_args} and {most} arguments, "
            f"but got {count}.",
            token.offset,
        )

    @staticmethod
    def unexpected(token: _Token) -> str:
        if token.kind == "end":
            return "The expression ends too early."
        if token.kind == ",":
            return "Unexpected ','; write decimals as 2.30 or 2,30 (no space)."
        if token.kind == ")":
            return "Unexpected ')'."
        return f"Unexpected {token.text!r}."


class _Nesting:
    """Counts one level of nesting for the duration of a ``with`` block."""

    def __init__(self, parser: _Parser, offset: int) -> None:
        self.parser = parser
        self.offset = offset

    def __enter__(self) -> None:
        self.parser.depth += 1
        if self.parser.depth > MAX_DEPTH:
            raise AnswerParseError(
                f"The expression is nested too deeply (more than {MAX_DEPTH} levels).", self.offset
            )

    def __exit__(self, *exc: object) -> None:
        self.parser.depth -= 1


def _walk(node: _Node) -> Iterator[_Node]:
    yield node
    if isinstance(node, _Unary):
        yield from _walk(node.operand)
    elif isinstance(node, _Binary):
        yield from _walk(node.left)
        yield from _walk(node.right)
    elif isinstance(node, _Call):
        for arg in node.args:
            yield from _walk(arg)


def _scientific(tree: _Node) -> _Node:
    """``1.5 × 10^-3`` (or ``1.5 x 10^-3``, ``1.5·10⁻³``) as a whole answer is the number
    ``1.5e-3``: read with the digits typed, as e-notation is."""
    sign = tree.op if isinstance(tree, _Unary) else ""
    body = tree.operand if isinstance(tree, _Unary) else tree
    if (
        not sign
        and isinstance(body, _Binary)
        and isinstance(body.left, _Unary)
        and isinstance(body.left.operand, _Num)
    ):  # "-1.5 × 10^-3" reads as (-1.5) × 10^-3
        sign = body.left.op
        body = _Binary(body.op, body.left.operand, body.right, body.offset)
    if not (isinstance(body, _Binary) and body.op == "*" and isinstance(body.left, _Num)):
        return tree
    power = body.right
    if not (isinstance(power, _Binary) and power.op == "^" and isinstance(power.left, _Num)):
        return tree
    ten, exponent = power.left, power.right
    negative = isinstance(exponent, _Unary) and exponent.op == "-"
    if isinstance(exponent, _Unary):
        exponent = exponent.operand
    number = body.left
    if not (
        ten.text == "10"
        and isinstance(exponent, _Num)
        and not exponent.decimal
        and "e" not in exponent.text
        and "e" not in number.text
        and len(exponent.text) <= 6
    ):
        return tree
    shift = -int(exponent.text) if negative else int(exponent.text)
    literal = _Num(
        mantissa=number.mantissa,
        exponent=number.exponent + shift if number.mantissa else 0,
        text=f"{number.text}e{shift}",
        decimal=number.decimal,
        decimals=number.decimals - shift,
        sigfigs=number.sigfigs,
        comma=number.comma,
        offset=number.offset,
        grouped=number.grouped,
    )
    scaled = abs(literal.mantissa) and len(str(literal.mantissa)) - 1 + literal.exponent
    if literal.mantissa and not -_MAX_LITERAL_LOG10 <= scaled < _MAX_LITERAL_LOG10:
        raise AnswerParseError(_TOO_BIG, number.offset)
    return _Unary(sign, literal, tree.offset) if sign else literal


def parse(
    text: str,
    *,
    names: Collection[str] = (),
    functions: Mapping[str, Function] = STUDENT_FUNCTIONS,
    constants: Mapping[str, Constant] | None = None,
) -> Parsed:
    """Read text in the expression language, without evaluating it.

    Args:
        text: the raw text (a student answer, a key or a mistake).
        names: free names allowed (author mode): parameters, earlier part ids.
        functions: the function table; keys are the spellings accepted.
        constants: named constants beyond ``e`` and ``pi`` (a bank's or a pack's, such as
            ``g``), each with its exact value.

    Returns:
        The checked expression and how it was read.

    Raises:
        AnswerParseError: the text cannot be read (``offset`` points into ``text``), or a name
            is already a function or constant.
        ValueError: a name is not an identifier (``[a-z_][a-z0-9_]*``).
    """
    name_set = frozenset(names)
    table = {**CONSTANTS, **(constants or {})}
    for name in name_set:
        if not _NAME_RE.fullmatch(name):
            raise ValueError(f"{name!r} cannot be used as a name in expressions")
        if name in functions or name in table:
            # An author's parameter or part id; reported like any other problem in a key.
            raise AnswerParseError(
                f"The name {name!r} is already a function or constant; rename it.", None
            )
    normalized, offsets = _normalize(text, name_set)
    tokens = _Tokenizer(normalized, offsets, name_set, functions, table).tokens()
    tree = _scientific(_Parser(tokens).parse())
    literals = [n for n in _walk(tree) if isinstance(n, _Num)]
    comma = next((n for n in literals if n.comma), None)
    if comma is not None and any(n.decimal and not n.comma for n in literals):
        raise AnswerParseError(
            "Both '.' and ',' are used as decimal separators (mixed separators); use one.",
            comma.offset,
        )
    single = tree.operand if isinstance(tree, _Unary) else tree
    zeros = 0
    if isinstance(single, _Num):
        kind: Literal["decimal", "expression", "mixed"] = "decimal"
        decimals, sigfigs, zeros = single.decimals, single.sigfigs, single.zeros
    else:
        kind = "mixed" if any(n.decimal for n in literals) else "expression"
        decimals = sigfigs = 0
    used = frozenset(n.name for n in _walk(tree) if isinstance(n, _Name))
    canonical = _canonical(tree, name_set, functions, table)
    grouped = any(n.grouped for n in literals)
    return Parsed(text, canonical, kind, decimals, sigfigs, used, tree, grouped, zeros)


# --- conditions (authors only): where: constraints and function requirements ----------------

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
    return mpmath.mpf(10) ** (5 - DPS)


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
        with mpmath.workdps(DPS):
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


# --- print the tree -----------------------------------------------------------------------------


def _precedence(node: _Node) -> int:
    if isinstance(node, _Binary):
        return {"+": 1, "-": 1, "*": 2, "/": 2, "^": 4}[node.op]
    return 3 if isinstance(node, _Unary) else 5


def _render(node: _Node, compact: bool = False) -> str:
    """Print a tree in the language; ``compact`` leaves out every space and optional parenthesis.

    The spaced form (``1 - 2``, ``10^(-3)``, ``-(-2)``) is the one people see; the compact one
    (``1-2``, ``10^-3``, ``--2``) is used when the spaced one could not be typed back, being
    longer than :data:`MAX_LENGTH` or nested deeper than :data:`MAX_DEPTH`.
    """
    if isinstance(node, _Num):
        return node.text
    if isinstance(node, _Const):
        return node.constant.name
    if isinstance(node, _Name):
        return node.name
    if isinstance(node, _Call):
        separator = "," if compact else ", "
        return f"{node.function.name}({separator.join(_render(a, compact) for a in node.args)})"
    if isinstance(node, _Unary):
        operand = node.operand
        wrap = _precedence(operand) <= 3 and not (compact and isinstance(operand, _Unary))
        return node.op + _wrap(operand, wrap, compact)
    level = _precedence(node)
    if node.op == "^":
        left = _wrap(node.left, _precedence(node.left) <= 4, compact)
        # The exponent may carry its sign (the grammar reads 10^-3): compact leaves it bare.
        signed_exponent = compact and isinstance(node.right, _Unary)
        right = _wrap(node.right, _precedence(node.right) < 4 and not signed_exponent, compact)
        return f"{left}^{right}"
    left = _wrap(node.left, _precedence(node.left) < level, compact)
    # A signed right operand needs no parentheses: "1 - -2", "2*-3" read back the same.
    signed = isinstance(node.right, _Unary)
    right = _wrap(node.right, _precedence(node.right) <= level and not signed, compact)
    return f"{left} {node.op} {right}" if level == 1 and not compact else f"{left}{node.op}{right}"


def _wrap(node: _Node, parenthesize: bool, compact: bool = False) -> str:
    text = _render(node, compact)
    return f"({text})" if parenthesize else text


def _canonical(
    tree: _Node,
    names: frozenset[str],
    functions: Mapping[str, Function],
    constants: Mapping[str, Constant],
) -> str:
    """How a tree was read, in text that reads back as the same tree (see :func:`_render`)."""
    spaced = _render(tree)
    if _readable(spaced, names, functions, constants):
        return spaced
    return _render(tree, compact=True)


def _readable(
    text: str,
    names: frozenset[str],
    functions: Mapping[str, Function],
    constants: Mapping[str, Constant],
) -> bool:
    """Whether our own printed text is within the parser's limits (parsed again only when it
    may not be: parentheses around a signed exponent add a level per sign)."""
    if len(text) > MAX_LENGTH:
        return False
    if sum(text.count(ch) for ch in "(^+-") <= MAX_DEPTH:  # each level needs one of these
        return True
    try:
        normalized, offsets = _normalize(text, names)
        _Parser(_Tokenizer(normalized, offsets, names, functions, constants).tokens()).parse()
    except AnswerParseError:
        return False
    return True


# --- evaluate (mpmath) ----------------------------------------------------------------------------


def _guard(x: Any, offset: int | None) -> mpf:
    """Every intermediate value: a real, finite mpf with 2**-4096 <= |x| < 2**4096 (or 0)."""
    if not isinstance(x, mpmath.mpf):
        if isinstance(x, int | float):
            x = mpmath.mpf(x)
        else:
            raise AnswerParseError("The result is not a real number.", offset)
    if not mpmath.isfinite(x):
        raise AnswerParseError("The result is not a finite number.", offset)
    if x and not _tiny() <= abs(x) < _big():
        raise AnswerParseError(_TOO_BIG, offset)
    return x


def _literal(node: _Num) -> mpf:
    if node.exponent >= 0:
        return mpmath.mpf(node.mantissa * 10**node.exponent)
    return mpmath.mpf(node.mantissa) / 10 ** (-node.exponent)


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
        return mpmath.mpf(0)
    if a < 0 and not mpmath.isint(b):
        raise AnswerParseError("A negative number cannot be raised to a fractional power.", offset)
    # Bound the result before computing it: |a^b| = 2^(b·log2|a|).
    if abs(b) * abs(mpmath.log(abs(a), 2)) > MAX_LOG2:
        raise AnswerParseError(_TOO_BIG, offset)
    return mpmath.power(a, b)


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
                value = mpmath.mpf(value.numerator) / value.denominator
            number = value if isinstance(value, mpmath.mpf) else mpmath.mpf(value)
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


def exact_node(parsed: Parsed, env: Mapping[str, Any]) -> sympy.Expr:
    """The exact form of an expression inside an exact evaluation under way (a written
    function's body): the same guarded walk as :func:`to_sympy`."""
    exact, _ = _sym_eval(parsed.tree, env)
    return exact


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
    with mpmath.workdps(DPS):
        return _mp_eval(parsed.tree, _mp_env(env))


# --- to_sympy (exact) -------------------------------------------------------------------------


def exact_bits(expr: sympy.Expr) -> int:
    """Size of the largest exact rational inside ``expr``, in bits."""
    sizes = [
        max(abs(int(r.p)).bit_length(), int(r.q).bit_length()) for r in expr.atoms(sympy.Rational)
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
        for power in expr.atoms(sympy.Pow):
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
    if m <= 1 or sympy.integer_nthroot(m, q)[1]:
        return 0
    power = sympy.perfect_power(m)
    factors = (
        {int(power[0]): int(power[1])}
        if power
        else {int(k): int(v) for k, v in sympy.Integer(m).factors(limit=2**15).items()}
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
    for factor in sympy.Mul.make_args(a):
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
    left = [f.as_base_exp() for f in sympy.Mul.make_args(a) if f.is_Pow]
    right = [f.as_base_exp() for f in sympy.Mul.make_args(b) if f.is_Pow]
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
        for r in b.atoms(sympy.Rational):
            _root_guard(a, r, offset)
    # (e^u)^b is e^(u·b), and e^(c·ln a) is a^c: (exp(0.5918))^ln(N) becomes N^0.5918.
    for factor in sympy.Mul.make_args(a):
        if factor is sympy.E:
            _exp_guard(b, offset)
        elif isinstance(factor, sympy.exp):
            _exp_guard(factor.args[0] * b, offset)


def _checked(expr: sympy.Expr, offset: int) -> sympy.Expr:
    if exact_bits(expr) > EXACT_BITS:
        raise ExactLimitError(_TOO_MANY_DIGITS, offset)
    if root_size(expr) > ROOT_COST:
        degree = max(
            int(power.args[1].q)
            for power in expr.atoms(sympy.Pow)
            if power.args[0].is_Rational and power.args[1].is_Rational
        )
        raise _root_refusal(degree, offset)
    return expr


def _sym_power(a: sympy.Expr, b: sympy.Expr, offset: int) -> sympy.Expr:
    _power_guard(a, b, offset)
    return a**b


def _sym_value(name: str, value: Any, offset: int) -> tuple[sympy.Expr, mpf | None]:
    if isinstance(value, Fraction):  # a variant's parameter or rational derived value
        value = sympy.Rational(value.numerator, value.denominator)
    if isinstance(value, bool) or not isinstance(value, sympy.Basic | int):
        raise AnswerParseError(f"{name} has no exact value.", offset)
    expr = sympy.Integer(value) if isinstance(value, int) else value
    if not expr.free_symbols:
        approx = expr.evalf(DPS)
        if not (approx.is_Number and approx.is_finite and approx.is_extended_real):
            raise AnswerParseError(f"{name} is not a finite real number.", offset)
        return expr, _guard(mpmath.mpf(approx), offset)
    return expr, None


def _sym_eval(node: _Node, env: Mapping[str, Any]) -> tuple[sympy.Expr, mpf | None]:
    """The exact form of a node, and its guarded mpmath value (None if it has free symbols)."""
    check_budget(node.offset)
    if isinstance(node, _Num):
        exact = sympy.Rational(
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
    with mpmath.workdps(DPS):
        exact, _ = _sym_eval(parsed.tree, env or {})
    if exact.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
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
    from sympy.printing.str import StrPrinter

    class _Printer(StrPrinter):  # type: ignore[misc]  # sympy is untyped
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


# --- student answers -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    """A student answer that could be read."""

    parsed: Parsed
    value: mpf
    read_as: str
    """How it was read: ``ln(10) ≈ 2.302585``; a plain decimal reads as itself, ``2.30``."""
    unit: str = ""
    """The unit typed after the number (``m/s``, ``%``, ``nats``), as normalized; '' for none.
    Whether it is a unit, and which, is the answer engine's to judge against the question's
    units (:mod:`quizgym.units`)."""
    fallback: ParseFailure | None = None
    """For an answer read with a unit: why the whole text does not read as an expression, the
    failure to report when the unit turns out to be no unit (``2 foo``)."""
    typed: str = ""
    """The answer as typed, normalized (``12,345.6``), when it was read with thousands
    separators; '' otherwise."""

    @functools.cached_property
    def number(self) -> float:
        """``float(value)``, worked out once (a class's answers are compared as floats)."""
        return float(self.value)


@dataclass(frozen=True)
class ParseFailure:
    """A student answer that could not be read (the response is invalid, no attempt used)."""

    message: str
    offset: int | None
    pointer: str
    """The answer around ``offset`` and a caret under it (empty without an offset)."""


def _pointer(source: str, offset: int | None, width: int = 12) -> str:
    if offset is None:
        return ""
    offset = max(0, min(offset, len(source)))
    lo, hi = max(0, offset - width), min(len(source), offset + width)
    excerpt = "".join(ch if ch.isprintable() else " " for ch in source[lo:hi])
    lead = "..." if lo else ""
    tail = "..." if hi < len(source) else ""
    return f"{lead}{excerpt}{tail}\n{' ' * (len(lead) + offset - lo)}^"


@functools.lru_cache(maxsize=65536)
def read_answer(text: str) -> Reading | ParseFailure:
    """Read and evaluate a student's answer (memoized: a pure function of the text, and answers
    repeat heavily across a class).

    Args:
        text: the raw answer.

    Returns:
        A :class:`Reading`, or a :class:`ParseFailure` whose message starts "Your answer".
    """
    plain = _read_plain(text)
    if plain is not None:
        return plain
    return _read_parsed(text)


_PLAIN_PREC = 103
"""mpmath's precision in bits at DPS digits (``mpmath.libmp.dps_to_prec(30)``)."""
PLAIN_NUMBER = re.compile(
    r"(?P<lead> *(?:= *)?)(?P<sign>[+-]?)(?P<whole>[0-9]{1,15})"
    r"(?:(?P<sep>[.,])(?P<frac>[0-9]{1,15}))? *"
)
"""A plain decimal as most students type it: ``2.30``, ``-0.5``, ``12``, ``2,30`` (no exponent,
no grouping, at most 15 digits each side, ASCII spaces around, after an ``=`` or not). Read whole
(``fullmatch``); the batch grader runs the same pattern over a column in pyarrow (RE2)."""


def _read_plain(text: str) -> Reading | None:
    """:func:`read_answer` of a plain decimal without the tokenizer and the parser (a few µs
    instead of tens): the same tree, reading and value, built directly; None for anything else
    (which takes the full path). ``tests/test_fast_paths.py`` holds the two paths equal.
    """
    match = PLAIN_NUMBER.fullmatch(text) if len(text) <= MAX_LENGTH else None
    if match is None:
        return None
    lead, sign, whole, separator, fraction = match.groups()
    fraction = fraction or ""
    if separator == "," and len(fraction) == 3:
        return None  # "2,302": a thousands separator or a decimal comma; the parser refuses it
    digits = whole + fraction
    mantissa = int(digits)
    significant = digits.lstrip("0")
    offset = len(lead) + len(sign)
    num = _Num(
        mantissa=mantissa,
        exponent=-len(fraction) if mantissa else 0,
        text=whole + ("." + fraction if separator else ""),
        decimal=bool(separator),
        decimals=len(fraction),
        sigfigs=len(significant) if significant else max(1, len(fraction)),
        comma=separator == ",",
        offset=offset,
        zeros=0 if separator else len(whole) - len(whole.rstrip("0")),
    )
    tree: _Node = _Unary(sign, num, len(lead)) if sign else num
    canonical = sign + num.text  # as _canonical prints a signed literal
    parsed = Parsed(
        text, canonical, "decimal", num.decimals, num.sigfigs, frozenset(), tree, False, num.zeros
    )
    # The value _literal gives at DPS digits, rounded once from the exact fraction.
    signed = -mantissa if sign == "-" else mantissa
    scale = 10 ** len(fraction)
    reading = Reading(
        parsed,
        mpmath.mp.make_mpf(
            mpmath.libmp.from_rational(signed, scale, _PLAIN_PREC, mpmath.libmp.round_nearest)
        ),
        canonical,
    )
    reading.__dict__["number"] = signed / scale  # correctly rounded from the exact fraction
    return reading


def _read_parsed(text: str) -> Reading | ParseFailure:
    """:func:`read_answer` through the tokenizer, the parser and the guarded evaluator."""
    stage = "read"
    try:
        parsed = parse(text)
        stage = "evaluated"
        value = evaluate(parsed)
    except AnswerParseError as exc:
        failure = ParseFailure(
            f"Your answer could not be {stage}. {exc.message}",
            exc.offset,
            _pointer(text, exc.offset),
        )
        split = _split_unit(text) if stage == "read" else None
        if split is None:
            return failure
        head, unit = split
        found = read_answer(head)
        if not isinstance(found, Reading):
            return failure
        read_as = found.read_as + (unit if unit == "%" else f" {unit}")
        return Reading(
            found.parsed, found.value, read_as, unit=unit, fallback=failure, typed=found.typed
        )
    typed = _normalize(text)[0] if parsed.grouped and parsed.kind == "decimal" else ""
    read_as = _plain_read_as(parsed, value)
    if typed:  # say how the separators were read: "12,345.6 read as 12345.6"
        read_as = f"{typed} read as {read_as}"
    return Reading(parsed, value, read_as, typed=typed)


def _plain_read_as(parsed: Parsed, value: mpf) -> str:
    """How an answer (without its unit) was read: ``2.30``, ``ln(10) ≈ 2.302585``."""
    if parsed.kind == "decimal" and "e" not in parsed.canonical:
        read_as = parsed.canonical
    else:
        shown = format_value(value)
        with mpmath.workdps(DPS):
            same = mpmath.mpf(shown) == value  # our own digits, not the student's text
        read_as = f"{parsed.canonical} {'=' if same else '≈'} {shown}"
    return read_as


MAX_UNIT_LENGTH = 40
"""Longest unit read after a number (``kg m^2 s^-2``), in characters."""
_MAX_UNIT_FACTORS = 8
_UNIT_WORD_RE = re.compile(r"%|[A-Za-z][A-Za-z_]*")
_UNIT_POWER_RE = re.compile(r"\^(?:-?[0-9]|\(-?[0-9]\))|-?[0-9](?![0-9])")
"""A factor's power: ``^2``, ``^-1``, ``^(-1)``, or written straight after the letters as
students do (``s-1``, ``m2``, ``ms-2``)."""
_UNIT_PAREN_POWER_RE = re.compile(r"\^\((-?[0-9])\)")  # s⁻¹ normalizes to s^(-1): show s^-1
_UNIT_BARE_POWER_RE = re.compile(r"(?<=[A-Za-z])(-?[0-9])")  # s-1 and m2: show s^-1 and m^2
_UNIT_DOT_RE = re.compile(r"(?<=[A-Za-z0-9)])\.(?=[A-Za-z(])")  # m.s^-1: show m*s^-1


def _split_unit(text: str) -> tuple[str, str] | None:
    """Split ``10 m/s`` into the number ``10`` and the unit ``m/s``: the longest tail of words
    (with small integer powers, joined by spaces, ``*`` or ``/``) after which the rest reads.

    Only the shape is judged here; whether the words name a unit is for the units library, which
    the answer engine asks with the question's own units. The constants ``e`` and ``pi`` are
    never unit words (``5 pi rad`` is 5π radians).
    """
    try:
        normalized, offsets = _normalize(text)
    except AnswerParseError:
        return None
    for i in range(1, len(normalized)):
        if len(normalized) - i > MAX_UNIT_LENGTH:
            continue
        before, here = normalized[i - 1], normalized[i]
        if not (here.isalpha() or here == "%") or before.isalpha() or before == "_":
            continue
        tail = normalized[i:].strip()
        if tail and _is_unit(tail):
            head = text[: offsets[i]]
            if head.strip():
                return head, _unit_text(tail)
    return None


def _unit_text(tail: str) -> str:
    """A unit as read, in the spelling the units library takes and answers show: ``s^-1`` for
    ``s^(-1)`` and ``s-1``, ``m^2`` for ``m2``, ``m*s^-1`` for ``m.s^-1``."""
    tail = _UNIT_PAREN_POWER_RE.sub(r"^\1", tail)
    tail = _UNIT_BARE_POWER_RE.sub(r"^\1", tail)
    return _UNIT_DOT_RE.sub("*", tail)


def _is_unit(text: str) -> bool:
    """Whether text has the shape of a unit: ``m/s``, ``m s^-1``, ``kg*m/s^2``, ``J/(kg K)``,
    ``m.s^-1``, ``m s-1``."""
    i, n, factors, depth = 0, len(text), 0, 0
    want_factor = True
    while i < n:
        if want_factor:
            if text[i] == "(" and not depth:
                depth, i = 1, i + 1
                continue
            word = _UNIT_WORD_RE.match(text, i)
            if word is None or word.group().lower() in CONSTANTS:
                return False
            i, factors, want_factor = word.end(), factors + 1, False
            power = _UNIT_POWER_RE.match(text, i)
            if power is not None:
                i = power.end()
            continue
        if text[i] == ")" and depth:
            depth, i = 0, i + 1
            power = _UNIT_POWER_RE.match(text, i)
            if power is not None:
                i = power.end()
            continue
        operators = 0
        start = i
        while i < n and text[i] in " */.":
            operators += text[i] != " "
            i += 1
        if i in (start, n) or operators > 1:
            return False
        want_factor = True
    return not want_factor and not depth and factors <= _MAX_UNIT_FACTORS


def format_value(x: mpf | float, digits: int = 7) -> str:
    """Show a value to ``digits`` significant figures, without trailing zeros.

    ``2.302585``, ``0.1053605``, ``1e8``, ``1.234568e-7``: always text our language reads back.
    """
    with mpmath.workdps(max(DPS, digits + 5)):
        value = mpmath.mpf(x)
        if mpmath.isnan(value):
            return "nan"
        if mpmath.isinf(value):
            return "inf" if value > 0 else "-inf"
        if not value:
            return "0"
        text: str = mpmath.nstr(value, digits)
    return tidy_digits(text)


def tidy_digits(text: str) -> str:
    """``mpmath.nstr``'s text as :func:`format_value` shows it: no trailing zeros after the
    point, no ``+`` nor leading zeros in the exponent (``1.50000e+05`` → ``1.5e5``)."""
    mantissa, _, exponent = text.partition("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    if exponent:
        sign = "-" if exponent.startswith("-") else ""
        return f"{mantissa}e{sign}{exponent.lstrip('+-').lstrip('0') or '0'}"
    return mantissa
