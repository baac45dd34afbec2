"""A compiled bank, a question and a student's variant in; what a worksheet or an answer key shows
for it out, as plain records for the templates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from quizgym.accept import FINE, runs_of
from quizgym.answers import expected_answer, shown_choices
from quizgym.expr import format_value
from quizgym.model import (
    LETTERS,
    AnyQuestion,
    Bank,
    Numeric,
    Tolerance,
    question_points,
)
from quizgym.solver import CompiledBank, Slot, Variant, compiled, prompt_of, show_number
from quizgym.tolerance import describe
from quizgym.types import (
    BlanksInteraction,
    NumericInteraction,
    PairingInteraction,
    blanks_of,
    choices_of,
    correction_of,
    drawn_prompt,
    is_multiple,
    numeric_of,
    pairing_of,
    statement_of,
    text_of,
    type_of,
)
from quizgym.types.interactions import WordInteraction


@dataclass(frozen=True)
class ChoiceView:
    """One choice as printed: its letter for this student, its text, and what a key says."""

    letter: str
    text: str
    correct: bool
    feedback: str


@dataclass(frozen=True)
class SlotView:
    """One answer box of a numeric question (the question itself or one part)."""

    id: str | None
    label: str
    """``(a)``, ``(b)``, … for parts; empty for a single answer."""
    prompt: str
    units: str
    points: float


@dataclass(frozen=True)
class QuestionView:
    """A question as printed on one student's worksheet."""

    number: int
    id: str
    type: str
    kind: str
    """The interaction drawn: ``truth``, ``choice``, ``text`` or ``number``."""
    points: float
    prompt: str
    statement: str
    choices: tuple[ChoiceView, ...]
    multiple: bool
    slots: tuple[SlotView, ...]
    lines: int
    """Ruled lines of answer space for free text."""


@dataclass(frozen=True, kw_only=True)
class KeyLine:
    """The answer to one slot for one variant."""

    label: str = ""
    prompt: str = ""
    answer: str
    """The exact form (``ln 10``), the choice (``B: GPT``), true/false or the model answer."""
    decimal: str = ""
    """The key to 7 significant figures, when it is not already a plain number."""
    units: str = ""
    tolerance: str = ""
    """The tolerance in words (empty for non-numeric answers)."""
    interval: str = ""
    """The decimals the engine accepts, as runs: ``1.38491 to 1.38768, 1.39``."""
    mistakes: tuple[tuple[str, str], ...] = ()
    """Known wrong answers for this variant: (value, feedback)."""
    also: tuple[str, ...] = ()
    """Other correct answers for this variant (``answers:``, or a mistake with credit 1)."""


@dataclass(frozen=True)
class KeyGroup:
    """Students who share one variant of a question, and its answers."""

    students: tuple[str, ...]
    params: tuple[tuple[str, str], ...]
    prompt: str
    answers: tuple[KeyLine, ...]


@dataclass(frozen=True)
class KeyView:
    """A question in an answer key: its answers by variant and its worked explanation."""

    number: int
    id: str
    type: str
    points: float
    prompt: str
    """The prompt; ``{name}`` placeholders stay symbolic when several variants are listed."""
    variables: tuple[str, ...]
    statement: str
    choices: tuple[ChoiceView, ...]
    groups: tuple[KeyGroup, ...]
    rubric: tuple[tuple[str, float], ...]
    explanation: str
    worked_for: str
    """For questions with variants: the numbers the explanation was written for."""
    correction: str
    hint: str


def points_shown(points: float) -> float | int:
    """Points as printed: 2, not 2.0."""
    return int(points) if float(points).is_integer() else points


def _choices(question: AnyQuestion, variant: Variant) -> tuple[ChoiceView, ...]:
    pairing = pairing_of(question)
    if pairing is not None:  # the answers, lettered in this student's order
        return tuple(
            ChoiceView(LETTERS[k], pairing.answers[i], False, "")
            for k, i in enumerate(variant.order or range(len(pairing.answers)))
        )
    options = choices_of(question)
    if options is None or options.boolean:  # true/false: the template draws its two boxes
        return ()
    return tuple(
        ChoiceView(LETTERS[k], c.text, c.correct, c.feedback or "")
        for k, i in enumerate(shown_choices(options, variant))
        for c in (options.choices[i],)
    )


def _slot_views(bank: CompiledBank, question: Numeric, variant: Variant) -> tuple[SlotView, ...]:
    many = len(question.parts) > 0
    return tuple(
        SlotView(
            slot.part,
            f"({LETTERS[k].lower()})" if many else "",
            variant.fill(slot.prompt) if many else "",
            slot.units or "",
            points_shown(slot.points),
        )
        for k, slot in enumerate(bank.slots_of(question))
    )


def _item_views(bank: CompiledBank, question: AnyQuestion) -> tuple[SlotView, ...]:
    """The items of a matching question, numbered, each with its points."""
    pairing = pairing_of(question)
    assert pairing is not None
    return tuple(
        SlotView(
            slot.part, f"{k + 1}.", pairing.item(str(slot.part)).item, "", points_shown(slot.points)
        )
        for k, slot in enumerate(bank.slots_of(question))
    )


def _blank_views(bank: CompiledBank, blanks: BlanksInteraction) -> tuple[SlotView, ...]:
    """The blanks of a cloze question, numbered as the text shows them, each with its points."""
    return tuple(
        SlotView(
            slot.part,
            f"({blanks.number(str(slot.part))})",
            str(slot.part),
            blanks.blank(str(slot.part)).units or "",
            points_shown(slot.points),
        )
        for slot in bank.slots_of(blanks.question)
    )


def shown_prompt(question: AnyQuestion, variant: Variant) -> str:
    """The prompt as a worksheet prints it: the variant's numbers, and a cloze's blanks drawn."""
    return drawn_prompt(question, prompt_of(question, variant))


def question_view(
    bank: Bank | CompiledBank, question: AnyQuestion, number: int, variant: Variant
) -> QuestionView:
    """What a worksheet prints for one question and one variant.

    Every number on a student's page and every key comes from the compiled bank
    (:class:`quizgym.solver.CompiledBank`), so the paper, the LMS exports and the grader agree for
    the same student and seed.
    """
    book = compiled(bank)
    points = question_points(question, book.bank.defaults)
    kind = type_of(question)
    interaction = kind.interaction(question)
    return QuestionView(
        number=number,
        id=question.id,
        type=question.type,
        kind=interaction.kind,
        points=points_shown(points),
        prompt=shown_prompt(question, variant),
        statement=kind.statement(question) or "",
        choices=_choices(question, variant),
        multiple=is_multiple(question),
        slots=_slot_views(book, interaction.question, variant)
        if isinstance(interaction, NumericInteraction)
        else _item_views(book, question)
        if isinstance(interaction, PairingInteraction)
        else _blank_views(book, interaction)
        if isinstance(interaction, BlanksInteraction)
        else (),
        lines=kind.answer_lines(question),
    )


def _accepted(bank: CompiledBank, tolerance: Tolerance, value: float) -> str:
    """What the engine accepts as a typed decimal, as runs to 6 figures (``1.38491 to
    1.38768, 1.39``): under ``auto`` the digits typed count, so one interval would also name
    answers it refuses."""
    runs = runs_of(bank, target=value, tolerance=tolerance, grid=FINE)
    shown = [
        format_value(float(r.low), 6)
        if r.low == r.high
        else f"{format_value(float(r.low), 6)} to {format_value(float(r.high), 6)}"
        for r in runs
    ]
    return ", ".join(dict.fromkeys(shown)) or "nothing"


def _key_lines(bank: CompiledBank, question: AnyQuestion, variant: Variant) -> tuple[KeyLine, ...]:
    if pairing_of(question) is not None:
        return tuple(
            KeyLine(
                label=view.label,
                prompt=view.prompt,
                answer=expected_answer(question, variant, part=view.id),
            )
            for view in _item_views(bank, question)
        )
    blanks = blanks_of(question)
    if blanks is not None:
        return tuple(
            _blank_line(bank, blanks, view, variant) for view in _blank_views(bank, blanks)
        )
    numeric = numeric_of(question)
    if numeric is None:
        return (KeyLine(answer=expected_answer(question, variant)),)
    views = _slot_views(bank, numeric.question, variant)
    return tuple(
        _number_line(bank, slot, view, variant)
        for slot, view in zip(bank.slots_of(question), views, strict=True)
    )


def _number_line(bank: CompiledBank, slot: Slot, view: SlotView, variant: Variant) -> KeyLine:
    """The key of one numeric slot: exact and decimal, what is accepted, the known mistakes."""
    assert slot.tolerance is not None
    key = bank.key(slot, variant)
    decimal = format_value(key.value, 7)
    resolved = bank.mistakes(slot, variant)
    mistakes = tuple((format_value(m.value, 5), m.feedback) for m in resolved if m.credit < 1)
    also = tuple(format_value(m.value, 7) for m in resolved if m.credit >= 1)
    return KeyLine(
        label=view.label,
        prompt=view.prompt,
        answer=key.text,
        decimal="" if decimal == key.text else decimal,
        units=slot.units or "",
        tolerance=describe(slot.tolerance),
        interval=_accepted(bank, slot.tolerance, key.number),
        mistakes=mistakes,
        also=also,
    )


def _blank_line(
    bank: CompiledBank, blanks: BlanksInteraction, view: SlotView, variant: Variant
) -> KeyLine:
    """The key of one blank of a cloze question, as its kind has it."""
    slot = bank.slot(f"{blanks.question.id}.{view.id}")
    if slot.is_numeric:
        return _number_line(bank, slot, view, variant)
    word = blanks.slot(str(view.id))
    answer = expected_answer(blanks.question, variant, part=view.id)
    if isinstance(word, WordInteraction):
        rule = "case counts" if word.case_sensitive else "any case"
        return KeyLine(
            label=view.label,
            prompt=view.prompt,
            answer=answer,
            tolerance=f"these spellings, {rule}, spacing ignored",
            interval=", ".join(word.accept),
        )
    return KeyLine(label=view.label, prompt=view.prompt, answer=answer)


def key_view(
    bank: Bank | CompiledBank,
    question: AnyQuestion,
    number: int,
    students: Sequence[tuple[str, Variant]],
) -> KeyView:
    """What an answer key prints for one question, its students grouped by variant.

    Args:
        bank: the bank, compiled (a plain bank is compiled for this call).
        question: the question.
        number: its number on the worksheet.
        students: (label, variant) of every student the key covers; label is '' for a
            worksheet without a roster.
    """
    book = compiled(bank)
    # Students are grouped by what the key says to them: their numbers and right answers (a
    # shuffled question's students by their right letter, not by the whole order they saw).
    lines_of: dict[tuple[Any, ...], tuple[KeyLine, ...]] = {}
    by_key: dict[tuple[Any, ...], list[tuple[str, Variant]]] = {}
    for label, variant in students:
        drawn = (variant.signature, variant.order)
        if drawn not in lines_of:
            lines_of[drawn] = _key_lines(book, question, variant)
        by_key.setdefault((variant.signature, lines_of[drawn]), []).append((label, variant))
    groups = tuple(
        KeyGroup(
            tuple(label for label, _ in members if label),
            tuple((name, show_number(value)) for name, value in members[0][1].params.items()),
            shown_prompt(question, members[0][1]),
            lines_of[members[0][1].signature, members[0][1].order],
        )
        for members in by_key.values()
    )
    first = students[0][1]
    one = len(groups) == 1
    default = book.variant(question)
    worked = first if one else default  # the numbers the text is worked for
    variables = tuple(first.params) if not one else ()
    text = text_of(question)
    return KeyView(
        number=number,
        id=question.id,
        type=question.type,
        points=points_shown(question_points(question, book.bank.defaults)),
        prompt=shown_prompt(question, first) if one else question.prompt,
        variables=variables,
        statement=statement_of(question) or "",
        choices=_choices(question, first) if one else _choices(question, Variant(question.id)),
        groups=groups,
        rubric=tuple((r.criterion, points_shown(r.points)) for r in text.rubric) if text else (),
        explanation=worked.fill(question.explanation or ""),
        worked_for=", ".join(
            f"{name} = {show_number(value)}" for name, value in default.params.items()
        ),
        correction=correction_of(question) or "",
        hint=worked.fill(question.hint or ""),
    )
