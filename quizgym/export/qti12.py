"""IMS QTI 1.2 (ASI 1.2.1) as Canvas imports it: a zip with a manifest, the assessment and
Canvas's ``assessment_meta.xml`` (the structure ``text2qti`` emits).

true/false → ``true_false_question``; one correct choice → ``multiple_choice_question``; several
→ ``multiple_answers_question``; spot-the-error → multiple choice with the statement; free text
→ ``essay_question`` with the model answer as general feedback (Canvas has no grader-information
field); numeric → ``numerical_question``: one plain ``vargte``/``varlte`` range per run of what the
engine accepts (Canvas turns every range condition into a full-credit answer, so no wrong answer
may be one), on the 4-decimal grid Canvas's quiz page rounds answers to; the known mistakes'
feedback is one general incorrect feedback (Canvas attaches none to a wrong number, and gives no
partial credit: see ``quizgym export --check``). A multi-part
question becomes one self-contained item per part; a variant pool becomes a question group
(``selection_number`` 1) per part.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from decimal import ROUND_HALF_UP, Decimal
from urllib.parse import quote

from quizgym.accept import CANVAS, number_text, runs_of, typed_text
from quizgym.export import Exporter
from quizgym.export.package import sub, write_zip, xml_bytes
from quizgym.export.plan import (
    Blank,
    Item,
    Media,
    decimal_text,
    fill_blanks,
    html_text,
    join_text,
    lms_html,
    plan,
    spellings,
    split_parts,
    wrong_feedback_true_false,
)
from quizgym.model import LETTERS
from quizgym.richtext import ImageFile, plain_text
from quizgym.types import (
    BlanksInteraction,
    ChoiceInteraction,
    NumericInteraction,
    PairingInteraction,
    TextInteraction,
    interaction_of,
    statement_of,
)

QTI_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
CP_NS = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"
CANVAS_NS = "http://canvas.instructure.com/xsd/cccv1p0"

IDENTS = LETTERS.lower()  # QTI 1.2 response idents: a, b, c …


def _mattext(parent: ET.Element, text: str) -> None:
    material = sub(parent, "material")
    sub(material, "mattext", text, texttype="text/html")


FILEBASE = "$IMS-CC-FILEBASE$"
"""Canvas's token for the package's files folder (``web_resources/`` in the zip)."""


def _url(found: ImageFile) -> str:
    return f"{FILEBASE}/{quote(found.name)}"


def _html(text: str, media: Media) -> str:
    return lms_html(text, media, inline=False) if text else "<p></p>"


def _meta(item: ET.Element, fields: list[tuple[str, str]]) -> None:
    metadata = sub(sub(item, "itemmetadata"), "qtimetadata")
    for label, entry in fields:
        field = sub(metadata, "qtimetadatafield")
        sub(field, "fieldlabel", label)
        sub(field, "fieldentry", entry)


def _condition(
    parent: ET.Element,
    *,
    go_on: bool,
    score: float | None = None,
    feedback: str | None = None,
) -> ET.Element:
    rc = sub(parent, "respcondition", **{"continue": "Yes" if go_on else "No"})
    var = sub(rc, "conditionvar")
    if score is not None:
        sub(rc, "setvar", decimal_text(score), action="Set", varname="SCORE")
    if feedback is not None:
        sub(rc, "displayfeedback", feedbacktype="Response", linkrefid=feedback)
    return var


def _range(parent: ET.Element, low: str, high: str) -> None:
    both = sub(parent, "and")
    sub(both, "vargte", low, respident="response1")
    sub(both, "varlte", high, respident="response1")


def mistakes_feedback(slot: Blank) -> str:
    """Every known mistake's feedback, for Canvas's one incorrect-answer feedback."""
    lines = [
        join_text(f"If you got {typed_text(_shown(w.range.value))}:", w.feedback)
        for w in slot.wrong
    ]
    return join_text(*lines, sep="\\\n")


def _shown(value: float) -> Decimal:
    """A mistake's value as a student would have typed it (3 significant figures)."""
    exact = Decimal(repr(value))
    if exact == 0:
        return exact
    return exact.quantize(Decimal(1).scaleb(exact.adjusted() - 2), rounding=ROUND_HALF_UP)


class Qti12Exporter(Exporter):
    """QTI 1.2 package for Canvas."""

    name = "qti12"
    suffix = ".zip"
    splits_parts = True
    kinds = Exporter.kinds | {"pairing", "blanks"}

    @property
    def ident(self) -> str:
        """The assessment's identifier (stable: from the bank's slug)."""
        return f"quizgym-{self.bank.bank}"

    def assessment(self) -> bytes:
        """The ``questestinterop`` document."""
        root = ET.Element("questestinterop", xmlns=QTI_NS)
        assessment = sub(root, "assessment", ident=self.ident, title=self.bank.title)
        _meta_fields = sub(assessment, "qtimetadata")
        field = sub(_meta_fields, "qtimetadatafield")
        sub(field, "fieldlabel", "cc_maxattempts")
        sub(field, "fieldentry", "1")
        section = sub(assessment, "section", ident="root_section")
        for pool in plan(self.compiled, variants=self.variants, seed=self.seed):
            parts = [split_parts(item) for item in pool.items]
            if not pool.variants:
                for piece in parts[0]:
                    section.append(self.item(piece))
                continue
            for index in range(len(parts[0])):
                pieces = [variant[index] for variant in parts]
                group = sub(
                    section, "section", ident=f"group-{pieces[0].ident}", title=pieces[0].ident
                )
                selection = sub(sub(group, "selection_ordering"), "selection")
                # Canvas also reads a selection_extension/points_per_item, but the 1.2.1 DTD
                # has no such element: the points travel in each item's points_possible.
                sub(selection, "selection_number", "1")
                for piece in pieces:
                    group.append(self.item(piece))
        return xml_bytes(root)

    def item(self, item: Item) -> ET.Element:
        """One ``<item>``."""
        question = item.question
        media = self.media
        ident = item.ident
        element = ET.Element("item", ident=ident, title=item.title)
        interaction = interaction_of(question)
        if isinstance(interaction, PairingInteraction):
            return self._matching(element, item, interaction)
        if isinstance(interaction, BlanksInteraction):
            return self._blanks(element, item, interaction)
        kind = "numerical_question"
        labels: list[tuple[str, str]] = []
        if isinstance(interaction, ChoiceInteraction) and interaction.boolean:
            kind = "true_false_question"
            labels = [(f"{ident}_{c.text}", c.text.capitalize()) for c in interaction.choices]
        elif isinstance(interaction, ChoiceInteraction):
            multiple = interaction.multiple
            kind = "multiple_answers_question" if multiple else "multiple_choice_question"
            labels = [(f"{ident}_{IDENTS[i]}", c.text) for i, c in enumerate(interaction.choices)]
        elif isinstance(interaction, TextInteraction):
            kind = "essay_question"
        fields = [("question_type", kind), ("points_possible", decimal_text(item.points))]
        if labels:
            fields.append(("original_answer_ids", ",".join(label for label, _ in labels)))
        fields.append(("assessment_question_identifierref", f"aq-{ident}"))
        _meta(element, fields)

        presentation = sub(element, "presentation")
        stem = _html(item.prompt, media)
        statement = statement_of(question)
        if statement:
            stem = f"<blockquote>{_html(statement, media)}</blockquote>{stem}"
        _mattext(presentation, stem)
        if labels:
            multiple = kind == "multiple_answers_question"
            lid = sub(
                presentation,
                "response_lid",
                ident="response1",
                rcardinality="Multiple" if multiple else "Single",
            )
            choice = sub(lid, "render_choice")
            for label, text in labels:
                _mattext(sub(choice, "response_label", ident=label), lms_html(text, media))
        else:
            fib = sub(presentation, "response_str", ident="response1", rcardinality="Single")
            render = sub(
                fib, "render_fib", **({} if kind == "essay_question" else {"fibtype": "Decimal"})
            )
            sub(render, "response_label", ident="answer1", rshuffle="No")

        processing = sub(element, "resprocessing")
        outcomes = sub(processing, "outcomes")
        sub(outcomes, "decvar", maxvalue="100", minvalue="0", varname="SCORE", vartype="Decimal")
        feedbacks: list[tuple[str, str]] = []
        if item.feedback or isinstance(interaction, TextInteraction):
            general = item.feedback
            if isinstance(interaction, TextInteraction):
                general = join_text("Model answer:", interaction.model_answer)
            feedbacks.append(("general_fb", general))
            sub(_condition(processing, go_on=True, feedback="general_fb"), "other")
        if isinstance(interaction, ChoiceInteraction) and interaction.boolean:
            answer = interaction.choices[0].correct  # true, then false
            wrong_label = f"{ident}_{'false' if answer else 'true'}"
            right_label = f"{ident}_{'true' if answer else 'false'}"
            if_wrong = wrong_feedback_true_false(self.compiled, question, answer=not answer)
            feedbacks.append((f"{wrong_label}_fb", if_wrong))
            var = _condition(processing, go_on=True, feedback=f"{wrong_label}_fb")
            sub(var, "varequal", wrong_label, respident="response1")
            var = _condition(processing, go_on=False, score=100)
            sub(var, "varequal", right_label, respident="response1")
        elif isinstance(interaction, ChoiceInteraction):
            for (label, _), option in zip(labels, interaction.choices, strict=True):
                if option.feedback:
                    feedbacks.append((f"{label}_fb", option.feedback))
                    var = _condition(processing, go_on=True, feedback=f"{label}_fb")
                    sub(var, "varequal", label, respident="response1")
            var = _condition(processing, go_on=False, score=100)
            if kind == "multiple_answers_question":
                both = sub(var, "and")
                for (label, _), option in zip(labels, interaction.choices, strict=True):
                    target = both if option.correct else sub(both, "not")
                    sub(target, "varequal", label, respident="response1")
            else:
                right = next(
                    label
                    for (label, _), c in zip(labels, interaction.choices, strict=True)
                    if c.correct
                )
                sub(var, "varequal", right, respident="response1")
        elif isinstance(interaction, NumericInteraction):
            slot = item.slots[0]
            # Canvas makes every range condition a full-credit answer and scores any answer
            # that covers the response as right, so only what the engine accepts may be a
            # condition: one plain range per run, on Canvas's own 4-decimal grid. Mistakes get
            # no condition; their feedback is folded into the general incorrect feedback.
            for run in runs_of(
                self.compiled, target=slot.key.number, tolerance=slot.tolerance, grid=CANVAS
            ):
                var = _condition(processing, go_on=False, score=100)
                _range(var, number_text(run.low), number_text(run.high))
            if slot.wrong:
                feedbacks.append(("general_incorrect_fb", mistakes_feedback(slot)))
                var = _condition(processing, go_on=True, feedback="general_incorrect_fb")
                sub(var, "other")
        else:
            sub(_condition(processing, go_on=False), "other")
        for label, text in feedbacks:
            fb = sub(element, "itemfeedback", ident=label)
            _mattext(sub(fb, "flow_mat"), _html(text, media))
        return element

    def _shares(self, element: ET.Element, item: Item, media: Media, alike: str) -> ET.Element:
        """A question scored in equal shares: its general feedback, and a warning when its
        slots' points differ (``alike`` says what Canvas does instead)."""
        if item.feedback:
            feedback = sub(element, "itemfeedback", ident="general_fb")
            _mattext(sub(feedback, "flow_mat"), _html(item.feedback, media))
        points = {slot.points for slot in self.compiled.slots_of(item.question)}
        if len(points) > 1:
            shown = ", ".join(sorted(decimal_text(p) for p in points))
            self.warnings.append(
                f"warning: {item.ident}: {alike}; quizgym gives them {shown} points"
            )
        return element

    def _matching(self, element: ET.Element, item: Item, pairing: PairingInteraction) -> ET.Element:
        """A ``matching_question``: one ``response_lid`` per item over every answer; Canvas
        scores the share of items matched right (so items weigh alike)."""
        media, ident = self.media, item.ident
        answers = [(f"{ident}_{IDENTS[k]}", text) for k, text in enumerate(pairing.answers)]
        responses = [f"response_{pair.id}" for pair in pairing.items]
        _meta(
            element,
            [
                ("question_type", "matching_question"),
                ("points_possible", decimal_text(item.points)),
                ("original_answer_ids", ",".join(responses)),
                ("assessment_question_identifierref", f"aq-{ident}"),
            ],
        )
        presentation = sub(element, "presentation")
        _mattext(presentation, _html(item.prompt, media))
        for pair, response in zip(pairing.items, responses, strict=True):
            lid = sub(presentation, "response_lid", ident=response)
            _mattext(lid, lms_html(pair.item, media))
            choice = sub(lid, "render_choice", shuffle="Yes" if pairing.shuffle else "No")
            for label, text in answers:
                _mattext(sub(choice, "response_label", ident=label), lms_html(text, media))
        processing = sub(element, "resprocessing")
        outcomes = sub(processing, "outcomes")
        sub(outcomes, "decvar", maxvalue="100", minvalue="0", varname="SCORE", vartype="Decimal")
        if item.feedback:
            sub(_condition(processing, go_on=True, feedback="general_fb"), "other")
        share = decimal_text(100 / len(pairing.items))
        for pair, response in zip(pairing.items, responses, strict=True):
            right = answers[pairing.answers.index(pair.answer)][0]
            # every item adds its share: QTI 1.2 stops at the first true condition without this
            condition = sub(processing, "respcondition", **{"continue": "Yes"})
            sub(sub(condition, "conditionvar"), "varequal", right, respident=response)
            sub(condition, "setvar", share, varname="SCORE", action="Add")
        return self._shares(
            element, item, media, "Canvas weighs every item of a matching question alike"
        )

    def _blanks(self, element: ET.Element, item: Item, blanks: BlanksInteraction) -> ET.Element:
        """A cloze as Canvas's ``multiple_dropdowns_question`` (every blank a choice) or
        ``fill_in_multiple_blanks_question`` (any other: a choice blank is then typed, its
        options listed after it): ``[name]`` in the text, one ``response_lid`` per blank over
        what it accepts, each right one adding the blank's share of 100 (Canvas weighs blanks
        alike, and compares typed text after trimming it, in any case)."""
        media, ident, names = self.media, item.ident, blanks.names
        dropdowns = all(blanks.blank(n).kind == "choice" for n in names)
        kind = "multiple_dropdowns_question" if dropdowns else "fill_in_multiple_blanks_question"
        labels: dict[str, list[tuple[str, str, bool]]] = {}
        for k, name in enumerate(names):
            blank = blanks.blank(name)
            texts = blank.choices if dropdowns else spellings(self.compiled, item, name)
            right = {str(blank.answer)} if dropdowns else set(texts)
            labels[name] = [
                (f"{ident}_{k + 1}_{IDENTS[j] if j < len(IDENTS) else j}", text, text in right)
                for j, text in enumerate(texts)
            ]
            self._blank_warnings(item, blanks, name, labels[name], dropdowns=dropdowns)
        _meta(
            element,
            [
                ("question_type", kind),
                ("points_possible", decimal_text(item.points)),
                ("original_answer_ids", ",".join(lb for n in names for lb, _, _ in labels[n])),
                ("assessment_question_identifierref", f"aq-{ident}"),
            ],
        )
        presentation = sub(element, "presentation")

        def shown(name: str) -> str:
            blank = blanks.blank(name)
            after = ""
            if blank.kind == "choice" and not dropdowns:
                after = " (" + " / ".join(html_text(plain_text(c)) for c in blank.choices) + ")"
            return f"[{name}]{after}"

        _mattext(presentation, fill_blanks(item.prompt, lambda text: _html(text, media), shown))
        for name in names:
            lid = sub(presentation, "response_lid", ident=f"response_{name}")
            sub(sub(lid, "material"), "mattext", name)
            choice = sub(lid, "render_choice")
            for label, text, _ in labels[name]:
                sub(
                    sub(sub(choice, "response_label", ident=label), "material"),
                    "mattext",
                    plain_text(text),
                    texttype="text/plain",
                )
        processing = sub(element, "resprocessing")
        outcomes = sub(processing, "outcomes")
        sub(outcomes, "decvar", maxvalue="100", minvalue="0", varname="SCORE", vartype="Decimal")
        if item.feedback:
            sub(_condition(processing, go_on=True, feedback="general_fb"), "other")
        share = decimal_text(100 / len(names))
        for name in names:
            for label, _, good in labels[name]:
                if good:  # continue: every blank adds its share
                    condition = sub(processing, "respcondition", **{"continue": "Yes"})
                    var = sub(condition, "conditionvar")
                    sub(var, "varequal", label, respident=f"response_{name}")
                    sub(condition, "setvar", share, varname="SCORE", action="Add")
        return self._shares(element, item, media, "Canvas weighs every blank alike")

    def _blank_warnings(
        self,
        item: Item,
        blanks: BlanksInteraction,
        name: str,
        labels: list[tuple[str, str, bool]],
        *,
        dropdowns: bool,
    ) -> None:
        """What Canvas scores unlike quizgym in one blank, said once per blank."""
        blank, where = blanks.blank(name), f"warning: {item.ident}.{name}: "
        if blank.kind == "number":
            slot = self.compiled.slot(f"{item.question.id}.{name}")
            assert slot.tolerance is not None
            runs = runs_of(
                self.compiled,
                target=self.compiled.key(slot, item.variant).number,
                tolerance=slot.tolerance,
                grid=CANVAS,
            )
            accepted = ", ".join(f"{number_text(r.low)} to {number_text(r.high)}" for r in runs)
            units = f", in {slot.units} or a unit it converts" if slot.units else ""
            self.warnings.append(
                f"{where}Canvas compares the text typed: it accepts only "
                f"{', '.join(text for _, text, _ in labels)}, where quizgym accepts any number "
                f"from {accepted}{units}"
            )
        elif blank.kind == "word" and blank.case_sensitive:
            self.warnings.append(
                f"{where}Canvas ignores case; quizgym's spellings are case-sensitive"
            )
        elif blank.kind == "word":
            self.warnings.append(
                f"{where}Canvas compares a word as typed apart from its case and ends' spaces "
                "(quizgym also folds runs of spaces and Unicode forms)"
            )
        elif not dropdowns:
            self.warnings.append(
                f"{where}Canvas has no dropdown beside typed blanks: its options are listed "
                "and the right one is typed (any case), no letter or number"
            )

    def manifest(self) -> bytes:
        """``imsmanifest.xml`` (Canvas's namespace for IMS CP 1.1)."""
        root = ET.Element("manifest", identifier=f"{self.ident}-manifest", xmlns=CP_NS)
        metadata = sub(root, "metadata")
        sub(metadata, "schema", "IMS Content")
        sub(metadata, "schemaversion", "1.1.3")
        sub(root, "organizations")
        resources = sub(root, "resources")
        resource = sub(resources, "resource", identifier=self.ident, type="imsqti_xmlv1p2")
        sub(resource, "file", href=f"{self.ident}/{self.ident}.xml")
        sub(resource, "dependency", identifierref=f"{self.ident}-meta")
        for index in range(len(self.media.files)):
            sub(resource, "dependency", identifierref=f"{self.ident}-image-{index + 1}")
        meta = sub(
            resources,
            "resource",
            identifier=f"{self.ident}-meta",
            type="associatedcontent/imscc_xmlv1p1/learning-application-resource",
            href=f"{self.ident}/assessment_meta.xml",
        )
        sub(meta, "file", href=f"{self.ident}/assessment_meta.xml")
        for index, name in enumerate(self.media.files):
            image = sub(
                resources, "resource", identifier=f"{self.ident}-image-{index + 1}",
                type="webcontent", href=f"web_resources/{name}",
            )  # fmt: skip
            sub(image, "file", href=f"web_resources/{name}")
        return xml_bytes(root)

    def assessment_meta(self) -> bytes:
        """Canvas's quiz settings (``assessment_meta.xml``)."""
        pools = plan(self.compiled, variants=self.variants, seed=self.seed)
        points = sum(pool.items[0].points for pool in pools)
        root = ET.Element("quiz", identifier=self.ident, xmlns=CANVAS_NS)
        sub(root, "title", self.bank.title)
        sub(root, "description", lms_html(self.bank.description or "", self.media))
        sub(root, "shuffle_answers", "false")
        sub(root, "scoring_policy", "keep_highest")
        sub(root, "quiz_type", "assignment")
        sub(root, "points_possible", decimal_text(points))
        sub(root, "show_correct_answers", "true")
        sub(root, "allowed_attempts", "1")
        sub(root, "one_question_at_a_time", "false")
        sub(root, "cant_go_back", "false")
        sub(root, "available", "false")
        return xml_bytes(root)

    @property
    def media(self) -> Media:
        """The images the package carries (filled as the assessment is written)."""
        if not hasattr(self, "_media"):
            self._media = Media(self.bank, _url)
        return self._media

    def to_bytes(self) -> bytes:
        """The zip: manifest, assessment, settings and the images, with fixed dates.

        Images live in ``web_resources/`` (as in Canvas's own exports), referred to as
        ``$IMS-CC-FILEBASE$/figures/x.png`` and listed in the manifest as web content.
        """
        self._media = Media(self.bank, _url)
        assessment = self.assessment()
        meta = self.assessment_meta()
        return write_zip(
            [
                ("imsmanifest.xml", self.manifest()),
                (f"{self.ident}/{self.ident}.xml", assessment),
                (f"{self.ident}/assessment_meta.xml", meta),
                *((f"web_resources/{name}", f.data()) for name, f in self.media.files.items()),
            ]
        )


EXPORTER = Qti12Exporter
