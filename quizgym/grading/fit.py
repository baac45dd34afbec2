"""A safety net for the wrong versions: do answers fit another version better than their own?

Graded against the versions the run was told about, a class that really held one photocopied
sheet (or other students' numbers) looks like a class that failed a question. It can be told apart:
its answers match *another* version's key. For each question that differs per student, and for
each alternative version (the default one, and every version some student of the class was given),
this counts, among the students whose own key differs from the alternative's:

- ``own``: answers right for the student's own version and not for the alternative;
- ``other``: answers right for the alternative and not for the student's own;
- ``answered``: every answer given by those students.

The alternatives are the same for every piece of a run, so counts merge: the default version,
every version of a question that has at most 64, and every version an issue manifest handed out.

Rule (tested on simulated classes in ``tests/test_issued.py``): ``other`` must be at least a fifth
of ``answered`` (a few coincidences among many answers that fit neither version are no sign);
then a numeric answer hits another version's key only by a coincidence of numbers, so
``other >= 3`` and ``other > 2·own`` is already clear; a choice letter hits another order's key by
chance about one time in ``k - 1``, so there a one-sided sign test must reject "no better than
own" at about 1 % (``other - own > 2.33·√(other + own)``) with ``other >= 5``. Counts merge by
addition, so a class graded in pieces is checked as a whole.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from quizgym.answers import Status, read_choices
from quizgym.expr import Reading, read_answer
from quizgym.grading.batch import GradedPartition
from quizgym.grading.versions import Versions
from quizgym.model import AnyQuestion, MultipleChoice, SpotTheError
from quizgym.solver import CompiledBank, Slot, Variant
from quizgym.tolerance import compare

__all__ = ["Fit", "version_fit"]

_MOST_ALTERNATIVES = 64
"""A question with at most this many possible versions is held against each of them."""
ANOTHER = "another"
"""The label of the count against every other version at once (numeric slots only: a letter
fits some other order of the choices almost always)."""
MIN_SHARE = 0.2
"""The answers that fit another version must be at least this share of those that can tell it
from the student's own: a few coincidences among many wrong answers are no sign."""


@dataclass
class Fit:
    """Per slot and alternative version: (own, other) counts (see the module docs)."""

    counts: dict[str, Counter[tuple[str, str]]] = field(default_factory=dict)
    """slot id → Counter of ((alternative label, "own" | "other")) → answers."""
    kinds: dict[str, str] = field(default_factory=dict)
    """slot id → "numeric" or "choice"."""

    def merge(self, other: Fit) -> Fit:
        """Both partitions' counts."""
        counts = {k: Counter(v) for k, v in self.counts.items()}
        for slot, counter in other.counts.items():
            counts.setdefault(slot, Counter()).update(counter)
        return Fit(counts=counts, kinds={**self.kinds, **other.kinds})

    def warnings(self) -> list[str]:
        """One line per slot whose answers fit another version clearly better than their own."""
        out = []
        for slot in sorted(self.counts):
            counter = self.counts[slot]
            best: tuple[int, str, int, int] | None = None
            for label in sorted({label for label, _ in counter}):
                own, other = counter[label, "own"], counter[label, "other"]
                answered = counter[label, "answered"]
                if _clearly(self.kinds[slot], own=own, other=other, answered=answered):
                    margin = other - own
                    if best is None or margin > best[0]:
                        best = (margin, label, own, other)
            if best is not None:
                _, label, own, other = best
                if label == "default":
                    fits = "the default version's key"
                elif label == ANOTHER:
                    fits = "other versions' keys"
                else:
                    fits = f"version {label}'s key"
                out.append(
                    f"{slot}: {other} answers fit {fits}, only {own} the students' own: were "
                    "they given other versions than this run assumes? (check --issued, --seed "
                    "or --version)"
                )
        return out


def _clearly(kind: str, *, own: int, other: int, answered: int) -> bool:
    if other < MIN_SHARE * answered:
        return False  # a few coincidences among many answers that fit neither
    if kind == "numeric":
        return other >= 3 and other > 2 * own
    return other >= 5 and other - own > 2.33 * math.sqrt(other + own)


def version_fit(bank: CompiledBank, graded: GradedPartition, versions: Versions) -> Fit:
    """The (own, other) counts of one graded partition.

    Each distinct (version, answer) pair is one verdict of the batch grader, so the counts are
    taken per pair and weighted by how many students gave it.
    """
    fit = Fit()
    for g in graded.slots:
        slot = g.slot
        question = slot.question
        if not bank.varies(question) or not len(g.codes):
            continue
        if slot.is_numeric:
            kind = "numeric"
        elif isinstance(question, MultipleChoice | SpotTheError):
            kind = "choice"
        else:
            continue
        column = graded.answers.column(slot.id)
        pairs, first, weight = np.unique(g.codes, return_index=True, return_counts=True)
        texts = [column[int(row)] for row in first]
        owns = [g.variants[int(g.variant_codes[row])] for row in first]
        right = [g.verdicts[int(p)].status is Status.CORRECT for p in pairs]
        counter: Counter[tuple[str, str]] = Counter()
        alternatives = list(_alternatives(bank, question, versions))
        tests = [(label, alt, _right_under(bank, slot, alt, kind)) for label, alt in alternatives]
        for text, own_variant, own, n in zip(texts, owns, right, weight.tolist(), strict=True):
            if text is None:
                continue
            fits_another = False
            compared = False
            for label, alternative, right_other in tests:
                if _same_key(bank, slot, own_variant, alternative, kind):
                    continue
                compared = True
                counter[label, "answered"] += n
                other = right_other(text)
                fits_another = fits_another or other
                if own and not other:
                    counter[label, "own"] += n
                elif other and not own:
                    counter[label, "other"] += n
            if kind == "numeric" and compared:
                # Against every other version at once: students given one another's numbers.
                counter[ANOTHER, "answered"] += n
                if own:
                    counter[ANOTHER, "own"] += n
                elif fits_another:
                    counter[ANOTHER, "other"] += n
        if counter:
            fit.counts[slot.id] = counter
            fit.kinds[slot.id] = kind
    return fit


def _alternatives(
    bank: CompiledBank, question: AnyQuestion, versions: Versions
) -> Iterator[tuple[str, Variant]]:
    """The versions answers are held against: the same for every piece of a run.

    The default version; every version the question can have, when there are few (at most
    ``_MOST_ALTERNATIVES``); and every version an issue manifest handed out.
    """
    default = bank.variant(question)
    yield "default", default
    seen = {(default.signature, default.order)}
    draw = bank.draw(question)
    candidates: list[Variant] = []
    if draw.count() <= _MOST_ALTERNATIVES:
        candidates += draw.every_variant()
    if versions.issued is not None:
        records = versions.issued.versions.get(question.id, [])
        candidates += [record.variant(question.id) for record in records]
    for variant in candidates:
        if (variant.signature, variant.order) not in seen:
            seen.add((variant.signature, variant.order))
            yield variant.label, variant


def _same_key(bank: CompiledBank, slot: Slot, a: Variant, b: Variant, kind: str) -> bool:
    """Whether two versions have the same right answer (so an answer cannot tell them apart)."""
    if kind == "numeric":
        assert slot.tolerance is not None
        key_a, key_b = bank.key(slot, a).number, bank.key(slot, b).number
        return compare(
            value=key_a, key=key_b, tolerance=slot.tolerance, kind="mixed", decimals=0, sigfigs=0
        ).ok
    question = slot.question
    assert isinstance(question, MultipleChoice | SpotTheError)
    right = {i for i, c in enumerate(question.choices) if c.correct}
    positions_a = {k for k, i in enumerate(a.order or range(len(question.choices))) if i in right}
    positions_b = {k for k, i in enumerate(b.order or range(len(question.choices))) if i in right}
    return positions_a == positions_b


def _right_under(
    bank: CompiledBank, slot: Slot, variant: Variant, kind: str
) -> Callable[[str], bool]:
    """A memoized test: is this answer text right for ``variant``?"""
    memo: dict[str, bool] = {}
    if kind == "numeric":
        assert slot.tolerance is not None
        tolerance = slot.tolerance
        key = bank.key(slot, variant).number

        def numeric(text: str) -> bool:
            if text not in memo:
                reading = read_answer(text)
                memo[text] = (
                    isinstance(reading, Reading)
                    and compare(
                        value=float(reading.value),
                        key=key,
                        tolerance=tolerance,
                        kind=reading.parsed.kind,
                        decimals=reading.parsed.decimals,
                        sigfigs=reading.parsed.sigfigs,
                        zeros=reading.parsed.zeros,
                    ).ok
                )
            return memo[text]

        return numeric
    question = slot.question
    assert isinstance(question, MultipleChoice | SpotTheError)
    right = sorted(i for i, c in enumerate(question.choices) if c.correct)

    def choice(text: str) -> bool:
        if text not in memo:
            picked = read_choices(text, question, variant)
            memo[text] = not isinstance(picked, str) and sorted(picked) == right
        return memo[text]

    return choice
