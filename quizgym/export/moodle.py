"""Moodle XML, as ``question/format/xml/format.php`` imports it.

true/false → ``truefalse``; multiple choice and spot-the-error → ``multichoice`` (per-choice
feedback; several correct → ``single`` 0 with ±1/k fractions, the engine's partial-credit rule);
free text → ``essay`` with the model answer and the rubric as grader information; numeric →
``numerical`` with absolute tolerances, one full-credit answer per run of what the engine accepts
(see :mod:`.accept`); multi-part numeric → ``cloze`` (one NUMERICAL blank per part). Known
mistakes follow as weighted answers with their feedback: Moodle scores the first answer within
tolerance, in file order, as the engine does. Every fraction is one
of Moodle's allowed grades, or the export fails with the question's line.
"""

from __future__ import annotations

import base64
import xml.etree.ElementTree as ET
from pathlib import PurePosixPath
from urllib.parse import quote

from quizgym.export import Exporter
from quizgym.export.package import sub, xml_bytes
from quizgym.export.plan import (
    Blank,
    Item,
    Media,
    Where,
    category_path,
    centred,
    decimal_text,
    fill_blanks,
    html_text,
    lms_html,
    locate,
    moodle_percent,
    plan,
    wrong_feedback_true_false,
)
from quizgym.model import (
    Bank,
)
from quizgym.richtext import ImageFile, parse, plain_text
from quizgym.types import (
    BlanksInteraction,
    ChoiceInteraction,
    NumericInteraction,
    PairingInteraction,
    TextInteraction,
    interaction_of,
    statement_of,
)


def cloze_escape(text: str) -> str:
    """Escape text inside a Cloze blank's feedback: ``\\``, ``~``, ``#`` and ``}``."""
    out = text.replace("\\", "\\\\")
    for ch in "~#}":
        out = out.replace(ch, "\\" + ch)
    return out


def _texted(
    parent: ET.Element,
    tag: str,
    text: str,
    *,
    fmt: str | None = "html",
    files: list[ImageFile] | None = None,
) -> ET.Element:
    element = sub(parent, tag, **({"format": fmt} if fmt else {}))
    sub(element, "text", text)
    _attach(element, files or [])
    return element


def _attach(element: ET.Element, files: list[ImageFile]) -> None:
    """The images a text field shows, as Moodle's ``<file>`` children of that field (its
    importer stores them in the field's file area, where ``@@PLUGINFILE@@/…`` points)."""
    for found in files:
        path = PurePosixPath(found.name)
        folder = "/" if str(path.parent) == "." else f"/{path.parent}/"
        data = base64.b64encode(found.data()).decode("ascii")
        sub(element, "file", data, name=path.name, path=folder, encoding="base64")


def _url(found: ImageFile) -> str:
    return "@@PLUGINFILE@@/" + quote(found.name)


def _html(text: str, media: Media) -> str:
    return lms_html(text, media, inline=False) if text else ""


def _category(quiz: ET.Element, path: str) -> None:
    question = sub(quiz, "question", type="category")
    _texted(question, "category", f"$course$/top/{path}", fmt=None)
    _texted(question, "info", "")


class MoodleExporter(Exporter):
    """Moodle XML."""

    name = "moodle"
    suffix = ".xml"
    kinds = Exporter.kinds | {"pairing", "blanks"}

    def to_bytes(self) -> bytes:
        """The Moodle XML file, UTF-8."""
        quiz = ET.Element("quiz")
        quiz.append(ET.Comment(f" quizgym export of {self.bank.bank} version {self.bank.version} "))
        home = category_path(self.bank)
        _category(quiz, home)
        for pool in plan(self.compiled, variants=self.variants, seed=self.seed):
            if pool.variants:
                _category(quiz, category_path(self.bank, "variants", pool.ident))
            for item in pool.items:
                quiz.append(self._question(self.bank, item))
            if pool.variants:
                _category(quiz, home)
        return xml_bytes(quiz)

    def _question(self, bank: Bank, item: Item) -> ET.Element:
        question = item.question
        media = Media(bank, _url)
        where = locate(bank, question, item.ident)
        interaction = interaction_of(question)
        options = interaction if isinstance(interaction, ChoiceInteraction) else None
        truth = options is not None and options.boolean
        kind = "truefalse" if truth else "multichoice" if options else "numerical"
        if isinstance(interaction, TextInteraction):
            kind = "essay"
        if isinstance(interaction, PairingInteraction):
            kind = "matching"
        if isinstance(interaction, BlanksInteraction):
            return self._blanks(item, interaction, where, media)
        multipart = isinstance(interaction, NumericInteraction) and bool(interaction.question.parts)
        element = ET.Element("question", type="cloze" if multipart else kind)
        name = item.ident if item.seed is None else f"{question.id} (seed {item.seed})"
        _texted(element, "name", name, fmt=None)
        stem = _html(item.prompt, media)
        statement = statement_of(question)
        if statement is not None:
            stem = f"<blockquote>{_html(statement, media)}</blockquote>{stem}"
        if multipart:
            stem += "".join(
                self._cloze(slot_index, item, where, media) for slot_index in range(len(item.slots))
            )
        _texted(element, "questiontext", stem, files=media.take())
        _texted(element, "generalfeedback", _html(item.feedback, media), files=media.take())
        sub(element, "defaultgrade", decimal_text(item.points))
        penalty = "1" if truth else "0.3333333"
        sub(element, "penalty", penalty)
        sub(element, "hidden", "0")
        sub(element, "idnumber", item.ident)
        if options is not None and truth:
            for choice_value in (True, False):
                value = choice_value
                right = value == options.choices[0].correct  # true, then false
                feedback = (
                    f"Correct: the statement is {'true' if value else 'false'}."
                    if right
                    else wrong_feedback_true_false(self.compiled, question, answer=value)
                )
                self._answer(element, "true" if value else "false", 1.0 if right else 0.0,
                             feedback, where, media)  # fmt: skip
        elif options is not None:
            sub(element, "single", "false" if options.multiple else "true")
            sub(element, "shuffleanswers", "true" if options.shuffle else "false")
            sub(element, "answernumbering", "abc")
            for tag in ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"):
                _texted(element, tag, "")
            for choice, fraction in zip(options.choices, options.weights, strict=True):
                self._answer(
                    element, _html(choice.text, media), fraction, choice.feedback or "", where,
                    media,
                )  # fmt: skip
        elif isinstance(interaction, PairingInteraction):
            self._pairs(element, item, interaction, media)
        elif isinstance(interaction, TextInteraction):
            sub(element, "responseformat", "editor")
            sub(element, "responserequired", "1")
            sub(element, "responsefieldlines", "10")
            sub(element, "attachments", "0")
            rubric = "".join(
                f"<li>{lms_html(c.criterion, media)} ({decimal_text(c.points)} pt): "
                f"{html_text(', '.join(c.any_of))}</li>"
                for c in interaction.rubric
            )
            _texted(
                element,
                "graderinfo",
                f"<p>Model answer:</p>{_html(interaction.model_answer, media)}"
                f"<p>Rubric:</p><ul>{rubric}</ul>",
                files=media.take(),
            )
            _texted(element, "responsetemplate", "")
        elif not multipart:
            slot = item.slots[0]
            # Moodle takes the first answer (in file order) within its tolerance: the key's
            # runs first, then each mistake's, which is the engine's order too.
            for number, tol in map(centred, slot.runs):
                answer = self._answer(element, number, 1.0, "", where, media, plain=True)
                sub(answer, "tolerance", tol)
            for mistake in slot.wrong:
                for number, tol in map(centred, mistake.runs):
                    answer = self._answer(
                        element, number, mistake.credit, mistake.feedback, where, media,
                        plain=True,
                    )  # fmt: skip
                    sub(answer, "tolerance", tol)
            sub(element, "unitgradingtype", "0")
            sub(element, "unitpenalty", "0.1000000")
            sub(element, "showunits", "3")
            sub(element, "unitsleft", "0")
        if question.tags:
            tags = sub(element, "tags")
            for tag in question.tags:
                _texted(tags, "tag", tag, fmt=None)
        return element

    def _pairs(
        self, element: ET.Element, item: Item, pairing: PairingInteraction, media: Media
    ) -> None:
        """A matching question's subquestions: one per item with its answer (plain text, as
        Moodle's match type keeps them), then one without a text per distractor."""
        sub(element, "shuffleanswers", "true" if pairing.shuffle else "false")
        for tag in ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"):
            _texted(element, tag, "")
        for pair in pairing.items:
            subquestion = _texted(
                element, "subquestion", _html(pair.item, media), files=media.take()
            )
            sub(sub(subquestion, "answer"), "text", plain_text(pair.answer))
        paired = {pair.answer for pair in pairing.items}
        for text in pairing.answers:
            if text not in paired:
                subquestion = _texted(element, "subquestion", "")
                sub(sub(subquestion, "answer"), "text", plain_text(text))
        points = {slot.points for slot in self.compiled.slots_of(item.question)}
        if len(points) > 1:
            self.warnings.append(
                f"warning: {item.ident}: Moodle weighs every item of a matching question alike; "
                f"quizgym gives them {', '.join(sorted(decimal_text(p) for p in points))} points"
            )

    @staticmethod
    def _answer(
        parent: ET.Element,
        text: str,
        fraction: float,
        feedback: str,
        where: Where,
        media: Media,
        *,
        plain: bool = False,
    ) -> ET.Element:
        fmt = "moodle_auto_format" if plain else "html"
        answer = sub(parent, "answer", fraction=moodle_percent(fraction, where=where), format=fmt)
        sub(answer, "text", text)
        _attach(answer, media.take())  # the choice's own images (its text was written above)
        _texted(answer, "feedback", _html(feedback, media), files=media.take())
        return answer

    def _blanks(
        self, item: Item, blanks: BlanksInteraction, where: Where, media: Media
    ) -> ET.Element:
        """A cloze question as Moodle's embedded answers (``multianswer``): each blank where
        the text has it, a NUMERICAL, MULTICHOICE (a dropdown) or SHORTANSWER one."""
        element = ET.Element("question", type="cloze")
        _texted(element, "name", item.ident, fmt=None)
        numbers = {slot.part: k for k, slot in enumerate(item.slots)}

        def blank(name: str) -> str:
            if name in numbers:
                slot = item.slots[numbers[name]]
                if slot.units:
                    self.warnings.append(
                        f"warning: {item.ident}.{name}: a Cloze NUMERICAL blank has no unit: "
                        f"Moodle reads the number alone, where quizgym reads {slot.units} and "
                        "converts the units it knows"
                    )
                return self._embedded(slot, where, media)
            return self._embedded_text(item, blanks, name, where, media)

        stem = fill_blanks(item.prompt, lambda text: _html(text, media), blank)
        _texted(element, "questiontext", stem, files=media.take())
        _texted(element, "generalfeedback", _html(item.feedback, media), files=media.take())
        sub(element, "penalty", "0.3333333")
        sub(element, "hidden", "0")
        sub(element, "idnumber", item.ident)
        if item.question.tags:
            tags = sub(element, "tags")
            for tag in item.question.tags:
                _texted(tags, "tag", tag, fmt=None)
        return element

    def _embedded_text(
        self, item: Item, blanks: BlanksInteraction, name: str, where: Where, media: Media
    ) -> str:
        """A choice blank as MULTICHOICE (a dropdown, in bank order), a word blank as
        SHORTANSWER (SHORTANSWER_C when its case counts), each weighing its points."""
        slot = self.compiled.slot(f"{item.question.id}.{name}")
        weight = self._weight(slot.points, where.part(name))
        blank = blanks.blank(name)
        wrong = f"#{cloze_escape(lms_html(blank.feedback, media))}" if blank.feedback else ""
        if blank.kind == "choice":
            options = "~".join(
                ("=" if text == blank.answer else "") + cloze_escape(plain_text(text))
                + ("" if text == blank.answer else wrong)
                for text in blank.choices
            )  # fmt: skip
            return f"{{{weight}:MULTICHOICE:{options}}}"
        kind = "SHORTANSWER_C" if blank.case_sensitive else "SHORTANSWER"
        spellings = "~".join(f"={cloze_escape(text.strip())}" for text in blank.accept)
        catch_all = f"~%0%*{wrong}" if wrong else ""
        self.warnings.append(
            f"warning: {item.ident}.{name}: Moodle compares a word as typed, apart from its "
            "ends' spaces (quizgym also folds runs of spaces and Unicode forms)"
        )
        return f"{{{weight}:{kind}:{spellings}{catch_all}}}"

    @staticmethod
    def _weight(points: float, where: Where) -> int:
        if not float(points).is_integer():
            raise where.error(
                f"a Cloze blank's weight must be a whole number, not {points:g} points"
            )
        return int(points)

    def _cloze(self, index: int, item: Item, where: Where, media: Media) -> str:
        slot = item.slots[index]
        blank = self._embedded(slot, where, media)
        if parse(slot.prompt).inline is not None:
            return f"<p>{lms_html(slot.prompt, media)}: {blank}</p>"
        return f"{lms_html(slot.prompt, media, inline=False)}<p>{blank}</p>"

    def _embedded(self, slot: Blank, where: Where, media: Media) -> str:
        """One numeric blank as Cloze's NUMERICAL: the key's runs, then each mistake's."""
        weight = self._weight(slot.points, where.part(slot.part))
        alternatives = []
        for n, (value, tol) in enumerate(map(centred, slot.runs)):
            mark = "=" if n == 0 else "%100%"
            alternatives.append(f"{mark}{value}:{tol}")
        for wrong in slot.wrong:
            percent = moodle_percent(wrong.credit, where=where.part(slot.part))
            feedback = cloze_escape(lms_html(wrong.feedback, media))
            for value, tol in map(centred, wrong.runs):
                alternatives.append(f"%{percent}%{value}:{tol}#{feedback}")
        return f"{{{weight}:NUMERICAL:{'~'.join(alternatives)}}}"


EXPORTER = MoodleExporter
