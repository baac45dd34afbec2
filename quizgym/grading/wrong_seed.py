"""A graded class and its seed cells in, the students whose answers fit another seed's versions
much better than their own (and the seed cells an issue manifest contradicts) out, for review.

A typo in a seed cell (``u002,4`` for ``u002,3``) grades a student against numbers they never
saw: their right answers score 0, and nothing else looks wrong.
:mod:`~quizgym.grading.wrong_version` asks of a whole slot whether it fits another version; this
asks it of each student, and never changes a score (the teacher decides: the flag is a row of
``review.csv``, a line of the report and of the run's summary).

**Candidates.** Each is a seed, drawn for the student as ``render --roster`` draws (their id and
the seed): the class's seeds (the most used, at most :data:`MOST_COMMON`, each on two rows or
more and on one in a hundred), the run's ``--seed``, and the near misses of the student's seed
cell (:func:`near_misses`: a digit replaced by its neighbour on the keyboard's number row, the
number one more or one less, two adjacent digits swapped, a digit dropped or typed twice) — only
one less and one more when the cell is a class seed: a typo makes a seed of its own, and the
seed a class shares is no one's slip (the seeds beside it are another printing's, and tell the
class's chance rate). Graded ``--issued``, the student's own versions are the manifest's: the
candidates are then the seed cell, the manifest's seeds (the student's and the class's) and the
class's seeds; a seed cell that differs from the seed the manifest issued to the student, or
that draws other versions than it issued, is reported either way.

**Counts**, per student and candidate, over the slots that vary (numeric, and lettered choices
in a shuffled order: choice questions, matching items), where the two versions' right answers
differ and the student answered: ``other``, answers right for the candidate and not for their
own version; ``own``, the reverse. Answers are read and compared as
:mod:`~quizgym.grading.wrong_version` does (the grader's own readings and
:func:`~quizgym.tolerance.compare_array`), and "right for their own version" is the grader's
verdict, so the check and the grades cannot disagree.

**Rule.** A student is flagged with their best candidate when ``other >= 3``, ``other > 2 · own``
and a one-sided binomial test rejects chance: under "their own version is right", each question
answered neither way fits the candidate by chance with probability ``p`` (a question's parts are
one trial: a misread number moves them together), and the probability of at least as many
questions fitting, times the number of candidates tried for the student (Bonferroni), must be at
most :data:`ALPHA`. ``p`` is the class's rate: how often an answer not right for its own version
fits a candidate's key, over the students looked at who show no sign (a typo's answers fit every
candidate that draws their sheet's versions), with :data:`PRIOR_TRIALS` trials at the floor
added; never below the floor, :data:`NUMERIC_CHANCE` for a number, ``1 / (k − 1)`` for a choice
of ``k`` (a wrong letter is one of the other ``k − 1``). Where wrong answers often land on other
versions' keys (parameters a factor of 2 apart, and students off by that factor), the rate says
so and the bar rises.

Only students with at least 3 answers not right for their own version are looked at, and a
numeric question with more than :data:`MOST_KEYED` versions is left out (its keys are worked out
exactly, one per version: the class-level check still covers it). The counts merge by addition
and the decision is made once for the whole class, so a class graded in pieces is flagged as a
whole one is.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from quizgym.answers import Status
from quizgym.arrays import group
from quizgym.grading.batch import GradedPartition, GradedSlot
from quizgym.grading.table import Coded
from quizgym.grading.variants import Variants
from quizgym.grading.verdicts import STATUS_CODES
from quizgym.grading.wrong_version import Numbers, lettered, picks_right, read_numbers
from quizgym.solver import CompiledBank, Variant
from quizgym.solver.variants import student_keys
from quizgym.tolerance import KIND_CODES, compare_array
from quizgym.types import ChoiceInteraction

__all__ = [
    "ALPHA",
    "SeedEvidence",
    "StudentFlag",
    "common_seeds",
    "near_misses",
    "poisson_binomial_tail",
    "seed_evidence",
]

MIN_OTHER = 3
"""The fewest answers that must fit the candidate (and not the student's own version)."""
ALPHA = 0.005
"""The chance allowed, per student, of flagging one whose own versions are right (Bonferroni over
the candidates tried; the chances of a fit never taken below their floors)."""
NUMERIC_CHANCE = 0.01
"""The least chance assumed that a number not right for its own version fits another's key."""
PRIOR_TRIALS = 50
"""The class's rate of chance fits starts as this many trials at the floor: a small class
(few answers to learn it from) is judged at about the floor."""
MOST_COMMON = 8
"""At most this many of the class's seeds are candidates for every student."""
SHARE = 100
"""A class seed is on at least one row in this many (and two)."""
MOST_KEYED = 1024
"""A numeric question with more versions than this is left out (one exact key per version)."""

_CORRECT = STATUS_CODES[Status.CORRECT]
_BLANK = STATUS_CODES[Status.BLANK]
_ROW = "1234567890"
"""The keyboard's number row: a digit's neighbours are the keys beside it."""


def common_seeds(counts: Counter[int]) -> tuple[int, ...]:
    """The class's seeds that are candidates for every student: those of at least two rows and
    one in :data:`SHARE` of them (two students' same typo is no class seed), the most used first
    (at most :data:`MOST_COMMON`)."""
    least = max(2, math.ceil(sum(counts.values()) / SHARE))
    ranked = sorted((s for s, n in counts.items() if n >= least), key=lambda s: (-counts[s], s))
    return tuple(ranked[:MOST_COMMON])


@functools.lru_cache(maxsize=4096)
def near_misses(seed: int) -> tuple[int, ...]:
    """The seeds one slip of the fingers away from ``seed``, typed as digits: one more or one
    less, a digit replaced by a neighbour on the number row, two adjacent digits swapped, a digit
    dropped or typed twice (``seed`` itself left out)."""
    text = str(seed)
    found = [seed - 1, seed + 1]
    for i, digit in enumerate(text):
        at = _ROW.index(digit)
        for j in (at - 1, at + 1):
            if 0 <= j < len(_ROW):
                found.append(int(text[:i] + _ROW[j] + text[i + 1 :]))
        if i + 1 < len(text):
            found.append(int(text[:i] + text[i + 1] + text[i] + text[i + 2 :]))
        if len(text) > 1:
            found.append(int(text[:i] + text[i + 1 :]))
        found.append(int(text[:i] + digit + text[i:]))
    return tuple(s for s in dict.fromkeys(found) if s >= 0 and s != seed)


@dataclass(frozen=True)
class Suspect:
    """A candidate that fits one student's answers clearly better than their own versions."""

    own: str
    """How their own versions are named (``own seed 4``, ``the issued versions``)."""
    other: str
    """The candidate (``seed 3``)."""
    own_count: int
    other_count: int
    trials: tuple[str, ...]
    """The slots answered neither way that could tell the two apart."""
    hits: tuple[str, ...]
    """Those of them right for the candidate."""
    candidates: int
    """How many candidates were tried for the student."""


@dataclass(frozen=True)
class Evidence:
    """What one student's row showed: a seed cell the manifest contradicts, better fits."""

    student: str
    contradiction: str = ""
    suspects: tuple[Suspect, ...] = ()


@dataclass(frozen=True)
class StudentFlag:
    """One flagged student, for review."""

    student: str
    own: str
    """Their own versions as the run graded them (``own seed 4``)."""
    fits: str
    """The candidate their answers fit (``seed 3``), or '' (a contradiction alone)."""
    text: str
    """The line: ``u002: fits seed 3 on 4 slots, own seed 4 on 0``."""
    advice: str
    """What the teacher can do."""


@dataclass
class SeedEvidence:
    """The evidence of a partition, or of a class once merged (see the module docs)."""

    rows: list[Evidence] = field(default_factory=list)
    """The students with something to show, in the order of the submissions."""
    trials: Counter[str] = field(default_factory=Counter)
    """slot → answers not right for their own version held against a candidate."""
    hits: Counter[str] = field(default_factory=Counter)
    """slot → those of them right for the candidate."""
    floors: dict[str, float] = field(default_factory=dict)
    """slot → the least chance of a hit assumed (see the module docs)."""
    questions: dict[str, str] = field(default_factory=dict)
    """slot → its question (a question's parts are one trial)."""
    rule: str = ""

    def absorb(self, other: SeedEvidence) -> None:
        """Add a later partition's evidence and counts to these, in place."""
        self.rows += other.rows
        self.trials.update(other.trials)
        self.hits.update(other.hits)
        self.floors.update(other.floors)
        self.questions.update(other.questions)
        self.rule = self.rule or other.rule

    def chance(self, slot: str) -> float:
        """The chance that an answer of ``slot`` not right for its own version fits another
        version's key: the class's rate, with :data:`PRIOR_TRIALS` trials at the floor added;
        never below the floor."""
        floor = self.floors.get(slot, 1.0)
        estimate = (self.hits[slot] + PRIOR_TRIALS * floor) / (self.trials[slot] + PRIOR_TRIALS)
        return max(floor, estimate)

    def flags(self) -> list[StudentFlag]:
        """The flagged students, in the order of the submissions."""
        out = []
        for row in self.rows:
            best: tuple[float, int, Suspect] | None = None
            for suspect in row.suspects:
                chances = {slot: self.chance(slot) for slot in suspect.trials}
                tail = _tail(suspect, chances, self.questions)
                if suspect.candidates * tail > ALPHA:
                    continue
                if best is None or (tail, -suspect.other_count) < best[:2]:
                    best = (tail, -suspect.other_count, suspect)
            if best is None and not row.contradiction:
                continue
            parts = [row.contradiction] if row.contradiction else []
            own, fits = "", ""
            if best is not None:
                s = best[2]
                own, fits = s.own, s.other
                slots = "slot" if s.other_count == 1 else "slots"
                parts.append(f"fits {fits} on {s.other_count} {slots}, {own} on {s.own_count}")
            if self.rule == "issued":
                advice = (
                    "graded as issued, no score changed: check the seed cell and the manifest "
                    "(grade with the right one)"
                )
            else:
                advice = "no score changed: a typo in the seed cell? correct it and grade again"
            out.append(
                StudentFlag(
                    student=row.student,
                    own=own,
                    fits=fits,
                    text=f"{row.student}: " + "; ".join(parts),
                    advice=advice,
                )
            )
        return out


def _tail(suspect: Suspect, chances: dict[str, float], questions: dict[str, str]) -> float:
    """P(at least as many questions fit by chance), each question one trial."""
    miss: dict[str, float] = {}
    for slot in suspect.trials:
        q = questions.get(slot, slot)
        miss[q] = miss.get(q, 1.0) * (1.0 - chances.get(slot, 1.0))
    hit = {questions.get(slot, slot) for slot in suspect.hits}
    return poisson_binomial_tail([1.0 - m for m in miss.values()], len(hit))


def poisson_binomial_tail(p: Sequence[float], k: int) -> float:
    """P(X ≥ k) for X the number of successes of independent trials with chances ``p``."""
    if k <= 0:
        return 1.0
    dist = [1.0]
    for chance in p:
        nxt = [0.0] * (len(dist) + 1)
        for j, mass in enumerate(dist):
            nxt[j] += mass * (1.0 - chance)
            nxt[j + 1] += mass * chance
        dist = nxt
    return float(sum(dist[k:]))


# --- one partition --------------------------------------------------------------------------------


def seed_evidence(
    bank: CompiledBank,
    graded: GradedPartition,
    versions: Variants,
    *,
    seeds: Sequence[int] = (),
) -> SeedEvidence:
    """The evidence of one graded partition (see the module docs).

    Args:
        bank: the compiled bank.
        graded: the graded partition.
        versions: the run's rule for versions.
        seeds: the class's seeds that are candidates for every student (:func:`common_seeds`).
    """
    out = SeedEvidence(rule=versions.rule)
    answers = graded.answers
    issued = versions.issued
    if not len(answers) or (issued is not None and issued.mode == "pools"):
        return out
    held = [g for g in graded.slots if _held(bank, g)]
    contradictions = _contradictions(bank, graded, versions) if issued is not None else {}
    wrong = np.zeros(len(answers), dtype=np.int64)
    for g in held:
        status = g.verdicts.status[g.codes]
        wrong += (status != _BLANK) & (status != _CORRECT)
    rows = np.flatnonzero(wrong >= MIN_OTHER)
    suspects: dict[int, list[Suspect]] = {}
    if len(rows) and held:
        suspects = _suspects(bank, graded, held, versions, rows, seeds, out)
    for row in sorted({*contradictions, *suspects}):
        out.rows.append(
            Evidence(
                answers.students[row],
                contradictions.get(row, ""),
                tuple(suspects.get(row, ())),
            )
        )
    return out


def _held(bank: CompiledBank, g: GradedSlot) -> bool:
    """Whether a slot takes part: it varies, is numeric (with few enough versions) or answered
    with a letter (a choice, a matching item)."""
    question = g.slot.question
    if not bank.varies(question) or not len(g.codes):
        return False
    if g.slot.is_numeric:
        return bank.draw(question).count() <= MOST_KEYED
    return lettered(g.slot) is not None


def _own_label(versions: Variants, cell: int | None) -> tuple[str, int | None]:
    """How a student's own versions are named, and the seed they were drawn with (if any)."""
    if versions.rule == "issued":
        return "the issued versions", None
    if versions.rule == "default":
        return "the default versions", None
    seed = cell if cell is not None or versions.rule == "seeds" else versions.seed
    if seed is None:
        return "own versions (no seed)", None
    return f"own seed {seed}", seed


def _candidates(
    versions: Variants, cell: int | None, issued_seed: int | None, common: Sequence[int]
) -> tuple[str, list[tuple[int, str]]]:
    """A student's own label and their candidate seeds, each with its label (``cell``: their
    seed cell; ``issued_seed``: the seed the manifest issued to them)."""
    own, drawn = _own_label(versions, cell)
    found: list[tuple[int, str]] = []
    issued = versions.issued
    if versions.rule in ("issued", "default") and cell is not None:
        found.append((cell, f"seed {cell} (the seed cell)"))
    if issued is not None:
        if issued_seed is not None:
            found.append((issued_seed, f"seed {issued_seed}"))
        if issued.seed is not None:
            found.append((issued.seed, f"seed {issued.seed}"))
    if versions.rule == "drawn" and versions.seed is not None:
        found.append((versions.seed, f"the run's seed {versions.seed}"))
    found += [(s, f"seed {s}") for s in common]
    if cell is not None and drawn == cell:
        # a typo makes a seed of its own; a seed the class shares is no one's slip, but the
        # seeds beside it are another printing's (and tell the class's chance rate)
        shared = cell in common
        found += [(s, f"seed {s}") for s in ((cell - 1, cell + 1) if shared else near_misses(cell))]
    seen: set[int] = set() if drawn is None else {drawn}
    out = []
    for seed, label in found:
        if seed not in seen:
            seen.add(seed)
            out.append((seed, label))
    return own, out


def _suspects(
    bank: CompiledBank,
    graded: GradedPartition,
    held: list[GradedSlot],
    versions: Variants,
    rows: npt.NDArray[np.int64],
    common: Sequence[int],
    out: SeedEvidence,
) -> dict[int, list[Suspect]]:
    """Per looked-at row: the candidates that pass the rule at the least chances (the class's
    chances, known once every piece is in, can only be higher)."""
    answers = graded.answers
    pair_row: list[int] = []
    pair_seed: list[int] = []
    labels: list[str] = []
    owns: dict[int, str] = {}
    tried: dict[int, int] = {}
    memo: dict[tuple[int | None, int | None], tuple[str, list[tuple[int, str]]]] = {}
    issued = versions.issued
    for row in rows.tolist():
        cell = answers.seeds[row]
        record = issued.student(answers.students[row]) if issued is not None else None
        given = (cell, record.seed if record is not None else None)
        if given not in memo:
            memo[given] = _candidates(versions, *given, common)
        label_of_own, candidates = memo[given]
        owns[row], tried[row] = label_of_own, len(candidates)
        for seed, label in candidates:
            pair_row.append(row)
            pair_seed.append(seed)
            labels.append(label)
    if not pair_row:
        return {}
    at = np.array(pair_row, dtype=np.int64)
    students = [answers.students[r] for r in pair_row]
    keys = student_keys(bank.bank.bank, students, pair_seed)
    drawn: dict[str, tuple[list[Variant], npt.NDArray[np.int64]]] = {}
    other = np.zeros(len(at), dtype=np.int64)
    own = np.zeros(len(at), dtype=np.int64)
    trial_of: list[npt.NDArray[np.bool_]] = []
    hit_of: list[npt.NDArray[np.bool_]] = []
    for g in held:
        question = g.slot.question
        if question.id not in drawn:
            drawn[question.id] = bank.variants(
                question, students=students, seeds=pair_seed, keys=keys
            )
        variants, codes = drawn[question.id]
        trial, hit, own_only = _slot(bank, graded, g, at, variants, codes)
        other += hit
        own += own_only
        trial_of.append(trial)
        hit_of.append(hit)
        out.floors[g.slot.id] = _floor(g)
        out.questions[g.slot.id] = question.id
    found: dict[int, list[Suspect]] = {}
    likely = np.flatnonzero((other >= MIN_OTHER) & (other > 2 * own))
    for p in likely.tolist():
        row = pair_row[p]
        suspect = Suspect(
            own=owns[row],
            other=labels[p],
            own_count=int(own[p]),
            other_count=int(other[p]),
            trials=tuple(g.slot.id for g, t in zip(held, trial_of, strict=True) if t[p]),
            hits=tuple(g.slot.id for g, h in zip(held, hit_of, strict=True) if h[p]),
            candidates=tried[row],
        )
        if suspect.candidates * _tail(suspect, out.floors, out.questions) <= ALPHA:
            found.setdefault(row, []).append(suspect)
    # the class's chance rate, from the students who show no sign: a typo's answers fit its
    # true seed, and every candidate that draws the same versions (a question with 4 versions:
    # one in 4), which would raise the rate and hide the next typo
    signs = np.zeros(len(answers), dtype=bool)
    signs[list(found)] = True
    chance = ~signs[at]
    for g, trial, hit in zip(held, trial_of, hit_of, strict=True):
        out.trials[g.slot.id] += int((trial & chance).sum())
        out.hits[g.slot.id] += int((hit & chance).sum())
    return found


def _floor(g: GradedSlot) -> float:
    options = lettered(g.slot)
    if options is not None:
        return 1.0 / max(1, len(options.choices) - 1)
    return NUMERIC_CHANCE


def _slot(
    bank: CompiledBank,
    graded: GradedPartition,
    g: GradedSlot,
    at: npt.NDArray[np.int64],
    variants: list[Variant],
    codes: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Per (student, candidate) pair of one slot: (trial, hit, own only) — an answer that could
    tell the two versions apart and is right for neither's own; right for the candidate only;
    right for the student's own only."""
    status = g.verdicts.status[g.codes[at]]
    own_right = status == _CORRECT
    answered = status != _BLANK
    own_codes = g.variant_codes[at]
    # the distinct answers of the rows looked at, read once each
    verdicts, first, inverse = group(g.codes[at])
    column = graded.answers.column(g.slot.id)
    rows = at[first]
    texts = column.at(rows) if isinstance(column, Coded) else [column[r] for r in rows.tolist()]
    if g.slot.is_numeric:
        known = g.numbers.take(verdicts) if g.numbers is not None else None
        given = np.array([t is not None for t in texts], dtype=bool)
        numbers = read_numbers(g.slot, texts, known, given=given)
        # keys only for the versions an answer given and read is held against
        needed = answered & numbers.readable[inverse]
        # (np.unique of values alone would import numpy.ma, 7 ms of every run)
        own_keys = _numbers(bank, g, g.variants, _used(own_codes[needed], len(g.variants)))
        alt_keys = _numbers(bank, g, variants, _used(codes[needed], len(variants)))
        mine, theirs = own_keys[own_codes], alt_keys[codes]
        assert g.slot.tolerance is not None
        same, _ = compare_array(
            values=mine,
            keys=theirs,
            tolerance=g.slot.tolerance,
            kinds=KIND_CODES["mixed"],
            decimals=0,
            sigfigs=0,
        )
        same |= np.isnan(mine) | np.isnan(theirs)
        alt_right = _numeric_right(numbers, theirs, inverse)
        readable = numbers.readable[inverse]
    else:
        options = lettered(g.slot)
        assert options is not None
        right = options.right
        # one judgement per distinct (own version, candidate version)
        combos, first_pair, combo_of = group(own_codes * len(variants) + codes)
        alike = [
            _positions(options, right, g.variants[int(own_codes[k])])
            == _positions(options, right, variants[int(codes[k])])
            for k in first_pair.tolist()
        ]
        same = np.array(alike, dtype=bool)[combo_of] if len(combos) else np.zeros(0, dtype=bool)
        alt_right = np.zeros(len(at), dtype=bool)
        readable = np.zeros(len(at), dtype=bool)
        memo: dict[tuple[int, int], tuple[bool, bool]] = {}
        for p in range(len(at)):
            text_at = int(inverse[p])
            text = texts[text_at]
            if text is None:
                continue
            a = int(codes[p])
            if (text_at, a) not in memo:
                memo[text_at, a] = _choice_reading(options, right, text, variants[a])
            readable[p], alt_right[p] = memo[text_at, a]
    differ = ~same & answered & readable
    trial = differ & ~own_right
    hit = trial & alt_right
    own_only = differ & own_right & ~alt_right
    return trial, hit, own_only


def _used(codes: npt.NDArray[np.int64], size: int) -> npt.NDArray[np.int64]:
    """The distinct codes among ``codes`` (each below ``size``), sorted."""
    return np.flatnonzero(np.bincount(codes, minlength=size))


def _numeric_right(
    numbers: Numbers, keys: npt.NDArray[np.float64], inverse: npt.NDArray[np.int64]
) -> npt.NDArray[np.bool_]:
    right = np.zeros(len(keys), dtype=bool)
    known = ~np.isnan(keys)
    right[known] = numbers.right(keys[known], at=inverse[known])
    return right


def _choice_reading(
    options: ChoiceInteraction, right: list[int], text: str, variant: Variant
) -> tuple[bool, bool]:
    """(readable as choices, right for ``variant``)."""
    from quizgym.answers import read_choices

    readable = not isinstance(read_choices(text, options, variant), str)
    return readable, readable and picks_right(options, right, text, variant)


def _positions(options: ChoiceInteraction, right: list[int], variant: Variant) -> frozenset[int]:
    """Where a version shows the right choices (two versions alike here read letters alike)."""
    order = variant.order or tuple(range(len(options.choices)))
    return frozenset(k for k, i in enumerate(order) if i in right)


def _numbers(
    bank: CompiledBank, g: GradedSlot, variants: Sequence[Variant], wanted: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """The keys of the versions ``wanted`` as floats; NaN elsewhere, and where a key cannot be
    worked out (its verdicts say why)."""
    out = np.full(len(variants), np.nan)
    for k in wanted.tolist():
        try:
            out[k] = float(bank.key(g.slot, variants[k]).number)
        except Exception:  # noqa: S112  # undefined or refused here: fits nothing
            continue
    return out


# --- a seed cell against the manifest -------------------------------------------------------------


def _contradictions(
    bank: CompiledBank, graded: GradedPartition, versions: Variants
) -> dict[int, str]:
    """Row → how its seed cell contradicts the issue manifest the run grades by."""
    issued = versions.issued
    answers = graded.answers
    assert issued is not None
    rows = [r for r, s in enumerate(answers.seeds) if s is not None]
    if not rows:
        return {}
    students = [answers.students[r] for r in rows]
    cells = [answers.seeds[r] for r in rows]
    keys = student_keys(bank.bank.bank, students, cells)
    at = np.array(rows, dtype=np.int64)
    moved: dict[int, list[str]] = {}
    seen: set[str] = set()
    for g in graded.slots:
        question = g.slot.question
        if question.id in seen or not bank.varies(question):
            continue
        seen.add(question.id)
        variants, codes = bank.variants(question, students=students, seeds=cells, keys=keys)
        drawn = [(v.signature, v.order) for v in variants]
        given = [(v.signature, v.order) for v in (bank.complete(v) for v in g.variants)]
        own = g.variant_codes[at]
        for k, (o, c) in enumerate(zip(own.tolist(), codes.tolist(), strict=True)):
            if drawn[c] != given[o]:
                moved.setdefault(rows[k], []).append(question.id)
    out: dict[int, str] = {}
    for k, row in enumerate(rows):
        cell = cells[k]
        record = issued.student(students[k]) if issued.mode == "per-student" else None
        if issued.mode == "per-student":
            if record is None:
                continue
            expected, whose = record.seed, "to this student"
        else:
            expected, whose = issued.seed, "(one sheet for everyone)"
        if cell != expected:
            was = "no seed" if expected is None else f"seed {expected}"
            out[row] = f"the seed cell says {cell}, the manifest issued {was} {whose}"
        elif row in moved and issued.mode == "per-student":  # one sheet: the cell is its seed
            shown = ", ".join(moved[row][:4]) + (" …" if len(moved[row]) > 4 else "")
            out[row] = (
                f"the seed cell {cell} draws other versions of {shown} than the manifest issued"
            )
    return out
