"""A bank, a question, a student and a seed in; the student's variant (parameter values and choice
order) out, drawn deterministically, for one student or a whole class."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, overload

import mpmath

from quizgym import lazy
from quizgym.errors import AnswerParseError
from quizgym.expr import (
    DPS,
    Condition,
    Parsed,
    evaluate,
    format_value,
    holds,
    rational_value,
    to_sympy,
)
from quizgym.model import (
    LETTERS,
    PLACEHOLDER,
    AnyQuestion,
    Param,
    ParamChoices,
    ParamRange,
)
from quizgym.solver.draws import (
    ATTEMPT,
    GAMMA,
    MASK,
    MIX1,
    MIX2,
    attempt_state,
    choice_order,
    draw_stream,
    question_salt,
    student_digests,
    student_key,
)
from quizgym.types import choices_of, numeric_of, pairing_of

if TYPE_CHECKING:
    from typing import TypeAlias

    import numpy as np
    import numpy.typing as npt
    import sympy

    Exact: TypeAlias = Fraction | sympy.Expr
    """An exact value: a Fraction when rational, else sympy's exact form (``sqrt(2)``)."""

__all__ = [
    "Draw",
    "ParamValues",
    "Signature",
    "Variant",
    "exact_value",
    "number",
    "param_values",
    "show_number",
    "student_key",
    "keys_of",
    "student_keys",
]

ATTEMPTS = 200
"""Draws tried per student before a question's ``where`` conditions give up (default variant)."""


def _number(value: float) -> Fraction:
    """An author's decimal as the exact rational it was written as (0.2 → 1/5)."""
    return Fraction(repr(float(value))) if not float(value).is_integer() else Fraction(int(value))


class ParamValues(Sequence[Fraction]):
    """Every value a parameter can take, as exact rationals (:class:`~fractions.Fraction`, which
    needs no sympy; exact keys convert them); the first is the default.

    A range's values are computed when asked for (``min + k·step``), so a range of 100,000 values
    costs nothing until a draw picks one.
    """

    __slots__ = ("_count", "_start", "_step", "_values")

    def __init__(self, param: Param) -> None:
        self._values: list[Fraction] | None = None
        if isinstance(param, ParamRange):
            self._start, self._step = _number(param.min), _number(param.step)
            self._count = math.floor((_number(param.max) - self._start) / self._step) + 1
        else:
            choices = param.choices if isinstance(param, ParamChoices) else [param]
            self._values = [_number(v) for v in choices]
            self._count = len(self._values)

    def __len__(self) -> int:
        return self._count

    def __contains__(self, value: object) -> bool:
        """Whether the parameter can take ``value`` (a range is not walked)."""
        if not isinstance(value, Fraction | int):
            return False
        if self._values is not None:
            return value in self._values
        k = (value - self._start) / self._step
        return k.denominator == 1 and 0 <= k < self._count

    @overload
    def __getitem__(self, k: int) -> Fraction: ...

    @overload
    def __getitem__(self, k: slice) -> list[Fraction]: ...

    def __getitem__(self, k: int | slice) -> Fraction | list[Fraction]:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(self._count))]
        if not -self._count <= k < self._count:
            raise IndexError(k)
        k %= self._count
        if self._values is not None:
            return self._values[k]
        return self._start + k * self._step

    def __iter__(self) -> Iterator[Fraction]:
        return (self[k] for k in range(self._count))


def param_values(param: Param) -> ParamValues:
    """Every value a parameter can take; the first is the default."""
    return ParamValues(param)


WHOLE_FORMATS = frozenset("dxXobc")
"""Format types that show only whole numbers (``{n:d}``, ``{n:x}``)."""


def show_number(value: Exact, spec: str | None = None) -> str:
    """Show a parameter or derived value the way an author writes it: 0.2, 40, 0.125; with a
    format spec (``.2f``, ``.0%``), as Python's ``format`` shows it."""
    whole = value.denominator == 1 if isinstance(value, Fraction) else bool(value.is_Integer)
    if spec is not None:
        if whole and spec[-1:] in WHOLE_FORMATS | {"n"}:  # {n:n} of 1234567 is not 1.23457e+06
            return format(int(value), spec)
        if spec[-1:] not in WHOLE_FORMATS:
            return format(float(value), spec)
        # A format for whole numbers cannot show 2.5: it is shown as written (check says so).
    if whole:
        return str(int(value))
    return format_value(number(value), 15)


def number(value: Exact) -> mpmath.mpf:
    """An exact value to 30 digits (the value an exact key's :func:`~quizgym.solver.to_mpf`
    gives)."""
    if isinstance(value, Fraction):
        with mpmath.workdps(DPS):
            return mpmath.mpf(value.numerator) / value.denominator
    from quizgym.solver.keys import to_mpf

    return to_mpf(value)


def exact_value(parsed: Parsed, env: Mapping[str, Exact]) -> Exact:
    """The exact value of an expression over exact values: a Fraction, without sympy, when it
    is arithmetic on rationals; else sympy's exact form (a Fraction again when that is rational).

    Raises:
        AnswerParseError: as :func:`~quizgym.expr.to_sympy`.
    """
    rational = rational_value(parsed, env)
    if rational is not None:
        # The guarded 30-digit walk that to_sympy makes first: the same range and domain errors.
        evaluate(parsed, {k: v for k, v in env.items() if isinstance(v, Fraction)})
        return rational
    exact = to_sympy(parsed, env)
    if exact.is_Rational:
        return Fraction(int(exact.p), int(exact.q))
    return exact


Signature = tuple[tuple[str, Fraction], ...]
"""A variant's parameter values in name order: what its keys depend on."""


@dataclass(frozen=True)
class Variant:
    """One student's version of a question: parameter values and choice order.

    A student's variant must be the same on paper, in the LMS export, in the drill and in the
    grader, and the grader draws it for a whole class at once. So the draw is a pure function of
    (bank, question, student, seed) with a scalar form (Python ints) and an array form (NumPy
    uint64, whose arithmetic wraps like ours masked): one SHA-256 per (bank, student, seed), xor a
    SHA-256 salt per question, then a splitmix64 stream: draw k is mix(state + (k + 1)·γ). Parameter
    k (in name order) takes draw k modulo its number of values; a shuffle continues the stream with
    a Fisher-Yates pass. A test holds the two forms to each other.

    A question's ``derived`` values are computed from its parameters, in order, exactly. Its
    ``where`` conditions reject a draw that breaks one: attempt r ≥ 1 draws again from the state
    mix(state + r·δ), up to :data:`ATTEMPTS` times, and a student whose every attempt breaks a
    condition gets the default variant (``quizgym check`` fails a bank whose default breaks one, or
    whose draws survive too rarely for that to be rare). A question without conditions draws as it
    always did.
    """

    question: str
    params: Mapping[str, Fraction] = field(default_factory=dict)
    order: tuple[int, ...] = ()
    """For shuffled choices: ``order[k]`` is the index in the bank of the k-th choice shown."""
    derived: Mapping[str, Exact] = field(default_factory=dict, compare=False)
    """The question's derived values for these parameters (exact: Fractions where they are
    rational); they follow from ``params``, so they take no part in comparisons or the
    signature."""

    @property
    def values(self) -> dict[str, Exact]:
        """Parameters and derived values: every name a key, prompt or mistake may use."""
        return {**self.params, **self.derived}

    def fill(self, text: str) -> str:
        """Replace ``{name}`` (or ``{name:spec}``) placeholders by this variant's values."""
        if not self.params and not self.derived:
            return text
        values = self.values

        def show(match: re.Match[str]) -> str:
            name, spec = match[1], match[2]
            return show_number(values[name], spec) if name in values else match[0]

        return PLACEHOLDER.sub(show, text)

    @property
    def signature(self) -> Signature:
        """The parameter values in name order: what the keys of this variant depend on."""
        return tuple(sorted(self.params.items()))

    @cached_property
    def label(self) -> str:
        """``p1=0.2, p2=0.5``, ``order BAC`` or ``default``: how reports name a variant (worked
        out once: a review queue names a variant for each of thousands of answers)."""
        if self.params:
            return ", ".join(f"{k}={show_number(v)}" for k, v in self.params.items())
        if self.order:
            return "order " + "".join(LETTERS[i] for i in self.order)
        return "default"


# --- the draws --------------------------------------------------------------------------------


def student_keys(
    bank: str, students: Sequence[str | None], seeds: Sequence[int | None]
) -> npt.NDArray[np.uint64]:
    """:func:`student_key` of a whole class at once (one digest each)."""
    return keys_of(student_digests(bank, students, seeds))


def keys_of(digests: bytes) -> npt.NDArray[np.uint64]:
    """The keys of :func:`student_digests`' digests, one after another."""
    # Each 32-byte digest is four big-endian 64-bit words; the key is the first.
    return lazy.numpy.frombuffer(digests, dtype=">u8")[::4].astype(lazy.numpy.uint64)


def _mix_array(z: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    z = (z ^ (z >> lazy.numpy.uint64(30))) * lazy.numpy.uint64(MIX1)
    z = (z ^ (z >> lazy.numpy.uint64(27))) * lazy.numpy.uint64(MIX2)
    return z ^ (z >> lazy.numpy.uint64(31))


def _draw_array(states: npt.NDArray[np.uint64], k: int) -> npt.NDArray[np.uint64]:
    step = lazy.numpy.array([((k + 1) * GAMMA) & MASK], dtype=lazy.numpy.uint64)
    return _mix_array(states + step)


def _attempt_array(states: npt.NDArray[np.uint64], attempt: int) -> npt.NDArray[np.uint64]:
    if not attempt:
        return states
    return _mix_array(states + lazy.numpy.uint64((attempt * ATTEMPT) & MASK))


@dataclass(frozen=True)
class Draw:
    """What one question's variants are drawn from: its parameters and whether it shuffles."""

    bank: str
    """The bank's slug (it enters every student's key)."""
    question: str
    salt: int
    params: tuple[tuple[str, ParamValues], ...]
    """Each parameter's name and values, in name order."""
    choices: int
    """How many choices the question has (0 for questions without choices)."""
    shuffled: bool
    derived: tuple[tuple[str, Parsed], ...] = ()
    """The derived values, in order, parsed."""
    where: tuple[Condition, ...] = ()
    """Conditions a draw must meet."""

    @classmethod
    def of(
        cls,
        bank: str,
        question: AnyQuestion,
        *,
        derived: Sequence[tuple[str, Parsed]] = (),
        where: Sequence[Condition] = (),
    ) -> Draw:
        """The draw of a question of the bank with this slug, with its derived values and
        conditions parsed (the compiled bank parses them)."""
        params: tuple[tuple[str, ParamValues], ...] = ()
        numeric = numeric_of(question)
        if numeric is not None:
            own = numeric.question.params
            params = tuple((n, ParamValues(own[n])) for n in sorted(own))
        choices, shuffled = 0, False
        options = choices_of(question)
        pairing = pairing_of(question)
        if options is not None and options.lettered:
            choices, shuffled = len(options.choices), options.shuffle
        elif pairing is not None:  # one order of the answers, for every item
            choices, shuffled = len(pairing.answers), pairing.shuffle
        return cls(
            bank=bank,
            question=question.id,
            salt=question_salt(bank, question.id),
            params=params,
            choices=choices,
            shuffled=shuffled,
            derived=tuple(derived),
            where=tuple(where),
        )

    def complete(self, params: Mapping[str, Fraction]) -> dict[str, Exact]:
        """The derived values for these parameters, in order (see :func:`exact_value`).

        Raises:
            AnswerParseError: a derived value cannot be computed for them.
        """
        env: dict[str, Exact] = dict(params)
        out: dict[str, Exact] = {}
        for name, parsed in self.derived:
            try:
                value = exact_value(parsed, env)
            except AnswerParseError as exc:
                raise AnswerParseError(f"derived {name}: {exc.message}") from exc
            env[name] = out[name] = value
        return out

    def accepts(self, params: Mapping[str, Fraction]) -> bool:
        """Whether a draw meets every ``where`` condition (a derived value that cannot be
        computed for it fails it too, when there are conditions)."""
        return not self.where or not self.failed(params)

    def failed(self, params: Mapping[str, Fraction]) -> str:
        """The first condition a draw breaks, in words ('' when it meets them all)."""
        try:
            derived = self.complete(params)
        except AnswerParseError as exc:
            return exc.message
        exact: dict[str, Exact] = {**params, **derived}
        numbers = {k: number(v) for k, v in exact.items()}
        for condition in self.where:
            try:
                if not holds(condition, numbers, exact):
                    return f"where: {condition.source}"
            except AnswerParseError as exc:
                return f"where: {condition.source}: {exc.message}"
        return ""

    def survivors(self, seeds: int) -> int:
        """How many of the first draws of ``seeds`` students (those ``quizgym check`` draws:
        ``stress-1`` with seed 1, …) meet the ``where`` conditions at their first attempt."""
        count = 0
        for seed in range(1, seeds + 1):
            state = student_key(self.bank, f"stress-{seed}", seed) ^ self.salt
            params, _ = self._drawn(state)
            count += self.accepts(params)
        return count

    def _variant(self, params: dict[str, Fraction], order: Sequence[int]) -> Variant:
        derived = self.complete(params) if self.derived else {}
        return Variant(question=self.question, params=params, order=tuple(order), derived=derived)

    def count(self) -> int:
        """How many versions the draw can give (parameter values × choice orders; with
        conditions, an upper bound)."""
        total = math.prod(len(values) for _, values in self.params)
        return total * (math.factorial(self.choices) if self.shuffled else 1)

    def every_variant(self) -> Iterator[Variant]:
        """Every version the draw can give, the default first (see :meth:`count` before)."""
        orders: Iterator[tuple[int, ...]] = (
            itertools.permutations(range(self.choices))
            if self.shuffled
            else iter([tuple(range(self.choices))])
        )
        names = [name for name, _ in self.params]
        for order in orders:
            for picks in itertools.product(*(range(len(v)) for _, v in self.params)):
                params = {
                    n: values[k]
                    for n, (_, values), k in zip(names, self.params, picks, strict=True)
                }
                if self.accepts(params):
                    yield self._variant(params, order)

    @property
    def varies(self) -> bool:
        """Whether students can see different versions (parameters with choices, or a shuffle)."""
        return self.shuffled or any(len(values) > 1 for _, values in self.params)

    def variant(self, *, student: str | None = None, seed: int | None = None) -> Variant:
        """The variant a student sees; the default variant when student and seed are both None.

        Raises:
            AnswerParseError: a derived value cannot be computed for the variant drawn.
        """
        if student is None and seed is None:
            return self._variant(self._pick([0] * len(self.params)), range(self.choices))
        state = student_key(self.bank, student, seed) ^ self.salt
        for attempt in range(ATTEMPTS if self.where else 1):
            params, order = self._drawn(attempt_state(state, attempt))
            if not self.where or self.accepts(params):
                return self._variant(params, order)
        return self.variant()

    def _pick(self, picks: Sequence[int]) -> dict[str, Fraction]:
        return {name: values[p] for (name, values), p in zip(self.params, picks, strict=True)}

    def _drawn(self, state: int) -> tuple[dict[str, Fraction], list[int]]:
        """The parameters and choice order drawn from one state."""
        draws = draw_stream(state, len(self.params))
        picks = [draws[k] % len(values) for k, (_, values) in enumerate(self.params)]
        order = choice_order(
            state, params=len(self.params), choices=self.choices, shuffled=self.shuffled
        )
        return self._pick(picks), order

    def variants(
        self,
        *,
        students: Sequence[str | None],
        seeds: Sequence[int | None],
        keys: npt.NDArray[np.uint64] | None = None,
    ) -> tuple[list[Variant], npt.NDArray[np.int64]]:
        """Draw many students' variants at once: the distinct variants, and each student's index.

        The same draws as :meth:`variant` (same random streams, same order), without building a
        Variant (and its exact parameter values) per student. Questions that do not vary get one
        variant for everyone.

        Args:
            students: the students' ids.
            seeds: their seeds (same length).
            keys: their :func:`student_keys`, when the caller has them already.

        Returns:
            ``(variants, codes)``: ``variants[codes[k]]`` is ``variant(student=students[k],
            seed=seeds[k])``.
        """
        count = len(students)
        if not self.varies:
            return [self.variant()], lazy.numpy.zeros(count, dtype=lazy.numpy.int64)
        table = self.params
        choices = self.choices if self.shuffled else 0
        defaults = lazy.numpy.zeros(
            count, dtype=lazy.numpy.bool_
        )  # no student and no seed: the default variant
        if None in students:
            defaults = lazy.numpy.fromiter(
                (s is None and d is None for s, d in zip(students, seeds, strict=True)),
                dtype=lazy.numpy.bool_,
                count=count,
            )
        if keys is None:
            keys = student_keys(self.bank, students, seeds)
        states = keys ^ lazy.numpy.uint64(self.salt)
        draws = self._rows(states)
        default_row = lazy.numpy.concatenate(
            [
                lazy.numpy.zeros(len(table), dtype=lazy.numpy.uint64),
                lazy.numpy.arange(choices, dtype=lazy.numpy.uint64),
            ]
        )
        draws[defaults] = default_row
        if self.where:
            self._redraw(draws, states, ~defaults, default_row)
        # One integer per student (mixed radix over the draws), grouped in O(n) where it fits.
        radices = [len(values) for _, values in table] + [choices] * (draws.shape[1] - len(table))
        if math.prod(radices) < 2**62:
            flat = lazy.numpy.zeros(count, dtype=lazy.numpy.int64)
            for column, radix in zip(draws.T, radices, strict=True):
                flat = flat * radix + column.astype(lazy.numpy.int64)
            from quizgym.arrays import group

            _, first, inverse = group(flat)
            unique, codes = draws[first], inverse
        else:
            unique, codes = lazy.numpy.unique(draws, axis=0, return_inverse=True)
        variants = []
        for row in unique:
            params = {name: values[int(row[k])] for k, (name, values) in enumerate(table)}
            order = tuple(int(x) for x in row[len(table) :]) or tuple(range(self.choices))
            variants.append(self._variant(params, order))
        return variants, lazy.numpy.asarray(codes, dtype=lazy.numpy.int64).reshape(-1)

    def _rows(self, states: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
        """Each state's draw: one row of parameter picks, then the choice order if shuffled."""
        count, table = len(states), self.params
        choices = self.choices if self.shuffled else 0
        columns = [
            _draw_array(states, k) % lazy.numpy.uint64(len(values))
            for k, (_, values) in enumerate(table)
        ]
        if self.shuffled:
            orders = lazy.numpy.tile(
                lazy.numpy.arange(choices, dtype=lazy.numpy.uint64), (count, 1)
            )
            rows = lazy.numpy.arange(count)
            for position, i in enumerate(range(choices - 1, 0, -1)):
                j = (_draw_array(states, len(table) + position) % lazy.numpy.uint64(i + 1)).astype(
                    lazy.numpy.intp
                )
                swapped = orders[rows, j].copy()
                orders[rows, j] = orders[:, i]
                orders[:, i] = swapped
            columns.extend(orders[:, c] for c in range(choices))
        if not columns:
            return lazy.numpy.zeros((count, 0), dtype=lazy.numpy.uint64)
        return lazy.numpy.stack(columns, axis=1)

    def _redraw(
        self,
        draws: npt.NDArray[np.uint64],
        states: npt.NDArray[np.uint64],
        pending: npt.NDArray[np.bool_],
        default_row: npt.NDArray[np.uint64],
    ) -> None:
        """Draw again, in place, the rows that break a ``where`` condition: attempt by attempt
        as :meth:`variant` does, each distinct row judged once."""
        judged: dict[tuple[int, ...], bool] = {}
        pending = pending.copy()
        width = len(self.params)
        for attempt in range(ATTEMPTS):
            rows = lazy.numpy.flatnonzero(pending)
            if not len(rows):
                return
            unique, inverse = lazy.numpy.unique(draws[rows, :width], axis=0, return_inverse=True)
            verdicts = []
            for row in unique:
                picks = tuple(int(x) for x in row)
                if picks not in judged:
                    judged[picks] = self.accepts(self._pick(picks))
                verdicts.append(judged[picks])
            accepted = lazy.numpy.array(verdicts, dtype=lazy.numpy.bool_)[inverse.reshape(-1)]
            pending[rows[accepted]] = False
            rejected = rows[~accepted]
            if len(rejected) and attempt + 1 < ATTEMPTS:
                draws[rejected] = self._rows(_attempt_array(states[rejected], attempt + 1))
        draws[pending] = default_row
