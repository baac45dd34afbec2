"""IMS QTI 2.1: a content package of one ``assessmentItem`` per question and variant, an
``assessmentTest`` and an IMS CP 1.1 manifest.

true/false and choices → ``choiceInteraction`` (several correct: a mapping worth ±1/k of the
points, floored at 0, the engine's rule); spot-the-error → a choice with the statement; free
text → ``extendedTextInteraction`` with the model answer as the correct response and, with the
rubric, in a scorer-only ``rubricBlock``; numeric → ``textEntryInteraction`` (one per part, so a
multi-part question stays one item) scored with portable ``gte``/``lte`` inside ``and`` (``or``
of several when what the engine accepts is a union, see :mod:`.accept`). Known mistakes follow as
``responseElseIf`` branches in the engine's order, with partial credit and ``modalFeedback`` on
the multiple ``FEEDBACK`` outcome, as does per-choice feedback. A variant
pool is an ``assessmentSection`` with ``<selection select="1"/>``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from urllib.parse import quote

from quizgym.accept import Run, number_text
from quizgym.export import Exporter
from quizgym.export.package import sub, write_zip, xml_bytes
from quizgym.export.plan import (
    BLANK_MARK,
    Blank,
    Item,
    Media,
    Pool,
    decimal_text,
    join_text,
    lms_html,
    plan,
    wrong_feedback_true_false,
)
from quizgym.model import (
    BLANK,
    LETTERS,
)
from quizgym.richtext import MATHML_NS, ImageFile, parse, plain_text
from quizgym.richtext.chars import xml_safe
from quizgym.types import (
    BlanksInteraction,
    ChoiceInteraction,
    PairingInteraction,
    TextInteraction,
    interaction_of,
    statement_of,
)

QTI_NS = "http://www.imsglobal.org/xsd/imsqti_v2p1"
ET.register_namespace("m", MATHML_NS)
CP_NS = "http://www.imsglobal.org/xsd/imscp_v1p1"
GENERAL = "GENERAL"


def ncname(ident: str) -> str:
    """A QTI identifier (an XML NCName) for a quizgym id: ids starting with a digit get ``q``."""
    return ident if ident[:1].isalpha() else f"q{ident}"


def item_href(item: Item) -> str:
    """Where an item lives in the package."""
    return f"items/{ncname(item.ident)}.xml"


MEDIA = "media"
"""The package's folder of images, beside ``items/`` (which holds items only)."""


def _image_url(found: ImageFile) -> str:
    return f"../{MEDIA}/{quote(found.name)}"  # relative to the item: items/x.xml


def _fill(parent: ET.Element, text: str, media: Media, *, inline: bool = True) -> None:
    """Append bank text (Markdown) to an element as QTI's XHTML: formulas as MathML, images
    beside the items. ``inline``: one paragraph goes in as its inline content."""
    markup = lms_html(text, media, math="mathml", inline=inline, qti=True)
    # Plain names, as the rest of the item is written (its root carries the xmlns).
    holder = ET.fromstring(f"<div>{xml_safe(markup)}</div>")  # noqa: S314 (our own XHTML)
    last = parent[-1] if len(parent) else None
    if holder.text:
        if last is None:
            parent.text = (parent.text or "") + holder.text
        else:
            last.tail = (last.tail or "") + holder.text
    parent.extend(list(holder))


def _value(parent: ET.Element, tag: str, *values: str) -> None:
    holder = sub(parent, tag)
    for value in values:
        sub(holder, "value", value)


def _base(parent: ET.Element, base_type: str, value: str) -> None:
    sub(parent, "baseValue", value, baseType=base_type)


def _add_feedback(parent: ET.Element, build: ET.Element | None = None, ident: str = "") -> None:
    """FEEDBACK := multiple(FEEDBACK, <build or identifier>)."""
    setter = sub(parent, "setOutcomeValue", identifier="FEEDBACK")
    multiple = sub(setter, "multiple")
    sub(multiple, "variable", identifier="FEEDBACK")
    if build is not None:
        multiple.append(build)
    else:
        _base(multiple, "identifier", ident)


def _add_score(parent: ET.Element, points: float) -> None:
    setter = sub(parent, "setOutcomeValue", identifier="SCORE")
    total = sub(setter, "sum")
    sub(total, "variable", identifier="SCORE")
    _base(total, "float", decimal_text(points))


def _within(parent: ET.Element, response: str, runs: tuple[Run, ...]) -> None:
    """``low ≤ RESPONSE ≤ high`` for each run, or'ed: plain ``gte``/``lte`` inside ``and``.

    Every QTI 2.1 player implements these; ``equal`` with a ``toleranceMode`` is optional (the
    ``@citolab/qti-components`` runtime answers false for any mode but exact). The bounds reach
    half a grid step past each run, so an answer typed with more digits than the grid counts as
    its nearest grid point. No run (a key finer than any typed answer) is a condition never met.
    """
    if not runs:
        _base(parent, "boolean", "false")
        return
    holder = sub(parent, "or") if len(runs) > 1 else parent
    for run in runs:
        both = sub(holder, "and")
        for op, bound in (("gte", run.low - run.step / 2), ("lte", run.high + run.step / 2)):
            compare = sub(both, op)
            sub(compare, "variable", identifier=response)
            _base(compare, "float", number_text(bound))


def _score_number(
    processing: ET.Element, response: str, slot: Blank, feedback: list[tuple[str, str]]
) -> None:
    """A number's points when it lies in the runs quizgym accepts, else each known mistake's
    credit and feedback (its identifier added to ``feedback``) when it lies in that one's."""
    condition = sub(processing, "responseCondition")
    branch = sub(condition, "responseIf")
    _within(branch, response, slot.runs)
    _add_score(branch, slot.points)
    for n, wrong in enumerate(slot.wrong, start=1):
        if not wrong.runs:
            continue
        ident = f"{response}_MISTAKE{n}"
        feedback.append((ident, wrong.feedback))
        branch = sub(condition, "responseElseIf")
        _within(branch, response, wrong.runs)
        if wrong.credit:
            _add_score(branch, slot.points * wrong.credit)
        _add_feedback(branch, ident=ident)


def _marked(prompt: str) -> str:
    """A cloze prompt with each blank as its mark (see :data:`~quizgym.export.plan.BLANK_MARK`)."""
    count = iter(range(len(BLANK.findall(prompt))))
    return BLANK.sub(lambda _: BLANK_MARK.format(next(count)), prompt)


def _inline(parent: ET.Element, make: Callable[[int], ET.Element]) -> None:
    """Replace each blank's mark in the text of ``parent`` and its descendants by the element
    ``make(k)`` gives for the k-th blank, where the mark stands."""
    mark = re.compile(BLANK_MARK.format(r"(\d+)"))

    def pieces(text: str) -> tuple[str, list[ET.Element]]:
        parts = mark.split(text)
        made = []
        for k, after in zip(parts[1::2], parts[2::2], strict=True):
            element = make(int(k))
            element.tail = after
            made.append(element)
        return parts[0], made

    for element in list(parent.iter()):
        if element.text and mark.search(element.text):
            element.text, made = pieces(element.text)
            for at, new in enumerate(made):
                element.insert(at, new)
        for child in list(element):
            if child.tail and mark.search(child.tail):
                child.tail, made = pieces(child.tail)
                base = list(element).index(child) + 1
                for at, new in enumerate(made):
                    element.insert(base + at, new)


class Qti21Exporter(Exporter):
    """QTI 2.1 content package."""

    name = "qti21"
    kinds = Exporter.kinds | {"pairing", "blanks"}
    suffix = ".zip"
    math = "mathml"

    @property
    def ident(self) -> str:
        """The test's identifier (stable: from the bank's slug)."""
        return f"quizgym-{self.bank.bank}"

    def pools(self) -> list[Pool]:
        """The pools exported (see :func:`~quizgym.export.plan.plan`)."""
        return plan(self.compiled, variants=self.variants, seed=self.seed)

    def item(self, item: Item) -> bytes:
        """One ``assessmentItem`` document (its images are recorded in :attr:`media`)."""
        question = item.question
        media = self.media
        root = ET.Element(
            "assessmentItem",
            xmlns=QTI_NS,
            identifier=ncname(item.ident),
            title=item.title,
            adaptive="false",
            timeDependent="false",
        )
        feedback: list[tuple[str, str]] = []
        if item.feedback:
            feedback.append((GENERAL, item.feedback))
        body = ET.Element("itemBody")
        processing = ET.Element("responseProcessing")
        if item.feedback:
            _add_feedback(processing, ident=GENERAL)
        kind = interaction_of(question)
        if isinstance(kind, ChoiceInteraction):
            self._choice(root, body, processing, item, kind, feedback)
        elif isinstance(kind, PairingInteraction):
            self._matching(root, body, processing, item, kind)
        elif isinstance(kind, BlanksInteraction):
            self._blanks(root, body, processing, item, kind, feedback)
        elif isinstance(kind, TextInteraction):
            declaration = sub(
                root, "responseDeclaration", identifier="RESPONSE", cardinality="single",
                baseType="string",
            )  # fmt: skip
            _value(declaration, "correctResponse", plain_text(kind.model_answer))
            _fill(body, item.prompt, media, inline=False)
            sub(body, "extendedTextInteraction", responseIdentifier="RESPONSE", expectedLines="10")
            rubric = sub(body, "rubricBlock", view="scorer")
            _fill(rubric, join_text("Model answer:", kind.model_answer), media, inline=False)
            for criterion in kind.rubric:
                line = sub(rubric, "p")
                _fill(line, criterion.criterion, media)
                tail = f" ({decimal_text(criterion.points)} pt): " + ", ".join(criterion.any_of)
                if len(line):
                    line[-1].tail = (line[-1].tail or "") + tail
                else:
                    line.text = (line.text or "") + tail
        else:
            self._numeric(root, body, processing, item, feedback)
        for ident, cardinality, base_type, default in (
            ("SCORE", "single", "float", "0"),
            ("MAXSCORE", "single", "float", decimal_text(item.points)),
            ("FEEDBACK", "multiple", "identifier", None),
        ):
            outcome = sub(
                root, "outcomeDeclaration", identifier=ident, cardinality=cardinality,
                baseType=base_type,
            )  # fmt: skip
            if default is not None:
                _value(outcome, "defaultValue", default)
        root.append(body)
        root.append(processing)
        for ident, text in feedback:
            modal = sub(
                root, "modalFeedback", outcomeIdentifier="FEEDBACK", identifier=ident,
                showHide="show",
            )  # fmt: skip
            _fill(modal, text, media)
        return xml_bytes(root)

    def _choice(
        self,
        root: ET.Element,
        body: ET.Element,
        processing: ET.Element,
        item: Item,
        options: ChoiceInteraction,
        feedback: list[tuple[str, str]],
    ) -> None:
        question = item.question
        points = decimal_text(item.points)
        choices: list[tuple[str, str, bool, str | None]]
        if options.boolean:
            answer = options.choices[0].correct  # true, then false
            choices = [
                (c.text.upper(), c.text.capitalize(), c.correct, None) for c in options.choices
            ]
            wrong = choices[1 if answer else 0]
            text = wrong_feedback_true_false(self.compiled, question, answer=not answer)
            choices[1 if answer else 0] = (wrong[0], wrong[1], False, text)
        else:
            choices = [
                (LETTERS[i], c.text, c.correct, c.feedback) for i, c in enumerate(options.choices)
            ]
        multiple, shuffle = options.multiple, options.shuffle
        right = [ident for ident, _, correct, _ in choices if correct]
        declaration = sub(
            root, "responseDeclaration", identifier="RESPONSE",
            cardinality="multiple" if multiple else "single", baseType="identifier",
        )  # fmt: skip
        _value(declaration, "correctResponse", *right)
        if multiple:
            mapping = sub(
                declaration, "mapping", lowerBound="0", upperBound=points, defaultValue="0"
            )
            share = item.points / len(right)  # not points × (1/k): 10/3, not 3.333…3 (too low)
            for (ident, *_), weight in zip(choices, options.weights, strict=True):
                value = share if weight > 0 else -share
                sub(mapping, "mapEntry", mapKey=ident, mappedValue=decimal_text(value))
        media = self.media
        statement = statement_of(question)
        if statement is not None:
            _fill(sub(body, "blockquote"), statement, media, inline=False)
        # A prompt holds inline content only: a prompt with a table or a list goes before the
        # interaction instead.
        one_line = parse(item.prompt).inline is not None
        if not one_line:
            _fill(body, item.prompt, media, inline=False)
        interaction = sub(
            body, "choiceInteraction", responseIdentifier="RESPONSE",
            shuffle="true" if shuffle else "false", maxChoices="0" if multiple else "1",
        )  # fmt: skip
        if one_line:
            _fill(sub(interaction, "prompt"), item.prompt, media)
        for ident, text, _, note in choices:
            _fill(sub(interaction, "simpleChoice", identifier=ident), text, media)
            if note:
                feedback.append((ident, note))
        condition = sub(sub(processing, "responseCondition"), "responseIf")
        if multiple:
            sub(sub(condition, "not"), "isNull").append(
                ET.Element("variable", identifier="RESPONSE")
            )
            setter = sub(condition, "setOutcomeValue", identifier="SCORE")
            sub(setter, "mapResponse", identifier="RESPONSE")
        else:
            match = sub(condition, "match")
            sub(match, "variable", identifier="RESPONSE")
            sub(match, "correct", identifier="RESPONSE")
            _add_score(condition, item.points)
        _add_feedback(processing, ET.Element("variable", identifier="RESPONSE"))

    def _matching(
        self,
        root: ET.Element,
        body: ET.Element,
        processing: ET.Element,
        item: Item,
        pairing: PairingInteraction,
    ) -> None:
        """A matchInteraction: items in the first set, answers in the second; the mapping
        gives each right (item, answer) pair that item's points, so the score is quizgym's."""
        slots = {slot.part: slot for slot in self.compiled.slots_of(item.question)}
        pairs = [
            (f"I_{pair.id}", f"A_{pairing.answers.index(pair.answer)}", slots[pair.id].points)
            for pair in pairing.items
        ]
        declaration = sub(
            root, "responseDeclaration", identifier="RESPONSE", cardinality="multiple",
            baseType="directedPair",
        )  # fmt: skip
        _value(declaration, "correctResponse", *(f"{i} {a}" for i, a, _ in pairs))
        mapping = sub(
            declaration, "mapping", lowerBound="0", upperBound=decimal_text(item.points),
            defaultValue="0",
        )  # fmt: skip
        for i, a, points in pairs:
            sub(mapping, "mapEntry", mapKey=f"{i} {a}", mappedValue=decimal_text(points))
        media = self.media
        one_line = parse(item.prompt).inline is not None
        if not one_line:
            _fill(body, item.prompt, media, inline=False)
        interaction = sub(
            body, "matchInteraction", responseIdentifier="RESPONSE",
            shuffle="true" if pairing.shuffle else "false", maxAssociations=str(len(pairs)),
        )  # fmt: skip
        if one_line:
            _fill(sub(interaction, "prompt"), item.prompt, media)
        items = sub(interaction, "simpleMatchSet")
        for pair, (ident, _, _) in zip(pairing.items, pairs, strict=True):
            choice = sub(items, "simpleAssociableChoice", identifier=ident, matchMax="1")
            _fill(choice, pair.item, media)
        answers = sub(interaction, "simpleMatchSet")
        most = "1" if pairing.one_to_one else str(len(pairs))
        for k, text in enumerate(pairing.answers):
            choice = sub(answers, "simpleAssociableChoice", identifier=f"A_{k}", matchMax=most)
            _fill(choice, text, media)
        condition = sub(sub(processing, "responseCondition"), "responseIf")
        sub(sub(condition, "not"), "isNull").append(ET.Element("variable", identifier="RESPONSE"))
        setter = sub(condition, "setOutcomeValue", identifier="SCORE")
        sub(setter, "mapResponse", identifier="RESPONSE")

    def _blanks(
        self,
        root: ET.Element,
        body: ET.Element,
        processing: ET.Element,
        item: Item,
        blanks: BlanksInteraction,
        feedback: list[tuple[str, str]],
    ) -> None:
        """A cloze: its text with an inline interaction at each blank (textEntryInteraction
        for a number or a word, inlineChoiceInteraction for a choice), each blank its own
        response adding its points: a number within the runs quizgym accepts (and its
        mistakes' credit), the right choice, or a word mapped from each accepted spelling."""
        numbers = {slot.part: slot for slot in item.slots}
        points = {s.part: s.points for s in self.compiled.slots_of(item.question)}
        for name in blanks.names:
            response, blank = f"RESPONSE_{name}", blanks.blank(name)
            if name in numbers:
                slot = numbers[name]
                declaration = sub(
                    root, "responseDeclaration", identifier=response, cardinality="single",
                    baseType="float",
                )  # fmt: skip
                _value(declaration, "correctResponse", decimal_text(slot.accept.value))
                _score_number(processing, response, slot, feedback)
                if slot.units:
                    self.warnings.append(
                        f"warning: {item.ident}.{name}: a QTI 2.1 float response holds a "
                        f"number alone: {slot.units} typed after it, or another unit, is not "
                        "read as quizgym reads it"
                    )
            elif blank.kind == "choice":
                declaration = sub(
                    root, "responseDeclaration", identifier=response, cardinality="single",
                    baseType="identifier",
                )  # fmt: skip
                right = blank.choices.index(str(blank.answer))
                _value(declaration, "correctResponse", f"C_{name}_{right}")
                branch = sub(sub(processing, "responseCondition"), "responseIf")
                match = sub(branch, "match")
                sub(match, "variable", identifier=response)
                sub(match, "correct", identifier=response)
                _add_score(branch, points[name])
            else:
                declaration = sub(
                    root, "responseDeclaration", identifier=response, cardinality="single",
                    baseType="string",
                )  # fmt: skip
                _value(declaration, "correctResponse", blank.accept[0].strip())
                mapping = sub(
                    declaration, "mapping", lowerBound="0",
                    upperBound=decimal_text(points[name]), defaultValue="0",
                )  # fmt: skip
                for text in dict.fromkeys(a.strip() for a in blank.accept):
                    sub(
                        mapping, "mapEntry", mapKey=text, mappedValue=decimal_text(points[name]),
                        caseSensitive="true" if blank.case_sensitive else "false",
                    )  # fmt: skip
                branch = sub(sub(processing, "responseCondition"), "responseIf")
                sub(sub(branch, "not"), "isNull").append(
                    ET.Element("variable", identifier=response)
                )
                setter = sub(branch, "setOutcomeValue", identifier="SCORE")
                total = sub(setter, "sum")
                sub(total, "variable", identifier="SCORE")
                sub(total, "mapResponse", identifier=response)
                self.warnings.append(
                    f"warning: {item.ident}.{name}: QTI 2.1 matches a word exactly as typed"
                    f"{'' if blank.case_sensitive else ' (in any case)'}; quizgym also folds "
                    "spaces and Unicode forms"
                )
        holder = ET.Element("div")
        names = blanks.names
        _fill(holder, _marked(item.prompt), self.media, inline=False)
        _inline(holder, lambda k: self._inline_interaction(blanks, names[k]))
        body.extend(list(holder))
        if holder.text and holder.text.strip():
            body.text = holder.text

    @staticmethod
    def _inline_interaction(blanks: BlanksInteraction, name: str) -> ET.Element:
        blank, response = blanks.blank(name), f"RESPONSE_{name}"
        if blank.kind != "choice":
            return ET.Element(
                "textEntryInteraction", responseIdentifier=response, expectedLength="12"
            )
        element = ET.Element(
            "inlineChoiceInteraction", responseIdentifier=response, shuffle="false"
        )
        for k, text in enumerate(blank.choices):
            sub(element, "inlineChoice", plain_text(text), identifier=f"C_{name}_{k}")
        return element

    def _numeric(
        self,
        root: ET.Element,
        body: ET.Element,
        processing: ET.Element,
        item: Item,
        feedback: list[tuple[str, str]],
    ) -> None:
        multipart = len(item.slots) > 1 or bool(item.slots[0].part)
        media = self.media
        _fill(body, item.prompt, media, inline=False)
        for slot in item.slots:
            response = f"RESPONSE_{slot.part}" if multipart else "RESPONSE"
            declaration = sub(
                root, "responseDeclaration", identifier=response, cardinality="single",
                baseType="float",
            )  # fmt: skip
            _value(declaration, "correctResponse", decimal_text(slot.accept.value))
            if multipart and parse(slot.prompt).inline is None:
                _fill(body, slot.prompt, media, inline=False)
                line = sub(body, "p")
            elif multipart:
                line = sub(body, "p")
                _fill(line, join_text(slot.prompt, ":", sep=""), media)
                if len(line):  # the space before the box, after the prompt's last element
                    line[-1].tail = (line[-1].tail or "") + " "
                else:
                    line.text = (line.text or "") + " "
            else:
                line = sub(body, "p")
            sub(line, "textEntryInteraction", responseIdentifier=response, expectedLength="12")
            _score_number(processing, response, slot, feedback)

    def test(self, pools: list[Pool]) -> bytes:
        """The ``assessmentTest``: every question, a pool as a section that selects one."""
        root = ET.Element(
            "assessmentTest", xmlns=QTI_NS, identifier=self.ident, title=self.bank.title
        )
        sub(root, "outcomeDeclaration", identifier="SCORE", cardinality="single", baseType="float")
        part = sub(
            root, "testPart", identifier="main", navigationMode="nonlinear",
            submissionMode="individual",
        )  # fmt: skip
        section = sub(
            part, "assessmentSection", identifier="questions", title=self.bank.title, visible="true"
        )
        for pool in pools:
            target = section
            if pool.variants:
                target = sub(
                    section, "assessmentSection", identifier=f"pool-{ncname(pool.ident)}",
                    title=pool.ident, visible="false",
                )  # fmt: skip
                sub(target, "selection", select="1")
            for item in pool.items:
                sub(
                    target, "assessmentItemRef", identifier=ncname(item.ident), href=item_href(item)
                )
        processing = sub(root, "outcomeProcessing")
        setter = sub(processing, "setOutcomeValue", identifier="SCORE")
        sub(sub(setter, "sum"), "testVariables", variableIdentifier="SCORE")
        return xml_bytes(root)

    def manifest(self, pools: list[Pool], images: dict[str, list[str]] | None = None) -> bytes:
        """``imsmanifest.xml`` (IMS CP 1.1); ``images``: each item's images, listed as files of
        its resource."""
        images = images or {}
        root = ET.Element("manifest", xmlns=CP_NS, identifier=f"{self.ident}-package")
        metadata = sub(root, "metadata")
        sub(metadata, "schema", "QTIv2.1 Package")
        sub(metadata, "schemaversion", "1.0.0")
        sub(root, "organizations")
        resources = sub(root, "resources")
        test = sub(
            resources, "resource", identifier=f"test-{self.ident}", type="imsqti_test_xmlv2p1",
            href="assessment.xml",
        )  # fmt: skip
        sub(test, "file", href="assessment.xml")
        items = [item for pool in pools for item in pool.items]
        for item in items:
            sub(test, "dependency", identifierref=f"item-{ncname(item.ident)}")
        for item in items:
            resource = sub(
                resources, "resource", identifier=f"item-{ncname(item.ident)}",
                type="imsqti_item_xmlv2p1", href=item_href(item),
            )  # fmt: skip
            sub(resource, "file", href=item_href(item))
            for name in images.get(item.ident, []):
                sub(resource, "file", href=f"{MEDIA}/{name}")
        return xml_bytes(root)

    @property
    def media(self) -> Media:
        """The images of the item being written."""
        if not hasattr(self, "_media"):
            self._media = Media(self.bank, _image_url)
        return self._media

    def to_bytes(self) -> bytes:
        """The zip: manifest, test, items and their images (in ``media/``), fixed dates."""
        pools = self.pools()
        written: list[tuple[str, bytes]] = []
        images: dict[str, list[str]] = {}
        files: dict[str, ImageFile] = {}
        for pool in pools:
            for item in pool.items:
                self._media = Media(self.bank, _image_url)
                written.append((item_href(item), self.item(item)))
                images[item.ident] = list(self._media.files)
                files.update(self._media.files)
        entries = [
            ("imsmanifest.xml", self.manifest(pools, images)),
            ("assessment.xml", self.test(pools)),
        ]
        entries += written
        entries += [(f"{MEDIA}/{name}", found.data()) for name, found in sorted(files.items())]
        return write_zip(entries)


EXPORTER = Qti21Exporter
