"""The answer engine: one response → one :class:`Verdict`, the single source of truth for what
counts as right.

It sits just above the solver, below everything that shows or grades answers: the drill, the
worksheets' keys, the exports and the batch grader all defer to this module (the batch grader
re-implements only the numeric comparison in NumPy, and a property test holds the two paths to
the same verdict on every response).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from mpmath import mpf

from quizgym.expr import ParseFailure, Reading, format_value, read_answer
from quizgym.model import (
    LETTERS,
    AnyQuestion,
    Bank,
    FreeText,
    MultipleChoice,
    Numeric,
    SpotTheError,
    TrueFalse,
)
from quizgym.solver import (
    CompiledBank,
    ResolvedMistake,
    Slot,
    Variant,
    compiled,
)
from quizgym.tolerance import Match, compare


class Status(StrEnum):
    """The outcome of grading one response."""

    CORRECT = "correct"
    PARTIAL = "partial"
    INCORRECT = "incorrect"
    INVALID = "invalid"
    BLANK = "blank"


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """How one response was graded, and everything a student or teacher is told about it."""

    question: str
    """The question id, or ``id.part`` for a part."""
    status: Status
    score: float
    max_score: float
    read_as: str = ""
    """How the response was read, e.g. ``ln(10) ≈ 2.302585`` or ``B: GPT``."""
    feedback: str = ""
    tag: str | None = None
    """Misconception tag of the matched mistake or choice."""
    expected: str = ""
    """The correct answer, as shown to the student afterwards."""
    needs_review: bool = False
    """Free text: the rubric score is a suggestion a person should confirm."""
    value: float | None = None
    """Numeric answers: the value read."""

    @property
    def is_correct(self) -> bool:
        """Full credit."""
        return self.status is Status.CORRECT


TRUE_WORDS = frozenset({"true", "t", "yes", "y", "1"})
FALSE_WORDS = frozenset({"false", "f", "no", "n", "0"})


def is_blank(response: str | None) -> bool:
    """No answer at all (missing, empty or whitespace)."""
    return response is None or not response.strip()


# --- true/false ---------------------------------------------------------------------------------


def read_bool(response: str) -> bool | None:
    """Read true/false/t/f/yes/no/1/0 in any case; None when it is none of them."""
    word = response.strip().rstrip(".!").strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None


def _grade_true_false(question: TrueFalse, response: str, points: float) -> Verdict:
    expected = "true" if question.answer else "false"
    value = read_bool(response)
    if value is None:
        return Verdict(
            question=question.id,
            status=Status.INVALID,
            score=0.0,
            max_score=points,
            feedback="Your answer should be true or false (or t/f, yes/no, 1/0).",
            expected=expected,
        )
    right = value == question.answer
    return Verdict(
        question=question.id,
        status=Status.CORRECT if right else Status.INCORRECT,
        score=points if right else 0.0,
        max_score=points,
        read_as="true" if value else "false",
        feedback="" if right else f"The statement is {expected}.",
        expected=expected,
    )


# --- choices ------------------------------------------------------------------------------------


def shown_choices(question: MultipleChoice | SpotTheError, variant: Variant) -> list[int]:
    """Bank indices of the choices in the order this student sees them."""
    return list(variant.order) if variant.order else list(range(len(question.choices)))


def read_choices(
    response: str, question: MultipleChoice | SpotTheError, variant: Variant
) -> list[int] | str:
    """Read a letter, a 1-based number or the exact text of a choice (several for ``multiple``).

    Letters and numbers refer to the order the student saw. Returns bank indices, or an error
    message for the student.
    """
    order = shown_choices(question, variant)
    texts = {_fold(question.choices[i].text): i for i in order}
    folded = _fold(response)
    if folded in texts:
        return [texts[folded]]
    multiple = isinstance(question, MultipleChoice) and question.multiple
    tokens = [response.strip()]
    if multiple:
        # Several answers: one per line, or separated by commas or semicolons (each may be a
        # choice's text; one per line lets a text hold a comma), or letters and numbers
        # separated by spaces ("A C").
        for separator in (r"\n", r"[,;\n]"):
            pieces = [p.strip() for p in re.split(separator, response) if p.strip()]
            if pieces and all(_fold(p) in texts for p in pieces):
                return list(dict.fromkeys(texts[_fold(p)] for p in pieces))
        tokens = [t for t in re.split(r"[\s,;]+", response.strip()) if t]
    picked: list[int] = []
    for token in tokens:
        token = token.strip().rstrip(").").lstrip("(")
        index: int | None = None
        # ASCII only: "²", "①", "₁" and "٣" are digits to str.isdigit() but not to int(), and a
        # letter such as "ı" upper-cases to "I"; none of them is guessed at.
        if len(token) == 1 and token.isascii() and token.upper() in LETTERS[: len(order)]:
            index = LETTERS.index(token.upper())
        elif _NUMBER.fullmatch(token) and 1 <= int(token) <= len(order):
            index = int(token) - 1
        if index is None:
            last = LETTERS[len(order) - 1]
            return (
                f"Your answer {token!r} is not one of the choices; "
                f"answer with a letter A–{last}, a number 1–{len(order)} or the choice's text."
            )
        if order[index] not in picked:
            picked.append(order[index])
    if not multiple and len(picked) != 1:
        return "Choose exactly one answer."
    return picked


_NUMBER = re.compile(r"[0-9]{1,4}")
"""A choice's 1-based number as typed (a few ASCII digits: int() of 5,000 would refuse)."""


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _label(question: MultipleChoice | SpotTheError, variant: Variant, index: int) -> str:
    position = shown_choices(question, variant).index(index)
    return f"{LETTERS[position]}: {question.choices[index].text}"


def _grade_choice(
    question: MultipleChoice | SpotTheError, variant: Variant, response: str, points: float
) -> Verdict:
    right = [i for i, c in enumerate(question.choices) if c.correct]
    expected = "; ".join(_label(question, variant, i) for i in right)
    picked = read_choices(response, question, variant)
    if isinstance(picked, str):
        return Verdict(
            question=question.id,
            status=Status.INVALID,
            score=0.0,
            max_score=points,
            feedback=picked,
            expected=expected,
        )
    read_as = "; ".join(_label(question, variant, i) for i in picked)
    wrong = [i for i in picked if not question.choices[i].correct]
    feedback = " ".join(f for i in wrong if (f := question.choices[i].feedback))
    tag = next((question.choices[i].tag for i in wrong if question.choices[i].tag), None)
    if isinstance(question, MultipleChoice) and question.multiple:
        # Canvas/Moodle convention: each right pick earns 1/k, each wrong pick costs 1/k, floor 0.
        hits = sum(1 for i in picked if question.choices[i].correct)
        fraction = max(0.0, (hits - len(wrong)) / len(right))
        status = (
            Status.CORRECT
            if fraction == 1
            else Status.PARTIAL
            if fraction > 0
            else Status.INCORRECT
        )
        if status is not Status.CORRECT and not feedback:
            feedback = f"{hits} of {len(right)} correct choices picked, {len(wrong)} wrong."
    else:
        fraction = 0.0 if wrong else 1.0
        status = Status.INCORRECT if wrong else Status.CORRECT
    return Verdict(
        question=question.id,
        status=status,
        score=points * fraction,
        max_score=points,
        read_as=read_as,
        feedback=feedback,
        tag=tag,
        expected=expected,
    )


# --- free text ----------------------------------------------------------------------------------


def _words(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " " + " ".join(re.sub(r"[^\w\s]", " ", folded).split()) + " "


def _grade_free_text(question: FreeText, response: str, points: float) -> Verdict:
    words = _words(response)
    met = [c for c in question.rubric if any(_words(p) in words for p in c.any_of)]
    total = sum(c.points for c in question.rubric)
    earned = sum(c.points for c in met)
    fraction = earned / total
    status = (
        Status.CORRECT if fraction == 1 else Status.PARTIAL if fraction > 0 else Status.INCORRECT
    )
    missing = [c.criterion for c in question.rubric if c not in met]
    parts = []
    if met:
        parts.append("Mentions: " + "; ".join(c.criterion for c in met) + ".")
    if missing:
        parts.append("Not yet: " + "; ".join(missing) + ".")
    parts.append("Suggested score from the rubric; to be reviewed.")
    return Verdict(
        question=question.id,
        status=status,
        score=round(points * fraction, 6),
        max_score=points,
        read_as=f"rubric {format_value(earned)}/{format_value(total)}",
        feedback=" ".join(parts),
        expected=question.model_answer,
        needs_review=True,
    )


# --- numeric ------------------------------------------------------------------------------------


def _match(reading: Reading, target: float, slot: Slot) -> Match:
    assert slot.tolerance is not None
    return compare(
        value=float(reading.value),
        key=target,
        tolerance=slot.tolerance,
        kind=reading.parsed.kind,
        decimals=reading.parsed.decimals,
        sigfigs=reading.parsed.sigfigs,
    )


def grade_slot(
    bank: CompiledBank,
    slot: Slot,
    variant: Variant,
    response: str | None,
    *,
    earlier_values: Mapping[str, mpf] | None = None,
) -> Verdict:
    """Grade one numeric slot: the key, then the key carried forward, then each mistake.

    Args:
        bank: the compiled bank.
        slot: the slot (a numeric question or one of its parts).
        variant: the student's variant.
        response: the raw text (None or blank: no answer).
        earlier_values: the student's earlier parts, read (error carried forward).
    """
    key = bank.key(slot, variant)
    expected = expected_number(slot, variant, bank)
    reading = None if is_blank(response) else read_answer(response or "")
    if not isinstance(reading, Reading):
        return numeric_verdict(slot, expected, reading)
    match = _match(reading, key.number, slot)
    if match.ok:
        return numeric_verdict(slot, expected, reading, correct=True)
    if slot.earlier and earlier_values:
        carried = bank.carried_forward(slot, variant, earlier_values)
        if carried is not None and _match(reading, carried, slot).ok:
            names = ", ".join(slot.earlier)
            feedback = (
                f"Correct for your answer to {names} (error carried forward); "
                f"with the right {names} it would be {key}."
            )
            return numeric_verdict(slot, expected, reading, correct=True, feedback=feedback)
    for mistake in bank.mistakes(slot, variant):
        if _match(reading, mistake.value, slot).ok:
            return numeric_verdict(slot, expected, reading, mistake=mistake)
    return numeric_verdict(slot, expected, reading, feedback=match.hint or "")


def expected_number(slot: Slot, variant: Variant, bank: CompiledBank) -> str:
    """The key of a numeric slot as shown to the student, with units: ``ln 10 ≈ 2.3026 nats``."""
    key = bank.key(slot, variant)
    return str(key) + (f" {slot.units}" if slot.units else "")


def numeric_verdict(
    slot: Slot,
    expected: str,
    reading: Reading | ParseFailure | None,
    *,
    correct: bool = False,
    mistake: ResolvedMistake | None = None,
    feedback: str = "",
) -> Verdict:
    """The verdict of a numeric answer once it has been compared (shared with the batch grader).

    Args:
        slot: the slot.
        expected: the key as shown to the student.
        reading: how the answer was read; None for a blank answer.
        correct: it matched the key (or the key carried forward from the student's own answers).
        mistake: else, the known mistake it matched.
        feedback: what to tell the student when no mistake matched (a precision hint), or why
            a carried-forward answer is right.
    """
    qid, points = slot.id, slot.points
    if reading is None:
        return Verdict(
            question=qid, status=Status.BLANK, score=0.0, max_score=points, expected=expected
        )
    if isinstance(reading, ParseFailure):
        return Verdict(
            question=qid,
            status=Status.INVALID,
            score=0.0,
            max_score=points,
            feedback=reading.message,
            expected=expected,
        )
    value = float(reading.value)
    if correct:
        status, score = Status.CORRECT, points
    elif mistake is not None:
        status = Status.PARTIAL if mistake.credit > 0 else Status.INCORRECT
        score, feedback = points * mistake.credit, mistake.feedback
    else:
        status, score = Status.INCORRECT, 0.0
    tag = None if mistake is None or correct else mistake.tag
    return Verdict(
        question=qid,
        status=status,
        score=score,
        max_score=points,
        read_as=reading.read_as,
        feedback=feedback,
        tag=tag,
        expected=expected,
        value=value,
    )


def mistakes_for(
    bank: Bank | CompiledBank, question: Numeric, variant: Variant, index: int
) -> tuple[ResolvedMistake, ...]:
    """The mistakes of slot ``index`` of a question for one variant (a convenience over
    :meth:`CompiledBank.mistakes`)."""
    book = compiled(bank)
    return book.mistakes(book.slots_of(question)[index], variant)


# --- entry points -------------------------------------------------------------------------------


def grade_response(
    bank: Bank | CompiledBank,
    question: AnyQuestion,
    response: str | None,
    *,
    student: str | None = None,
    seed: int | None = None,
    part: str | None = None,
    earlier: Mapping[str, str] | None = None,
    variant: Variant | None = None,
) -> Verdict:
    """Grade one response to one question (or one part of it).

    Args:
        bank: the bank the question belongs to, compiled (a plain bank is compiled for this
            call: compile it once with :func:`~quizgym.solver.compile_bank` to grade many).
        question: the question.
        response: the raw text the student gave (None or blank = no answer).
        student: the student's id (selects the variant).
        seed: the seed (selects the variant).
        part: for a multi-part question, the part's id.
        earlier: the student's raw answers to earlier parts, by part id (error carried forward).
        variant: the variant, when the caller already has it.

    Returns:
        The verdict.

    Raises:
        KeyError: no such part, or a part named for a question without parts.
    """
    book = compiled(bank)
    variant = variant or book.variant(question, student=student, seed=seed)
    slots = book.slots_of(question)
    if isinstance(question, Numeric):
        ids = [slot.part for slot in slots]
        if part not in ids:
            raise KeyError(
                f"{question.id}: no part {part!r}" if part else f"{question.id}: name a part"
            )
        slot = slots[ids.index(part)]
        values = _earlier_values(earlier or {})
        return grade_slot(book, slot, variant, response, earlier_values=values)
    if part is not None:
        raise KeyError(f"{question.id} has no parts")
    (slot,) = slots
    points = slot.points
    if is_blank(response):
        return Verdict(
            question=question.id,
            status=Status.BLANK,
            score=0.0,
            max_score=points,
            expected=expected_answer(question, variant),
        )
    assert response is not None
    if isinstance(question, TrueFalse):
        return _grade_true_false(question, response, points)
    if isinstance(question, MultipleChoice | SpotTheError):
        return _grade_choice(question, variant, response, points)
    return _grade_free_text(question, response, points)


def grade_question(
    bank: Bank | CompiledBank,
    question: AnyQuestion,
    responses: Mapping[str | None, str | None],
    *,
    student: str | None = None,
    seed: int | None = None,
) -> list[Verdict]:
    """Grade every slot of a question; ``responses`` maps part id (None for no parts) to text."""
    book = compiled(bank)
    variant = book.variant(question, student=student, seed=seed)
    part_ids = [slot.part for slot in book.slots_of(question)]
    if part_ids == [None]:
        return [grade_response(book, question, responses.get(None), variant=variant)]
    return [
        grade_response(
            book,
            question,
            responses.get(part_id),
            part=part_id,
            earlier={p: t for p in part_ids[:index] if p and (t := responses.get(p)) is not None},
            variant=variant,
        )
        for index, part_id in enumerate(part_ids)
    ]


def _earlier_values(earlier: Mapping[str, str]) -> dict[str, mpf]:
    """The student's earlier parts, read from their text at full precision."""
    values = {}
    for name, text in earlier.items():
        reading = read_answer(text) if not is_blank(text) else None
        if isinstance(reading, Reading):
            values[name] = reading.value
    return values


def expected_answer(question: AnyQuestion, variant: Variant) -> str:
    """The correct answer to a question without numbers, as shown to a student."""
    if isinstance(question, TrueFalse):
        return "true" if question.answer else "false"
    if isinstance(question, MultipleChoice | SpotTheError):
        return "; ".join(
            _label(question, variant, i) for i, c in enumerate(question.choices) if c.correct
        )
    if isinstance(question, FreeText):
        return question.model_answer
    return ""


__all__ = [
    "ResolvedMistake",
    "Status",
    "Verdict",
    "expected_answer",
    "expected_number",
    "grade_question",
    "grade_response",
    "grade_slot",
    "is_blank",
    "mistakes_for",
    "numeric_verdict",
    "read_bool",
    "read_choices",
    "shown_choices",
]
