"""The review queue: every answer the machine is not sure of, for a teacher to decide once.

``grade`` writes ``review.csv``: one row per distinct answer to a slot (and version) that is
free text (the rubric's score is only a suggestion) or could not be read (``ture``, ``2,400``,
``15%``, ``ABC`` for a one-answer question, a misspelt choice), with how many students gave it
and who, the machine's reading, verdict and suggested score, the reason it is there (the cause,
and what the student probably meant), the right answer, and empty ``score`` and ``comment``
columns. Free-text answers that say the same thing share a ``group`` number
(:func:`quizgym.similar.group_answers`), so a teacher can score a group at once.

A teacher fills ``score`` (and perhaps ``comment``) on the rows they decide and grades again with
``--review review.csv`` (:mod:`quizgym.grading.decisions`): each score applies to every student
who gave that answer, every output is written again, ``responses.csv`` says who set each score
(``scored_by``), and the new ``review.csv`` keeps the decisions, so it stays the one record of
what was decided.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import astuple, dataclass, field, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from quizgym.analysis import Agreement, rubric_agreement
from quizgym.answers import Status, Verdict
from quizgym.grading.batch import FAILED, GradedPartition
from quizgym.grading.causes import cause_of, probably
from quizgym.grading.cells import fmt
from quizgym.grading.decisions import (
    STUDENT_ROW,
    TEACHER_NOTE,
    answer_fingerprint,
    question_fingerprint,
    variant_label,
)
from quizgym.grading.outputs import write_rows
from quizgym.grading.verdicts import STATUSES, UNREAD, Verdicts
from quizgym.grading.wrong_seed import StudentFlag
from quizgym.meaning import likely
from quizgym.model import AnyQuestion
from quizgym.model import slot_id as part_slot
from quizgym.solver import CompiledBank, Slot, Variant
from quizgym.types import choices_of, text_of

__all__ = ["HEADER", "Entry", "Review", "agreements", "review_of", "write_review"]

HEADER = (
    "question",
    "version",
    "answer",
    "count",
    "students",
    "reason",
    "read_as",
    "verdict",
    "suggested",
    "max_score",
    "expected",
    "group",
    "score",
    "comment",
    "fingerprint",
)
SHOWN_STUDENTS = 50
"""At most this many student ids on a row (``count`` says how many gave the answer)."""

Key = tuple[str, str, str]
"""(slot id, version label or '' for a question that does not vary, answer text)."""


@dataclass(frozen=True, slots=True)
class Graded:
    """What was made of an uncertain answer: the machine's verdict, and a teacher's decision.

    Small, with its texts interned: a class graded in many pieces holds one per distinct answer
    and piece until the pieces are merged.
    """

    free: bool
    """Free text: the machine's score is the rubric's suggestion."""
    read_as: str
    status: str
    suggested: float
    max_score: float
    expected: str
    decided: float | None
    """The teacher's score, when decided."""
    comment: str
    failed: bool = False
    """The engine failed on the answer (an error, not a reading)."""
    doubt: str = ""
    """Why the machine's reading deserves a look though it decided (``read % as a fraction``)."""
    likely: str = ""
    """An unreadable answer's likely reading, and why (``a typo of 'true'; probably meant
    'true'``): :attr:`suggested` is then the score that reading earns, not the 0 it has."""

    @classmethod
    def of(cls, verdict: Verdict) -> Graded:
        """The record of a verdict (a teacher's, when decided: the machine's is ``machine``)."""
        machine = verdict.machine or verdict
        decided = verdict.machine is not None
        comment = verdict.feedback if decided and verdict.feedback != TEACHER_NOTE else ""
        return cls(
            free=machine.needs_review,
            read_as=sys.intern(machine.read_as),
            status=machine.status.value,
            suggested=machine.score,
            max_score=machine.max_score,
            expected=sys.intern(machine.expected),
            decided=verdict.score if decided else None,
            comment=sys.intern(comment),
            failed=machine.feedback.startswith(FAILED),
            doubt=sys.intern(machine.doubt),
        )

    @classmethod
    def many(cls, verdicts: Verdicts, at: Sequence[int]) -> list[Graded]:
        """:meth:`of` each of the verdicts at ``at``, read from the columns at once (no verdict
        object is made for a verdict no teacher decided)."""
        where = np.asarray(at, dtype=np.int64)
        free, status = verdicts.needs_review[where].tolist(), verdicts.status[where].tolist()
        score, most = verdicts.score[where].tolist(), verdicts.max_score[where].tolist()
        out = []
        for i, k in enumerate(where.tolist()):
            if verdicts.machine[k] is not None:  # a teacher's: the machine's in its object
                out.append(cls.of(verdicts[k]))
                continue
            out.append(
                cls(
                    free=free[i],
                    read_as=sys.intern(verdicts.read_as[k]),
                    status=STATUSES[status[i]].value,
                    suggested=score[i],
                    max_score=most[i],
                    expected=sys.intern(verdicts.expected[k]),
                    decided=None,
                    comment="",
                    failed=verdicts.feedback[k].startswith(FAILED),
                    doubt=sys.intern(verdicts.doubt[k]),
                )
            )
        return out


@dataclass
class Entry:
    """One distinct uncertain answer: how many gave it, who, and what was made of it."""

    count: int
    students: list[str]
    """The first :data:`SHOWN_STUDENTS` who gave it, in the order of the submissions."""
    graded: Graded


@dataclass
class Review:
    """The uncertain answers of a partition, or of a class once merged."""

    entries: dict[Key, Entry] = field(default_factory=dict)
    used: set[tuple[str, str]] = field(default_factory=set)
    """(slot, answer print) of each teacher's decision that scored some response."""

    def add(self, key: Key, count: int, students: Sequence[str], graded: Graded) -> None:
        """Count ``count`` more students who gave the answer ``key`` (``students`` among them)."""
        mine = self.entries.get(key)
        if mine is None:
            self.entries[key] = Entry(count, list(students[:SHOWN_STUDENTS]), graded)
        else:
            mine.count += count
            mine.students += students[: SHOWN_STUDENTS - len(mine.students)]

    def merge(self, other: Review) -> Review:
        """Both partitions' entries (counts added, students in order), in a new review."""
        out = Review()
        out.absorb(self)
        out.absorb(other)
        return out

    def absorb(self, other: Review) -> None:
        """Add a later partition's entries to these, in place (a class of many pieces merges
        each once: its work grows with the entries, not with the pieces times the queue)."""
        self.used |= other.used
        for key, entry in other.entries.items():
            self.add(key, entry.count, entry.students, entry.graded)

    def write_part(self, path: Path) -> None:
        """Write the entries to a part file (a piece of a streamed run), one JSON list a line."""
        with path.open("w", encoding="utf-8") as stream:
            for key, entry in self.entries.items():
                fields = [*key, entry.count, entry.students, *astuple(entry.graded)]
                stream.write(json.dumps(fields, ensure_ascii=False) + "\n")

    def read_part(self, path: Path) -> None:
        """Add the entries of a part file :meth:`write_part` wrote."""
        with path.open(encoding="utf-8") as stream:
            for line in stream:
                slot, version, answer, count, students, *fields = json.loads(line)
                self.add((slot, version, answer), count, students, Graded(*fields))

    @property
    def waiting(self) -> int:
        """How many students' answers await a decision."""
        return sum(e.count for e in self.entries.values() if e.graded.decided is None)

    @property
    def decided(self) -> int:
        """How many students' answers a teacher scored."""
        return sum(e.count for e in self.entries.values() if e.graded.decided is not None)


def review_of(bank: CompiledBank, graded: GradedPartition) -> Review:
    """The uncertain answers of one graded partition, by distinct (slot, version, answer).

    Each distinct verdict is looked at once; its students are found with NumPy, and listed in the
    order of the submissions (so a class graded in pieces lists them as a whole one does).
    """
    review = Review()
    students = graded.answers.students
    for g in graded.slots:
        review.used |= {(g.slot.id, p) for p in g.decided}
        doubtful = g.verdicts.uncertain()
        if not doubtful.any():
            continue
        rows = np.flatnonzero(doubtful[g.codes])
        by_code = rows[np.argsort(g.codes[rows], kind="stable")]
        codes, starts, counts = np.unique(g.codes[by_code], return_index=True, return_counts=True)
        column = graded.answers.column(g.slot.id)
        varies = bank.varies(g.slot.question)
        machines = g.verdicts.machines()
        prior = [  # error carried forward: the student's own earlier answers count
            (name, graded.answers.column(part_slot(g.slot.question.id, name)))
            for name in g.slot.earlier
        ]
        found: dict[Key, tuple[list[npt.NDArray[np.int64]], Graded]] = {}
        records = Graded.many(g.verdicts, codes.tolist())
        for code, start, count, record in zip(
            codes.tolist(), starts.tolist(), counts.tolist(), records, strict=True
        ):
            members = by_code[start : start + count]
            text = column[int(members[0])]
            if text is None:
                continue
            variant = g.variants[int(g.variant_codes[members[0]])]
            label = variant.label
            # only an answer read is judged against the earlier answers
            read = machines.status[code] not in UNREAD
            earlier = [(name, answers[int(members[0])]) for name, answers in prior if read]
            version = variant_label(g.slot.question, label, text, varies=varies, earlier=earlier)
            key = (g.slot.id, version, text)
            if key in found:
                found[key][0].append(members)
            else:
                found[key] = ([members], _with_likely(bank, g.slot, variant, text, record))
        for key, (parts, record) in found.items():
            members = np.sort(np.concatenate(parts)) if len(parts) > 1 else parts[0]
            shown = [students[r] for r in members[:SHOWN_STUDENTS].tolist()]
            review.add(key, len(members), shown, record)
    return review


def _with_likely(
    bank: CompiledBank, slot: Slot, variant: Variant, text: str, record: Graded
) -> Graded:
    """An unreadable answer's record with its likely reading (:func:`quizgym.meaning.likely`):
    the score that reading earns suggested, the reading shown. The answer keeps its 0 until a
    teacher decides it. A part's likely reading is graded without the student's earlier answers
    (one row covers every student who typed it, whatever they answered before)."""
    if record.free or record.failed or record.status != Status.INVALID.value:
        return record
    try:
        found = likely(bank, slot.question, text, variant=variant, part=slot.part)
    except Exception:  # a suggestion only: the answer stays in review as it was
        return record
    if found is None:
        return record
    why = found.cause if found.text in found.cause else f"{found.cause}; {found.note}"
    return replace(
        record,
        suggested=found.verdict.score,
        read_as=sys.intern(f"likely: {found.shown or found.verdict.read_as}"),
        likely=sys.intern(why),
    )


def reason(bank: CompiledBank, key: Key, graded: Graded) -> str:
    """Why an answer is in the queue, in plain words."""
    if graded.free:
        return "free text: the score is the rubric's suggestion"
    slot = bank.slot(key[0])
    question = slot.question
    if graded.failed:
        return "could not be graded: quizgym failed on it (an error): grade it by hand"
    if graded.doubt:
        return f"read, but worth a look: {graded.doubt}"
    if graded.likely:
        return f"could not be read: {graded.likely}"
    cause = cause_of(question, key[2], part=slot.part)
    meant = probably(question, key[2], part=slot.part)
    why = f"could not be read: {cause}"
    return f"{why}; probably meant {meant}" if meant and meant not in cause else why


def write_review(
    path: Path, bank: CompiledBank, review: Review, *, flags: Sequence[StudentFlag] = ()
) -> None:
    """``review.csv``: first a row per flagged student (:data:`STUDENT_ROW` in ``question``:
    their answers fit another seed's versions, or the manifest contradicts their seed cell),
    then the answers: slots in bank order; in a slot, groups of similar free-text answers
    together, the most common answers first.
    """
    rows: list[list[str]] = [_student_row(flag) for flag in flags]
    order = {slot.id: k for k, slot in enumerate(bank.slots)}
    by_slot: dict[str, list[tuple[Key, Entry]]] = {}
    for key, entry in review.entries.items():
        by_slot.setdefault(key[0], []).append((key, entry))
    for slot_id in sorted(by_slot, key=lambda s: order.get(s, len(order))):
        items = sorted(by_slot[slot_id], key=lambda kv: (-kv[1].count, kv[0][1], kv[0][2]))
        groups = _groups(bank, slot_id, items)
        ranked = sorted(range(len(items)), key=lambda i: (groups[i] or 0, i))
        printed = question_fingerprint(bank.slot(slot_id).question, bank)
        for i in ranked:
            key, entry = items[i]
            rows.append(_row(bank, key, entry, groups[i], printed))
    write_rows(path, HEADER, rows)


def _student_row(flag: StudentFlag) -> list[str]:
    """A flagged student's row: no answer, no score to give (the fix is in the submissions)."""
    cells = dict.fromkeys(HEADER, "")
    cells.update(
        question=STUDENT_ROW,
        version=flag.own,
        count="1",
        students=flag.student,
        reason=f"{flag.text}: {flag.advice}",
        read_as=flag.fits,
        verdict="version check",
    )
    return [cells[h] for h in HEADER]


def _groups(bank: CompiledBank, slot_id: str, items: Sequence[tuple[Key, Entry]]) -> list[int]:
    """Per entry: its group of similar free-text answers (1, 2, …), or 0."""
    if text_of(bank.slot(slot_id).question) is None:
        return [0] * len(items)
    from quizgym.similar import group_answers

    # Each answer weighs as many students as gave it: groups are numbered by how many they hold.
    texts = [key[2] for key, _ in items]
    out = [0] * len(items)
    groups = group_answers(texts, counts=[entry.count for _, entry in items])
    for number, members in enumerate(groups, start=1):
        for member in members:
            out[member] = number
    return out


def _row(bank: CompiledBank, key: Key, entry: Entry, group: int, printed: str) -> list[str]:
    slot, version, answer = key
    more = entry.count - len(entry.students)
    students = "; ".join(entry.students) + (f"; … and {more} more" if more else "")
    graded = entry.graded
    return [
        slot,
        version,
        answer,
        str(entry.count),
        students,
        reason(bank, key, graded),
        graded.read_as,
        graded.status,
        fmt(graded.suggested),
        fmt(graded.max_score),
        _expected(bank.slot(slot).question, bank.slot(slot).part, version, graded.expected),
        str(group) if group else "",
        fmt(graded.decided),
        graded.comment,
        f"q{printed}-a{answer_fingerprint(slot, version, answer)}",
    ]


def _expected(question: AnyQuestion, part: str | None, version: str, expected: str) -> str:
    """The right answer as a row shows it: a shuffled question's row for every order names the
    right choices by their text alone (their letters differ from student to student)."""
    options = choices_of(question, part)
    if version or options is None or not options.shuffle:
        return expected
    return "; ".join(c.text for c in options.choices if c.correct)


def agreements(bank: CompiledBank, review: Review) -> list[Agreement]:
    """Per free-text slot a teacher reviewed: how the rubric's suggestions agree with them."""
    pairs: dict[str, Counter[tuple[float, float]]] = {}
    for (slot, _, _), entry in review.entries.items():
        graded = entry.graded
        if graded.free and graded.decided is not None:
            pairs.setdefault(slot, Counter())[graded.suggested, graded.decided] += entry.count
    return [
        rubric_agreement(slot.id, pairs[slot.id], points=slot.points)
        for slot in bank.slots
        if slot.id in pairs
    ]
