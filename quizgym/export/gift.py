"""GIFT, Moodle's text format for questions.

One question per blank-line-separated block: ``::id::[html]prompt{answers####general feedback}``.
Multi-part numeric questions become one question per part (GIFT has no multi-blank numeric
type). A numeric answer is one ``=%100%value:tolerance`` per run of what the engine accepts
(``auto`` gives two for ln 10: the band and 2.30, see :mod:`.accept`), then each known mistake's
runs as ``=%credit%value:tolerance#feedback``: Moodle reads everything after the first ``~`` of a
numeric answer as the catch-all, so wrong answers must use ``=`` with their weight.
"""

from __future__ import annotations

from typing import ClassVar

from quizgym.errors import ExportError
from quizgym.export import Exporter
from quizgym.export.plan import (
    Item,
    Media,
    Pool,
    category_path,
    centred,
    data_media,
    decimal_text,
    join_text,
    lms_html,
    locate,
    moodle_percent,
    plan,
    split_parts,
    wrong_feedback_true_false,
)
from quizgym.richtext import plain_text
from quizgym.types import (
    ChoiceInteraction,
    PairingInteraction,
    TextInteraction,
    interaction_of,
    statement_of,
    text_of,
)

_SPECIAL = "~=#{}:"


def gift_escape(text: str, *, answer: bool = False) -> str:
    """Escape text for any GIFT field: ``\\`` first, then ``~ = # { } :``, newlines as ``\\n``.

    This is the only place GIFT escaping happens. ``[`` and ``]`` are left alone (escaping them
    breaks gift-pegjs), and a stem never starts with ``[`` followed by a format name because
    every stem starts with our own ``[html]``. GIFT has no escape for ``%``, so an answer that
    starts with one (``%50%…`` would read as a weight) starts with the HTML entity ``&#37;``.
    """
    if answer and text.startswith("%"):
        text = "&#37;" + text[1:]
    out = text.replace("\\", "\\\\")
    for ch in _SPECIAL:
        out = out.replace(ch, "\\" + ch)
    return out.replace("\r\n", "\n").replace("\n", "\\n")


def _field(text: str, media: Media, *, answer: bool = False) -> str:
    """Bank text (Markdown) as a GIFT field: the HTML Moodle imports (formulas as ``\\(…\\)``
    for its TeX filter, images as ``data:`` URIs, since a GIFT file carries no files), escaped."""
    return gift_escape(lms_html(text, media), answer=answer)


class GiftExporter(Exporter):
    """Moodle GIFT text."""

    name = "gift"
    suffix = ".gift"
    splits_parts = True
    kinds = Exporter.kinds | {"pairing"}
    refusals: ClassVar[dict[str, str]] = {
        "blanks": "a GIFT question holds one set of answers in braces, where a cloze has one "
        "per blank; export it with --to moodle (embedded answers)"
    }

    def to_bytes(self) -> bytes:
        """The GIFT file, UTF-8."""
        bank = self.bank
        home = f"$CATEGORY: $course$/top/{category_path(bank)}"
        blocks = [f"// quizgym export of {bank.bank} version {bank.version}", home]
        for pool in plan(bank, variants=self.variants, seed=self.seed):
            if pool.variants:
                blocks.append(
                    f"$CATEGORY: $course$/top/{category_path(bank, 'variants', pool.ident)}"
                )
                blocks.extend(self._question(pool, item) for item in _items(pool))
                blocks.append(home)
            else:
                blocks.extend(self._question(pool, item) for item in _items(pool))
        return ("\n\n".join(blocks) + "\n").encode("utf-8")

    def _question(self, pool: Pool, item: Item) -> str:
        question = item.question
        media = data_media(self.bank)
        head = [f"// [id:{item.ident}]"]
        head += [f"// [tag:{tag}]" for tag in question.tags]
        stem = item.prompt
        statement = statement_of(question)
        if statement is not None:
            stem = join_text(statement, item.prompt, sep="\\\n")
        title = f"::{gift_escape(item.title)}::[html]{_field(stem, media)}"
        feedback = item.feedback
        text = text_of(question)
        if text is not None:
            # GIFT has no grader information: the model answer is shown after submission.
            feedback = join_text(join_text("Model answer:", text.model_answer), feedback)
        general = f"####{_field(feedback, media)}" if feedback else ""
        body = self._answers(item, media)
        return "\n".join([*head, f"{title}{{{body}{general}}}"])

    def _answers(self, item: Item, media: Media) -> str:
        question = item.question
        interaction = interaction_of(question)
        if isinstance(interaction, ChoiceInteraction) and interaction.boolean:
            answer = interaction.choices[0].correct  # true, then false
            if_wrong = wrong_feedback_true_false(self.compiled, question, answer=not answer)
            if_right = f"Correct: the statement is {'true' if answer else 'false'}."
            key = "TRUE" if answer else "FALSE"
            return f"{key}#{_field(if_wrong, media)}#{_field(if_right, media)}"
        if isinstance(interaction, ChoiceInteraction):
            multiple = interaction.multiple
            lines = []
            for choice, share in zip(interaction.choices, interaction.weights, strict=True):
                feedback = f"#{_field(choice.feedback, media)}" if choice.feedback else ""
                if not multiple:
                    mark = "=" if choice.correct else "~"
                else:
                    where = locate(self.bank, question, item.ident)
                    mark = f"~%{moodle_percent(share, where=where)}%"
                lines.append(f"\n{mark}{_field(choice.text, media, answer=True)}{feedback}")
            return "".join(lines) + "\n"
        if isinstance(interaction, TextInteraction):
            return ""
        if isinstance(interaction, PairingInteraction):
            return self._pairs(item, interaction, media)
        slot = item.slots[0]
        lines = ["#"]
        for value, tol in map(centred, slot.runs):
            lines.append(f"=%100%{value}:{tol}")
        where = locate(self.bank, question, item.ident)
        for mistake in slot.wrong:
            weight = moodle_percent(mistake.credit, where=where)
            for value, tol in map(centred, mistake.runs):
                lines.append(f"=%{weight}%{value}:{tol}#{_field(mistake.feedback, media)}")
        return "\n".join(lines) + "\n"

    def _pairs(self, item: Item, pairing: PairingInteraction, media: Media) -> str:
        """``=item -> answer`` per item (the answer in plain text, as Moodle's match type
        keeps it)."""
        paired = {pair.answer for pair in pairing.items}
        if any(text not in paired for text in pairing.answers):
            raise _refuse(item, "with distractors has no GIFT form (every answer needs an item)")
        if any("->" in f"{pair.item}{pair.answer}" for pair in pairing.items):
            raise _refuse(item, "with '->' in an item or answer cannot be written in GIFT")
        if len(pairing.items) < 3:
            raise _refuse(item, "needs at least three pairs in GIFT (Moodle's importer)")
        points = {slot.points for slot in self.compiled.slots_of(item.question)}
        if len(points) > 1:
            self.warnings.append(
                f"warning: {item.ident}: Moodle weighs every item of a matching question alike; "
                f"quizgym gives them {', '.join(sorted(decimal_text(p) for p in points))} points"
            )
        lines = [
            f"\n={_field(pair.item, media)} -> {gift_escape(plain_text(pair.answer), answer=True)}"
            for pair in pairing.items
        ]
        return "".join(lines) + "\n"


def _refuse(item: Item, why: str) -> ExportError:
    return ExportError(f"{item.ident}: a matching question {why}; export it with --to moodle")


def _items(pool: Pool) -> list[Item]:
    return [part for item in pool.items for part in split_parts(item)]


EXPORTER = GiftExporter
