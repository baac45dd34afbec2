"""The expression language's limits, exact-work budgets, errors and shared types (the checked tree,
:class:`Function`, :class:`Reading`), on which its other modules stand."""

from __future__ import annotations

import functools
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

from quizgym import lazy
from quizgym.errors import AnswerParseError

if TYPE_CHECKING:
    import sympy
    from mpmath import mpf


# Threat model (why this package looks the way it does):
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
# - Evaluation runs in this process, without a worker. A worker with rlimits is the usual answer
#   to sympy/mpmath hanging inside one C-level or big-integer call; here nothing reaches such a
#   call: student text never meets sympy (only our tree does, through to_sympy, for keys), every
#   function of the vocabulary bounds its work before doing it (a factorial by the size of its
#   result), and the walker bounds every operation's result before computing it (|b|·log2|a| for
#   powers, the argument of exp) and every intermediate value after it, so each mpmath call works
#   on 30-digit numbers below 2^4096.

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
    return lazy.mpmath.ldexp(1, MAX_LOG2)


@functools.cache
def _tiny() -> mpf:
    return lazy.mpmath.ldexp(1, -MAX_LOG2)


@functools.cache
def _at_53_bits(make: Callable[[], mpf]) -> mpf:
    """A limit made at mpmath's default precision (53 bits), as it was when this module made
    its limits on import: the same number whatever precision is in force on first use."""
    with lazy.mpmath.workprec(53):
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
            return lazy.sympy.Rational(self.exact.numerator, self.exact.denominator)
        value: sympy.Expr = getattr(lazy.sympy, self.symbol)
        return value


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


def format_value(x: mpf | float, digits: int = 7) -> str:
    """Show a value to ``digits`` significant figures, without trailing zeros.

    ``2.302585``, ``0.1053605``, ``1e8``, ``1.234568e-7``: always text our language reads back.
    """
    with lazy.mpmath.workdps(max(DPS, digits + 5)):
        value = lazy.mpmath.mpf(x)
        if lazy.mpmath.isnan(value):
            return "nan"
        if lazy.mpmath.isinf(value):
            return "inf" if value > 0 else "-inf"
        if not value:
            return "0"
        text: str = lazy.mpmath.nstr(value, digits)
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
