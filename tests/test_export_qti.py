"""QTI 1.2 (Canvas) against the ASI 1.2.1 DTD, QTI 2.1 against imsqti_v2p1.xsd, both manifests
against the IMS CP 1.1 schema; then each item compared with the bank."""

from __future__ import annotations

import io
import zipfile
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from export_checkers import (
    SPECIAL,
    cp_schema,
    expected_slots,
    holds,
    inside,
    plain,
    qti12_dtd,
    qti21_schema,
    said,
    strip_namespaces,
    strip_tags,
)
from lxml import etree

from quizgym.export import exporter
from quizgym.loader import load_bank, parse_bank
from quizgym.model import Bank, FreeText, MultipleChoice, Numeric, SpotTheError, TrueFalse
from quizgym.solver import variant_of

pytestmark = pytest.mark.slow

Q12 = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
Q21 = "{http://www.imsglobal.org/xsd/imsqti_v2p1}"
CP = "http://www.imsglobal.org/xsd/imscp_v1p1"


def _zip(bank: Bank, fmt: str, **options: int) -> zipfile.ZipFile:
    return zipfile.ZipFile(io.BytesIO(exporter(fmt, bank, **options).to_bytes()))


@pytest.fixture(scope="module", params=["bert-mlm", str(SPECIAL)])
def bank(request: pytest.FixtureRequest) -> Bank:
    return load_bank(request.param)


def distinct_variants(bank: Bank, qid: str, seeds: range) -> list[str]:
    """Item ids of the distinct draws of the engine's variant generator over ``seeds``."""
    seen: list[object] = []
    out = []
    for seed in seeds:
        params = variant_of(bank, bank.question(qid), student=None, seed=seed).params
        if params not in seen:
            seen.append(params)
            out.append(f"{qid}.seed{seed}")
    return out


# --- QTI 1.2 ----------------------------------------------------------------------------------


def _valid12(data: bytes) -> Any:
    dtd = qti12_dtd()
    doc = strip_namespaces(etree.fromstring(data))
    assert dtd.validate(doc), dtd.error_log.filter_from_errors()  # type: ignore[attr-defined]
    return etree.fromstring(data)


def _canvas_manifest_valid(data: bytes) -> Any:
    # Canvas names the IMS CP 1.1 namespace differently; the structure is CP 1.1's.
    doc = etree.fromstring(data)
    for element in doc.iter():
        element.tag = f"{{{CP}}}{etree.QName(element).localname}"
    doc = etree.fromstring(etree.tostring(doc))
    schema = cp_schema()
    assert schema.validate(doc), schema.error_log  # type: ignore[attr-defined]
    return doc


def test_qti12_valid_and_matches_bank(bank: Bank) -> None:
    package = _zip(bank, "qti12")
    manifest = _canvas_manifest_valid(package.read("imsmanifest.xml"))
    hrefs = [f.get("href") for f in manifest.iter(f"{{{CP}}}file")]
    assert sorted(hrefs) == sorted(n for n in package.namelist() if n != "imsmanifest.xml")
    assessment = _valid12(package.read(hrefs[0]))
    items = {i.get("ident"): i for i in assessment.iter(f"{Q12}item")}
    for question in bank.questions:
        if isinstance(question, Numeric):
            for slot in expected_slots(bank, question):
                ident = question.id + (f".{slot.part}" if slot.part else "")
                item = items[ident]
                assert _meta(item)["question_type"] == "numerical_question"
                # Plain ranges only (Canvas makes every range condition a correct answer), each
                # within what the engine accepts; no exact-answer `or`, no wrong-answer range.
                ranges = [
                    (float(rc.findtext(f".//{Q12}vargte")), float(rc.findtext(f".//{Q12}varlte")))
                    for rc in item.iter(f"{Q12}respcondition")
                    if rc.find(f".//{Q12}vargte") is not None
                ]
                assert inside(ranges, slot.low, slot.high), (ident, ranges, slot)
                assert item.find(f".//{Q12}or") is None and item.find(f".//{Q12}varequal") is None
                shown = _feedback12(item)
                for _, feedback, _ in slot.mistakes:
                    assert plain(feedback) in shown
            continue
        item = items[question.id]
        meta = _meta(item)
        stem = strip_tags(item.findtext(f"{Q12}presentation/{Q12}material/{Q12}mattext"))
        labels = [
            strip_tags(m.text)
            for m in item.iter(f"{Q12}response_label")
            if m.find(f".//{Q12}mattext") is not None
            for m in m.iter(f"{Q12}mattext")
        ]
        if isinstance(question, TrueFalse):
            assert meta["question_type"] == "true_false_question"
            assert labels == ["True", "False"]
            right = f"{question.id}_{'true' if question.answer else 'false'}"
            assert _score_100(item) == [right]
        elif isinstance(question, MultipleChoice | SpotTheError):
            multiple = isinstance(question, MultipleChoice) and question.multiple
            kind = "multiple_answers_question" if multiple else "multiple_choice_question"
            assert meta["question_type"] == kind
            assert labels == [c.text for c in question.choices]
            for choice in question.choices:
                if choice.feedback:
                    assert said(choice.feedback) in _feedback12(item)
            if not multiple:
                assert len(_score_100(item)) == 1
            if isinstance(question, SpotTheError):
                assert said(question.statement) in plain(stem)
        elif isinstance(question, FreeText):
            assert meta["question_type"] == "essay_question"
            assert said(question.model_answer) in _feedback12(item)
        if not isinstance(question, SpotTheError):
            assert plain(stem) == said(question.prompt)


def _meta(item: Any) -> dict[str, str]:
    return {
        f.findtext(f"{Q12}fieldlabel"): f.findtext(f"{Q12}fieldentry")
        for f in item.iter(f"{Q12}qtimetadatafield")
    }


def _feedback12(item: Any) -> str:
    return " | ".join(
        plain(strip_tags(m.text))
        for fb in item.iter(f"{Q12}itemfeedback")
        for m in fb.iter(f"{Q12}mattext")
    )


def _score_100(item: Any) -> list[str]:
    return [
        v.text
        for rc in item.iter(f"{Q12}respcondition")
        if rc.findtext(f"{Q12}setvar") == "100"
        for v in rc.find(f"{Q12}conditionvar").iter(f"{Q12}varequal")
        if v.getparent().tag != f"{Q12}not"
    ]


def test_qti12_variants_are_question_groups() -> None:
    bank = load_bank(SPECIAL)
    package = _zip(bank, "qti12", variants=3, seed=5)
    assessment = _valid12(package.read("quizgym-special-chars/quizgym-special-chars.xml"))
    groups = {
        s.get("ident"): s
        for s in assessment.iter(f"{Q12}section")
        if s.get("ident") != "root_section"
    }
    group = groups["group-num-specials.seed5"]
    assert group.findtext(f".//{Q12}selection_number") == "1"
    assert [i.get("ident") for i in group.iter(f"{Q12}item")] == distinct_variants(
        bank, "num-specials", range(5, 8)
    )
    # A multi-part question gives one group per part, each item self-contained.
    assert "group-num-parts-specials.seed5.first" in groups
    assert "group-num-parts-specials.seed5.total" in groups


# --- QTI 2.1 ----------------------------------------------------------------------------------


def _valid21(data: bytes) -> Any:
    doc = etree.fromstring(data)
    schema = qti21_schema()
    assert schema.validate(doc), schema.error_log  # type: ignore[attr-defined]
    return doc


def test_qti21_valid_and_matches_bank(bank: Bank) -> None:
    package = _zip(bank, "qti21")
    manifest = etree.fromstring(package.read("imsmanifest.xml"))
    assert cp_schema().validate(manifest), cp_schema().error_log  # type: ignore[attr-defined]
    files = sorted(f.get("href") for f in manifest.iter(f"{{{CP}}}file"))
    assert files == sorted(n for n in package.namelist() if n != "imsmanifest.xml")
    test = _valid21(package.read("assessment.xml"))
    refs = [r.get("href") for r in test.iter(f"{Q21}assessmentItemRef")]
    assert len(refs) == len(bank.questions)
    for question, href in zip(bank.questions, refs, strict=True):
        item = _valid21(package.read(href))
        assert item.get("identifier") == question.id
        feedback = {
            m.get("identifier"): plain(" ".join(m.itertext()))
            for m in item.iter(f"{Q21}modalFeedback")
        }
        if question.explanation:
            assert feedback["GENERAL"] == said(question.explanation, "mathml") or isinstance(
                question, SpotTheError
            )
        if isinstance(question, Numeric):
            expected = expected_slots(bank, question)
            declarations = item.findall(f"{Q21}responseDeclaration")
            assert len(declarations) == len(expected)
            for declaration, slot in zip(declarations, expected, strict=True):
                assert declaration.get("baseType") == "float"
                key = float(declaration.findtext(f".//{Q21}value"))
                assert key == pytest.approx(slot.key)
                ident = declaration.get("identifier")
                # Portable operators only: gte/lte pairs, no equal with a tolerance mode.
                assert item.find(f".//{Q21}equal") is None
                branch = next(
                    b
                    for b in item.iter(f"{Q21}responseIf")
                    if b.find(f".//{Q21}gte/{Q21}variable").get("identifier") == ident
                )
                ranges = [
                    (float(a.findtext(f"{Q21}gte/{Q21}baseValue")),
                     float(a.findtext(f"{Q21}lte/{Q21}baseValue")))
                    for a in branch.find(f"{Q21}*").iter(f"{Q21}and")
                ]  # fmt: skip
                assert inside(ranges, slot.low, slot.high), (question.id, ranges, slot)
                assert holds(ranges, slot.key)
                for value, text, _ in slot.mistakes:
                    assert plain(text) in feedback.values(), (question.id, value)
        elif isinstance(question, FreeText):
            assert item.find(f".//{Q21}extendedTextInteraction") is not None
            assert item.findtext(f".//{Q21}correctResponse/{Q21}value") == question.model_answer
        else:
            interaction = item.find(f".//{Q21}choiceInteraction")
            texts = [c.text for c in interaction.iter(f"{Q21}simpleChoice")]
            right = [
                v.text
                for v in item.iter(f"{Q21}value")
                if v.getparent().tag == f"{Q21}correctResponse"
            ]
            if isinstance(question, TrueFalse):
                assert texts == ["True", "False"]
                assert right == ["TRUE" if question.answer else "FALSE"]
            else:
                assert texts == [c.text for c in question.choices]
                letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                assert right == [letters[i] for i, c in enumerate(question.choices) if c.correct]
                for i, choice in enumerate(question.choices):
                    if choice.feedback:
                        assert feedback[letters[i]] == said(choice.feedback, "mathml")
                if isinstance(question, SpotTheError):
                    assert said(question.statement, "mathml") in plain(
                        " ".join(item.find(f"{Q21}itemBody").itertext())
                    )


def test_qti21_variants_are_sections_that_select_one() -> None:
    bank = load_bank(SPECIAL)
    package = _zip(bank, "qti21", variants=3, seed=5)
    test = _valid21(package.read("assessment.xml"))
    pools = {s.get("identifier"): s for s in test.iter(f"{Q21}assessmentSection")}
    pool = pools["pool-num-specials"]
    assert pool.find(f"{Q21}selection").get("select") == "1"
    hrefs = [r.get("href") for r in pool.iter(f"{Q21}assessmentItemRef")]
    idents = distinct_variants(bank, "num-specials", range(5, 8))
    assert hrefs == [f"items/{ident}.xml" for ident in idents]
    keys = {float(_valid21(package.read(h)).findtext(f".//{Q21}value")) for h in hrefs}
    assert len(keys) == len(hrefs) >= 2  # different numbers, drawn by the engine's variants


def test_packages_are_deterministic() -> None:
    bank = load_bank(SPECIAL)
    for fmt in ("qti12", "qti21"):
        assert exporter(fmt, bank).to_bytes() == exporter(fmt, bank).to_bytes()


def test_goldens(update_goldens: bool) -> None:
    bank = load_bank(SPECIAL)
    for fmt in ("qti12", "qti21"):
        package = _zip(bank, fmt, variants=2, seed=1)
        text = "".join(
            f"==> {name} <==\n{package.read(name).decode()}" for name in package.namelist()
        )
        golden = Path(__file__).parent / "goldens" / "export" / f"special-chars.{fmt}.txt"
        if update_goldens:
            golden.write_text(text, encoding="utf-8")
        assert text == golden.read_text(encoding="utf-8")


def test_qti21_multiple_answers_add_up_to_full_marks() -> None:
    # 10 points over 3 correct choices: each maps to 10/3 as Python prints it (3.3333333333333335);
    # 10 × (1/3) prints 3.333333333333333, and three of those add up to less than 10.
    bank = parse_bank(
        """
bank: thirds
title: Thirds
questions:
  - id: mc-three
    type: multiple_choice
    multiple: true
    points: 10
    prompt: Which are encoders?
    choices: [{text: BERT, correct: true}, {text: RoBERTa, correct: true},
              {text: ELECTRA, correct: true}, {text: GPT-2}]
"""
    )
    item = _valid21(_zip(bank, "qti21").read("items/mc-three.xml"))
    # An LMS may add the mapped values as decimals, as written.
    values = [Decimal(e.get("mappedValue")) for e in item.iter(f"{Q21}mapEntry")]
    assert values[3] < 0
    assert sum(values[:3]) >= 10


def test_the_schemas_are_inside_the_project() -> None:
    # A fresh clone has nothing beside it: no test, script or build file may look outside.
    root = Path(__file__).resolve().parents[1]
    places = [*root.glob("tests/*.py"), *root.glob("scripts/**/*.sh"), root / "Makefile"]
    places += [p for p in (root / ".ci").glob("*") if p.is_file()]
    outside = ("lms" + "-schemas", ".." + "/shared")  # spelled apart so this file passes too
    for place in places:
        text = place.read_text(encoding="utf-8")
        assert not any(word in text for word in outside), place
    for name in ("qti12/ims_qtiasiv1p2p1.dtd", "qti21/qtiv2p1/imsqti_v2p1.xsd", "README.md"):
        assert (root / "quizgym" / "export" / "schemas" / name).is_file(), name
