"""How a slot's students split by what their version of the question gave them: a question and
the versions in a partition in, per split (a parameter, the version, the key's position) each
version's group label out.

The splits depend on the bank alone, never on which students a partition holds, so partitions
count alike and merge (:attr:`quizgym.analysis.Sums.groups`):

- a parameter that takes several values: one group per value (``n = 25``), or, past
  :data:`MAX_LEVELS` values, :data:`BINS` ranges of its values in order (``n 25–40``);
- the whole version, when the question has two or more varying parameters (or a shuffle) and at
  most :data:`MAX_LEVELS` versions exist; with one varying parameter and no shuffle, the version
  is that parameter;
- a shuffled one-answer question: the letter the (first) right choice is shown at.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from quizgym.model import LETTERS, AnyQuestion
from quizgym.solver.variants import ParamValues, Variant, param_values, show_number
from quizgym.types import ChoiceInteraction, choices_of, numeric_of

__all__ = ["BINS", "KEY_POSITION", "MAX_LEVELS", "VERSION", "splits_of"]

MAX_LEVELS = 24
"""The most groups a split has: a parameter with more values is binned; a question with more
versions is not split by version (each would hold a few students)."""
BINS = 4
"""The ranges a parameter with many values is binned into (by the order of its values)."""
VERSION = "version"
"""The split by the whole version."""
KEY_POSITION = "key position"
"""The split of a shuffled question by where its right choice is shown."""


def _varying(question: AnyQuestion) -> list[tuple[str, ParamValues]]:
    numbers = numeric_of(question)
    if numbers is None:
        return []
    params = numbers.question.params
    values = [(name, param_values(params[name])) for name in sorted(params)]
    return [(name, v) for name, v in values if len(v) > 1]


def _shuffled(question: AnyQuestion) -> ChoiceInteraction | None:
    """The question's lettered choices, when a draw shuffles them (None otherwise)."""
    picks = choices_of(question)
    return picks if picks is not None and picks.lettered and picks.shuffle else None


class _Labels:
    """Each value's group label of one parameter: ``n = 25``, or for a parameter with many
    values the range of its bin (``n 25–40``); worked out once per value (and per bin)."""

    def __init__(self, name: str, values: ParamValues) -> None:
        self.name = name
        self.default = values[0]
        self.binned = len(values) > MAX_LEVELS
        self.labels: dict[tuple[int, int], str] = {}
        if self.binned:  # values are min + k·step in order (a range): bins of k
            self.step = values[1] - values[0]
            self.size = math.ceil(len(values) / BINS)
            self.bins = [
                f"{name} {show_number(values[low])}–"
                f"{show_number(values[min(low + self.size, len(values)) - 1])}"
                for low in range(0, len(values), self.size)
            ]

    def of(self, value: Fraction) -> str:
        key = (value.numerator, value.denominator)  # a Fraction's own hash is slow to work out
        label = self.labels.get(key)
        if label is None:
            if self.binned:
                k = int((value - self.default) / self.step)
                label = self.bins[k // self.size]
            else:
                label = f"{self.name} = {show_number(value)}"
            self.labels[key] = label
        return label


def _versions(question: AnyQuestion) -> int:
    count = math.prod(len(v) for _, v in _varying(question))
    shuffled = _shuffled(question)
    if shuffled is not None:
        count *= math.factorial(len(shuffled.choices))
    return count


def splits_of(question: AnyQuestion, variants: Sequence[Variant]) -> list[tuple[str, list[str]]]:
    """Each split of the question's students, with each of ``variants``' group in it.

    Returns:
        (split name, per variant its group's label); empty when the question does not vary.
    """
    varying = _varying(question)
    out: list[tuple[str, list[str]]] = []
    for name, values in varying:  # a class may hold a version per student: few lookups each
        labels = _Labels(name, values)
        out.append((name, [labels.of(v.params.get(name, labels.default)) for v in variants]))
    shuffled = _shuffled(question)
    if (len(varying) > 1 or (shuffled and varying)) and _versions(question) <= MAX_LEVELS:
        out.append((VERSION, [v.label for v in variants]))
    if shuffled is not None:
        if math.factorial(len(shuffled.choices)) <= MAX_LEVELS and not varying:
            out.append((VERSION, [v.label for v in variants]))
        if not shuffled.multiple:
            right = shuffled.right[0]
            out.append(
                (
                    KEY_POSITION,
                    [f"right choice shown as {LETTERS[_position(v, right)]}" for v in variants],
                )
            )
    return out


def _position(variant: Variant, choice: int) -> int:
    order = variant.order
    return order.index(choice) if order and choice in order else choice
