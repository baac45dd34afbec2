"""Domain functions, exact keys and per-student variants.

Keys are written in the expression language (:mod:`quizgym.expr`) and become exact sympy
expressions, so the key to ``mlm_loss(0.2, 0.5)`` reads ``ln 10 ≈ 2.3026``. Variants are drawn
deterministically from (bank, question, student, seed): the same inputs give the same numbers on
paper, in the LMS export, in the drill and in the grader, because all of them call
:func:`variant_of`.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import mpmath
import numpy as np
import numpy.typing as npt
import sympy

from quizgym.arrays import group
from quizgym.errors import AnswerParseError, BankError, Finding
from quizgym.expr import (
    DPS,
    STUDENT_FUNCTIONS,
    Function,
    Parsed,
    calls,
    evaluate,
    format_value,
    parse,
    to_sympy,
    to_text,
)
from quizgym.model import (
    PLACEHOLDER,
    AnyQuestion,
    Bank,
    MultipleChoice,
    Numeric,
    Param,
    ParamChoices,
    ParamRange,
    Part,
    SpotTheError,
    Tolerance,
    TrueFalse,
    placeholders,
    points_of,
)

# --- domain functions ----------------------------------------------------------------------------


def _probability_mp(p: Any) -> Any:
    if not 0 < p <= 1:
        raise AnswerParseError(f"a probability must lie in (0, 1], got {format_value(p)}")
    return p


def _probability_sym(p: sympy.Expr) -> sympy.Expr:
    if not (p.is_number and 0 < p <= 1):
        raise AnswerParseError(f"a probability must lie in (0, 1], got {p}")
    return p


def _mlm_mp(*ps: Any) -> Any:
    return -mpmath.fsum(mpmath.log(_probability_mp(p)) for p in ps) if ps else mpmath.mpf(0)


def _mlm_sym(*ps: sympy.Expr) -> sympy.Expr:
    return -sympy.Add(*(sympy.log(_probability_sym(p)) for p in ps))


def _vocab_mp(v: Any) -> Any:
    if v < 1:
        raise AnswerParseError(f"a vocabulary size must be at least 1, got {format_value(v)}")
    return mpmath.log(v)


def _vocab_sym(v: sympy.Expr) -> sympy.Expr:
    if not (v.is_number and v >= 1):
        raise AnswerParseError(f"a vocabulary size must be at least 1, got {v}")
    return sympy.log(v)


def _round_half_up_mp(x: Any) -> Any:
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


# --- keys -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    """An exact key: the sympy form, its 30-digit value and how it reads."""

    exact: sympy.Expr
    value: mpmath.mpf

    @property
    def number(self) -> float:
        """The key as a float, for comparisons."""
        return float(self.value)

    @cached_property
    def text(self) -> str:
        """The exact form in our notation, e.g. ``ln 10``, ``8 ln 2``, ``4.8`` (not ``24/5``)."""
        if _is_terminating(self.exact):
            return format_value(self.value, 15)
        return display(self.exact)

    def __str__(self) -> str:
        return self.shown

    @cached_property
    def shown(self) -> str:
        """How the key is shown to people: ``ln 10 ≈ 2.3026``, ``1.5``, ``6``."""
        approx = format_value(self.value, 5)
        exact = self.text
        if _is_terminating(self.exact):
            return format_value(self.value, 15)
        return approx if exact == approx or _is_plain_number(exact) else f"{exact} ≈ {approx}"


def _is_terminating(expr: sympy.Expr) -> bool:
    """A rational with a finite decimal expansion (3/2 → 1.5): shown as that decimal."""
    if not expr.is_Rational:
        return False
    q = int(expr.q)
    for prime in (2, 5):
        while q % prime == 0:
            q //= prime
    return q == 1


def _is_plain_number(text: str) -> bool:
    return re.fullmatch(r"-?\d+(\.\d+)?", text) is not None


def display(expr: sympy.Expr) -> str:
    """Print an exact expression for people: ``8*ln(2)`` → ``8 ln 2``, ``ln(10)`` → ``ln 10``."""
    text = to_text(expr)
    text = re.sub(r"\b(ln|log10|log2|exp|sqrt)\((\d+)\)", r"\1 \2", text)
    return re.sub(r"(\d)\*(ln|log10|log2|exp|sqrt|pi|e)\b", r"\1 \2", text)


def tidy(expr: sympy.Expr) -> sympy.Expr:
    """Bring a key into its most readable exact form (``ln 10``, ``8 ln 2``, ``ln(10/9)``).

    A sum of logarithms becomes one multiple of a single log when it can (``8 ln 2``), else one
    log of a rational (``ln(125/24)``); products and quotients are tidied factor by factor, so
    a ratio of losses reads ``ln(10/9)/ln(100/99)``.
    """
    if not expr.has(sympy.log):
        return sympy.nsimplify(expr) if expr.is_Float else expr
    if _is_log_term(expr):
        # Already one logarithm: ln 40000 stays ln 40000 (not 2 ln 200); −ln(9/10) reads ln(10/9).
        coefficient, log = expr.as_coeff_Mul()
        if isinstance(log, sympy.log) and log.args[0].is_Rational and 0 < log.args[0] < 1:
            return -coefficient * sympy.log(1 / log.args[0])
        return expr
    if isinstance(expr, sympy.Mul | sympy.Pow):
        return expr.func(*(tidy(arg) for arg in expr.args))
    expanded = sympy.expand_log(expr, force=True)
    if not isinstance(expanded, sympy.Add):
        return expanded
    combined = sympy.logcombine(expr, force=True)
    if isinstance(combined, sympy.log):
        return combined
    if (
        isinstance(combined, sympy.Mul)
        and combined.args[0] == -1
        and isinstance(combined.args[1], sympy.log)
    ):
        return sympy.log(1 / combined.args[1].args[0], evaluate=True)
    return expr


def _is_log_term(expr: sympy.Expr) -> bool:
    """``c * ln(x)``: a number times one logarithm."""
    if isinstance(expr, sympy.log):
        return True
    if isinstance(expr, sympy.Mul):
        logs = [a for a in expr.args if isinstance(a, sympy.log)]
        return len(logs) == 1 and all(
            a.is_number and not a.has(sympy.log) for a in expr.args if a not in logs
        )
    return False


def to_mpf(expr: sympy.Expr) -> mpmath.mpf:
    """An exact expression as a 30-digit mpmath number (the conversion keeps all 30 digits)."""
    with mpmath.workdps(DPS):
        return mpmath.mpf(sympy.N(expr, DPS))


def exact_key(parsed: Parsed, env: Mapping[str, sympy.Expr]) -> Key:
    """Evaluate a parsed key exactly.

    Raises:
        AnswerParseError: the key cannot be evaluated (e.g. a probability outside (0, 1]).
    """
    exact = tidy(to_sympy(parsed, env))
    value = to_mpf(exact) if exact.is_real else None
    if value is None or not mpmath.isfinite(value):
        raise AnswerParseError(f"the key evaluates to {exact}, not a finite real number")
    return Key(exact=exact, value=value)


# --- variants ---------------------------------------------------------------------------------


def _number(value: float) -> sympy.Rational:
    """An author's decimal as the exact rational it was written as (0.2 → 1/5)."""
    return (
        sympy.Rational(repr(float(value)))
        if not float(value).is_integer()
        else sympy.Integer(int(value))
    )


def param_values(param: Param) -> list[sympy.Rational]:
    """Every value a parameter can take; the first is the default."""
    if isinstance(param, ParamChoices):
        return [_number(v) for v in param.choices]
    if isinstance(param, ParamRange):
        start, step = _number(param.min), _number(param.step)
        count = int(sympy.floor((_number(param.max) - start) / step)) + 1
        return [start + k * step for k in range(count)]
    return [_number(param)]


# --- deterministic draws ---------------------------------------------------------------------
#
# A student's variant must be the same on paper, in the LMS export, in the drill and in the grader,
# and the grader draws it for a whole class at once. So the draw is a pure function with a scalar
# form (Python ints) and an array form (NumPy uint64, whose arithmetic wraps like ours masked):
# one SHA-256 per (bank, student, seed), cached, xor a SHA-256 salt per question, then a
# splitmix64 stream: draw k is mix(state + (k + 1)·γ). Parameter k (in name order) takes draw k
# modulo its number of values; a shuffle continues the stream with a Fisher-Yates pass.

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB
_STUDENT_KEYS: dict[tuple[str, str | None, int | None], int] = {}


def _hash64(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _student_digest(bank: str, student: str | None, seed: int | None) -> bytes:
    """SHA-256 of ``bank␟student␟seed`` (empty for None): the one definition of a student's key."""
    return hashlib.sha256(
        f"{bank}\x1f{student or ''}\x1f{'' if seed is None else seed}".encode()
    ).digest()


def student_key(bank: str, student: str | None, seed: int | None) -> int:
    """The 64-bit key of a student and seed in a bank (cached: a class reuses it per question)."""
    ident = (bank, student, seed)
    key = _STUDENT_KEYS.get(ident)
    if key is None:
        if len(_STUDENT_KEYS) > 1_000_000:
            _STUDENT_KEYS.clear()
        key = _STUDENT_KEYS[ident] = int.from_bytes(_student_digest(*ident)[:8], "big")
    return key


def student_keys(
    bank: str, students: Sequence[str | None], seeds: Sequence[int | None]
) -> npt.NDArray[np.uint64]:
    """:func:`student_key` of a whole class at once (one digest each, no per-student cache)."""
    digests = b"".join([_student_digest(bank, s, d) for s, d in zip(students, seeds, strict=True)])
    # Each 32-byte digest is four big-endian 64-bit words; the key is the first.
    return np.frombuffer(digests, dtype=">u8")[::4].astype(np.uint64)


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * _MIX1) & _MASK
    z = ((z ^ (z >> 27)) * _MIX2) & _MASK
    return z ^ (z >> 31)


def _draws(state: int, count: int) -> list[int]:
    return [_mix((state + (k + 1) * _GAMMA) & _MASK) for k in range(count)]


def _mix_array(z: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_MIX1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_MIX2)
    return z ^ (z >> np.uint64(31))


def _draw_array(states: npt.NDArray[np.uint64], k: int) -> npt.NDArray[np.uint64]:
    step = np.array([((k + 1) * _GAMMA) & _MASK], dtype=np.uint64)
    return _mix_array(states + step)


def _shuffle(order: list[int], draws: list[int]) -> None:
    for position, i in enumerate(range(len(order) - 1, 0, -1)):
        j = draws[position] % (i + 1)
        order[i], order[j] = order[j], order[i]


def show_number(value: sympy.Expr) -> str:
    """Show a parameter value the way an author writes it: 0.2, 40, 0.125."""
    if value.is_Integer:
        return str(int(value))
    return format_value(to_mpf(value), 15)


@dataclass(frozen=True)
class Variant:
    """One student's version of a question: parameter values and choice order."""

    question: str
    params: Mapping[str, sympy.Rational] = field(default_factory=dict)
    order: tuple[int, ...] = ()
    """For shuffled choices: ``order[k]`` is the index in the bank of the k-th choice shown."""

    def fill(self, text: str) -> str:
        """Replace ``{name}`` placeholders by this variant's values."""
        if not self.params:
            return text
        return PLACEHOLDER.sub(
            lambda m: show_number(self.params[m[1]]) if m[1] in self.params else m[0], text
        )


def variant_of(
    bank: Bank,
    question: Any,
    *,
    student: str | None = None,
    seed: int | None = None,
) -> Variant:
    """The variant a student sees; the default variant when student and seed are both None.

    Args:
        bank: the bank (its slug enters the draw).
        question: the question.
        student: the student's id.
        seed: the class-wide or per-student seed.
    """
    default = student is None and seed is None
    table = _param_table(bank, question)
    shuffled = isinstance(question, MultipleChoice | SpotTheError) and question.shuffle
    choices = len(question.choices) if isinstance(question, MultipleChoice | SpotTheError) else 0
    order = list(range(choices))
    if default:
        picks = [0] * len(table)
    else:
        state = student_key(bank.bank, student, seed) ^ _question_salt(bank, question.id)
        draws = _draws(state, len(table) + (max(choices - 1, 0) if shuffled else 0))
        picks = [draws[k] % len(values) for k, (_, values) in enumerate(table)]
        if shuffled:
            _shuffle(order, draws[len(table) :])
    params = {name: values[pick] for (name, values), pick in zip(table, picks, strict=True)}
    return Variant(question=question.id, params=params, order=tuple(order))


def _param_table(bank: Bank, question: Any) -> list[tuple[str, list[sympy.Rational]]]:
    """Each parameter's name and values, in name order (cached per bank)."""
    if not isinstance(question, Numeric) or not question.params:
        return []
    memo = bank_memo(bank)
    if ("params", question.id) not in memo:
        memo["params", question.id] = [
            (name, param_values(question.params[name])) for name in sorted(question.params)
        ]
    table: list[tuple[str, list[sympy.Rational]]] = memo["params", question.id]
    return table


def _question_salt(bank: Bank, qid: str) -> int:
    memo = bank_memo(bank)
    if ("salt", qid) not in memo:
        memo["salt", qid] = _hash64(bank.bank, qid, "question")
    salt: int = memo["salt", qid]
    return salt


def varies(bank: Bank, question: Any) -> bool:
    """Whether students can see different versions (parameters with choices, or a shuffle)."""
    shuffled = isinstance(question, MultipleChoice | SpotTheError) and question.shuffle
    return shuffled or any(len(values) > 1 for _, values in _param_table(bank, question))


def variant_codes(
    bank: Bank,
    question: Any,
    *,
    students: Sequence[str | None],
    seeds: Sequence[int | None],
    keys: npt.NDArray[np.uint64] | None = None,
) -> tuple[list[Variant], npt.NDArray[np.int64]]:
    """Draw many students' variants at once: the distinct variants, and each student's index.

    The same draws as :func:`variant_of` (same random streams, same order), without building a
    Variant (and its exact parameter values) per student; a test holds the two to each other.
    Questions that do not vary get one variant for everyone.

    Args:
        bank: the bank.
        question: the question.
        students: the students' ids.
        seeds: their seeds (same length).
        keys: their :func:`student_keys`, when the caller has them already.

    Returns:
        ``(variants, codes)``: ``variants[codes[k]]`` is ``variant_of(..., student=students[k],
        seed=seeds[k])``.
    """
    table = _param_table(bank, question)
    shuffled = isinstance(question, MultipleChoice | SpotTheError) and question.shuffle
    count = len(students)
    if not varies(bank, question):
        return [variant_of(bank, question)], np.zeros(count, dtype=np.int64)
    choices = len(question.choices) if shuffled else 0
    defaults = np.zeros(count, dtype=np.bool_)  # no student and no seed: the default variant
    if None in students:
        defaults = np.fromiter(
            (s is None and d is None for s, d in zip(students, seeds, strict=True)),
            dtype=np.bool_,
            count=count,
        )
    salt = np.uint64(_question_salt(bank, question.id))
    if keys is None:
        keys = student_keys(bank.bank, students, seeds)
    states = keys ^ salt
    columns = [
        _draw_array(states, k) % np.uint64(len(values)) for k, (_, values) in enumerate(table)
    ]
    if shuffled:
        orders = np.tile(np.arange(choices, dtype=np.uint64), (count, 1))
        rows = np.arange(count)
        for position, i in enumerate(range(choices - 1, 0, -1)):
            j = (_draw_array(states, len(table) + position) % np.uint64(i + 1)).astype(np.intp)
            swapped = orders[rows, j].copy()
            orders[rows, j] = orders[:, i]
            orders[:, i] = swapped
        columns.extend(orders[:, c] for c in range(choices))
    draws = np.stack(columns, axis=1) if columns else np.zeros((count, 0), dtype=np.uint64)
    draws[defaults] = np.concatenate(
        [np.zeros(len(table), dtype=np.uint64), np.arange(choices, dtype=np.uint64)]
    )
    # One integer per student (mixed radix over the draws), grouped in O(n) where it fits.
    radices = [len(values) for _, values in table] + [choices] * (draws.shape[1] - len(table))
    if math.prod(radices) < 2**62:
        flat = np.zeros(count, dtype=np.int64)
        for column, radix in zip(draws.T, radices, strict=True):
            flat = flat * radix + column.astype(np.int64)
        _, first, inverse = group(flat)
        unique, codes = draws[first], inverse
    else:
        unique, codes = np.unique(draws, axis=0, return_inverse=True)
    variants = []
    for row in unique:
        params = {name: values[int(row[k])] for k, (name, values) in enumerate(table)}
        order = tuple(int(x) for x in row[len(table) :]) or tuple(
            range(len(question.choices))
            if isinstance(question, MultipleChoice | SpotTheError)
            else ()
        )
        variants.append(Variant(question=question.id, params=params, order=order))
    return variants, np.asarray(codes, dtype=np.int64).reshape(-1)


# --- compiled questions -----------------------------------------------------------------------


@dataclass(frozen=True)
class CompiledMistake:
    """A bank mistake, parsed."""

    parsed: Parsed
    feedback: str
    tag: str | None
    credit: float


@dataclass(frozen=True)
class CompiledPart:
    """The key and mistakes of one answer slot (a question or one of its parts)."""

    id: str | None
    key: Parsed
    mistakes: tuple[CompiledMistake, ...]
    tolerance: Tolerance
    earlier: tuple[str, ...]
    """Earlier part ids this key names (error carried forward applies to them)."""


def slots(question: Numeric) -> list[tuple[str | None, Numeric | Part]]:
    """The answer slots of a numeric question: itself, or each of its parts."""
    if question.parts:
        return [(part.id, part) for part in question.parts]
    return [(None, question)]


@dataclass(frozen=True, kw_only=True)
class Slot:
    """One answer slot: a question, or one part of a multi-part numeric question."""

    id: str
    """``q`` for a question, ``q.part`` for a part: the one spelling of a slot's id."""
    question: AnyQuestion
    part: str | None
    index: int
    """Position among the question's slots (0 for a question without parts)."""
    points: float

    @property
    def kind(self) -> str:
        """The question type (``true_false``, ``multiple_choice``, …)."""
        return str(self.question.type)

    @property
    def options(self) -> list[str]:
        """Labels of the options a student picks from (choice and true/false slots)."""
        if isinstance(self.question, TrueFalse):
            return ["true", "false"]
        if isinstance(self.question, MultipleChoice) and self.question.multiple:
            return []  # several picks per student: no single option to tabulate
        if isinstance(self.question, MultipleChoice | SpotTheError):
            return [c.text for c in self.question.choices]
        return []


def bank_slots(bank: Bank) -> list[Slot]:
    """Every answer slot of a bank, in bank order."""
    out: list[Slot] = []
    for question in bank.questions:
        if isinstance(question, Numeric):
            for index, (pid, slot) in enumerate(slots(question)):
                sid = question.id if pid is None else f"{question.id}.{pid}"
                points = points_of(slot, bank.defaults)
                out.append(Slot(id=sid, question=question, part=pid, index=index, points=points))
        else:
            points = points_of(question, bank.defaults)
            out.append(Slot(id=question.id, question=question, part=None, index=0, points=points))
    return out


def compile_numeric(bank: Bank, question: Numeric) -> tuple[CompiledPart, ...]:
    """Parse every key and mistake of a numeric question (cached per bank object).

    Raises:
        BankError: a key or mistake cannot be parsed, each with its line.
    """
    memo = bank_memo(bank)
    key = ("compiled", question.id)
    if key not in memo:
        memo[key] = _compile(bank, question.id)
    result: tuple[CompiledPart, ...] = memo[key]
    return result


_MEMOS: dict[int, tuple[Bank, dict[Any, Any]]] = {}


def bank_memo(bank: Bank) -> dict[Any, Any]:
    """A cache that lives as long as the bank object (banks are immutable)."""
    entry = _MEMOS.get(id(bank))
    if entry is None or entry[0] is not bank:
        if len(_MEMOS) > 64:
            _MEMOS.clear()
        entry = _MEMOS[id(bank)] = (bank, {})
    return entry[1]


def _compile(bank: Bank, qid: str) -> tuple[CompiledPart, ...]:
    index = next(i for i, q in enumerate(bank.questions) if q.id == qid)
    question = bank.questions[index]
    assert isinstance(question, Numeric)
    findings: list[Finding] = []
    compiled: list[CompiledPart] = []
    names: list[str] = list(question.params)
    for slot_index, (part_id, slot) in enumerate(slots(question)):
        base: tuple[str | int, ...] = ("questions", index)
        if part_id is not None:
            base = (*base, "parts", slot_index)
        key_text = slot.answer
        assert key_text is not None

        def _parse(text: str, loc: tuple[str | int, ...], allowed: list[str]) -> Parsed | None:
            try:
                return parse(text, names=allowed, functions=KEY_FUNCTIONS)
            except AnswerParseError as exc:
                path, line, col = bank.locate(loc)
                findings.append(
                    Finding(
                        path,
                        line,
                        col,
                        f"{question.id}: {'.'.join(map(str, loc[2:]))}: {exc.message}",
                    )
                )
                return None

        key = _parse(key_text, (*base, "answer"), names)
        mistakes = []
        for m_index, mistake in enumerate(slot.mistakes):
            parsed = _parse(mistake.answer, (*base, "mistakes", m_index, "answer"), names)
            if parsed is not None:
                mistakes.append(
                    CompiledMistake(parsed, mistake.feedback, mistake.tag, mistake.credit)
                )
        tolerance = slot.tolerance if slot.tolerance is not None else bank.defaults.tolerance
        if key is not None:
            earlier = tuple(n for n in names if n in key.names and n not in question.params)
            compiled.append(CompiledPart(part_id, key, tuple(mistakes), tolerance, earlier))
        if part_id is not None:
            names.append(part_id)
    if findings:
        raise BankError(findings)
    return tuple(compiled)


def _keys(
    bank: Bank, question: Numeric, params: tuple[tuple[str, sympy.Rational], ...]
) -> tuple[Key, ...]:
    env: dict[str, sympy.Expr] = dict(params)
    keys = []
    for part in compile_numeric(bank, question):
        key = exact_key(part.key, env)
        keys.append(key)
        if part.id is not None:
            env[part.id] = key.exact
    return tuple(keys)


def keys_of(bank: Bank, question: Numeric, variant: Variant) -> tuple[Key, ...]:
    """The exact key of each answer slot for this variant (cached).

    Raises:
        AnswerParseError: a key cannot be evaluated for these parameter values.
    """
    memo = bank_memo(bank)
    key = ("keys", question.id, tuple(sorted(variant.params.items())))
    if key not in memo:
        memo[key] = _keys(bank, question, key[2])
    result: tuple[Key, ...] = memo[key]
    return result


_STEPS = frozenset({"round", "floor", "ceil"})
"""Functions whose result can jump at an exact value: a mistake that calls one is solved exactly."""


def mistake_value(
    bank: Bank, question: Numeric, variant: Variant, index: int, mistake: CompiledMistake
) -> float | None:
    """The value of a mistake of slot ``index`` for one variant, or None when undefined there.

    A mistake is matched within the slot's tolerance, so its 30-digit value from the guarded
    mpmath walker is enough, and much cheaper than an exact form. A mistake that rounds (round,
    floor, ceil) is solved exactly with sympy, like a key, since an exact half decides where it
    lands.
    """
    try:
        if calls(mistake.parsed) & _STEPS:
            return float(
                to_mpf(tidy(to_sympy(mistake.parsed, slot_env(bank, question, variant, index))))
            )
        return float(evaluate(mistake.parsed, slot_values(bank, question, variant, index)))
    except (AnswerParseError, TypeError, ValueError):
        return None


def slot_env(bank: Bank, question: Numeric, variant: Variant, upto: int) -> dict[str, sympy.Expr]:
    """Names visible to slot ``upto``: the parameters and the earlier parts' exact keys."""
    env: dict[str, sympy.Expr] = dict(variant.params)
    keys = keys_of(bank, question, variant)
    for (part_id, _), key in zip(slots(question)[:upto], keys[:upto], strict=True):
        if part_id is not None:
            env[part_id] = key.exact
    return env


def slot_values(bank: Bank, question: Numeric, variant: Variant, upto: int) -> dict[str, Any]:
    """:func:`slot_env` as 30-digit numbers (mpmath), for :func:`~quizgym.expr.evaluate`."""
    with mpmath.workdps(DPS):
        env: dict[str, Any] = {
            name: mpmath.mpf(int(v.p)) / int(v.q) for name, v in variant.params.items()
        }
    keys = keys_of(bank, question, variant)
    for (part_id, _), key in zip(slots(question)[:upto], keys[:upto], strict=True):
        if part_id is not None:
            env[part_id] = key.value
    return env


def carried_forward(
    part: CompiledPart, variant: Variant, earlier_values: Mapping[str, Any]
) -> float | None:
    """A part's key recomputed from the student's own earlier answers (error carried forward)."""
    env: dict[str, Any] = {name: to_mpf(v) for name, v in variant.params.items()}
    for name in part.earlier:
        if name not in earlier_values:
            return None
        env[name] = earlier_values[name]
    try:
        return float(evaluate(part.key, env))
    except AnswerParseError:
        return None


@dataclass(frozen=True)
class Solution:
    """How ``quizgym solve`` reads an expression."""

    read_as: str
    exact: str
    value: mpmath.mpf

    def __str__(self) -> str:
        digits = format_value(self.value, 16)
        lines = [f"read as: {self.read_as}"]
        if self.exact not in {digits, self.read_as}:
            lines.append(f"exact:   {self.exact}")
        lines.append(f"value:   {digits}")
        return "\n".join(lines)


def solve(text: str) -> Solution:
    """Read an expression as the grader does (keys' vocabulary included) and evaluate it.

    Raises:
        AnswerParseError: the text cannot be read or evaluated.
    """
    parsed = parse(text, functions=KEY_FUNCTIONS)
    value = evaluate(parsed)
    try:
        exact = display(tidy(to_sympy(parsed)))
    except AnswerParseError:
        exact = format_value(value, 16)
    return Solution(read_as=parsed.canonical, exact=exact, value=value)


def prompt_of(question: Any, variant: Variant) -> str:
    """The question's prompt with this variant's numbers."""
    return variant.fill(question.prompt)


__all__ = [
    "DOMAIN_FUNCTIONS",
    "KEY_FUNCTIONS",
    "CompiledMistake",
    "CompiledPart",
    "Key",
    "Slot",
    "Variant",
    "bank_slots",
    "carried_forward",
    "compile_numeric",
    "display",
    "exact_key",
    "keys_of",
    "bank_memo",
    "mistake_value",
    "param_values",
    "placeholders",
    "prompt_of",
    "show_number",
    "slot_env",
    "slot_values",
    "slots",
    "solve",
    "student_keys",
    "tidy",
    "variant_codes",
    "variant_of",
    "varies",
]
