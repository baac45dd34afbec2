"""What was handed out: the issue manifest (``issued.json``) that ``render`` and ``export`` write
and ``grade --issued`` grades against.

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
indices), not only as a seed, so a manifest grades the same students the same way even if a later
quizgym draws differently. The bank's content hash and one hash per question tell whether the bank
was edited since. ``quizgym schema --issued`` prints the JSON Schema of this file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from quizgym.errors import QuizgymError
from quizgym.expr import format_value
from quizgym.model import AnyQuestion, Bank, FreeText, MultipleChoice, SpotTheError, TrueFalse
from quizgym.solver import CompiledBank, Variant

__all__ = [
    "FORMAT",
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
    "write_issued",
]

FORMAT: Literal["quizgym-issued/1"] = "quizgym-issued/1"
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
    """One version of one question: its parameter values and the order its choices were shown."""

    params: dict[str, str] = Field(
        default_factory=dict, description="parameter values as exact numbers: '1/5', '40'"
    )
    order: list[int] = Field(
        default_factory=list, description="choice indices (bank order) in the order shown"
    )
    keys: list[str] = Field(
        default_factory=list,
        description="the right answer of each slot as issued (a number to 15 digits, the right "
        "choices' texts, true/false, or the model answer), to tell later edits apart",
    )

    @classmethod
    def of(cls, variant: Variant, book: CompiledBank) -> IssuedVersion:
        """The record of a variant of a question of ``book``."""
        params, order = cls.of_draw(variant)
        return cls(params=params, order=order, keys=answers_of(book, variant))

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

    id: str
    seed: int | None = Field(default=None, description="the seed their numbers were drawn with")
    versions: dict[str, int] = Field(
        default_factory=dict, description="question id → index into the manifest's versions"
    )


class IssuedItem(_Record):
    """One item of an LMS export: which question, part and version it is, and what it says."""

    ident: str = Field(
        description="the item's identifier in the export (QTI ident, Moodle idnumber)"
    )
    question: str
    part: str | None = None
    version: int = Field(description="index into the manifest's versions of the question")
    text: str = Field(description="the item's text as students saw it (numbers filled in)")


class Issued(_Record):
    """An issue manifest (see the module docs)."""

    format: Literal["quizgym-issued/1"] = FORMAT
    bank: str = Field(description="the bank's slug")
    bank_version: int
    bank_hash: str = Field(description="sha256 of the bank's content (not of its YAML layout)")
    question_hashes: dict[str, str] = Field(description="question id → sha256 of its content")
    issued_by: str = Field(description="the command: render, export moodle, export qti12, …")
    mode: Literal["single", "per-student", "pools"]
    seed: int | None = Field(default=None, description="the class seed, if one was given")
    draws: str = DRAWS
    questions: list[str] = Field(description="the questions handed out, in order")
    versions: dict[str, list[IssuedVersion]] = Field(
        description="per question, every version handed out"
    )
    students: list[IssuedStudent] = Field(default_factory=list)
    items: list[IssuedItem] = Field(default_factory=list)

    _by_id: dict[str, IssuedStudent] | None = PrivateAttr(default=None)

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
        elif isinstance(question, MultipleChoice | SpotTheError):
            out.append("; ".join(c.text for c in question.choices if c.correct))
        elif isinstance(question, TrueFalse):
            out.append("true" if question.answer else "false")
        elif isinstance(question, FreeText):
            out.append(question.model_answer)
    return out


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


# --- files --------------------------------------------------------------------------------------


def write_issued(path: Path, issued: Issued) -> Path:
    """Write a manifest as indented JSON (written whole, then renamed into place)."""
    text = issued.model_dump_json(indent=2, exclude_defaults=False) + "\n"
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
    return path


def read_issued(path: Path) -> Issued:
    """Read a manifest.

    Raises:
        QuizgymError: the file cannot be read or is not a quizgym issue manifest.
    """
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise QuizgymError(f"{path}: cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise QuizgymError(f"{path}: not a quizgym issue manifest (not UTF-8 text)") from exc
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise QuizgymError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise QuizgymError(f'{path}: not a quizgym issue manifest (no "format": "{FORMAT}")')
    try:
        return Issued.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise QuizgymError(f"{path}: {where}: {first['msg']}") from exc


def issued_json_schema(*, indent: int = 2) -> str:
    """The JSON Schema of an issue manifest, as text."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:quizgym:issued-schema:1",
        **Issued.model_json_schema(mode="validation"),
    }
    return json.dumps(schema, indent=indent, ensure_ascii=False)


def item_versions(issued: Issued) -> Mapping[str, IssuedItem]:
    """The manifest's items by identifier."""
    return {item.ident: item for item in issued.items}
