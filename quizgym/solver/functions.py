"""A pack's and a bank's functions and constants in, the table of functions its keys may call beyond
the language's own out."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from quizgym import lazy
from quizgym.errors import AnswerParseError
from quizgym.expr import (
    CONSTANTS,
    STEP_FUNCTIONS,
    STUDENT_FUNCTIONS,
    Condition,
    Constant,
    Function,
    Parsed,
    cost,
    evaluate_node,
    exact_node,
    format_value,
    holds,
    parse,
    parse_condition,
)

# The bank format (pydantic) is imported by the functions that read it: ``quizgym solve`` and a
# warm command use the table without it.
if TYPE_CHECKING:
    import sympy
    from mpmath import mpf

    from quizgym.model import FunctionDef

__all__ = [
    "BUILTINS",
    "KEY_FUNCTIONS",
    "MAX_COST",
    "STEP_FUNCTIONS",
    "Definition",
    "FunctionTable",
    "bank_constant",
    "define",
    "function_table",
]

MAX_COST = 2000
"""Most tree nodes one key (or one function call) may evaluate, its functions' bodies
included: 150 nodes of a key may each call a function, but not multiply without bound."""


def _probability_mp(p: mpf) -> mpf:
    if not 0 < p <= 1:
        raise AnswerParseError(f"a probability must lie in (0, 1], got {format_value(p)}")
    return p


def _probability_sym(p: sympy.Expr) -> sympy.Expr:
    if not (p.is_number and 0 < p <= 1):
        raise AnswerParseError(f"a probability must lie in (0, 1], got {p}")
    return p


def _mlm_mp(*ps: mpf) -> mpf:
    return (
        -lazy.mpmath.fsum(lazy.mpmath.log(_probability_mp(p)) for p in ps)
        if ps
        else lazy.mpmath.mpf(0)
    )


def _mlm_sym(*ps: sympy.Expr) -> sympy.Expr:
    return -lazy.sympy.Add(*(lazy.sympy.log(_probability_sym(p)) for p in ps))


BUILTINS: Mapping[str, Function] = {
    "mlm_loss": Function("mlm_loss", 0, None, _mlm_mp, _mlm_sym),
}
"""Functions implemented in code that a pack may make available by name (``builtins:``):
``mlm_loss(p1, …, pk) = −Σ ln pᵢ`` (k ≥ 0: the empty mask set gives 0), which takes any number
of arguments and so cannot be written in the language."""

KEY_FUNCTIONS: Mapping[str, Function] = STUDENT_FUNCTIONS
"""The functions every bank's keys may call: the language's own."""


@dataclass(frozen=True, kw_only=True)
class FunctionTable:
    """A bank's vocabulary beyond parameters: its functions and constants."""

    functions: Mapping[str, Function]
    constants: Mapping[str, Constant]
    refused: frozenset[str] = frozenset()
    """Names of functions the bank defines that were refused (a key calling one says so)."""

    def refusal(self, text: str) -> str:
        """Why text cannot be read when it calls a refused function ('' otherwise)."""
        for name in sorted(self.refused):
            if re.search(rf"\b{re.escape(name)}\s*\(", text):
                return f"it calls {name}, which is refused (see its own finding)"
        return ""

    @classmethod
    def plain(cls) -> FunctionTable:
        """The language's own vocabulary, as a bank without packs or functions has it."""
        return cls(functions=KEY_FUNCTIONS, constants={})

    def parse(self, text: str, names: Sequence[str] = ()) -> Parsed:
        """Parse a key, mistake or derived value with this vocabulary."""
        return parse(text, names=names, functions=self.functions, constants=self.constants)

    def condition(self, text: str, names: Sequence[str] = ()) -> Condition:
        """Parse a condition (``where:``) with this vocabulary."""
        return parse_condition(
            text, names=names, functions=self.functions, constants=self.constants
        )


def bank_constant(name: str, value: float) -> Constant:
    """A named constant of a bank or pack: its decimal, exact (9.81 is 981/100)."""
    exact = Fraction(repr(float(value))) if not float(value).is_integer() else Fraction(int(value))
    with lazy.mpmath.workdps(30):
        number = lazy.mpmath.mpf(exact.numerator) / exact.denominator
    return Constant(name, lambda: number, exact=exact)


@dataclass(frozen=True, kw_only=True)
class Definition:
    """A function written in the expression language, parsed."""

    name: str
    params: tuple[str, ...]
    body: Parsed
    requires: tuple[Condition, ...] = ()
    message: str | None = None


def define(
    head: str,
    spec: FunctionDef,
    *,
    functions: Mapping[str, Function],
    constants: Mapping[str, Constant],
) -> Definition:
    """Parse one ``functions:`` entry, ``"range(v, theta)": "v^2 * sin(2*theta) / g"``.

    Raises:
        AnswerParseError: the head is not ``name(params)``, the name is taken, or the body or a
            condition cannot be read (a function may call only functions defined before it).
    """
    from quizgym.model import FUNCTION_HEAD, FunctionSpec

    match = FUNCTION_HEAD.fullmatch(head.strip())
    if match is None:
        raise AnswerParseError(
            f"{head!r} is not a function head: write name(a, b) with lowercase names"
        )
    name = match[1]
    params = tuple(p.strip() for p in match[2].split(",")) if match[2] else ()
    if name in functions or name in constants or name in CONSTANTS:
        raise AnswerParseError(f"{name} is already a function or constant; rename it")
    if len(set(params)) != len(params):
        raise AnswerParseError(f"{name}: a parameter is named twice")
    body_text = spec.expr if isinstance(spec, FunctionSpec) else spec
    requires = spec.requires if isinstance(spec, FunctionSpec) else []
    try:
        body = parse(body_text, names=params, functions=functions, constants=constants)
        conditions = tuple(
            parse_condition(c, names=params, functions=functions, constants=constants)
            for c in requires
        )
    except AnswerParseError as exc:
        if f"Unknown name {name!r}" in exc.message:
            raise AnswerParseError(
                f"{name} calls itself: a function may call only the language's functions and "
                "functions defined before it (no recursion)"
            ) from None
        raise AnswerParseError(f"{name}: {exc.message}") from None
    message = spec.message if isinstance(spec, FunctionSpec) else None
    if message is not None:
        try:  # filled with the arguments as shown (text) when a condition fails
            message.format_map(dict.fromkeys(params, "1"))
        except (KeyError, IndexError, ValueError, AttributeError) as exc:
            names = ", ".join(f"{{{p}}}" for p in params) or "none"
            raise AnswerParseError(
                f"{name}: its message can name only its parameters ({names}), written "
                f"{{name}} without a format; {type(exc).__name__}: {exc}"
            ) from None
    return Definition(name=name, params=params, body=body, requires=conditions, message=message)


def written_function(definition: Definition) -> Function:
    """The language function of a definition: its body evaluated with its arguments, on both
    the 30-digit and the exact side, its conditions checked first."""
    params = definition.params
    body = definition.body
    body_cost = cost(body)
    if body_cost > MAX_COST:
        raise AnswerParseError(
            f"{definition.name} is too costly: a call evaluates {body_cost} parts (at most "
            f"{MAX_COST}); call fewer functions inside it"
        )

    def check(values: dict[str, mpf]) -> None:
        for condition in definition.requires:
            if not holds(condition, values):
                shown = {k: format_value(v) for k, v in values.items()}
                if definition.message:
                    raise AnswerParseError(definition.message.format_map(shown))
                arguments = ", ".join(f"{k} = {v}" for k, v in shown.items())
                raise AnswerParseError(
                    f"{definition.name} needs {condition.source} (got {arguments})"
                )

    def mp(*args: mpf) -> mpf:
        values = dict(zip(params, args, strict=True))
        check(values)
        return evaluate_node(body, values)

    def sym(*args: sympy.Expr) -> sympy.Expr:
        return exact_node(body, dict(zip(params, args, strict=True)))

    return Function(
        definition.name, len(params), len(params), mp, sym, cost=body_cost, written=True
    )


def function_table(
    *,
    builtins: Sequence[str],
    constants: Sequence[tuple[str, float]],
    functions: Sequence[tuple[str, FunctionDef]],
    problem: Callable[[str, str | int, str], None],
) -> FunctionTable:
    """A bank's vocabulary: the language's functions, the builtins named, the constants and the
    written functions, in order (each may use those before it).

    The language's functions (:data:`quizgym.expr.STUDENT_FUNCTIONS`) are everyone's. A domain pack
    adds functions quizgym implements in code (:data:`BUILTINS`, named in a pack's ``builtins``) and
    functions written in the expression language (``functions:`` of a pack or a bank), with
    constants (``constants:``). :func:`function_table` builds a bank's table from them.

    Written functions are checked as keys are: their bodies are parsed when the bank is compiled,
    may use only their own parameters and constants, and may call only the language's functions, the
    builtins and functions defined before them, so no function can call itself. Each has a *cost*:
    the number of tree nodes a call of it evaluates, its calls' costs included. A function or key
    costing more than :data:`MAX_COST` is refused, so nesting calls cannot multiply the work of a
    key past what the language's own limits allow.

    Args:
        builtins: names from :data:`BUILTINS`.
        constants: (name, value) pairs.
        functions: (head, definition) pairs, in the order they are defined.
        problem: called with (field, key, message) for each entry that cannot be used; the
            entry is left out and the rest go on.
    """
    from quizgym.model import FUNCTION_HEAD, FunctionSpec

    table: dict[str, Function] = dict(KEY_FUNCTIONS)
    named: dict[str, Constant] = {}
    for name in builtins:
        if name not in BUILTINS:
            known = ", ".join(sorted(BUILTINS))
            problem("builtins", name, f"no built-in function {name!r} (there is {known})")
        else:
            table[name] = BUILTINS[name]
    for name, value in constants:
        if name in table or name in CONSTANTS or name in named:
            problem("constants", name, f"{name} is already a function or constant; rename it")
        else:
            named[name] = bank_constant(name, value)
    refused: set[str] = set()
    for head, spec in functions:
        body = spec.expr if isinstance(spec, FunctionSpec) else spec
        match = FUNCTION_HEAD.fullmatch(head.strip())
        calls_refused = FunctionTable(functions=table, constants=named, refused=frozenset(refused))
        reason = calls_refused.refusal(body)
        try:
            if reason:
                raise AnswerParseError(reason)
            definition = define(head, spec, functions=table, constants=named)
            table[definition.name] = written_function(definition)
        except AnswerParseError as exc:
            problem("functions", head, exc.message)
            if match is not None:
                refused.add(match[1])
    return FunctionTable(functions=table, constants=named, refused=frozenset(refused))
