"""What was handed out (each student's version of each question) in, the issue manifest
``issued.json`` out, which ``render`` and ``export`` write and ``grade --issued`` grades against."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from quizgym.errors import AnswerParseError, QuizgymError
from quizgym.expr import format_value
from quizgym.model import AnyQuestion, Bank
from quizgym.solver import CompiledBank, Variant
from quizgym.types import choices_of, pairing_of, text_of, word_of

__all__ = [
    "FORMAT",
    "Edit",
    "Issued",
    "IssuedItem",
    "IssuedStudent",
    "IssuedVersion",
    "answers_of",
    "bank_hash",
    "issue",
    "issued_json_schema",
    "question_hash",
    "read_issued",
    "reconcile",
    "Reconciled",
    "succeed",
    "write_issued",
]

FORMAT: Literal["quizgym-issued/2"] = "quizgym-issued/2"
"""The format this quizgym writes. ``quizgym-issued/1`` (no pinned rules or choice texts) is
still read: its keys are checked, and what it did not record is said."""
FORMATS = ("quizgym-issued/1", FORMAT)
MAX_BYTES = 256 * 2**20
"""A manifest larger than this is refused unread (a roster of 100,000 students is ~50 MB)."""
_SEED_LIMIT = 10**20
"""Seeds have at most 20 digits, as a roster's seed cell (:mod:`quizgym.render.roster`)."""
_RATIONAL = re.compile(r"-?[0-9]{1,40}(/[0-9]{1,40})?")
Text = Annotated[str, StringConstraints(max_length=100_000)]
Id = Annotated[str, StringConstraints(min_length=1, max_length=1_000)]
DRAWS = (
    "quizgym-draws/1: key = first 8 bytes of sha256('bank␟student␟seed') xor "
    "sha256('bank␟question␟question'); draw k = splitmix64(key + (k+1)·0x9E3779B97F4A7C15); "
    "parameter k (name order) takes draw k mod its number of values; a shuffle continues the "
    "stream with a Fisher-Yates pass"
)
"""How the versions below were drawn (they are written out in full as well)."""


class _Record(BaseModel):
    # The validators are built on first use: a run that issues and reads no manifest (most
    # grade and every practice run import this module) never builds them.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class IssuedVersion(_Record):
    """One version of one question: its parameter values, the order its choices were shown, and
    what its grade depends on (its keys and how each slot is scored)."""

    params: dict[Id, str] = Field(
        default_factory=dict, description="parameter values as exact numbers: '1/5', '40'"
    )
    order: list[Annotated[int, Field(ge=0, lt=1_000)]] = Field(
        default_factory=list, description="choice indices (bank order) in the order shown"
    )
    shown: list[Text] = Field(
        default_factory=list,
        description="the choices' texts in the order shown (choice questions): a later reorder "
        "of the bank's choices is read through them, so a student's letter keeps its choice",
    )
    slots: list[Id] = Field(
        default_factory=list,
        description="the slots ``keys`` and ``rules`` are of, in order (a reorder of parts or "
        "matching items moves no key)",
    )
    keys: list[Text] = Field(
        default_factory=list,
        description="the right answer of each slot as issued (a number to 15 digits, the right "
        "choices' texts, true/false, or the model answer), to tell later edits apart",
    )
    rules: list[Text] = Field(
        default_factory=list,
        description="how each slot was scored besides its key (points, tolerance, units, known "
        "mistakes' values and credit), to tell later edits apart",
    )

    @field_validator("params")
    @classmethod
    def _exact(cls, params: dict[str, str]) -> dict[str, str]:
        for name, value in params.items():
            if not _RATIONAL.fullmatch(value) or value.endswith("/0"):
                shown = value if len(value) <= 40 else value[:39] + "…"
                raise ValueError(f"parameter {name}: {shown!r} is not an exact number like 1/5")
        return params

    @field_validator("order")
    @classmethod
    def _permutation(cls, order: list[int]) -> list[int]:
        if order and sorted(order) != list(range(len(order))):
            raise ValueError(f"order {order[:12]} is not an order of {len(order)} choices")
        return order

    @classmethod
    def of(cls, variant: Variant, book: CompiledBank) -> IssuedVersion:
        """The record of a variant of a question of ``book``."""
        params, order = cls.of_draw(variant)
        return cls(
            params=params,
            order=order,
            shown=shown_texts(book, variant),
            slots=[slot.id for slot in book.slots_of(variant.question)],
            keys=answers_of(book, variant),
            rules=rules_of(book, variant),
        )

    @staticmethod
    def of_draw(variant: Variant) -> tuple[dict[str, str], list[int]]:
        """A variant's parameters and order as a record writes them (to compare with one)."""
        return {k: str(v) for k, v in variant.signature}, list(variant.order)

    def variant(self, question: str) -> Variant:
        """The variant this records (exact values, as issued)."""
        return Variant(
            question=question,
            params={k: Fraction(v) for k, v in self.params.items()},
            order=tuple(self.order),
        )


class IssuedStudent(_Record):
    """One student of a roster and the version of each question they were given."""

    id: Id
    seed: int | None = Field(
        default=None,
        gt=-_SEED_LIMIT,
        lt=_SEED_LIMIT,
        description="the seed their numbers were drawn with",
    )
    versions: dict[Id, Annotated[int, Field(ge=0)]] = Field(
        default_factory=dict, description="question id → index into the manifest's versions"
    )


class IssuedItem(_Record):
    """One item of an LMS export: which question, part and version it is, and what it says."""

    ident: Id = Field(
        description="the item's identifier in the export (QTI ident, Moodle idnumber)"
    )
    question: Id
    part: Id | None = None
    version: int = Field(ge=0, description="index into the manifest's versions of the question")
    text: Text = Field(description="the item's text as students saw it (numbers filled in)")


class Issued(_Record):
    """An issue manifest (see the module docs).

    A class can only be graded right if the grader knows which version of each question each student
    held. quizgym's variants are deterministic (:mod:`quizgym.solver.variants`), but *which* draw a
    sheet came from — one photocopied sheet, a roster with a seed, LMS pools — is a fact about what
    the teacher did, not about the bank. So every command that hands questions out records it:

    - ``mode: single`` — one version for everyone (a worksheet without a roster, an export without
      ``--variants``); each question has exactly one version;
    - ``mode: per-student`` — a roster: each student's own version of each question;
    - ``mode: pools`` — an LMS export with variant pools: the LMS drew one item per student; the
      manifest lists every item, its identifier and the text students saw.

    Versions are written out in full (parameter values as exact fractions, choice orders as bank
    indices), not only as a seed, so a manifest grades the same students the same way even if a
    later quizgym draws differently. Each version also pins what its grade depends on: the key of
    each slot, how each slot is scored (points, tolerance, units, known mistakes) and the texts of
    its choices in the order shown. :func:`reconcile` works those out again from the bank as it is
    now, so that an edit anywhere (the question, a constant, a function, a pack, a default) that
    moves a grade is named, and a reorder of choices cannot move a student's letter. ``quizgym
    schema --issued`` prints the JSON Schema of this file.
    """

    format: Literal["quizgym-issued/1", "quizgym-issued/2"] = FORMAT
    bank: Id = Field(description="the bank's slug")
    bank_version: int = Field(ge=1, lt=2**63)
    bank_hash: str = Field(
        pattern="^[0-9a-f]{64}$", description="sha256 of the bank's content (not its layout)"
    )
    question_hashes: dict[Id, Annotated[str, Field(pattern="^[0-9a-f]{64}$")]] = Field(
        description="question id → sha256 of its content"
    )
    issued_by: Text = Field(description="the command: render, export moodle, export qti12, …")
    mode: Literal["single", "per-student", "pools"]
    seed: int | None = Field(
        default=None,
        gt=-_SEED_LIMIT,
        lt=_SEED_LIMIT,
        description="the class seed, if one was given",
    )
    draws: Text = DRAWS
    questions: list[Id] = Field(description="the questions handed out, in order")
    versions: dict[Id, list[IssuedVersion]] = Field(
        description="per question, every version handed out"
    )
    students: list[IssuedStudent] = Field(default_factory=list)
    items: list[IssuedItem] = Field(default_factory=list)

    _by_id: dict[str, IssuedStudent] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _consistent(self) -> Issued:
        """Every reference inside the manifest points at something it holds, once."""
        _unique(self.questions, "questions", "question")
        handed = set(self.questions)
        for qid, table in self.versions.items():
            if qid not in handed:
                raise ValueError(f"versions.{qid}: a question the manifest did not hand out")
            if not table:
                raise ValueError(f"versions.{qid}: no version")
        for qid in self.questions:
            if qid not in self.versions:
                raise ValueError(f"questions: {qid} has no versions")
        _unique([s.id for s in self.students], "students", "student")
        for k, student in enumerate(self.students):
            for qid, index in student.versions.items():
                _index_in(self.versions, qid, index, f"students.{k}.versions.{qid}")
        _unique([item.ident for item in self.items], "items", "item identifier")
        for k, item in enumerate(self.items):
            _index_in(self.versions, item.question, item.version, f"items.{k}.version")
        if self.mode == "per-student" and not self.students:
            raise ValueError("mode: per-student, but no student is listed")
        if self.mode == "single" and not self.items:
            for qid, table in self.versions.items():
                if len(table) != 1:
                    raise ValueError(f"versions.{qid}: mode single, but {len(table)} versions")
        return self

    def version_of(self, question: str, index: int) -> Variant:
        """A version of a question as a variant."""
        return self.versions[question][index].variant(question)

    def student(self, student: str) -> IssuedStudent | None:
        """A student of a per-student manifest, or None."""
        if self._by_id is None:
            self._by_id = {s.id: s for s in self.students}
        return self._by_id.get(student)

    def changed(self, bank: Bank) -> list[str]:
        """The issued questions whose content differs in ``bank`` (or that it no longer has)."""
        now = {q.id: question_hash(q) for q in bank.questions}
        return [q for q in self.questions if now.get(q) != self.question_hashes.get(q)]


def _unique(values: Sequence[str], field_name: str, what: str) -> None:
    seen: set[str] = set()
    for k, value in enumerate(values):
        if value in seen:
            raise ValueError(f"{field_name}.{k}: the {what} {value!r} is listed twice")
        seen.add(value)


def _index_in(
    versions: Mapping[str, Sequence[IssuedVersion]], qid: str, index: int, where: str
) -> None:
    table = versions.get(qid)
    if table is None:
        raise ValueError(f"{where}: question {qid!r} has no versions in the manifest")
    if index >= len(table):
        raise ValueError(
            f"{where}: version {index}, but {qid} has {len(table)} (0–{len(table) - 1})"
        )


# --- making one ---------------------------------------------------------------------------------


def question_hash(question: AnyQuestion) -> str:
    """A hash of everything a question says (its YAML layout aside)."""
    text = json.dumps(question.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def bank_hash(bank: Bank) -> str:
    """A hash of a bank's content (its YAML layout and comments aside)."""
    text = json.dumps(bank.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def answers_of(book: CompiledBank, variant: Variant) -> list[str]:
    """The right answer of each slot of a question for one variant, as a manifest records it.

    Raises:
        AnswerParseError: a key cannot be evaluated for these values.
    """
    question = book.bank.question(variant.question)
    out = []
    for slot in book.slots_of(question):
        if slot.is_numeric:
            out.append(format_value(book.key(slot, variant).value, 15))
            continue
        picks = choices_of(question, slot.part)
        if picks is not None and picks.boolean:
            out.append("true" if picks.right == [0] else "false")
        elif picks is not None:
            out.append("; ".join(c.text for c in picks.choices if c.correct))
        elif (word := word_of(question, slot.part)) is not None:  # a cloze's word blank
            out.append("; ".join(word.accept))
        elif (text := text_of(question)) is not None:
            out.append(text.model_answer)
    return out


def options_of(question: AnyQuestion) -> list[str] | None:
    """The texts a question's lettered options show, in bank order, that a variant's ``order``
    shuffles (a matching question's answers); None for a question without them."""
    pairing = pairing_of(question)
    if pairing is not None:
        return list(pairing.answers)
    picks = choices_of(question)
    if picks is None or not picks.lettered:
        return None
    return [c.text for c in picks.choices]


def shown_texts(book: CompiledBank, variant: Variant) -> list[str]:
    """The texts of a question's lettered options in the order this variant shows them ([] for
    a question without them)."""
    options = options_of(book.bank.question(variant.question))
    if options is None:
        return []
    order = variant.order or range(len(options))
    return [options[i] for i in order]


def rules_of(book: CompiledBank, variant: Variant) -> list[str]:
    """How each slot of a question is scored for one variant, besides its key, as a manifest
    records it: ``points 1; tolerance rel 0.001; units m/s; …`` (fields in a fixed order).

    Raises:
        AnswerParseError: a known mistake's value cannot be evaluated for these values.
    """
    question = book.bank.question(variant.question)
    out = []
    for slot in book.slots_of(question):
        fields = [f"points {_number(slot.points)}"]
        if slot.is_numeric:
            fields.append(f"tolerance {_tolerance_text(slot.tolerance)}")
            fields.append(f"units {slot.units or 'none'}")
            fields.append(f"unit penalty {_number(slot.require_units)}")
            mistakes = [
                f"{format_value(m.value, 15)} ({_number(m.credit)})"
                for m in book.mistakes(slot, variant)
                if m.credit > 0
            ]
            if mistakes:
                fields.append("also credited " + ", ".join(mistakes))
        elif (picks := choices_of(question, slot.part)) is not None and not picks.boolean:
            fields.append("several right" if picks.multiple else "one right")
        out.append("; ".join(fields))
    return out


def _number(value: float) -> str:
    return format(float(value), ".15g")


def _tolerance_text(tolerance: object) -> str:
    if tolerance is None or isinstance(tolerance, str):
        return str(tolerance or "auto")
    if isinstance(tolerance, BaseModel):
        return " ".join(f"{k} {_number(v)}" for k, v in tolerance.model_dump().items())
    return str(tolerance)


class _Versions:
    """Collects the distinct versions of each question, in the order first met."""

    def __init__(self, book: CompiledBank) -> None:
        self.book = book
        self.table: dict[str, list[IssuedVersion]] = {}
        self._index: dict[tuple[str, object, tuple[int, ...]], int] = {}

    def index(self, variant: Variant) -> int:
        key = (variant.question, variant.signature, variant.order)
        if key not in self._index:
            versions = self.table.setdefault(variant.question, [])
            self._index[key] = len(versions)
            versions.append(IssuedVersion.of(variant, self.book))
        return self._index[key]


def issue(
    book: CompiledBank,
    questions: Sequence[AnyQuestion],
    *,
    issued_by: str,
    seed: int | None = None,
    students: Sequence[tuple[str, int | None]] | None = None,
    items: Sequence[tuple[str, str, str | None, Variant, str]] | None = None,
    pools: bool = False,
) -> Issued:
    """The manifest of what a command handed out.

    Args:
        book: the compiled bank.
        questions: the questions handed out, in order.
        issued_by: the command, for people reading the file.
        seed: the class seed (a student's own seed wins, as in ``render --roster``).
        students: a roster's (student id, the student's own seed or None), in order.
        items: an export's (ident, question id, part id, variant, text) of each item, in order;
            the versions are then the items' own.
        pools: the export draws one item of several per student (variant pools).
    """
    versions = _Versions(book)
    records: list[IssuedStudent] = []
    listed: list[IssuedItem] = []
    mode: Literal["single", "per-student", "pools"] = "single"
    if items is not None:
        listed = [
            IssuedItem(ident=ident, question=qid, part=part, version=versions.index(v), text=text)
            for ident, qid, part, v, text in items
        ]
        mode = "pools" if pools else "single"
    elif students is not None:
        for sid, own in students:
            chosen = seed if own is None else own
            picks = {
                q.id: versions.index(book.variant(q, student=sid, seed=chosen)) for q in questions
            }
            records.append(IssuedStudent(id=sid, seed=chosen, versions=picks))
        mode = "per-student"
    else:
        for q in questions:
            versions.index(book.variant(q, student=None, seed=seed))
    bank = book.bank
    return Issued(
        bank=bank.bank,
        bank_version=bank.version,
        bank_hash=book.memo("bank_hash", None, lambda: bank_hash(bank)),
        question_hashes={
            q.id: book.memo("question_hash", q.id, lambda q=q: question_hash(q))  # type: ignore[misc]
            for q in questions
        },
        issued_by=issued_by,
        mode=mode,
        seed=seed,
        questions=[q.id for q in questions],
        versions=versions.table,
        students=records,
        items=listed,
    )


# --- the bank as it is now ---------------------------------------------------------------------


@dataclass(frozen=True)
class Edit:
    """What changed since issuing for one issued question."""

    question: str
    kind: Literal["edited", "moved", "refused"]
    """``edited``: its content changed, no grade moves; ``moved``: a key or how a slot is scored
    moved for some issued version; ``refused``: it cannot be graded as issued at all."""
    message: str
    students: frozenset[str] | None = None
    """Per-student manifests: who holds what moved (None: everyone, or LMS items)."""

    def __str__(self) -> str:
        return f"{self.question}: {self.message}"


@dataclass(frozen=True)
class Reconciled:
    """A manifest held against the bank as it is now (see :func:`reconcile`)."""

    issued: Issued
    """The manifest with each version's choice order in the bank's current indices."""
    edits: tuple[Edit, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def refused(self) -> list[Edit]:
        """What cannot be graded as issued, even with ``--accept-changes``."""
        return [e for e in self.edits if e.kind == "refused"]

    @property
    def moved(self) -> list[Edit]:
        """Questions for which a key or a slot's scoring moved for some issued version."""
        return [e for e in self.edits if e.kind == "moved"]

    @property
    def changed(self) -> list[str]:
        """Every issued question whose content, key or scoring changed, in issued order."""
        return list(dict.fromkeys(e.question for e in self.edits))

    def summary(self, *, detail: bool = True) -> str:
        """One sentence for the teacher: what changed, and whether it is safe to grade (with
        ``detail``, the first change that moves a grade)."""
        changed = self.changed
        shown = ", ".join(changed[:6]) + (
            f" and {len(changed) - 6} more" if len(changed) > 6 else ""
        )
        n = len(changed)
        head = f"{n} issued question{'s' if n != 1 else ''} changed since issuing ({shown})"
        if self.refused:
            return f"{head}; {len(self.refused)} cannot be graded as issued: {self.refused[0]}"
        if not self.moved:
            who = _everyone(self.issued)
            return (
                f"{head}, keys and scoring unchanged for {who}: safe to grade with --accept-changes"
            )
        if self.issued.mode != "per-student":
            who = "everyone who holds them"
        else:
            k = len(frozenset().union(*(e.students or () for e in self.moved)))
            who = f"{k} student{'s' if k != 1 else ''}"
        first = f" ({self.moved[0]})" if detail else ""
        return (
            f"{head}; grades move for {who}{first}: --accept-changes grades the issued versions "
            "against the edited keys"
        )


def reconcile(issued: Issued, book: CompiledBank) -> Reconciled:
    """Hold a manifest against the bank as it is now.

    Every issued version's keys and scoring are worked out again (an edit of a constant, a
    function, a pack or a default moves them as surely as an edit of the question), and each
    choice question's order is read through the texts the students saw, so a reorder of the
    bank's choices keeps every student's letter on the choice it named.
    """
    bank = book.bank
    if issued.bank != bank.bank:
        edit = Edit(
            issued.bank, "refused", f"the manifest is of bank {issued.bank!r}, not {bank.bank!r}"
        )
        return Reconciled(issued=issued, edits=(edit,))
    content = set(issued.changed(bank))
    edits: list[Edit] = []
    versions: dict[str, list[IssuedVersion]] = {}
    for qid in issued.questions:
        table = issued.versions[qid]
        versions[qid] = list(table)
        try:
            question = bank.question(qid)
        except KeyError:
            edits.append(
                Edit(qid, "refused", f"issued ({_holders(issued, qid)}), but no longer in the bank")
            )
            continue
        refused: list[str] = []
        moved: list[str] = []
        relabelled: list[str] = []
        holders: set[str] = set()
        reordered = False
        all_keys = True
        for index, record in enumerate(table):
            label = _label(record, qid, index, len(table))
            unfit = _unfit(question, record, qid in content, legacy=not record.shown)
            if unfit:
                refused.append(f"{unfit} ({label})")
                continue
            order, renamed = _order_now(question, record)
            if order is None:
                refused.append(f"{renamed[0]} ({label})")
                continue
            reordered |= order != list(record.order)
            relabelled += [r for r in renamed if r not in relabelled]
            now = record if order == record.order else record.model_copy(update={"order": order})
            versions[qid][index] = now
            try:
                variant = now.variant(qid)
                keys = answers_of(book, variant)
                rules = rules_of(book, variant) if record.rules else []
            except AnswerParseError as exc:
                refused.append(f"the issued version {label} no longer evaluates: {exc.message}")
                continue
            ids = [slot.id for slot in book.slots_of(question)]
            if record.slots and sorted(record.slots) == sorted(ids):  # in the issued slots' order
                keys = [keys[ids.index(i)] for i in record.slots]
                rules = [rules[ids.index(i)] for i in record.slots] if rules else rules
            change = []
            if not _same_answers(record.keys, keys):
                change.append(f"{' · '.join(record.keys)} → {' · '.join(keys)}")
            if record.rules and rules != record.rules:
                change.append(_rules_change(record.rules, rules))
                all_keys = False
            if change:
                moved.append(f"{label} ({_holders(issued, qid, index)}): {'; '.join(change)}")
                holders |= _students_of(issued, qid, index)
        if refused:
            edits.append(Edit(qid, "refused", "cannot be graded as issued: " + "; ".join(refused)))
        elif moved:
            why = (
                ""
                if qid in content
                else (
                    " (the question itself is unchanged: a constant, function, pack or default "
                    "moved it)"
                )
            )
            what = "right answer" if all_keys else "scoring"
            edits.append(
                Edit(
                    qid,
                    "moved",
                    f"the {what} changes for issued versions: " + _some(moved) + why,
                    frozenset(holders),
                )
            )
        elif qid in content:
            how = []
            if reordered:
                how.append(
                    "its choices were reordered (each student's letters are read in the order "
                    "they saw)"
                )
            how += relabelled
            how.append("keys and scoring unchanged for the issued versions")
            edits.append(Edit(qid, "edited", "edited since it was issued: " + "; ".join(how)))
    notes = []
    legacy = issued.format != FORMAT and (edits or issued.bank_hash != bank_hash(bank))
    if legacy:
        notes.append(
            f"the manifest is {issued.format}: it records the keys, not the tolerances, points or "
            "the choices' texts, so edits to those are not seen; issue again to pin them"
        )
    if not edits and issued.bank_hash != bank_hash(bank):
        notes.append(
            "the bank changed since it was issued, but no issued question did: graded as issued"
        )
    remapped = issued.model_copy(update={"versions": versions})
    return Reconciled(
        issued=remapped,
        edits=tuple(edits),
        notes=tuple(notes),
    )


def _some(items: Sequence[str], most: int = 3) -> str:
    more = len(items) - most
    return "; ".join(items[:most]) + (
        f"; and {more} more version{'s' if more != 1 else ''}" if more > 0 else ""
    )


def _label(record: IssuedVersion, qid: str, index: int, count: int) -> str:
    label = record.variant(qid).label
    return label if label != "default" or count == 1 else f"version {index}"


def _unfit(question: AnyQuestion, record: IssuedVersion, edited: bool, *, legacy: bool) -> str:
    """Why an issued version cannot be graded against the question as it is now ('' if it can)."""
    from quizgym.solver import param_values

    params = getattr(question, "params", None) or {}
    if params or record.params:
        issued_names, now = set(record.params), set(params)
        if issued_names != now:
            return f"parameters {sorted(issued_names)} became {sorted(now)}"
        for name, value in record.params.items():
            # An edit may drop a value some student holds (graded as issued); a question that
            # was not edited never lacks one: the manifest was altered.
            if not edited and Fraction(value) not in param_values(params[name]):
                return f"{name} = {value} is not a value {name} can take in the bank"
    options = options_of(question)
    if options is not None:
        count = len(options)
        shown = len(record.shown) or len(record.order)
        if shown and shown != count:
            return f"{shown} choices were shown, the bank now has {count}"
        if legacy and edited:
            return (
                "the manifest does not record the choices' texts (quizgym-issued/1), so a reorder "
                "cannot be told from an edit: restore the choices as issued, or issue again"
            )
    elif record.order or record.shown:
        return "choices were recorded, but the question has none now"
    return ""


def _order_now(question: AnyQuestion, record: IssuedVersion) -> tuple[list[int] | None, list[str]]:
    """A version's choice order in the bank's current indices, read through the texts the
    students saw, and each choice whose text was edited (one at most can be told apart); None
    and the reason when the texts cannot be matched."""
    options = options_of(question)
    if options is None or not record.shown:
        return list(record.order), []
    now: dict[str, list[int]] = {}
    for i, text in enumerate(options):
        now.setdefault(text, []).append(i)
    order: list[int | None] = []
    for text in record.shown:
        free = now.get(text)
        order.append(free.pop(0) if free else None)
    left = sorted(i for free in now.values() for i in free)
    missing = [k for k, i in enumerate(order) if i is None]
    renamed = []
    if missing:  # _unfit made sure the counts agree: as many left as missing
        if len(missing) > 1:
            texts = ", ".join(repr(record.shown[k]) for k in missing)
            return None, [f"the choices {texts} are no longer in the bank"]
        k = missing[0]
        order[k] = left[0]
        renamed.append(f"the choice {record.shown[k]!r} now reads {options[left[0]]!r}")
    full = [i for i in order if i is not None]
    if not getattr(question, "shuffle", False) and full == list(range(len(full))):
        return [], renamed
    return full, renamed


def _rules_change(before: Sequence[str], now: Sequence[str]) -> str:
    out = []
    for b, a in zip(before, now, strict=False):
        if a != b:
            old, new = b.split("; "), a.split("; ")
            gone = [f for f in old if f not in new]
            came = [f for f in new if f not in old]
            out.append(f"{', '.join(gone) or '—'} → {', '.join(came) or '—'}")
    if len(before) != len(now):
        out.append(f"{len(before)} slots → {len(now)}")
    return "; ".join(out)


def _same_answers(before: Sequence[str], now: Sequence[str]) -> bool:
    from quizgym.tolerance import is_exact

    if len(before) != len(now):
        return False
    for a, b in zip(before, now, strict=True):
        try:
            x, y = float(a), float(b)
        except ValueError:
            if a != b:
                return False
            continue
        if not is_exact(value=y, key=x):
            return False
    return True


def _students_of(issued: Issued, qid: str, index: int) -> frozenset[str]:
    """Who holds one version of a question (nobody by name unless the manifest is a roster's)."""
    return frozenset(s.id for s in issued.students if s.versions.get(qid) == index)


def _holders(issued: Issued, qid: str, index: int | None = None) -> str:
    """Who holds a question (or one version of it), in words."""
    if issued.mode == "per-student":
        n = sum(
            1
            for s in issued.students
            if qid in s.versions and (index is None or s.versions[qid] == index)
        )
        return f"{n} student{'s' if n != 1 else ''}"
    if issued.mode == "pools":
        return "an LMS pool item"
    return "everyone"


def _everyone(issued: Issued) -> str:
    if issued.mode == "per-student":
        n = len(issued.students)
        return f"all {n} student{'s' if n != 1 else ''}"
    return "everyone"


# --- a folder that was issued before ----------------------------------------------------------


def succeed(old: Issued, new: Issued, *, where: Path, add: bool = False) -> Issued:
    """The manifest to write where ``old`` is: ``new``, or ``old`` with ``new``'s students
    added (``add``); refused when writing it would lose or change what a student was given.

    A student of ``old`` who is in ``new`` must be given the same versions (numbers, choice
    order, keys); one who is not is kept with ``add`` and refused without it. A sheet without a
    roster (``single``) may be rendered again.

    Raises:
        QuizgymError: what would be lost, and how to go on.
    """
    again = "render into another folder"
    if old.bank != new.bank:
        raise QuizgymError(f"{where}: holds what was issued from bank {old.bank!r}: {again}")
    if old.mode != "per-student":
        if add:
            raise QuizgymError(f"{where}: holds no roster's sheets to add to: {again}")
        return new
    count = len(old.students)
    if new.mode != "per-student":
        raise QuizgymError(
            f"{where}: records {count} students' sheets; a sheet without a roster would replace "
            f"it: {again}"
        )
    if old.questions != new.questions:
        raise QuizgymError(
            f"{where}: its students were given other questions ({', '.join(old.questions[:4])}"
            f"{' …' if len(old.questions) > 4 else ''}): {again}"
        )
    edited = [q for q in old.questions if old.question_hashes.get(q) != new.question_hashes.get(q)]
    if add and edited:
        raise QuizgymError(
            f"{where}: the bank changed since it was written ({', '.join(edited[:4])}), so the "
            f"students added would not hold what the others hold: {again}"
        )
    for student in old.students:
        now = new.student(student.id)
        if now is None:
            continue
        for qid in old.questions:
            before = old.versions[qid][student.versions[qid]]
            after = new.versions[qid][now.versions[qid]]
            if not _same_version(before, after):
                raise QuizgymError(
                    f"{where}: {student.id} already holds a sheet whose {qid} is "
                    f"{_version_text(qid, before)}; this render gives "
                    f"{_version_text(qid, after)}: {again}, or render with the seed they had "
                    f"({student.seed})"
                )
    missing = [s.id for s in old.students if new.student(s.id) is None]
    if not missing:
        return new
    if not add:
        shown = ", ".join(missing[:4]) + (
            f" and {len(missing) - 4} more" if len(missing) > 4 else ""
        )
        raise QuizgymError(
            f"{where}: records {len(missing)} student{'s' if len(missing) != 1 else ''} this "
            f"roster does not list ({shown}): {again}, or keep them and add this roster with --add"
        )
    versions = {q: list(old.versions[q]) for q in old.questions}
    known = {
        q: {(tuple(sorted(r.params.items())), tuple(r.order)): k for k, r in enumerate(table)}
        for q, table in versions.items()
    }
    students = list(old.students)
    for student in new.students:
        if old.student(student.id) is not None:
            continue
        picks = {}
        for qid, index in student.versions.items():
            record = new.versions[qid][index]
            key = (tuple(sorted(record.params.items())), tuple(record.order))
            if key not in known[qid]:
                known[qid][key] = len(versions[qid])
                versions[qid].append(record)
            picks[qid] = known[qid][key]
        students.append(student.model_copy(update={"versions": picks}))
    return new.model_copy(update={"versions": versions, "students": students, "seed": old.seed})


def _same_version(before: IssuedVersion, after: IssuedVersion) -> bool:
    if (before.params, before.keys) != (after.params, after.keys):
        return False
    if before.shown and after.shown:
        return before.shown == after.shown
    return before.order == after.order


def _version_text(qid: str, record: IssuedVersion) -> str:
    label = record.variant(qid).label
    keys = " · ".join(record.keys)
    return keys if label == "default" else f"{label} (key {keys})"


# --- files --------------------------------------------------------------------------------------


def write_issued(path: Path, issued: Issued) -> Path:
    """Write a manifest as indented JSON (written whole, then renamed into place)."""
    text = issued.model_dump_json(indent=2, exclude_defaults=False) + "\n"
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
    return path


def read_issued(path: Path) -> Issued:
    """Read a manifest, checked as strictly as a bank: every field's type and range, and every
    reference inside it (a student listed once, version indices that exist, exact parameter
    values, orders that are orders). What it says about the bank is checked by
    :func:`reconcile`.

    Raises:
        QuizgymError: the file cannot be read or is not a valid quizgym issue manifest
            (``path:line: field: what``).
    """
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise QuizgymError(
                f"{path}: {size / 2**20:.0f} MiB is too large for an issue manifest "
                f"(at most {MAX_BYTES // 2**20} MiB)"
            )
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise QuizgymError(f"{path}: cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise QuizgymError(f"{path}: not a quizgym issue manifest (not UTF-8 text)") from exc
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise QuizgymError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from exc
    except RecursionError as exc:
        raise QuizgymError(f"{path}: not a quizgym issue manifest (nested too deeply)") from exc
    except ValueError as exc:  # an integer of thousands of digits
        raise QuizgymError(f"{path}: not a quizgym issue manifest ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") not in FORMATS:
        raise QuizgymError(f'{path}: not a quizgym issue manifest (no "format": "{FORMAT}")')
    try:
        return Issued.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = tuple(first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        if first["type"] == "value_error" and re.fullmatch(r"[\w.-]+", message.split(":")[0]):
            where, message = message.split(": ", 1)  # the model's own check names the field
            loc = tuple(int(p) if p.isdigit() else p for p in where.split("."))
        line = _line_of(raw, loc)
        at = f"{path}:{line}" if line else str(path)
        field = ".".join(_part(p) for p in loc) or "the manifest"
        raise QuizgymError(f"{at}: {field}: {' '.join(message.split())}") from exc


def _part(part: str | int) -> str:
    """A field name as a message shows it: quoted when it is not a plain name."""
    text = str(part)
    plain = re.fullmatch(r"[\w.-]{1,80}", text) and text.isascii()
    return text if plain else json.dumps(text[:80])


def _line_of(raw: str, loc: Sequence[str | int]) -> int | None:
    """The line of a field of a JSON text (1-based), or None when it cannot be found."""
    import yaml  # JSON is YAML: its composer keeps every node's position

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        node = yaml.compose(raw, Loader=loader)
    except (yaml.YAMLError, RecursionError):
        return None
    line = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            found = [v for k, v in node.value if getattr(k, "value", None) == str(part)]
            if not found:
                break
            key = next(k for k, v in node.value if v is found[0])
            line, node = key.start_mark.line + 1, found[0]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if not 0 <= part < len(node.value):
                break
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def issued_json_schema(*, indent: int = 2) -> str:
    """The JSON Schema of an issue manifest, as text."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:quizgym:issued-schema:1",
        **Issued.model_json_schema(mode="validation"),
    }
    return json.dumps(schema, indent=indent, ensure_ascii=False)
