"""One slot's distinct verdicts, kept as columns.

A class of 200,000 students types some 50,000 distinct answers to a numeric question, and the
batch grader grades each distinct (version, answer) pair once. Making a
:class:`~quizgym.answers.Verdict` object for each, only for the outputs to take every field
back out of it, cost more than grading them: :class:`Verdicts` holds the same fields as
columns (NumPy arrays for numbers and codes, lists for texts). The batch grader fills them a
column at a time for plain decimals (:mod:`quizgym.grading.decimals`) and from verdict objects for
the rest; the outputs, statistics and review queue read the columns; anyone who asks for one
verdict gets a :class:`~quizgym.answers.Verdict` equal to the one the single-answer path makes
(made once, then kept).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, overload

import numpy as np
import numpy.typing as npt

from quizgym.answers import Status, Verdict
from quizgym.arrays import objects

__all__ = ["STATUSES", "STATUS_CODES", "UNREAD", "Verdicts"]

STATUSES: tuple[Status, ...] = tuple(Status)
STATUS_CODES: dict[Status, int] = {s: i for i, s in enumerate(STATUSES)}
UNREAD = frozenset({STATUS_CODES[Status.INVALID], STATUS_CODES[Status.BLANK]})
"""The status codes of an answer not read at all (blank or unreadable)."""

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
T = TypeVar("T")


@dataclass(eq=False, kw_only=True)
class Verdicts(Sequence[Verdict]):
    """Distinct verdicts as columns: entry ``i`` of every column is verdict ``i``'s field."""

    question: list[str]
    status: IntArray
    """:data:`STATUS_CODES` of each verdict's status."""
    score: FloatArray
    max_score: FloatArray
    read_as: list[str]
    feedback: list[str]
    tag: list[str | None]
    expected: list[str]
    needs_review: BoolArray
    value: FloatArray
    """The value read (meaningful where ``has_value``)."""
    has_value: BoolArray
    doubt: list[str]
    machine: list[Verdict | None]
    """Where a teacher decided the score: the machine's own verdict."""
    _made: list[Verdict | None] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if len(self._made) != len(self.question):
            self._made = [None] * len(self.question)

    @classmethod
    def of(cls, verdicts: Sequence[Verdict]) -> Verdicts:
        """The columns of some verdict objects (kept as they are, for whoever asks again)."""
        values = [v.value for v in verdicts]
        table = cls(
            question=[v.question for v in verdicts],
            status=np.array([STATUS_CODES[v.status] for v in verdicts], dtype=np.int64),
            score=np.array([v.score for v in verdicts], dtype=np.float64),
            max_score=np.array([v.max_score for v in verdicts], dtype=np.float64),
            read_as=[v.read_as for v in verdicts],
            feedback=[v.feedback for v in verdicts],
            tag=[v.tag for v in verdicts],
            expected=[v.expected for v in verdicts],
            needs_review=np.array([v.needs_review for v in verdicts], dtype=bool),
            value=np.array([0.0 if x is None else x for x in values], dtype=np.float64),
            has_value=np.array([x is not None for x in values], dtype=bool),
            doubt=[v.doubt for v in verdicts],
            machine=[v.machine for v in verdicts],
        )
        table._made = list(verdicts)
        return table

    @classmethod
    def scattered(cls, size: int, parts: Sequence[tuple[IntArray, Verdicts]]) -> Verdicts:
        """One table of ``size`` verdicts from parts, each with the positions it fills (every
        position is filled by exactly one part)."""
        out = cls(
            question=[""] * size,
            status=np.zeros(size, dtype=np.int64),
            score=np.zeros(size),
            max_score=np.zeros(size),
            read_as=[""] * size,
            feedback=[""] * size,
            tag=[None] * size,
            expected=[""] * size,
            needs_review=np.zeros(size, dtype=bool),
            value=np.zeros(size),
            has_value=np.zeros(size, dtype=bool),
            doubt=[""] * size,
            machine=[None] * size,
        )
        lists = {name: np.empty(size, dtype=object) for name in (*_LISTS, "_made")}
        for at, part in parts:
            for name in _ARRAYS:
                getattr(out, name)[at] = getattr(part, name)
            for name, column in lists.items():
                column[at] = objects(getattr(part, name))
        for name, column in lists.items():
            setattr(out, name, column.tolist())
        return out

    def __len__(self) -> int:
        return len(self.question)

    @overload
    def __getitem__(self, index: int) -> Verdict: ...

    @overload
    def __getitem__(self, index: slice) -> list[Verdict]: ...

    def __getitem__(self, index: int | slice) -> Verdict | list[Verdict]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        made = self._made[index]
        if made is None:
            made = self._made[index] = self._make(index)
        return made

    def __iter__(self) -> Iterator[Verdict]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Verdicts):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __setitem__(self, index: int, verdict: Verdict) -> None:
        """Replace one verdict (a teacher's decision)."""
        one = Verdicts.of([verdict])
        for name in _ARRAYS:
            getattr(self, name)[index] = getattr(one, name)[0]
        for name in (*_LISTS, "_made"):
            getattr(self, name)[index] = getattr(one, name)[0]

    def _make(self, i: int) -> Verdict:
        return Verdict(
            question=self.question[i],
            status=STATUSES[int(self.status[i])],
            score=float(self.score[i]),
            max_score=float(self.max_score[i]),
            read_as=self.read_as[i],
            feedback=self.feedback[i],
            tag=self.tag[i],
            expected=self.expected[i],
            needs_review=bool(self.needs_review[i]),
            value=float(self.value[i]) if self.has_value[i] else None,
            doubt=self.doubt[i],
            machine=self.machine[i],
        )

    @property
    def decided(self) -> list[int]:
        """The positions a teacher decided (whose machine verdict is kept)."""
        if self.machine.count(None) == len(self.machine):  # no decisions: counted at C speed
            return []
        return [i for i, m in enumerate(self.machine) if m is not None]

    def machines(self) -> Verdicts:
        """Each verdict as the machine gave it: a teacher's decision undone."""
        decided = self.decided
        if not decided:
            return self
        at = np.array(decided, dtype=np.int64)
        rest = np.setdiff1d(np.arange(len(self)), at)
        mine = Verdicts.of([m for m in self.machine if m is not None])  # in position order
        return Verdicts.scattered(len(self), [(rest, self.take(rest)), (at, mine)])

    def uncertain(self) -> BoolArray:
        """Per verdict: whether it belongs in the review queue (the machine's verdict is a
        rubric's suggestion, invalid, or has a doubt)."""
        m = self.machines()
        doubt = np.fromiter(map(bool, m.doubt), dtype=bool, count=len(m.doubt))
        result: BoolArray = m.needs_review | (m.status == STATUS_CODES[Status.INVALID]) | doubt
        return result

    def take(self, at: IntArray) -> Verdicts:
        """The verdicts at some positions, in their order."""
        where = at.tolist()

        def pick(column: list[T]) -> list[T]:
            return [column[k] for k in where]

        part = Verdicts(
            question=pick(self.question),
            status=self.status[at],
            score=self.score[at],
            max_score=self.max_score[at],
            read_as=pick(self.read_as),
            feedback=pick(self.feedback),
            tag=pick(self.tag),
            expected=pick(self.expected),
            needs_review=self.needs_review[at],
            value=self.value[at],
            has_value=self.has_value[at],
            doubt=pick(self.doubt),
            machine=pick(self.machine),
        )
        part._made = pick(self._made)
        return part

    def statuses(self) -> list[Status]:
        """Each verdict's status."""
        return [STATUSES[c] for c in self.status.tolist()]


_ARRAYS = ("status", "score", "max_score", "needs_review", "value", "has_value")
_LISTS = ("question", "read_as", "feedback", "tag", "expected", "doubt", "machine")
