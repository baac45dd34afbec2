"""Anki deck packages (``.apkg``), written with genanki (``pip install "quizgym[anki]"``).

One note per question and variant, on a fixed note type ("quizgym", fields Question, Answer,
Explanation, QID) in a deck whose id comes from the bank's slug. Each note's GUID comes from the
bank and the item id, so importing a re-export updates the notes instead of adding copies. Anki
updates a note only when the incoming one is newer, so notes carry a timestamp: by default the
bank file's modification time (editing the bank makes the next export newer), never the clock.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from quizgym.errors import ExportError
from quizgym.export import Exporter
from quizgym.export.package import write_zip
from quizgym.export.plan import (
    Item,
    Media,
    fill_blanks,
    html_text,
    lms_html,
    numeric_answer_text,
    plan,
)
from quizgym.model import (
    LETTERS,
    Bank,
)
from quizgym.richtext import ImageFile
from quizgym.solver import CompiledBank
from quizgym.types import (
    BlanksInteraction,
    ChoiceInteraction,
    PairingInteraction,
    TextInteraction,
    blanks_of,
    interaction_of,
    statement_of,
)

MODEL_ID = 1_742_318_011
"""The quizgym note type's id, fixed once: every export uses the same note type."""
CLOZE_MODEL_ID = 1_742_318_012
"""The id of quizgym's Cloze note type (fields Text, Back Extra, QID), for cloze questions."""


def cloze_text(item: Item, blanks: BlanksInteraction, media: Media) -> str:
    """A cloze question's text in Anki's Cloze syntax: blank k is ``{{ck::answer::hint}}``
    (each blank its own card), its answer the key with its unit, the right choice or the first
    spelling; its hint the options of a choice, or a number's unit."""
    numbers = {slot.part: slot for slot in item.slots}

    def fill(name: str) -> str:
        blank = blanks.blank(name)
        if name in numbers:
            slot = numbers[name]
            answer = numeric_answer_text(slot)  # with its unit
            hint = slot.units or ""
        elif blank.kind == "choice":
            answer, hint = str(blank.answer), " / ".join(blank.choices)
        else:
            answer, hint = blank.accept[0].strip(), ""
        shown = _cloze_safe(html_text(answer))
        hint = _cloze_safe(html_text(hint))
        return f"{{{{c{blanks.number(name)}::{shown}" + (f"::{hint}" if hint else "") + "}}"

    return fill_blanks(item.prompt, lambda text: lms_html(text, media, inline=False), fill)


def _cloze_safe(text: str) -> str:
    """Text inside a cloze deletion: no ``::`` or ``}}``, which would end it."""
    return text.replace("::", ": :").replace("}}", "} }")


DEFAULT_TIMESTAMP = 1_700_000_000
"""Used when the bank has no file (built in code)."""


def deck_id(bank: Bank) -> int:
    """A stable deck id from the bank's slug."""
    digest = hashlib.sha256(f"quizgym deck {bank.bank}".encode()).digest()
    return (1 << 30) + int.from_bytes(digest[:4], "big") % (1 << 30)


def _genanki() -> Any:
    try:
        import genanki  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ExportError(
            'the Anki export needs genanki; install it with: pip install "quizgym[anki]"'
        ) from exc
    return genanki


def media_name(found: ImageFile) -> str:
    """An image's name in Anki's media folder, which is flat: ``figures/x.png`` is
    ``figures_x.png`` (``_`` doubled first, so no two paths share a name)."""
    return found.name.replace("_", "__").replace("/", "_")


def _media(bank: Bank) -> Media:
    return Media(bank, media_name)


def _choices(texts: list[str], media: Media) -> str:
    rows = "".join(f"<li>{lms_html(t, media)}</li>" for t in texts)
    return f'<ol type="A">{rows}</ol>'


def card_faces(item: Item, media: Media) -> tuple[str, str]:
    """The (front, back) HTML of an item's note: bank text as HTML with formulas in Anki's
    MathJax syntax, ``\\(…\\)``, and images by their media names (recorded in ``media``)."""
    question = item.question
    front = lms_html(item.prompt, media, inline=False)
    interaction = interaction_of(question)
    if isinstance(interaction, ChoiceInteraction) and interaction.boolean:
        return f"<p>True or false?</p>{front}", "True" if interaction.choices[
            0
        ].correct else "False"
    if isinstance(interaction, ChoiceInteraction):
        statement = statement_of(question)
        if statement is not None:
            front = f"<blockquote>{lms_html(statement, media)}</blockquote>{front}"
        front += _choices([c.text for c in interaction.choices], media)
        right = [
            f"{LETTERS[i]}: {lms_html(c.text, media)}"
            for i, c in enumerate(interaction.choices)
            if c.correct
        ]
        return front, "<br>".join(right)
    if isinstance(interaction, TextInteraction):
        return front, lms_html(interaction.model_answer, media)
    if isinstance(interaction, PairingInteraction):
        front += "".join(
            f"<p>{k + 1}. {lms_html(pair.item, media)}</p>"
            for k, pair in enumerate(interaction.items)
        )
        front += _choices(list(interaction.answers), media)
        back = [
            f"{k + 1}. {LETTERS[interaction.answers.index(pair.answer)]}: "
            f"{lms_html(pair.answer, media)}"
            for k, pair in enumerate(interaction.items)
        ]
        return front, "<br>".join(back)
    lines = []
    for slot in item.slots:
        label = f"{lms_html(slot.prompt, media)}: " if slot.part else ""
        lines.append(
            f"{label}{html_text(numeric_answer_text(slot))} ({html_text(slot.tolerance_text)})"
        )
        if slot.part:
            front += lms_html(slot.prompt, media, inline=False)
    return front, "<br>".join(lines)


class AnkiExporter(Exporter):
    """Anki ``.apkg``."""

    name = "anki"
    suffix = ".apkg"
    kinds = Exporter.kinds | {"pairing", "blanks"}

    def __init__(
        self,
        bank: Bank | CompiledBank,
        *,
        variants: int = 0,
        seed: int = 0,
        timestamp: float | None = None,
    ) -> None:
        """Prepare an export.

        Args:
            bank: the bank.
            variants: variants per parametric question, each its own note.
            seed: the first variant's seed.
            timestamp: the notes' modification time (seconds since the epoch); default the bank
                file's modification time.
        """
        super().__init__(bank, variants=variants, seed=seed)
        self.media = _media(self.bank)
        if timestamp is None:
            path = Path(self.bank.path) if self.bank.path else None
            timestamp = int(path.stat().st_mtime) if path and path.is_file() else DEFAULT_TIMESTAMP
        self.timestamp = timestamp

    def deck(self) -> Any:
        """The genanki deck with one note per item."""
        genanki = _genanki()
        model = genanki.Model(
            MODEL_ID,
            "quizgym",
            fields=[
                {"name": "Question"},
                {"name": "Answer"},
                {"name": "Explanation"},
                {"name": "QID"},
            ],
            templates=[
                {
                    "name": "Card 1",
                    "qfmt": "{{Question}}",
                    "afmt": '{{FrontSide}}<hr id="answer">{{Answer}}'
                    "{{#Explanation}}<p><i>{{Explanation}}</i></p>{{/Explanation}}",
                }
            ],
        )
        cloze = genanki.Model(
            CLOZE_MODEL_ID,
            "quizgym cloze",
            fields=[{"name": "Text"}, {"name": "Back Extra"}, {"name": "QID"}],
            templates=[
                {
                    "name": "Cloze",
                    "qfmt": "{{cloze:Text}}",
                    "afmt": "{{cloze:Text}}{{#Back Extra}}<p><i>{{Back Extra}}</i></p>"
                    "{{/Back Extra}}",
                }
            ],
            model_type=genanki.Model.CLOZE,
        )
        deck = genanki.Deck(deck_id(self.bank), f"quizgym::{self.bank.bank}")
        self.media = _media(self.bank)
        for pool in plan(self.compiled, variants=self.variants, seed=self.seed):
            for item in pool.items:
                tags = [*pool.question.tags, pool.question.type]
                explanation = lms_html(item.feedback, self.media)
                blanks = blanks_of(item.question)
                if blanks is not None:
                    extra = [explanation] if explanation else []
                    for name in blanks.names:
                        also = blanks.blank(name).accept[1:]
                        if also:
                            shown = ", ".join(html_text(a.strip()) for a in also)
                            extra.append(f"({blanks.number(name)}) also: {shown}")
                    deck.add_note(
                        genanki.Note(
                            model=cloze,
                            fields=[
                                cloze_text(item, blanks, self.media),
                                "<br>".join(extra),
                                item.ident,
                            ],
                            guid=genanki.guid_for("quizgym", self.bank.bank, item.ident),
                            tags=tags,
                        )
                    )
                    continue
                front, back = card_faces(item, self.media)
                deck.add_note(
                    genanki.Note(
                        model=model,
                        fields=[front, back, explanation, item.ident],
                        guid=genanki.guid_for("quizgym", self.bank.bank, item.ident),
                        tags=tags,
                    )
                )
        return deck

    def to_bytes(self) -> bytes:
        """The ``.apkg`` (a zip of the SQLite collection), with fixed dates and ids."""
        genanki = _genanki()
        import itertools

        with tempfile.TemporaryDirectory() as folder:
            db_path = Path(folder) / "collection.anki2"
            connection = sqlite3.connect(db_path)
            try:
                package = genanki.Package(self.deck())
                ids = itertools.count(int(self.timestamp * 1000))
                package.write_to_db(connection.cursor(), self.timestamp, ids)
                connection.commit()
            finally:
                connection.close()
            data = db_path.read_bytes()
        # Anki's media: files named 0, 1, … in the zip, and "media" mapping each to its name.
        files = list(self.media.files.values())
        names = {str(n): media_name(found) for n, found in enumerate(files)}
        media = json.dumps(names, ensure_ascii=False, sort_keys=True).encode()
        entries = [("collection.anki2", data), ("media", media)]
        entries += [(str(n), found.data()) for n, found in enumerate(files)]
        return write_zip(entries)


EXPORTER = AnkiExporter
