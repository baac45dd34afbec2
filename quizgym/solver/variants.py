"""Per-student variants: parameter values and choice orders, drawn deterministically.

A student's variant must be the same on paper, in the LMS export, in the drill and in the grader,
and the grader draws it for a whole class at once. So the draw is a pure function of (bank,
question, student, seed) with a scalar form (Python ints) and an array form (NumPy uint64, whose
arithmetic wraps like ours masked): one SHA-256 per (bank, student, seed), xor a SHA-256 salt per
question, then a splitmix64 stream: draw k is mix(state + (k + 1)·γ). Parameter k (in name order)
takes draw k modulo its number of values; a shuffle continues the stream with a Fisher-Yates pass.
A test holds the two forms to each other.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, overload

import mpmath

from quizgym.expr import DPS, format_value
from quizgym.lazy import lazy
from quizgym.model import (
    LETTERS,
    PLACEHOLDER,
    AnyQuestion,
    MultipleChoice,
    Numeric,
    Param,
    ParamChoices,
    ParamRange,
    SpotTheError,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = lazy("numpy")  # a whole class's draws only

__all__ = [
    "Draw",
    "ParamValues",
    "Signature",
    "Variant",
    "param_values",
    "show_number",
    "student_key",
    "student_keys",
]

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB


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


def show_number(value: Fraction) -> str:
    """Show a parameter value the way an author writes it: 0.2, 40, 0.125."""
    if value.denominator == 1:
        return str(value.numerator)
    with mpmath.workdps(DPS):  # the 30-digit value, as an exact key's (to_mpf) would be
        return format_value(mpmath.mpf(value.numerator) / value.denominator, 15)


Signature = tuple[tuple[str, Fraction], ...]
"""A variant's parameter values in name order: what its keys depend on."""


@dataclass(frozen=True)
class Variant:
    """One student's version of a question: parameter values and choice order."""

    question: str
    params: Mapping[str, Fraction] = field(default_factory=dict)
    order: tuple[int, ...] = ()
    """For shuffled choices: ``order[k]`` is the index in the bank of the k-th choice shown."""

    def fill(self, text: str) -> str:
        """Replace ``{name}`` placeholders by this variant's values."""
        if not self.params:
            return text
        return PLACEHOLDER.sub(
            lambda m: show_number(self.params[m[1]]) if m[1] in self.params else m[0], text
        )

    @property
    def signature(self) -> Signature:
        """The parameter values in name order: what the keys of this variant depend on."""
        return tuple(sorted(self.params.items()))

    @property
    def label(self) -> str:
        """``p1=0.2, p2=0.5``, ``order BAC`` or ``default``: how reports name a variant."""
        if self.params:
            return ", ".join(f"{k}={show_number(v)}" for k, v in self.params.items())
        if self.order:
            return "order " + "".join(LETTERS[i] for i in self.order)
        return "default"


# --- the draws --------------------------------------------------------------------------------


def _hash64(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _student_digest(bank: str, student: str | None, seed: int | None) -> bytes:
    """SHA-256 of ``bank␟student␟seed`` (empty for None): the one definition of a student's key."""
    return hashlib.sha256(
        f"{bank}\x1f{student or ''}\x1f{'' if seed is None else seed}".encode()
    ).digest()


def student_key(bank: str, student: str | None, seed: int | None) -> int:
    """The 64-bit key of a student and seed in a bank."""
    return int.from_bytes(_student_digest(bank, student, seed)[:8], "big")


def student_keys(
    bank: str, students: Sequence[str | None], seeds: Sequence[int | None]
) -> npt.NDArray[np.uint64]:
    """:func:`student_key` of a whole class at once (one digest each)."""
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

    @classmethod
    def of(cls, bank: str, question: AnyQuestion) -> Draw:
        """The draw of a question of the bank with this slug."""
        params: tuple[tuple[str, ParamValues], ...] = ()
        if isinstance(question, Numeric):
            params = tuple((n, ParamValues(question.params[n])) for n in sorted(question.params))
        choices, shuffled = 0, False
        if isinstance(question, MultipleChoice | SpotTheError):
            choices, shuffled = len(question.choices), question.shuffle
        return cls(
            bank=bank,
            question=question.id,
            salt=_hash64(bank, question.id, "question"),
            params=params,
            choices=choices,
            shuffled=shuffled,
        )

    def count(self) -> int:
        """How many versions the draw can give (parameter values × choice orders)."""
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
                yield Variant(question=self.question, params=params, order=order)

    @property
    def varies(self) -> bool:
        """Whether students can see different versions (parameters with choices, or a shuffle)."""
        return self.shuffled or any(len(values) > 1 for _, values in self.params)

    def variant(self, *, student: str | None = None, seed: int | None = None) -> Variant:
        """The variant a student sees; the default variant when student and seed are both None."""
        order = list(range(self.choices))
        if student is None and seed is None:
            picks = [0] * len(self.params)
        else:
            state = student_key(self.bank, student, seed) ^ self.salt
            extra = self.choices - 1 if self.shuffled and self.choices else 0
            draws = _draws(state, len(self.params) + extra)
            picks = [draws[k] % len(values) for k, (_, values) in enumerate(self.params)]
            if self.shuffled:
                _shuffle(order, draws[len(self.params) :])
        values = {
            name: values[pick] for (name, values), pick in zip(self.params, picks, strict=True)
        }
        return Variant(question=self.question, params=values, order=tuple(order))

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
            return [self.variant()], np.zeros(count, dtype=np.int64)
        table = self.params
        choices = self.choices if self.shuffled else 0
        defaults = np.zeros(count, dtype=np.bool_)  # no student and no seed: the default variant
        if None in students:
            defaults = np.fromiter(
                (s is None and d is None for s, d in zip(students, seeds, strict=True)),
                dtype=np.bool_,
                count=count,
            )
        if keys is None:
            keys = student_keys(self.bank, students, seeds)
        states = keys ^ np.uint64(self.salt)
        columns = [
            _draw_array(states, k) % np.uint64(len(values)) for k, (_, values) in enumerate(table)
        ]
        if self.shuffled:
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
            from quizgym.arrays import group

            _, first, inverse = group(flat)
            unique, codes = draws[first], inverse
        else:
            unique, codes = np.unique(draws, axis=0, return_inverse=True)
        variants = []
        for row in unique:
            params = {name: values[int(row[k])] for k, (name, values) in enumerate(table)}
            order = tuple(int(x) for x in row[len(table) :]) or tuple(range(self.choices))
            variants.append(Variant(question=self.question, params=params, order=order))
        return variants, np.asarray(codes, dtype=np.int64).reshape(-1)
