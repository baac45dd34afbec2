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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from quizgym.answers import Status, read_choices
from quizgym.arrays import group
from quizgym.expr import Reading, read_answer
from quizgym.grading.batch import GradedPartition, GradedSlot
from quizgym.grading.decimals import PlainColumn, read_plain_column, reads_as_unit
from quizgym.grading.table import Coded
from quizgym.grading.variants import Variants
from quizgym.grading.verdicts import STATUS_CODES
from quizgym.model import AnyQuestion, Tolerance
from quizgym.solver import CompiledBank, Slot, Variant
from quizgym.tolerance import KIND_CODES, compare_array
from quizgym.types import ChoiceInteraction, choices_of

__all__ = ["VersionCounts", "Numbers", "lettered", "picks_right", "read_numbers", "version_counts"]

_MOST_ALTERNATIVES = 64
"""A question with at most this many possible versions is held against each of them."""
ANOTHER = "another"
"""The label of the count against every other version at once (numeric slots only: a letter
fits some other order of the choices almost always)."""
MIN_SHARE = 0.2
"""The answers that fit another version must be at least this share of those that can tell it
from the student's own: a few coincidences among many wrong answers are no sign."""


@dataclass
class VersionCounts:
    """Per slot and alternative version: (own, other) counts (see the module docs)."""

    counts: dict[str, Counter[tuple[str, str]]] = field(default_factory=dict)
    """slot id → Counter of ((alternative label, "own" | "other")) → answers."""
    kinds: dict[str, str] = field(default_factory=dict)
    """slot id → "number" or "choice" (the kind of its interaction)."""

    def absorb(self, other: VersionCounts) -> None:
        """Add another partition's counts to these, in place (its counters are not shared)."""
        for slot, counter in other.counts.items():
            self.counts.setdefault(slot, Counter()).update(counter)
        self.kinds.update(other.kinds)

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
    if kind == "number":
        return other >= 3 and other > 2 * own
    return other >= 5 and other - own > 2.33 * math.sqrt(other + own)


def version_counts(
    bank: CompiledBank, graded: GradedPartition, versions: Variants
) -> VersionCounts:
    """The (own, other) counts of one graded partition.

    Each distinct (version, answer) pair is one verdict of the batch grader, so the counts are
    taken per pair and weighted by how many students gave it: one array per alternative over
    the pairs (numbers are compared with :func:`~quizgym.tolerance.compare_array`, the
    comparator the grader uses), and whether two versions share a key once per pair of versions.
    """
    counts = VersionCounts()
    for g in graded.slots:
        slot = g.slot
        question = slot.question
        if not bank.varies(question) or not len(g.codes):
            continue
        if slot.is_numeric:
            kind = "number"
        elif lettered(slot) is not None:
            kind = "choice"
        else:
            continue  # true or false reads the same under every version; a text has no key
        counter = _slot_counts(bank, slot, g, graded.answers.column(slot.id), versions, kind)
        if counter:
            counts.counts[slot.id] = counter
            counts.kinds[slot.id] = kind
    return counts


def _slot_counts(
    bank: CompiledBank,
    slot: Slot,
    g: GradedSlot,
    column: Sequence[str | None],
    versions: Variants,
    kind: str,
) -> Counter[tuple[str, str]]:
    pairs, first, inverse = group(g.codes)  # codes of verdicts: grouped without sorting
    weight = np.bincount(inverse, minlength=len(pairs))
    texts = column.at(first) if isinstance(column, Coded) else [column[r] for r in first.tolist()]
    answered = np.array([text is not None for text in texts], dtype=bool)
    own_codes = g.variant_codes[first]
    own = g.verdicts.status[pairs] == STATUS_CODES[Status.CORRECT]
    alternatives = list(_alternatives(bank, slot.question, versions))
    # same[v, a]: the student's own version v and alternative a have the same right answer, so
    # an answer cannot tell them apart.
    # Only versions some student answered are asked for their keys (a version whose key cannot
    # be worked out may have only blank answers).
    given = sorted({int(v) for v in own_codes[answered].tolist()})
    rows = np.zeros(len(g.variants), dtype=np.int64)
    rows[given] = np.arange(len(given))
    same = _same_keys(
        bank, slot, [g.variants[v] for v in given], [a for _, a in alternatives], kind
    )
    if kind == "number":  # the texts as the grader read them, when it kept its reading
        known = g.numbers.take(pairs) if g.numbers is not None else None
        right_under = _numeric_tests(slot, texts, known, given=answered)
    else:
        right_under = _choice_tests(slot, texts)
    counter: Counter[tuple[str, str]] = Counter()
    compared = np.zeros(len(texts), dtype=bool)
    fits_another = np.zeros(len(texts), dtype=bool)
    for a, (label, alternative) in enumerate(alternatives):
        held = answered.copy()
        held[answered] = ~same[rows[own_codes[answered]], a]
        if not held.any():
            continue
        other = right_under(bank, alternative) & held
        compared |= held
        fits_another |= other
        counter[label, "answered"] += int(weight[held].sum())
        if count := int(weight[held & own & ~other].sum()):
            counter[label, "own"] += count
        if count := int(weight[other & ~own].sum()):
            counter[label, "other"] += count
    if kind == "number" and compared.any():
        # Against every other version at once: students given one another's numbers.
        counter[ANOTHER, "answered"] += int(weight[compared].sum())
        if count := int(weight[compared & own].sum()):
            counter[ANOTHER, "own"] += count
        if count := int(weight[compared & ~own & fits_another].sum()):
            counter[ANOTHER, "other"] += count
    return counter


def _alternatives(
    bank: CompiledBank, question: AnyQuestion, versions: Variants
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


def _same_keys(
    bank: CompiledBank, slot: Slot, owns: list[Variant], alternatives: list[Variant], kind: str
) -> npt.NDArray[np.bool_]:
    """``[v, a]``: whether version ``owns[v]`` and ``alternatives[a]`` have the same right
    answer (so an answer cannot tell them apart). A version whose key cannot be worked out (its
    students' verdicts say why) is told apart from none: nothing is counted against it."""
    if kind == "number":
        assert slot.tolerance is not None
        own, alt = _numbers(bank, slot, owns), _numbers(bank, slot, alternatives)
        ok, _ = compare_array(
            values=own[:, None],
            keys=alt[None, :],
            tolerance=slot.tolerance,
            kinds=KIND_CODES["mixed"],
            decimals=0,
            sigfigs=0,
        )
        same = ok.reshape(len(owns), len(alternatives))
        same[np.isnan(own), :] = True
        same[:, np.isnan(alt)] = True
        return same
    options = lettered(slot)
    assert options is not None
    right = set(options.right)

    def positions(v: Variant) -> frozenset[int]:
        return frozenset(
            k for k, i in enumerate(v.order or range(len(options.choices))) if i in right
        )

    held = [positions(v) for v in alternatives]
    return np.array([[p == q for q in held] for p in map(positions, owns)], dtype=bool).reshape(
        len(owns), len(alternatives)
    )


def _numbers(bank: CompiledBank, slot: Slot, variants: list[Variant]) -> npt.NDArray[np.float64]:
    """Each version's key as a float; NaN where it cannot be worked out."""
    out = np.full(len(variants), np.nan)
    for k, variant in enumerate(variants):
        try:
            out[k] = bank.key(slot, variant).number
        except Exception:  # noqa: S112  # undefined or refused here: its verdicts say so
            continue
    return out


def _numeric_tests(
    slot: Slot,
    texts: list[str | None],
    known: PlainColumn | None,
    *,
    given: npt.NDArray[np.bool_],
) -> Callable[[CompiledBank, Variant], npt.NDArray[np.bool_]]:
    """Each text read once (``known``: the texts already read as plain decimals, when the
    grader kept them; ``given``: which texts are not None); then, per version, which of them are
    right for its key."""
    readings = read_numbers(slot, texts, known, given=given)

    def right(bank: CompiledBank, variant: Variant) -> npt.NDArray[np.bool_]:
        return readings.right(bank.key(slot, variant).number)

    return right


@dataclass(frozen=True)
class Numbers:
    """A numeric slot's texts as the grader reads them, to hold against any key."""

    tolerance: Tolerance
    values: npt.NDArray[np.float64]
    kinds: npt.NDArray[np.int64]
    decimals: npt.NDArray[np.int64]
    sigfigs: npt.NDArray[np.int64]
    zeros: npt.NDArray[np.int64]
    readable: npt.NDArray[np.bool_]
    """Which texts were read as a real number (the others fit no key)."""

    def right(
        self, keys: float | npt.NDArray[np.float64], at: npt.NDArray[np.int64] | None = None
    ) -> npt.NDArray[np.bool_]:
        """Which texts (those ``at``, or all) are right for ``keys`` (one, or one each), as
        :func:`~quizgym.tolerance.compare_array` judges them for the grader."""
        pick = slice(None) if at is None else at
        ok, _ = compare_array(
            values=self.values[pick],
            keys=keys,
            tolerance=self.tolerance,
            kinds=self.kinds[pick],
            decimals=self.decimals[pick],
            sigfigs=self.sigfigs[pick],
            zeros=self.zeros[pick],
        )
        readable = self.readable[pick]
        return ok & readable


def read_numbers(
    slot: Slot,
    texts: Sequence[str | None],
    known: PlainColumn | None,
    *,
    given: npt.NDArray[np.bool_],
) -> Numbers:
    """Each text of a numeric slot read once, as the grader reads it (``known``: the texts
    already read as plain decimals, when the grader kept them; ``given``: which are not None)."""
    tolerance = slot.tolerance
    assert tolerance is not None
    m = len(texts)
    values = np.full(m, np.nan)
    kinds = np.zeros(m, dtype=np.int64)
    decimals = np.zeros(m, dtype=np.int64)
    sigfigs = np.zeros(m, dtype=np.int64)
    zeros = np.zeros(m, dtype=np.int64)
    readable = np.zeros(m, dtype=bool)
    try:  # plain decimals a column at once, as the grader reads them
        column = known if known is not None else read_plain_column(texts)
    except Exception:  # a cell that is no text (a library caller's): each is read alone below
        column = None
    if column is not None:  # the other entries of its arrays are 0
        # a number with a unit word is compared as typed (the unit aside), as below
        unit = {u: bool(u) and reads_as_unit(u) for u in set(column.unit)}  # few distinct words
        readable[:] = column.plain | np.fromiter(map(unit.__getitem__, column.unit), bool, m)
        values[readable] = column.values[readable]
        decimals[:], sigfigs[:], zeros[:] = column.decimals, column.sigfigs, column.zeros
    for k in np.flatnonzero(given & ~readable).tolist():  # the texts not read in the column
        text = texts[k]
        assert text is not None
        try:
            reading = read_answer(text)
            if not isinstance(reading, Reading):
                continue
            values[k] = reading.number
        except Exception:  # noqa: S112  # unreadable, or not a real number: fits no key
            continue
        parsed = reading.parsed
        kinds[k] = KIND_CODES[parsed.kind]
        decimals[k], sigfigs[k], zeros[k] = parsed.decimals, parsed.sigfigs, parsed.zeros
        readable[k] = True
    return Numbers(tolerance, values, kinds, decimals, sigfigs, zeros, readable)


def _choice_tests(
    slot: Slot, texts: list[str | None]
) -> Callable[[CompiledBank, Variant], npt.NDArray[np.bool_]]:
    """Per version, which of the texts pick exactly its right choices."""
    options = lettered(slot)
    assert options is not None
    right = options.right

    def picks(bank: CompiledBank, variant: Variant) -> npt.NDArray[np.bool_]:
        memo: dict[str, bool] = {}
        out = np.zeros(len(texts), dtype=bool)
        for k, text in enumerate(texts):
            if text is None:
                continue
            if text not in memo:
                memo[text] = picks_right(options, right, text, variant)
            out[k] = memo[text]
        return out

    return picks


def lettered(slot: Slot) -> ChoiceInteraction | None:
    """The options of a slot answered with a letter, whose meaning a version's order of the
    options changes (a choice, a matching item); None for any other slot (true or false, a
    number, a text)."""
    options = choices_of(slot.question, slot.part)
    return options if options is not None and options.lettered else None


def picks_right(options: ChoiceInteraction, right: list[int], text: str, variant: Variant) -> bool:
    """Whether ``text`` picks exactly the ``right`` options (:attr:`ChoiceInteraction.right`)
    in the order ``variant`` showed them, as the grader reads letters."""
    picked = read_choices(text, options, variant)
    return not isinstance(picked, str) and sorted(picked) == right
