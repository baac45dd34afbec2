"""The sufficient statistics of a graded partition: what :func:`quizgym.analysis.combine` needs.

Per slot, counts of (mark, total) pairs, of (option, mark, total) and of (tag, total), plus a
histogram of totals; they merge by adding counts, so a class graded in chunks has the statistics
of the whole.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from quizgym.analysis import DECIDED, PICKS_ANSWERED, SILENT_SHOWN, SlotInfo, Sums, WrongCounts
from quizgym.answers import Status, fold_text, read_choices, unanswered
from quizgym.arrays import distinct, group, objects
from quizgym.grading.batch import GradedPartition, GradedSlot, factorize
from quizgym.grading.causes import cause_of
from quizgym.grading.splits import splits_of
from quizgym.grading.table import Coded
from quizgym.grading.verdicts import STATUS_CODES, STATUSES, Verdicts
from quizgym.types import choices_of, numeric_of

__all__ = ["count", "partial_sums"]

WRONG = (Status.INCORRECT, Status.PARTIAL)
Factorized = tuple[npt.NDArray[Any], npt.NDArray[np.int64]]
"""A column as (its sorted distinct values, each row's index among them)."""


def _factorized(column: npt.ArrayLike) -> Factorized:
    """Factorize a column: O(n) grouping for small non-negative codes, else one sort."""
    a = np.asarray(column)
    if a.dtype.kind in "iu" and len(a) and a.min() == a.max():  # one value (one version)
        return a[:1].astype(np.int64), np.zeros(len(a), dtype=np.int64)
    if a.dtype.kind in "iu" and len(a) and a.min() >= 0:
        u, _, inv = group(a.astype(np.int64))
    else:
        u, inv = distinct(a)
    return u, inv.reshape(-1).astype(np.int64, copy=False)


def _taken(table: npt.NDArray[Any], codes: npt.NDArray[np.int64]) -> Factorized:
    """``_factorized(table[codes])`` without sorting the long column: factorize the short table."""
    u, inv = np.unique(table, return_inverse=True)
    return u, inv.reshape(-1)[codes]


def count(*columns: npt.ArrayLike | Factorized) -> Counter[Any]:
    """Counts of the distinct rows of several equal-length columns (raw or :data:`Factorized`)."""
    coded = [c if isinstance(c, tuple) else _factorized(c) for c in columns]
    if not len(coded[0][1]):
        return Counter()
    combined = np.zeros(len(coded[0][1]), dtype=np.int64)
    for u, c in coded:
        combined = combined * len(u) + c
    cells = math.prod(len(u) for u, _ in coded)
    if cells <= 4 * len(combined) + 1024:  # a dense table: count in O(n) instead of sorting
        table = np.bincount(combined, minlength=cells)
        keys = np.flatnonzero(table)
        counts = table[keys]
    else:
        keys, counts = np.unique(combined, return_counts=True)
    out: Counter[Any] = Counter()
    for key, count in zip(keys.tolist(), counts.tolist(), strict=True):
        parts = []
        for u, _ in reversed(coded):
            key, rest = divmod(key, len(u))
            parts.append(u[rest].item())
        out[tuple(reversed(parts))] = count
    return out


def _tag_codes(tags: Sequence[str | None]) -> tuple[list[str], npt.NDArray[np.int64]]:
    """The distinct tags of some verdicts ('' for none: a verdict without a mistake's tag),
    sorted, and each verdict's index among them: few tags, each code found by lookup."""
    named = {tag: "" if tag is None else tag for tag in set(tags)}
    names = sorted(set(named.values()))
    code_of = {tag: names.index(name) for tag, name in named.items()}
    return names, np.fromiter(map(code_of.__getitem__, tags), np.int64, len(tags))


def _rename(counter: Counter[Any], names: Sequence[str]) -> Counter[Any]:
    """Replace the code that starts each key by its name, adding counts that merge."""
    out: Counter[Any] = Counter()
    for (code, *rest), count in counter.items():
        out[(names[code], *rest)] += count
    return out


def partial_sums(graded: GradedPartition) -> Sums:
    """The sufficient statistics of one graded partition."""
    scores = graded.scores
    total = scores.sum(axis=1) if scores.size else np.zeros(len(graded.answers))
    slots = [
        SlotInfo.of(
            g.slot.id, g.slot.question, g.slot.points, numeric=g.slot.is_numeric, part=g.slot.part
        )
        for g in graded.slots
    ]
    sums = Sums(slots=slots, n=len(graded.answers))
    # Each column is factorized once and its codes reused by every count it enters.
    totals = _factorized(total)
    sums.totals = Counter({k[0]: v for k, v in count(totals).items()})
    if graded.slots:  # who answered nothing: every slot blank (as the machine read it)
        blank = STATUS_CODES[Status.BLANK]
        none = np.logical_and.reduce([g.statuses == blank for g in graded.slots])
        silent = np.flatnonzero(none)
        sums.silent = len(silent)
        sums.silent_names = [graded.answers.students[r] for r in silent[:SILENT_SHOWN].tolist()]
    for g, info in zip(graded.slots, slots, strict=True):
        x = _taken(g.verdicts.score, g.codes)
        sums.marks.append(count(x, totals))
        if info.options:
            sums.options.append(count(g.options, x, totals))
        else:
            sums.options.append(Counter())
        # counted by code, then named: few distinct tags and variants, many students
        tags = g.tags
        if tags.count(None) + tags.count("") == len(tags):  # no tag at all: counted at C speed
            sums.tags.append(Counter())
        else:
            names, tag_of = _tag_codes(tags)
            tag_codes = tag_of[g.codes]
            has_tag = tag_codes != names.index("") if "" in names else np.ones(len(g.codes), bool)
            tagged = (
                count((np.arange(len(names)), tag_codes[has_tag]), (totals[0], totals[1][has_tag]))
                if has_tag.any()
                else Counter()
            )
            sums.tags.append(_rename(tagged, names))
        by_variant = count(g.variant_codes, x)
        sums.variants.append(_rename(by_variant, g.variant_labels))
        sums.groups.append(_groups(g, x, totals))
        counts = np.bincount(g.codes, minlength=len(g.verdicts))
        per_verdict = counts.tolist()
        machines = g.verdicts.machines()
        by_status = np.bincount(machines.status, weights=counts, minlength=len(STATUSES))
        statuses: Counter[str] = Counter(
            {s.value: int(n) for s, n in zip(STATUSES, by_status.tolist(), strict=True) if n}
        )
        invalid = STATUS_CODES[Status.INVALID]
        decided = sum(per_verdict[k] for k in g.verdicts.decided if machines.status[k] == invalid)
        if decided:
            statuses[DECIDED] += decided
        sums.statuses.append(statuses)
        answers = _Answers(graded, g, per_verdict, machines)
        sums.causes.append(_causes(g, answers))
        sums.non_answers += _non_answers(answers)
        sums.picks.append(_picks(g, answers, totals) if info.choices else Counter())
        sums.wrong.append(_wrong(g, answers) if info.numeric else WrongCounts())
    return sums


def _groups(
    g: GradedSlot, x: Factorized, totals: Factorized
) -> Counter[tuple[str, str, float, float]]:
    """(split, group, mark, total) counts of a varying slot (:mod:`quizgym.grading.splits`)."""
    out: Counter[tuple[str, str, float, float]] = Counter()
    for split, labels in splits_of(g.slot.question, g.variants):
        names, of_variant = factorize(labels)
        codes = np.asarray(of_variant, dtype=np.int64)[g.variant_codes]
        counted = count((np.arange(len(names)), codes), x, totals)
        for (code, mark, total), n in counted.items():
            out[split, names[code], mark, total] += n
    return Counter(dict(sorted(out.items())))


class _Answers:
    """One slot's distinct verdicts with a response that got each (to read it again)."""

    def __init__(
        self, graded: GradedPartition, g: GradedSlot, per_verdict: list[int], machines: Verdicts
    ) -> None:
        self.counts = per_verdict
        self.machines = machines
        """Each verdict as the machine gave it (a teacher's decision undone)."""
        rows = np.full(len(g.verdicts), -1, dtype=np.int64)
        rows[g.codes[::-1]] = np.arange(len(g.codes) - 1, -1, -1)  # the first row of each code
        column = graded.answers.column(g.slot.id)
        given = rows >= 0
        first = np.maximum(rows, 0)
        if isinstance(column, Coded) and len(column):  # straight from the distinct texts
            texts = objects([*column.texts, None])
            self.texts = texts[np.where(given, column.codes[first], len(texts) - 1)].tolist()
        else:
            self.texts = [column[r] if r >= 0 else None for r in rows.tolist()]
        variants = objects([*g.variants, None])
        picked = np.where(given, g.variant_codes[first] if len(g.codes) else 0, len(g.variants))
        self.variants = variants[picked].tolist()


def _causes(g: GradedSlot, answers: _Answers) -> Counter[str]:
    """The unreadable answers of a slot by cause."""
    out: Counter[str] = Counter()
    machines = answers.machines
    for k in np.flatnonzero(machines.status == STATUS_CODES[Status.INVALID]).tolist():
        text, n = answers.texts[k], answers.counts[k]
        if n and text is not None:
            out[
                cause_of(g.slot.question, text, feedback=machines.feedback[k], part=g.slot.part)
            ] += n
    return out


def _non_answers(answers: _Answers) -> Counter[str]:
    """The answers of a slot that say "no answer" (``idk``, ``?``), graded as blanks, by text."""
    out: Counter[str] = Counter()
    blank = STATUS_CODES[Status.BLANK]
    for k in np.flatnonzero(answers.machines.status == blank).tolist():
        text, n = answers.texts[k], answers.counts[k]
        if n and text is not None and text.strip():
            out[fold_text(text)] += n
    return out


def _picks(g: GradedSlot, answers: _Answers, totals: Factorized) -> Counter[tuple[int, float]]:
    """(choice, total) per choice each student picked; (PICKS_ANSWERED, total) per student who
    gave a readable answer."""
    question = choices_of(g.slot.question)
    assert question is not None and question.multiple
    by_code = count(g.codes, totals)
    picked: dict[int, list[int]] = {}
    for code, (text, variant) in enumerate(zip(answers.texts, answers.variants, strict=True)):
        if text is None or variant is None or unanswered(g.slot.question, text, g.slot.part):
            continue
        try:
            choices: list[int] | str = read_choices(text, question, variant)
        except Exception as exc:  # graded as one answer the engine failed on: picks nothing
            choices = str(exc)
        if not isinstance(choices, str):
            picked[code] = [PICKS_ANSWERED, *choices]
    out: Counter[tuple[int, float]] = Counter()
    for (code, total), n in by_code.items():
        for choice in picked.get(code, ()):
            out[choice, total] += n
    return out


def _wrong(g: GradedSlot, answers: _Answers) -> WrongCounts:
    """The wrong (or partly right) readable numeric answers of a slot, by value and mistake."""
    question = g.slot.question
    # Whether each student may have their own numbers: from the bank, not from the students in
    # this partition, so every partition counts alike.
    numeric = numeric_of(question)
    varies = numeric is not None and any(
        not isinstance(p, int | float) for p in numeric.question.params.values()
    )
    machines = answers.machines
    counts = np.asarray(answers.counts, dtype=np.int64)
    wrong = np.isin(machines.status, [STATUS_CODES[s] for s in WRONG]) & machines.has_value
    at = np.flatnonzero(wrong & (counts > 0))
    if not len(at):
        return WrongCounts()
    names, tag_of = _tag_codes(machines.tag)
    tag_codes = tag_of[at]
    if varies:
        shown, value_codes = [""], np.zeros(len(at), dtype=np.int64)
    else:  # each distinct value shown once; two values may show alike, and their counts add
        values, value_of = distinct(machines.value[at])
        shown, shown_of = factorize([f"{v:.6g}" for v in values.tolist()])
        value_codes = shown_of[value_of]
    cells = np.bincount(value_codes * len(names) + tag_codes, weights=counts[at]).astype(np.int64)
    filled = np.flatnonzero(cells)
    return WrongCounts([(shown, names, filled // len(names), filled % len(names), cells[filled])])
