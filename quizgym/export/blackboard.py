"""Blackboard "Upload Questions": a tab-separated text file, one question per line.

``TF`` true/false; ``MC``/``MA`` one/several correct choices (and spot-the-error, with its
statement); ``ESS`` free text with the model answer as the example; ``NUM`` numeric, one line
per part. The format holds one answer and one symmetric tolerance, so a numeric line is the run
of decimals the engine accepts around the key (:func:`quizgym.export.plan.centred`): it accepts
nothing quizgym refuses. What else quizgym accepts (the key to 3 figures outside that run, a
mistake worth full credit) Blackboard refuses, and the export says so in one ``warning:`` line
per part. There are no ids, feedback or pools in this format, so ``--variants`` is
refused rather than exporting unlabelled copies.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from quizgym.accept import describe_runs
from quizgym.errors import ExportError
from quizgym.export import Exporter
from quizgym.export.plan import (
    Item,
    Media,
    centred,
    data_media,
    decimal_text,
    join_text,
    lms_html,
    plan,
    spellings,
    split_parts,
)
from quizgym.model import BLANK
from quizgym.types import (
    BlanksInteraction,
    ChoiceInteraction,
    PairingInteraction,
    TextInteraction,
    interaction_of,
    statement_of,
)

MAX_RECORDS = 250


def field(text: str, media: Media | None = None) -> str:
    """A field: bank text (Markdown) as HTML, formulas as ``\\(…\\)`` TeX, images as
    ``data:`` URIs (the upload file carries no files), no tabs or line breaks (a tab separates
    fields and a line ends the question)."""
    markup = lms_html(text.replace("\t", " "), media)
    return markup.replace("\t", " ").replace("\r", "").replace("\n", "<br>")


class BlackboardExporter(Exporter):
    """Blackboard upload file."""

    name = "blackboard"
    suffix = ".txt"
    kinds = Exporter.kinds | {"pairing", "blanks"}
    splits_parts = True

    def to_bytes(self) -> bytes:
        """The file, UTF-8, no header, no blank lines."""
        if self.variants:
            raise ExportError(
                "the Blackboard upload format has no question pools; "
                "export variants with --to moodle, gift, qti12 or qti21"
            )
        rows = [
            self.row(part)
            for pool in plan(self.compiled, variants=0, seed=self.seed)
            for item in pool.items
            for part in split_parts(item)
        ]
        if len(rows) > MAX_RECORDS:
            raise ExportError(
                f"{self.bank.path or self.bank.bank}: {len(rows)} questions; Blackboard takes at "
                f"most {MAX_RECORDS} per upload file"
            )
        return ("\n".join("\t".join(row) for row in rows) + "\n").encode("utf-8")

    def _matching(
        self, item: Item, pairing: PairingInteraction, cell: Callable[[str], str]
    ) -> list[str]:
        """``MAT``: each item followed by its answer; Blackboard takes no answer without an
        item, and weighs items alike."""
        paired = {pair.answer for pair in pairing.items}
        if any(text not in paired for text in pairing.answers):
            raise ExportError(
                f"{item.ident}: a matching question with distractors has no Blackboard upload "
                "form (every answer needs an item); export it with --to moodle, qti12 or qti21"
            )
        points = {slot.points for slot in self.compiled.slots_of(item.question)}
        if len(points) > 1:
            self.warnings.append(
                f"warning: {item.ident}: Blackboard weighs every item of a matching question "
                f"alike; quizgym gives them {', '.join(sorted(decimal_text(p) for p in points))} "
                "points"
            )
        cells = ["MAT", cell(item.prompt)]
        for pair in pairing.items:
            cells += [cell(pair.item), cell(pair.answer)]
        return cells

    def _blanks(
        self, item: Item, blanks: BlanksInteraction, cell: Callable[[str], str]
    ) -> list[str]:
        """``FIB_PLUS``: the text with ``[name]`` for each blank, then each blank's name and
        the texts it accepts, an empty field between blanks. Blackboard compares the text
        typed, so each blank it scores otherwise than quizgym is one warning."""
        names = blanks.names

        def shown(match: re.Match[str]) -> str:
            blank = blanks.blank(match[1])
            after = f" ({' / '.join(blank.choices)})" if blank.kind == "choice" else ""
            return f"[{match[1]}]{after}"

        cells = ["FIB_PLUS", cell(BLANK.sub(shown, item.prompt))]
        for k, name in enumerate(names):
            if k:
                cells.append("")
            cells += [name, *(cell(text) for text in spellings(self.compiled, item, name))]
            blank, where = blanks.blank(name), f"warning: {item.ident}.{name}: "
            if blank.kind == "number":
                self.warnings.append(
                    f"{where}Blackboard compares the text typed: it accepts only "
                    f"{', '.join(spellings(self.compiled, item, name))}, not any number "
                    "quizgym accepts" + (f", nor a unit ({blank.units})" if blank.units else "")
                )
            elif blank.kind == "choice":
                self.warnings.append(
                    f"{where}Blackboard has no dropdown among typed blanks: the right option "
                    "is typed, no letter or number"
                )
            else:
                self.warnings.append(
                    f"{where}Blackboard compares a word as its settings say (case, spaces), "
                    "not as quizgym folds it"
                )
        points = {slot.points for slot in self.compiled.slots_of(item.question)}
        if len(points) > 1:
            self.warnings.append(
                f"warning: {item.ident}: Blackboard weighs every blank alike; quizgym gives them "
                f"{', '.join(sorted(decimal_text(p) for p in points))} points"
            )
        return cells

    def row(self, item: Item) -> list[str]:
        """The fields of one line."""
        question = item.question
        media = data_media(self.bank)

        def cell(text: str) -> str:
            return field(text, media)

        interaction = interaction_of(question)
        if isinstance(interaction, ChoiceInteraction) and interaction.boolean:
            return ["TF", cell(item.prompt), "true" if interaction.choices[0].correct else "false"]
        if isinstance(interaction, ChoiceInteraction):
            stem = item.prompt
            statement = statement_of(question)
            if statement is not None:
                stem = join_text(statement, item.prompt, sep="\\\n")
            cells = ["MA" if interaction.multiple else "MC", cell(stem)]
            for choice in interaction.choices:
                cells += [cell(choice.text), "correct" if choice.correct else "incorrect"]
            return cells
        if isinstance(interaction, TextInteraction):
            return ["ESS", cell(item.prompt), cell(interaction.model_answer)]
        if isinstance(interaction, PairingInteraction):
            return self._matching(item, interaction, cell)
        if isinstance(interaction, BlanksInteraction):
            return self._blanks(item, interaction, cell)
        slot = item.slots[0]
        if not slot.runs:  # no decimal of 12 figures is accepted: the key alone
            return ["NUM", cell(item.prompt), decimal_text(slot.key.number), "0"]
        value, tolerance = centred(slot.runs[0])
        runs = [*slot.runs[1:], *(r for m in slot.wrong if m.credit >= 1 for r in m.runs)]
        if runs:
            self.warnings.append(
                f"warning: {item.ident}: Blackboard refuses {describe_runs(runs)}, which quizgym "
                f"accepts (one answer and one tolerance per question: {value} ± {tolerance})"
            )
        qid = item.question.id
        book_slot = self.compiled.slot(f"{qid}.{slot.part}" if slot.part else qid)
        if book_slot.units and book_slot.require_units > 0:
            self.warnings.append(
                f"warning: {item.ident}: Blackboard gives full credit to a number without its "
                f"unit ({book_slot.units}), which quizgym requires"
            )
        return ["NUM", cell(item.prompt), value, tolerance]


EXPORTER = BlackboardExporter
