"""Question types as HTML forms and back: a question and its variant in, the form's fields out
(one per slot, named by the slot id, ``q`` or ``q.part``, each labelled); a submitted form in,
each slot's answer text out; a stored verdict in, its HTML out.

Each field is drawn and read by the slot's interaction (true or false, a lettered choice of one
or several, a matching item's choice of an answer, a number, a text), never by its question's
type. Nothing here grades: the text read back is what the
answer engine reads, the same text ``quizgym grade`` would read in a submissions file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from quizgym.errors import QuizgymError
from quizgym.model import LETTERS, AnyQuestion
from quizgym.richtext import parse
from quizgym.richtext.html import HtmlStyle, attr, escape, to_html
from quizgym.richtext.tree import Image
from quizgym.solver import CompiledBank, Slot, Variant
from quizgym.types import ChoiceInteraction, blanks_of, choices_of, statement_of, text_of

__all__ = [
    "MAX_FIELD",
    "FormError",
    "Shown",
    "draw_question",
    "draw_verdict",
    "read_answers",
    "rich",
]

MAX_FIELD = 2000
"""The most characters one answer field may hold (a longer one is refused, not cut)."""

ImageUrl = Callable[[Image], str | None]


class FormError(QuizgymError):
    """A submitted form that cannot be read (the message says which field and why)."""


@dataclass(frozen=True)
class Shown:
    """A stored verdict of one slot, as its page shows it."""

    slot: str
    response: str | None
    verdict: str
    score: float
    max_score: float
    read_as: str
    feedback: str
    expected: str


def rich(text: str, *, image: ImageUrl | None = None, block: bool = False) -> str:
    """Bank text as safe HTML, formulas as MathML (every piece of bank text escaped)."""
    style = HtmlStyle(math="mathml", subscripts=True, quotes=True, image=image or (lambda _: None))
    return to_html(parse(text), style, inline=not block)


# --- drawing ------------------------------------------------------------------------------------


def _choice_texts(options: ChoiceInteraction, variant: Variant) -> list[str]:
    order = list(variant.order) if variant.order else list(range(len(options.choices)))
    return [options.choices[i].text for i in order]


def _options(
    slot: Slot, name: str, texts: Sequence[tuple[str, str]], chosen: set[str], *, kind: str,
    legend: str,
) -> str:  # fmt: skip
    boxes = []
    for k, (value, html) in enumerate(texts):
        field_id = f"f-{name}-{k}"
        checked = " checked" if value in chosen else ""
        boxes.append(
            f'<div class="opt"><input type="{kind}" id="{attr(field_id)}" name="{attr(name)}"'
            f' value="{attr(value)}"{checked}> <label for="{attr(field_id)}">{html}</label></div>'
        )
    return f"<fieldset><legend>{legend}</legend>{''.join(boxes)}</fieldset>"


def _blank_label(slot: Slot) -> str | None:
    """A cloze blank's label, its number in the text drawn above it (None: not a blank)."""
    blanks = blanks_of(slot.question)
    if blanks is None or slot.part is None:
        return None
    return f"Blank ({blanks.number(slot.part)})"


def _true_false(slot: Slot, variant: Variant, value: str, image: ImageUrl | None) -> str:
    chosen = {value.strip().casefold()}
    return _options(
        slot, slot.id, [("true", "True"), ("false", "False")], chosen, kind="radio",
        legend="True or false?",
    )  # fmt: skip


def _choice(slot: Slot, variant: Variant, value: str, image: ImageUrl | None) -> str:
    options = choices_of(slot.question, slot.part)
    assert options is not None
    multiple = options.multiple
    texts = [
        (LETTERS[k], f"{LETTERS[k]}. {rich(text, image=image)}")
        for k, text in enumerate(_choice_texts(options, variant))
    ]
    legend = "Choose every right answer" if multiple else "Choose one answer"
    if slot.part is not None:  # a matching item: its text, over the answers it is paired with
        legend = _blank_label(slot) or rich(slot.prompt, image=image)
    return _options(
        slot, slot.id, texts, set(value.split()), kind="checkbox" if multiple else "radio",
        legend=legend,
    )  # fmt: skip


def _free_text(slot: Slot, variant: Variant, value: str, image: ImageUrl | None) -> str:
    field_id = f"f-{slot.id}"
    return (
        f'<label for="{attr(field_id)}">Your answer</label>'
        f'<textarea id="{attr(field_id)}" name="{attr(slot.id)}" rows="4"'
        f' maxlength="{MAX_FIELD}">{escape(value)}</textarea>'
    )


def _numeric(slot: Slot, variant: Variant, value: str, image: ImageUrl | None) -> str:
    field_id = f"f-{slot.id}"
    label = "Your answer"
    if slot.part is not None:
        label = _blank_label(slot) or rich(variant.fill(slot.prompt), image=image)
    if slot.units:
        label += f' <span class="units">(in {rich(slot.units)})</span>'
    return (
        f'<div class="num"><label for="{attr(field_id)}">{label}</label>'
        f'<input type="text" id="{attr(field_id)}" name="{attr(slot.id)}"'
        f' value="{attr(value)}" maxlength="{MAX_FIELD}" autocomplete="off"'
        ' autocapitalize="off" spellcheck="false"></div>'
    )


def _field(slot: Slot, variant: Variant, value: str, image: ImageUrl | None) -> str:
    """A slot's labelled field, as its interaction asks: two boxes, lettered options, a text
    area or a number's input."""
    options = choices_of(slot.question, slot.part)
    if options is not None:
        draw = _true_false if options.boolean else _choice
    elif text_of(slot.question) is not None:
        draw = _free_text
    else:
        draw = _numeric
    return draw(slot, variant, value, image)


def draw_question(
    book: CompiledBank,
    question: AnyQuestion,
    variant: Variant,
    *,
    heading: str,
    values: Mapping[str, str | None] | None = None,
    verdicts: Mapping[str, str] | None = None,
    image: ImageUrl | None = None,
) -> str:
    """A question as a section of a form: its prompt with this variant's numbers, then one
    labelled field per slot (named by the slot id), filled with ``values``; ``verdicts`` (HTML
    by slot id) follow their slots."""
    parts = [f'<section class="q" id="q-{attr(question.id)}"><h2>{escape(heading)}</h2>']
    prompt = variant.fill(question.prompt)
    blanks = blanks_of(question)
    if blanks is not None:  # a cloze: each blank a numbered line, its field below
        prompt = blanks.drawn(prompt)
    parts.append(rich(prompt, image=image, block=True))
    statement = statement_of(question)
    if statement is not None:
        parts.append(f"<blockquote>{rich(statement, image=image, block=True)}</blockquote>")
    for slot in book.slots_of(question):
        text = (values or {}).get(slot.id) or ""
        parts.append(_field(slot, variant, text, image))
        if verdicts and slot.id in verdicts:
            parts.append(verdicts[slot.id])
    parts.append("</section>")
    return "".join(parts)


_MARKS = {
    "correct": "✓ Correct",
    "partial": "◐ Partly right",
    "incorrect": "✗ Not quite",
    "blank": "– No answer",
    "invalid": "? Could not be read",
}


def draw_verdict(
    shown: Shown, *, feedback: bool = True, answer: bool = True, image: ImageUrl | None = None
) -> str:
    """One slot's verdict, marked for machines (``data-slot``, ``data-verdict``) and people;
    ``feedback`` adds how the answer was read and what it means, ``answer`` the right answer."""
    pieces = [f"<strong>{_MARKS.get(shown.verdict, escape(shown.verdict))}</strong>"]
    if shown.max_score:
        pieces.append(f' <span class="pts">{shown.score:g} / {shown.max_score:g}</span>')
    if feedback and shown.read_as:
        pieces.append(f' · read as <span class="read">{escape(shown.read_as)}</span>')
    if feedback and shown.feedback:
        pieces.append(f"<p>{rich(shown.feedback, image=image)}</p>")
    if answer and shown.expected:
        pieces.append(f"<p>Answer: {rich(shown.expected, image=image)}</p>")
    return (
        f'<div class="verdict v-{attr(shown.verdict)}" data-slot="{attr(shown.slot)}"'
        f' data-verdict="{attr(shown.verdict)}">{"".join(pieces)}</div>'
    )


# --- reading back -------------------------------------------------------------------------------


def _one(slot: Slot, values: list[str]) -> str:
    if len(values) > 1:
        raise FormError(f"the field {slot.id!r} was sent {len(values)} times; it takes one answer")
    return values[0]


def _read_multiple(slot: Slot, values: list[str]) -> str:
    return " ".join(dict.fromkeys(v.strip() for v in values if v.strip()))


def _read(slot: Slot, values: list[str]) -> str:
    """A slot's answer text from the values its field sent: several boxes ticked for a choice
    of several, one value for any other field."""
    options = choices_of(slot.question, slot.part)
    multiple = options is not None and options.multiple
    return _read_multiple(slot, values) if multiple else _one(slot, values)


def read_answers(
    book: CompiledBank, questions: Sequence[AnyQuestion], fields: Sequence[tuple[str, str]]
) -> dict[str, str | None]:
    """Each slot's answer text in a submitted form (None: not answered); fields whose names
    start with ``_`` are the form's own (token, CSRF) and are left to the caller.

    Raises:
        FormError: a field names no slot of these questions, is sent twice, or is too long.
    """
    slots = {slot.id: slot for q in questions for slot in book.slots_of(q)}
    given: dict[str, list[str]] = {}
    for name, value in fields:
        if name.startswith("_"):
            continue
        if name not in slots:
            shown = name if len(name) <= 60 else name[:59] + "…"
            raise FormError(
                f"the form has no answer field {shown!r} (its fields: {', '.join(slots)})"
            )
        if len(value) > MAX_FIELD:
            raise FormError(
                f"the answer to {name!r} is {len(value)} characters long; at most {MAX_FIELD}"
            )
        if "\x00" in value:
            raise FormError(f"the answer to {name!r} holds a NUL character")
        given.setdefault(name, []).append(value)
    out: dict[str, str | None] = {}
    for slot_id, slot in slots.items():
        values = given.get(slot_id)
        if not values:
            out[slot_id] = None
            continue
        text = _read(slot, values)
        out[slot_id] = text if text.strip() else None
    return out
