"""The cloze type's exports, on a chemistry bank: each read back by the parser or converter the
export tests already use (lxml, the QTI DTD and XSD, Canvas's QTIMigrationTool, the anki
package), each LMS's scoring re-stated here and held to quizgym's on probe answers, and every
blank an LMS scores otherwise named by the export."""

from __future__ import annotations

import io
import re
import unicodedata
import zipfile
from pathlib import Path
from typing import Any

import pytest
from export_checkers import qti12_dtd, strip_namespaces, strip_tags
from lxml import etree

from quizgym.answers import grade_response
from quizgym.errors import ExportError
from quizgym.export import exporter
from quizgym.loader import load_bank
from quizgym.solver import CompiledBank, compile_bank

BANK = """
bank: chem-cloze
title: Solutions
questions:
  - id: water
    type: cloze
    prompt: >-
      The molar mass of water is {{mass}}; the pH of 0.01 M HCl is {{ph}}. Its bonds are
      {{bond}}, and the gas given off at the cathode is {{gas}}.
    explanation: Two hydrogens and one oxygen.
    blanks:
      mass: {answer: 2*1.008 + 15.999, units: g/mol, tolerance: {rel: 0.01}, points: 2}
      ph: {answer: -log10(0.01), tolerance: {abs: 0.05}}
      bond: {choices: [ionic, polar covalent, metallic], answer: polar covalent}
      gas: {accept: [hydrogen, H2, hydrogen gas], feedback: Water is reduced to hydrogen.}
  - id: kinds
    type: cloze
    prompt: "NaCl is {{nacl}} and HCl is a {{hcl}} acid."
    blanks:
      nacl: {choices: [ionic, covalent], answer: ionic, feedback: a metal and a non-metal}
      hcl: {choices: [weak, strong], answer: strong}
"""

PROBES: dict[str, list[str]] = {
    "mass": ["18", "18.015", "18.01", "18.0", "18.1", "17.5", "16", "18 g/mol", "eighteen", ""],
    "ph": ["2", "2.0", "2.04", "1.9", "12", "-2"],
    "bond": ["polar covalent", "Polar Covalent", "ionic", "metallic", "B", "polar  covalent"],
    "gas": ["hydrogen", "Hydrogen", " H2 ", "hydrogen gas", "hydrogen   gas", "hydrogn", "oxygen"],
    "nacl": ["ionic", "covalent"],
    "hcl": ["weak", "strong"],
}


@pytest.fixture
def book(tmp_path: Path) -> CompiledBank:
    path = tmp_path / "chem.yaml"
    path.write_text(BANK, encoding="utf-8")
    return compile_bank(load_bank(path))


def _ours(book: CompiledBank, qid: str, blank: str, text: str) -> float:
    verdict = grade_response(book, book.bank.question(qid), text, part=blank)
    return verdict.score / verdict.max_score


# --- Moodle ---------------------------------------------------------------------------------

# qtype_multianswer's subquestion syntax, re-stated: {weight:TYPE:alternatives}, alternatives
# split at unescaped ~, each =answer or %fraction%answer, then #feedback.
SUBQUESTION = re.compile(
    r"\{(\d+):(NUMERICAL|NM|MULTICHOICE|MC|SHORTANSWER|SA|MW|SHORTANSWER_C|SAC|MWC):"
    r"((?:[^}\\]|\\.)*)\}"
)


def _alternatives(body: str) -> list[tuple[float, str]]:
    out = []
    for text in re.split(r"(?<!\\)~", body):
        text = re.split(r"(?<!\\)#", text)[0]
        if text.startswith("="):
            fraction, text = 1.0, text[1:]
        else:
            found = re.match(r"%(-?[\d.]+)%", text)
            fraction = float(found[1]) / 100 if found else 0.0
            text = text[found.end() :] if found else text
        out.append((fraction, re.sub(r"\\(.)", r"\1", text)))
    return out


def _moodle(kind: str, alternatives: list[tuple[float, str]], typed: str) -> float:
    """Moodle's fraction for a typed answer to one subquestion: NUMERICAL the first answer
    within value:tolerance of the number typed (the number alone, as its answer processor
    reads a bare number); MULTICHOICE the option picked (by its text); SHORTANSWER the first
    answer equal, after trim and NFC, case-insensitively unless _C (``*`` matches anything)."""
    if kind in {"NUMERICAL", "NM"}:
        try:
            value = float(typed.strip())
        except ValueError:
            return 0.0
        for fraction, text in alternatives:
            number, _, tolerance = text.partition(":")
            if abs(value - float(number)) <= float(tolerance or 0) * (1 + 1e-14) + 1e-14:
                return fraction
        return 0.0
    if kind in {"MULTICHOICE", "MC"}:
        return next((f for f, text in alternatives if text == typed), 0.0)
    case = kind in {"SHORTANSWER_C", "SAC", "MWC"}
    response = unicodedata.normalize("NFC", typed.strip())
    for fraction, text in alternatives:
        pattern = ".*".join(re.escape(p) for p in text.split("*"))
        if re.fullmatch(pattern, response, 0 if case else re.IGNORECASE):
            return fraction
    return 0.0


def test_moodle_embedded_answers_score_every_probe_as_quizgym_does(book: CompiledBank) -> None:
    export = exporter("moodle", book)
    root = etree.fromstring(export.to_bytes())
    questions = {q.findtext("idnumber"): q for q in root.iter("question")}
    water = questions["water"]
    assert water.get("type") == "cloze"
    text = strip_tags(water.findtext("questiontext/text") or "")
    found = SUBQUESTION.findall(text)
    assert [(w, k) for w, k, _ in found] == [
        ("2", "NUMERICAL"),
        ("1", "NUMERICAL"),
        ("1", "MULTICHOICE"),
        ("1", "SHORTANSWER"),
    ]
    assert text.startswith("The molar mass of water is {2:NUMERICAL:")
    names = ["mass", "ph", "bond", "gas"]
    warned = "\n".join(export.warnings)
    differs = set()
    for name, (_, kind, body) in zip(names, found, strict=True):
        alternatives = _alternatives(body)
        for typed in PROBES[name]:
            if kind == "MULTICHOICE" and typed not in {t for _, t in alternatives}:
                continue  # a dropdown: only its options can be picked
            ours, theirs = _ours(book, "water", name, typed), _moodle(kind, alternatives, typed)
            if ours != pytest.approx(theirs):
                differs.add((name, typed))
    # The only differences are those the export names: a unit typed, runs of spaces folded.
    assert differs == {("mass", "18 g/mol"), ("gas", "hydrogen   gas")}
    assert "water.mass: a Cloze NUMERICAL blank has no unit" in warned
    assert "water.gas: Moodle compares a word as typed" in warned
    kinds = SUBQUESTION.findall(strip_tags(questions["kinds"].findtext("questiontext/text") or ""))
    assert [_alternatives(b) for _, _, b in kinds] == [
        [(1.0, "ionic"), (0.0, "covalent")],
        [(0.0, "weak"), (1.0, "strong")],
    ]


def test_moodle_check_scores_the_number_blanks_and_passes(book: CompiledBank) -> None:
    from quizgym.export.scoring import check_export

    data = exporter("moodle", book).to_bytes()
    report = check_export(book, fmt="moodle", data=data)
    assert [b.ident for b in report.blanks] == ["water.mass", "water.ph"]
    assert not report.failed
    assert all(b.probes == b.agreed for b in report.blanks)


# --- Canvas (QTI 1.2, through Canvas's QTIMigrationTool) ------------------------------------


def _converted(book: CompiledBank, tmp_path: Path) -> tuple[dict[str, Any], list[str]]:
    from lms_rules import run_converter
    from test_export_scoring import migration_tool

    export = exporter("qti12", book)
    data = export.to_bytes()
    package = zipfile.ZipFile(io.BytesIO(data))
    (name,) = [n for n in package.namelist() if n.endswith(".xml") and "/" in n and "meta" not in n]
    dtd = qti12_dtd()
    doc = strip_namespaces(etree.fromstring(package.read(name)))
    assert dtd.validate(doc), dtd.error_log  # type: ignore[attr-defined]
    folder = tmp_path / "qti12"
    package.extractall(folder)
    items = run_converter(migration_tool(), folder, tmp_path / "converted")
    return {k: etree.fromstring(v) for k, v in items.items()}, export.warnings


def _canvas_question(item: Any) -> tuple[str, float, dict[str, dict[str, str]], set[str]]:
    """What Canvas's importer keeps of a converted blanks item: its type, points, each blank's
    answers (id → text, from its choiceInteraction) and the answer ids that score."""
    ns = {"q": "http://www.imsglobal.org/xsd/imsqti_v2p1"}
    fields = {f.get("name"): f.get("value") for f in item.iterfind(".//q:instructureField", ns)}
    blanks = {
        c.get("responseIdentifier").removeprefix("response_"): {
            s.get("identifier"): "".join(s.itertext()).strip()
            for s in c.iterfind("q:simpleChoice", ns)
        }
        for c in item.iterfind(".//q:choiceInteraction", ns)
    }
    scoring = {
        v.text
        for cond in item.iterfind(".//q:responseIf", ns)
        if (v := cond.find("q:match/q:baseValue", ns)) is not None
        and cond.find(".//q:sum", ns) is not None
    }
    return str(fields["question_type"]), float(fields["points_possible"]), blanks, scoring


def _canvas_blank(kind: str, answers: dict[str, str], scoring: set[str], typed: str) -> float:
    """Canvas's credit for one blank (``FillInMultipleBlanksQuestion``: an answer of the blank
    equal to the response after strip and downcase; ``MultipleDropdownsQuestion``: the option
    picked is a scoring one)."""
    if kind == "multiple_dropdowns_question":
        picked = [i for i, text in answers.items() if text == typed]
        return 1.0 if picked and picked[0] in scoring else 0.0
    return 1.0 if any(t.strip().lower() == typed.strip().lower() for t in answers.values()) else 0.0


def test_canvas_converts_the_qti12_export_and_scores_every_probe_as_quizgym_or_as_warned(
    book: CompiledBank, tmp_path: Path
) -> None:
    items, warnings = _converted(book, tmp_path)
    kind, points, blanks, scoring = _canvas_question(items["water"])
    assert (kind, points) == ("fill_in_multiple_blanks_question", 5.0)
    assert sorted(blanks) == ["bond", "gas", "mass", "ph"]
    warned = {w.split(":")[1].strip() for w in warnings}
    differs = set()
    for name in ("mass", "ph", "bond", "gas"):
        for typed in PROBES[name]:
            ours = _ours(book, "water", name, typed)
            theirs = _canvas_blank(kind, blanks[name], scoring, typed)
            if ours != theirs:
                differs.add((name, typed))
    # Each difference is in a blank the export warned of (text compared, not numbers).
    assert {name for name, _ in differs} <= {n.removeprefix("water.") for n in warned}
    assert ("mass", "18.0") in differs and ("ph", "2.0") in differs
    assert ("mass", "18.015") not in differs and ("gas", " H2 ") not in differs
    assert "water: Canvas weighs every blank alike; quizgym gives them 1, 2 points" in "\n".join(
        w.removeprefix("warning: ") for w in warnings
    )


def test_an_all_dropdown_cloze_is_canvas_multiple_dropdowns_scored_exactly(
    book: CompiledBank, tmp_path: Path
) -> None:
    import itertools

    items, warnings = _converted(book, tmp_path)
    kind, points, blanks, scoring = _canvas_question(items["kinds"])
    assert kind == "multiple_dropdowns_question"
    assert not [w for w in warnings if "kinds" in w]
    question = book.bank.question("kinds")
    for nacl, hcl in itertools.product(PROBES["nacl"], PROBES["hcl"]):
        picks = {"nacl": nacl, "hcl": hcl}
        canvas = (
            points
            * sum(_canvas_blank(kind, blanks[n], scoring, t) for n, t in picks.items())
            / len(picks)
        )
        ours = sum(grade_response(book, question, t, part=n).score for n, t in picks.items())
        assert canvas == pytest.approx(ours), picks


def test_export_check_names_each_blank_canvas_scores_otherwise(
    book: CompiledBank, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from quizgym.cli import cli

    path = tmp_path / "chem.yaml"
    path.write_text(BANK, encoding="utf-8")
    run = CliRunner().invoke(
        cli, ["export", str(path), "--to", "qti12", "-o", str(tmp_path / "c.zip"), "--check"]
    )
    assert run.exit_code == 0, run.output
    lines = run.output.splitlines()
    assert any(
        line.startswith("warning: water.mass: Canvas compares the text typed: it accepts only")
        and "17.8349 to 18.1951, in g/mol" in line
        for line in lines
    ), lines
    assert any(line.startswith("warning: water.bond: Canvas has no dropdown") for line in lines)
    assert any(line.startswith("warning: water.gas: Canvas compares a word") for line in lines)


def test_gift_refuses_a_cloze_with_the_reason(book: CompiledBank) -> None:
    with pytest.raises(ExportError, match="water: .*GIFT"):
        exporter("gift", book).to_bytes()


# --- QTI 2.1 --------------------------------------------------------------------------------


def _qti21_blank(doc: Any, name: str, typed: str) -> float:
    """The QTI 2.1 rules for one blank's response, re-stated: a float response read as a
    number within a responseIf's gte/lte bounds adds that branch's score; an identifier one
    its correctResponse; a string one its mapping's mapped value for an equal key (with the
    key's caseSensitive), over the blank's points."""
    ns = {"q": "http://www.imsglobal.org/xsd/imsqti_v2p1"}
    response = f"RESPONSE_{name}"
    (declaration,) = doc.xpath(f"//q:responseDeclaration[@identifier='{response}']", namespaces=ns)
    base = declaration.get("baseType")
    points = float(
        doc.xpath("//q:outcomeDeclaration[@identifier='MAXSCORE']//q:value", namespaces=ns)[0].text
    )
    if base == "float":
        try:
            value = float(typed.strip())
        except ValueError:
            return 0.0
        for branch in doc.xpath(
            f"//q:responseIf[.//q:variable[@identifier='{response}']]", namespaces=ns
        ):
            low = float(branch.xpath(".//q:gte/q:baseValue", namespaces=ns)[0].text)
            high = float(branch.xpath(".//q:lte/q:baseValue", namespaces=ns)[0].text)
            added = float(branch.xpath(".//q:sum/q:baseValue", namespaces=ns)[0].text)
            if low <= value <= high:
                return added
        return 0.0
    if base == "identifier":
        (interaction,) = doc.xpath(
            f"//q:inlineChoiceInteraction[@responseIdentifier='{response}']", namespaces=ns
        )
        picked = [c.get("identifier") for c in interaction if c.text == typed]
        right = declaration.xpath(".//q:correctResponse/q:value", namespaces=ns)[0].text
        branch = doc.xpath(
            f"//q:responseIf[q:match/q:variable[@identifier='{response}']]", namespaces=ns
        )[0]
        added = float(branch.xpath(".//q:sum/q:baseValue", namespaces=ns)[0].text)
        return added if picked and picked[0] == right else 0.0
    for entry in declaration.xpath(".//q:mapEntry", namespaces=ns):
        key, case = entry.get("mapKey"), entry.get("caseSensitive") == "true"
        if (typed == key) if case else (typed.lower() == key.lower()):
            return float(entry.get("mappedValue"))
    assert points > 0
    return 0.0


def test_qti21_is_valid_and_scores_every_probe_as_quizgym_or_as_warned(
    book: CompiledBank,
) -> None:
    from export_checkers import qti21_schema

    export = exporter("qti21", book)
    package = zipfile.ZipFile(io.BytesIO(export.to_bytes()))
    doc = etree.fromstring(package.read("items/water.xml"))
    schema = qti21_schema()
    assert schema.validate(doc), schema.error_log  # type: ignore[attr-defined]
    ns = {"q": "http://www.imsglobal.org/xsd/imsqti_v2p1"}
    (paragraph,) = doc.xpath("//q:itemBody/q:p", namespaces=ns)
    inline = [etree.QName(e).localname for e in paragraph]
    assert inline == [
        "textEntryInteraction",
        "textEntryInteraction",
        "inlineChoiceInteraction",
        "textEntryInteraction",
    ]
    assert paragraph.text == "The molar mass of water is "
    differs = set()
    for name in ("mass", "ph", "bond", "gas"):
        points = book.slot(f"water.{name}").points
        for typed in PROBES[name]:
            if name == "bond" and typed not in ("polar covalent", "ionic", "metallic"):
                continue  # a dropdown: only its options can be picked
            ours = _ours(book, "water", name, typed) * points
            if ours != pytest.approx(_qti21_blank(doc, name, typed)):
                differs.add((name, typed))
    assert differs == {("mass", "18 g/mol"), ("gas", " H2 "), ("gas", "hydrogen   gas")}
    warned = "\n".join(export.warnings)
    assert "water.mass: a QTI 2.1 float response holds a number alone" in warned
    assert "water.gas: QTI 2.1 matches a word exactly as typed" in warned


# --- Blackboard -------------------------------------------------------------------------------


def test_blackboard_writes_fib_plus_with_what_each_blank_accepts(book: CompiledBank) -> None:
    export = exporter("blackboard", book)
    rows = [line.split("\t") for line in export.to_bytes().decode().splitlines()]
    water = rows[0]
    assert water[0] == "FIB_PLUS"
    assert "The molar mass of water is [mass]; the pH" in water[1]
    assert "[bond] (ionic / polar covalent / metallic)" in water[1]
    blanks: dict[str, list[str]] = {}
    fields = water[2:]
    while fields:
        name, *rest = fields
        end = rest.index("") if "" in rest else len(rest)
        blanks[name] = rest[:end]
        fields = rest[end + 1 :]
    assert blanks["gas"] == ["hydrogen", "H2", "hydrogen gas"]
    assert blanks["bond"] == ["polar covalent"]
    assert blanks["ph"] == ["2"]
    for text in blanks["mass"]:  # every text it accepts, quizgym accepts
        assert _ours(book, "water", "mass", text) == 1.0
    warned = "\n".join(export.warnings)
    assert "water.mass: Blackboard compares the text typed" in warned
    assert "water: Blackboard weighs every blank alike" in warned


# --- Anki -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_anki_imports_a_cloze_note_with_a_card_per_blank(
    book: CompiledBank, tmp_path: Path
) -> None:
    from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest

    path = exporter("anki", book).save(tmp_path / "chem.apkg")
    collection = Collection(str(tmp_path / "collection.anki2"))
    try:
        request = ImportAnkiPackageRequest(
            package_path=str(path), options=ImportAnkiPackageOptions(with_scheduling=False)
        )
        collection.import_anki_package(request)
        notes = [collection.get_note(n) for n in collection.find_notes("")]
        (note,) = [n for n in notes if n["QID"] == "water"]
        assert note.note_type()["type"] == 1  # Anki's cloze kind of note type
        text = note["Text"]
        assert "{{c1::18.015 g/mol::g/mol}}" in text
        assert "{{c3::polar covalent::ionic / polar covalent / metallic}}" in text
        assert "{{c4::hydrogen}}" in text
        assert "(4) also: H2, hydrogen gas" in note["Back Extra"]
        cards = note.cards()
        assert len(cards) == 4  # one card per blank
        question = strip_tags(cards[0].question())
        assert "[g/mol]" in question and "18.015" not in question
        assert "18.015 g/mol" in strip_tags(cards[0].answer())
    finally:
        collection.close()
