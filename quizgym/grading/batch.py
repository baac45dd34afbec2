"""The vectorized batch grader: partition → partial results → combine.

A class is graded one answer slot at a time. Within a slot, every response is reduced to a small
code: the student's variant (drawn by :func:`quizgym.solver.variant_codes`, the same draws as
:func:`~quizgym.solver.variant_of`) and the distinct answer text. Each distinct (variant, text)
pair is graded once:

- true/false, choices and free text through :func:`~quizgym.answers.grade_response`
  itself, so the verdict is the engine's by construction;
- numeric answers are read once each (:func:`quizgym.expr.read_answer`, memoized), then the whole
  array of distinct pairs is compared with :func:`quizgym.tolerance.compare_array` against the
  keys and then each mistake, in the engine's order. Only answers to a part whose key names an
  earlier part (error carried forward), and that miss the key, go back to the scalar path, with
  the student's own earlier answers in the grouping key.

Every response then gets the index of its verdict, and scores are one NumPy ``take``. A partition
is any subset of students (all of a student's answers are in one partition), so
:func:`grade_partition` runs unchanged on chunks of a large file or under ``map_partitions``; its
:class:`GradedPartition` and the :class:`~quizgym.analysis.Sums` made from it do not depend on row
order and merge by addition.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar, cast

import numpy as np
import numpy.typing as npt

from quizgym.analysis import OPTION_BLANK, OPTION_UNREADABLE
from quizgym.answers import (
    Status,
    Verdict,
    expected_number,
    grade_response,
    incompatible_unit,
    is_blank,
    numeric_verdict,
    read_bool,
    read_choices,
    unanswered,
)
from quizgym.arrays import IntArray, group, sorted_unique
from quizgym.expr import ParseFailure, Reading, read_answer
from quizgym.grading.decimals import PlainColumn, read_plain_column, reads_as_unit
from quizgym.grading.decisions import Decision, Decisions, answer_fingerprint, apply, variant_label
from quizgym.grading.table import ClassAnswers, Coded
from quizgym.grading.variants import Variants
from quizgym.grading.verdicts import STATUS_CODES, UNREAD, Verdicts
from quizgym.model import (
    AbsTolerance,
    AnyQuestion,
    Bank,
    DecimalsTolerance,
    slot_id,
)
from quizgym.solver import CompiledBank, ResolvedMistake, Slot, Variant, compiled, student_keys
from quizgym.tolerance import KIND_CODES, compare_array, hint_text
from quizgym.types import choices_of
from quizgym.units import convert

__all__ = [
    "STATUS_CODES",
    "GradedPartition",
    "GradedSlot",
    "factorize",
    "failed",
    "graded_slots",
    "grade_partition",
    "partitions",
]

SEEDS = Variants(rule="seeds")
"""Each student's version drawn with the seed of their row (no seed: drawn without one)."""

FAILED = "This answer could not be graded"
"""How the feedback of an answer the engine failed on begins (:func:`failed`)."""
OPTION_NONE = -3  # not a choice question (or several choices picked)

FloatArray = npt.NDArray[np.float64]
H = TypeVar("H", bound=Hashable)


def graded_slots(bank: CompiledBank, answers: ClassAnswers) -> list[Slot]:
    """The slots a class answered (some file has a column or an answer for them), in bank order."""
    return [s for s in bank.slots if s.id in answers.present]


@dataclass
class GradedSlot:
    """The responses to one slot: distinct verdicts, and each student's index into them."""

    slot: Slot
    verdicts: Verdicts
    codes: IntArray
    """Per student: index into ``verdicts``."""
    options: IntArray
    """Per student: bank index of the choice picked (true = 0, false = 1), or a negative code."""
    variants: list[Variant]
    """The distinct versions of the question in this partition."""
    variant_codes: IntArray
    """Per student: index into ``variants`` (one version when the slot does not vary)."""
    decided: frozenset[str] = frozenset()
    """The teacher's decisions (:func:`~quizgym.grading.decisions.answer_fingerprint`) that scored
    some response here."""
    numbers: PlainColumn | None = None
    """A numeric slot: per distinct verdict, its text read as a plain decimal (a column at
    once, :mod:`quizgym.grading.decimals`), for whoever reads the answers again."""

    @property
    def variant_labels(self) -> list[str]:
        """How reports name each version (``p1=0.2, p2=0.5``, ``order BAC``)."""
        return [v.label for v in self.variants]

    @property
    def tags(self) -> list[str | None]:
        """Per distinct verdict: its misconception tag."""
        return self.verdicts.tag

    @property
    def scores(self) -> FloatArray:
        """Per student: the score."""
        result: FloatArray = self.verdicts.score[self.codes]
        return result

    @property
    def statuses(self) -> IntArray:
        """Per student: :data:`STATUS_CODES` of the verdict."""
        result: IntArray = self.verdicts.status[self.codes]
        return result

    def verdict(self, row: int) -> Verdict:
        """The verdict of one student."""
        return self.verdicts[int(self.codes[row])]


@dataclass
class GradedPartition:
    """A graded set of students: the per-chunk table the outputs and statistics are built from."""

    answers: ClassAnswers
    slots: list[GradedSlot]

    @functools.cached_property
    def scores(self) -> FloatArray:
        """Students × slots matrix of scores (made once, read-only: a partition's verdicts do not
        change once it is graded, and the statistics, tables and feedback all read it)."""
        if not self.slots:
            matrix = np.zeros((len(self.answers), 0))
        else:
            matrix = np.column_stack([s.scores for s in self.slots])
        matrix.setflags(write=False)
        return matrix

    @property
    def max_scores(self) -> FloatArray:
        """Points of each slot."""
        return np.array([s.slot.points for s in self.slots], dtype=np.float64)


def partitions(answers: ClassAnswers, *, size: int) -> list[ClassAnswers]:
    """Split a class into partitions of at most ``size`` students (whole students each)."""
    if len(answers) <= size:
        return [answers]
    return [
        answers.take(range(start, min(start + size, len(answers))))
        for start in range(0, len(answers), size)
    ]


def grade_partition(
    bank: Bank | CompiledBank,
    answers: ClassAnswers,
    *,
    variants: Variants = SEEDS,
    decisions: Decisions | None = None,
    progress: Callable[[str], None] | None = None,
) -> GradedPartition:
    """Grade every response of a set of students.

    Args:
        bank: the bank, compiled (a plain bank is compiled for this call).
        answers: the students and their answers (one partition or the whole class).
        variants: how each student's variant is known (default: drawn from each row's seed).
        decisions: a teacher's decisions (``grade --review``): each scores every response to
            its slot and version with its answer text.
        progress: called with each slot's id once it is graded.

    Returns:
        The graded partition.
    """
    book = compiled(bank)
    slots = graded_slots(book, answers)
    drawn = variants.draws and any(book.varies(slot.question) for slot in slots)
    # The students' draw keys are hashed once, for every slot that varies.
    keys = (
        student_keys(book.bank.bank, answers.students, variants.draw_seeds(answers))
        if drawn
        else None
    )
    graded: dict[int, GradedSlot] = {}
    for k, slot in enumerate(slots):
        graded[k] = _grade_slot(book, slot, answers, variants, keys, decisions)
        if progress is not None:
            progress(slot.id)
    return GradedPartition(answers, [graded[k] for k in range(len(slots))])


# --- one slot ------------------------------------------------------------------------------------


def factorize(values: Sequence[H]) -> tuple[list[H], IntArray]:
    """Distinct values in order of appearance, and each value's index among them.

    A :class:`~quizgym.grading.table.Coded` column (or a slice of one) is returned as it is: its
    texts may then include some that none of its rows uses.
    """
    if isinstance(values, Coded):  # read dictionary-encoded: already factorized
        return cast(list[H], values.texts), values.codes
    index: dict[H, int] = dict.fromkeys(values, 0)
    for k, value in enumerate(index):
        index[value] = k
    codes = np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))
    return list(index), codes


def _grade_slot(
    bank: CompiledBank,
    slot: Slot,
    answers: ClassAnswers,
    variants: Variants,
    keys: npt.NDArray[np.uint64] | None,
    decisions: Decisions | None,
) -> GradedSlot:
    question = slot.question
    column = answers.column(slot.id)
    n = len(answers)
    distinct, vcodes = variants.of_class(bank, slot, answers, keys=keys)
    texts, tcodes = factorize(column)
    # Grouping key: variant, text, and (for error carried forward) the earlier parts' texts.
    key = vcodes * len(texts) + tcodes
    earlier: list[tuple[str, list[str | None], IntArray]] = []
    for name in slot.earlier:
        prior_texts, prior_codes = factorize(answers.column(slot_id(question.id, name)))
        earlier.append((name, prior_texts, prior_codes))
        # Renumber the groups so far (fewer than the rows) before widening the key: a coded
        # column's texts may count many more than its rows, and products would overflow.
        key = group(key)[2] * len(prior_texts) + prior_codes
    unique, first, inverse = group(key)
    pair_variants = vcodes[first]
    pair_texts = tcodes[first]
    pair_earlier: list[dict[str, str | None]] = (
        [
            {name: prior_texts[c] for name, prior_texts, codes in earlier if (c := codes[row]) >= 0}
            for row in first
        ]
        if earlier
        else [{}] * len(first)  # shared and never written to: no earlier parts
    )
    numbers: PlainColumn | None = None
    if slot.is_numeric:
        try:
            verdicts, numbers = _grade_numeric(
                bank, slot, distinct, pair_variants, texts, pair_texts, pair_earlier
            )
        except Exception:  # the array path failed as a whole: each pair on its own, guarded
            verdicts = Verdicts.of(
                [
                    _guarded(
                        slot,
                        partial(
                            grade_response,
                            bank,
                            question,
                            texts[t],
                            part=slot.part,
                            earlier={n: x for n, x in pair_earlier[k].items() if x is not None},
                            variant=distinct[v],
                        ),
                    )
                    for k, (v, t) in enumerate(zip(pair_variants, pair_texts, strict=True))
                ]
            )
    else:
        verdicts = Verdicts.of(
            [
                _guarded(
                    slot,
                    partial(
                        grade_response,
                        bank,
                        question,
                        texts[t],
                        part=slot.part,
                        variant=distinct[v],
                    ),
                )
                for v, t in zip(pair_variants, pair_texts, strict=True)
            ]
        )
    decided: frozenset[str] = frozenset()
    if decisions is not None and decisions.of(slot.id):
        decided = _decide(
            bank,
            slot,
            decisions.of(slot.id),
            verdicts,
            distinct,
            pair_variants,
            texts,
            pair_texts,
            pair_earlier,
        )
    options = np.full(len(unique), OPTION_NONE, dtype=np.int64)
    if choices_of(question, slot.part) is not None:
        for k, (v, t) in enumerate(zip(pair_variants, pair_texts, strict=True)):
            try:
                options[k] = _option(question, slot.part, distinct[v], texts[t])
            except Exception:  # counted as unreadable, as its verdict is
                options[k] = OPTION_UNREADABLE
    return GradedSlot(
        slot=slot,
        verdicts=verdicts,
        codes=inverse.reshape(-1).astype(np.int64),
        options=options[inverse.reshape(-1)] if n else options,
        variants=distinct,
        variant_codes=vcodes,
        decided=decided,
        numbers=numbers,
    )


def _decide(
    bank: CompiledBank,
    slot: Slot,
    decisions: Mapping[str, Decision],
    verdicts: Verdicts,
    variants: list[Variant],
    pair_variants: IntArray,
    texts: Sequence[str | None],
    pair_texts: IntArray,
    pair_earlier: list[dict[str, str | None]],
) -> frozenset[str]:
    """Apply a teacher's decisions to the distinct pairs they are on, in place.

    Returns:
        The answer prints of the decisions applied.
    """
    varies = bank.varies(slot.question)

    def read(k: int) -> bool:  # only an answer read is judged against the earlier answers
        return int(verdicts.status[k]) not in UNREAD

    used: set[str] = set()
    for k, (v, t) in enumerate(zip(pair_variants.tolist(), pair_texts.tolist(), strict=True)):
        text = texts[t]
        if text is None:
            continue
        earlier = [(name, pair_earlier[k].get(name)) for name in slot.earlier if read(k)]
        label = variant_label(
            slot.question, variants[v].label, text, varies=varies, earlier=earlier
        )
        key = answer_fingerprint(slot.id, label, text)
        decision = decisions.get(key)
        if decision is not None:
            verdicts[k] = apply(verdicts[k], decision)
            used.add(key)
    return frozenset(used)


def failed(slot: Slot, exc: BaseException) -> Verdict:
    """The verdict of one answer the engine failed on: invalid, 0 points, and why.

    One answer never stops a class: whatever the engine raises for it is caught, and the rest
    of the class is graded as if it were not there.
    """
    message = " ".join(str(exc).split())
    if len(message) > 160:
        message = message[:157] + "..."
    return Verdict(
        question=slot.id,
        status=Status.INVALID,
        score=0.0,
        max_score=slot.points,
        feedback=f"{FAILED} ({type(exc).__name__}: {message}); it is scored 0 until a teacher "
        "grades it by hand.",
    )


def _guarded(slot: Slot, grade: Callable[[], Verdict]) -> Verdict:
    """``grade()``, or :func:`failed` when it raises."""
    try:
        return grade()
    except Exception as exc:  # per-answer isolation: the class goes on
        return failed(slot, exc)


def _option(question: AnyQuestion, part: str | None, variant: Variant, text: str | None) -> int:
    if unanswered(question, text, part):
        return OPTION_BLANK
    assert text is not None
    options = choices_of(question, part)
    assert options is not None
    if options.boolean:  # true, then false
        value = read_bool(text)
        return OPTION_UNREADABLE if value is None else (0 if value else 1)
    picked = read_choices(text, options, variant)
    if isinstance(picked, str):
        return OPTION_UNREADABLE
    return picked[0] if len(picked) == 1 else OPTION_NONE


def _read_all(
    texts: Sequence[str | None], used: IntArray, known: Mapping[int, Reading]
) -> dict[int, Reading | ParseFailure | None | BaseException]:
    """Each distinct text a slot's pairs use, read once (None for a blank; what the reader
    raised, for an answer it failed on), but for those whose reading is ``known``."""
    read: dict[int, Reading | ParseFailure | None | BaseException] = {}
    for t in sorted_unique(used).tolist():
        if t in known:
            read[t] = known[t]
            continue
        try:
            read[int(t)] = None if is_blank(texts[t]) else read_answer(texts[t] or "")
        except Exception as exc:  # this answer's verdict says so; the others are read
            read[int(t)] = exc
    return read


def _grade_numeric(
    bank: CompiledBank,
    slot: Slot,
    variants: list[Variant],
    pair_variants: IntArray,
    texts: Sequence[str | None],
    pair_texts: IntArray,
    pair_earlier: list[dict[str, str | None]],
) -> tuple[Verdicts, PlainColumn | None]:
    """Grade distinct (variant, text) pairs of a numeric slot with the array comparator; also
    return each pair's text read as a plain decimal (None without pyarrow)."""
    tolerance = slot.tolerance
    assert tolerance is not None
    expected = [expected_number(slot, v, bank) for v in variants]
    keys = [bank.key(slot, v) for v in variants]
    m = len(pair_texts)
    # Plain decimals, a column at once, and plain decimals followed by the slot's own unit
    # (``2.30 nats``: nothing to convert); a slot that requires a unit judges the absence of
    # one on the single-answer path. The other texts are read one by one, but for a plain
    # decimal followed by another unit, whose reading is put together from the column.
    # The texts some pair uses (a coded column's texts may count many no pair uses), in order.
    present = np.zeros(len(texts), dtype=np.bool_)
    present[pair_texts] = True
    used = np.flatnonzero(present)
    column = read_plain_column([texts[t] for t in used.tolist()])
    at = (np.cumsum(present) - 1)[pair_texts]  # each pair's entry in the column
    known: dict[int, Reading] = {}
    # A plain decimal followed by a unit the slot's cannot be converted to is wrong whatever
    # its number: judged a column at a time too (but under error carried forward, where the
    # scalar path grades each miss).
    apart = np.zeros(m, dtype=bool)
    if column is None:
        plain = np.zeros(m, dtype=bool)
    else:
        kinds_typed = _unit_kinds(column.unit, slot.units)
        bare = column.plain if not (slot.units and slot.require_units > 0) else False
        plain = (bare | (kinds_typed == _KINDS.index("same")))[at]
        incompatible = kinds_typed == _KINDS.index("incompatible")
        other = kinds_typed == _KINDS.index("converted")
        if slot.earlier:
            other |= incompatible
        else:
            apart = incompatible[at]
        for r in np.flatnonzero(other).tolist():
            text, word = texts[int(used[r])], column.unit[r]
            assert text is not None
            number = read_answer(text.rstrip(" ")[: -len(word)])  # as the reader splits it
            if isinstance(number, Reading):
                known[int(used[r])] = Reading(
                    number.parsed, number.value, column.read_as[r], unit=word
                )
    alone = ~plain & ~apart
    read = _read_all(texts, pair_texts[alone], known)
    # Only the pairs read one by one are looked at one by one (None for the column's).
    others = np.flatnonzero(alone).tolist()
    readings: list[Reading | ParseFailure | None | BaseException] = [None] * m
    for k, t in zip(others, pair_texts[others].tolist(), strict=True):
        readings[k] = read[t]
    readable = plain.copy()
    readable[others] = [isinstance(readings[k], Reading) for k in others]
    values = np.zeros(m)
    kinds = np.zeros(m, dtype=np.int64)  # KIND_CODES["decimal"] for the plain ones
    decimals = np.zeros(m, dtype=np.int64)
    sigfigs = np.zeros(m, dtype=np.int64)
    zeros = np.zeros(m, dtype=np.int64)
    if column is not None:
        rows = at[plain]
        values[plain], decimals[plain] = column.values[rows], column.decimals[rows]
        sigfigs[plain], zeros[plain] = column.sigfigs[rows], column.zeros[rows]
    # Units: the number in the slot's unit is scale·typed + offset (1 and 0 without a unit).
    scales = np.ones(m)
    offsets = np.zeros(m)
    for k in others:
        reading = readings[k]
        if isinstance(reading, Reading):
            try:
                values[k] = reading.number
                kinds[k] = KIND_CODES[reading.parsed.kind]
                decimals[k] = reading.parsed.decimals
                sigfigs[k] = reading.parsed.sigfigs
                zeros[k] = reading.parsed.zeros
                if reading.unit:
                    conversion = convert(reading.unit, slot.units)
                    readable[k] = conversion.usable
                    if conversion.kind == "converted":  # as numeric_verdict applies it
                        scales[k], offsets[k] = conversion.scale, conversion.offset
            except Exception as exc:  # this answer fails alone
                readings[k], readable[k] = exc, False
    converted = (scales != 1) | (offsets != 0)
    # Compared in the slot's unit, as the scalar path does (in_slot_unit): under a band, and
    # for a unit with an offset (degF for degC); else the target in the unit typed.
    band = isinstance(tolerance, AbsTolerance | DecimalsTolerance)
    in_slot = converted & (band | (offsets != 0))
    values = np.where(in_slot, scales * values + offsets, values)
    kinds = np.where(in_slot, KIND_CODES["mixed"], kinds)
    retarget = converted & ~in_slot

    def matches(targets: list[float]) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int8]]:
        """Each pair's answer against its variant's entry of ``targets`` (NaN: none)."""
        table = np.array(targets, dtype=np.float64)[pair_variants]
        table = np.where(retarget, (table - offsets) / scales, table)
        return compare_array(
            values=values,
            keys=table,
            tolerance=tolerance,
            kinds=kinds,
            decimals=decimals,
            sigfigs=sigfigs,
            zeros=zeros,
        )

    ok, hints = matches([k.number for k in keys])
    ok &= readable
    # Which mistake (first match wins) each pair matches; -1 none.
    which = np.full(m, -1, dtype=np.int64)
    resolved = [bank.mistakes(slot, v) for v in variants]
    # With error carried forward, a miss depends on the student's own earlier answers: those
    # pairs take the scalar path below, so no mistake is matched here.
    longest = 0 if slot.earlier else max((len(r) for r in resolved), default=0)
    open_ = readable & ~ok
    for position in range(longest):
        hit, _ = matches([r[position].value if position < len(r) else np.nan for r in resolved])
        hit &= open_
        which[hit] = position
        open_ &= ~hit

    # Plain Python values for the loop below (indexing NumPy arrays one element at a time costs
    # more than the work done with the element).
    pv, pt, correct = pair_variants.tolist(), pair_texts.tolist(), ok.tolist()
    matched, codes, is_plain = which.tolist(), hints.tolist(), plain.tolist()
    hint_of: dict[int, str] = {}

    def hint(code: int) -> str:
        if code not in hint_of:
            hint_of[code] = hint_text(code=code, tolerance=tolerance) or ""
        return hint_of[code]

    def verdict(k: int, reading: Reading | ParseFailure | None) -> Verdict:
        v = pv[k]
        if slot.earlier and (is_plain[k] or isinstance(reading, Reading)) and not correct[k]:
            return grade_response(
                bank,
                slot.question,
                texts[pt[k]],
                part=slot.part,
                earlier={n: t for n, t in pair_earlier[k].items() if t is not None},
                variant=variants[v],
            )
        mistake = resolved[v][matched[k]] if matched[k] >= 0 else None
        feedback = "" if correct[k] or mistake else hint(codes[k])
        return numeric_verdict(
            slot, expected[v], reading, correct=correct[k], mistake=mistake, feedback=feedback
        )

    # Plain decimals are scored a column at a time (what numeric_verdict makes of each one);
    # under error carried forward, a plain miss takes the scalar path above.
    columnar = plain & ok if slot.earlier else plain
    scalar = np.flatnonzero(~columnar & ~apart)
    objects = Verdicts.of(
        [
            failed(slot, reading)
            if isinstance(reading := readings[k], BaseException)
            else _guarded(slot, partial(verdict, k, reading))
            for k in scalar.tolist()
        ]
    )
    if column is None:
        return objects, None
    where = np.flatnonzero(columnar)
    columns = _plain_verdicts(
        slot,
        expected,
        resolved,
        hint,
        variants=pair_variants[where],
        correct=ok[where],
        mistakes=which[where],
        hints=hints[where],
        read_as=[column.read_as[r] for r in at[where].tolist()],
        values=column.values[at[where]],
    )
    parts = [(where, columns), (scalar, objects)]
    if apart.any():
        rows = at[apart].tolist()
        parts.append(
            (
                np.flatnonzero(apart),
                _incompatible_verdicts(
                    slot,
                    [expected[v] for v in pair_variants[apart].tolist()],
                    read_as=[column.read_as[r] for r in rows],
                    units=[column.unit[r] for r in rows],
                ),
            )
        )
    return Verdicts.scattered(m, parts), column.take(at)


_KINDS = ("", "same", "converted", "incompatible", "unknown")
"""The codes of :func:`_unit_kinds`: no unit word, or :class:`~quizgym.units.Conversion`'s kind."""


def _unit_kinds(units: Sequence[str], wanted: str | None) -> npt.NDArray[np.int8]:
    """Per text of a plain column: how the unit word after the number relates to the slot's
    units, as a code of :data:`_KINDS` (:class:`~quizgym.units.Conversion`'s kind: ``same``,
    ``converted``, ``incompatible``, ``unknown``), or that of '' when there is no word or it is
    not read as a unit (``2.30 e`` is 2.30·e). A text in the slot's own unit (``2.30 nats`` for
    nats) is the number as typed, nothing to convert or to doubt."""
    kind: dict[str, int] = {"": 0}
    for word in set(units) - {""}:
        kind[word] = _KINDS.index(convert(word, wanted).kind) if reads_as_unit(word) else 0
    return np.fromiter(map(kind.__getitem__, units), dtype=np.int8, count=len(units))


def _incompatible_verdicts(
    slot: Slot, expected: list[str], *, read_as: list[str], units: list[str]
) -> Verdicts:
    """The verdicts of plain decimals followed by a unit that cannot be converted to the
    slot's (``11.9 nats`` for %), a column at a time: field for field what
    :func:`~quizgym.answers.numeric_verdict` makes of each (wrong, with the unit's note and
    doubt, no value)."""
    n = len(expected)
    said = {typed: incompatible_unit(typed, slot.units) for typed in set(units)}
    return Verdicts(
        question=[slot.id] * n,
        status=np.full(n, STATUS_CODES[Status.INCORRECT], dtype=np.int64),
        score=np.zeros(n),
        max_score=np.full(n, float(slot.points)),
        read_as=read_as,
        feedback=[said[typed][0] for typed in units],
        tag=[None] * n,
        expected=expected,
        needs_review=np.zeros(n, dtype=bool),
        value=np.zeros(n),
        has_value=np.zeros(n, dtype=bool),
        doubt=[said[typed][1] for typed in units],
        machine=[None] * n,
    )


def _plain_verdicts(
    slot: Slot,
    expected: Sequence[str],
    resolved: Sequence[Sequence[ResolvedMistake]],
    hint: Callable[[int], str],
    *,
    variants: IntArray,
    correct: npt.NDArray[np.bool_],
    mistakes: IntArray,
    hints: npt.NDArray[np.int8],
    read_as: list[str],
    values: FloatArray,
) -> Verdicts:
    """The verdicts of plain decimals (no unit typed, none required), a column at a time:
    field for field what :func:`~quizgym.answers.numeric_verdict` makes of each (no unit
    typed, so none to judge).

    Args:
        slot: the slot.
        expected: per variant, the key as shown.
        resolved: per variant, its mistakes in the order they are tried.
        hint: the precision hint of a comparison code.
        variants: per answer, its variant.
        correct: per answer, whether it matched the key.
        mistakes: per answer, the mistake it matched (-1: none).
        hints: per answer, the comparison's hint code.
        read_as: per answer, how it reads.
        values: per answer, its value.
    """
    n = len(variants)
    width = max((len(r) for r in resolved), default=0) + 1
    credit_of = np.zeros((len(resolved), width))  # the last column: no mistake matched
    for v, found in enumerate(resolved):
        credit_of[v, : len(found)] = [m.credit for m in found]
    credit = np.where(correct, 1.0, credit_of[variants, np.where(mistakes >= 0, mistakes, -1)])
    status = np.where(
        credit >= 1,
        STATUS_CODES[Status.CORRECT],
        np.where(credit > 0, STATUS_CODES[Status.PARTIAL], STATUS_CODES[Status.INCORRECT]),
    ).astype(np.int64)
    # Feedback and tag from small tables: per (variant, mistake), the last column for no
    # mistake (the precision hint, by the comparison's code); none for a right answer.
    codes = sorted_unique(hints).tolist()
    said = np.empty((len(resolved), width + len(codes)), dtype=object)
    said[:] = ""
    named = np.full((len(resolved), width), None, dtype=object)
    for v, found in enumerate(resolved):
        for k, m in enumerate(found):
            said[v, k], named[v, k] = m.feedback, m.tag
        for c, code in enumerate(codes):
            said[v, width + c] = hint(code)
    missed = np.where(mistakes >= 0, mistakes, width + np.searchsorted(codes, hints))
    feedback = np.where(correct, "", said[variants, missed]).tolist()
    untagged = np.full(n, None, dtype=object)
    tags = np.where(correct | (mistakes < 0), untagged, named[variants, np.maximum(mistakes, 0)])
    return Verdicts(
        question=[slot.id] * n,
        status=status,
        score=slot.points * credit,
        max_score=np.full(n, float(slot.points)),
        read_as=read_as,
        feedback=feedback,
        tag=tags.tolist(),
        expected=[expected[v] for v in variants.tolist()],
        needs_review=np.zeros(n, dtype=bool),
        value=np.asarray(values, dtype=np.float64),
        has_value=np.ones(n, dtype=bool),
        doubt=[""] * n,
        machine=[None] * n,
    )
