"""Each export scores in its LMS exactly as quizgym scores, by the LMS's own rules and tools.

For every numeric blank of the bundled bank and of test banks of other fields (every tolerance
policy, parts, variants, partial-credit mistakes) and for realistic typed answers (the key at
3-6 figures, near misses, the edges, each known mistake, the sign slip), the LMS's score must
equal ``grade_response``'s, except where the LMS cannot see what quizgym reads (how a number is
typed: 2.3 vs 2.30) or cannot express it (Canvas: no partial credit, answers rounded to 4
places). The LMS side is independent of quizgym's writer and of its ``--check`` emulator:

- Canvas: Canvas's converter QTIMigrationTool, run for real, then ``lms_rules`` (Canvas's Ruby
  re-stated) on its output, after JavaScript's own ``toFixed(4)`` in node;
- GIFT: gift-pegjs parses the file, then Moodle's numerical rules (``lms_rules``);
- Moodle XML: lxml and the test's own Cloze reader, then the same rules;
- QTI 2.1: Citolab's QTI player (``@citolab/qti-components``) scores each answer in headless
  Chromium, after ``@citolab/qti-convert`` turns the item into the QTI 3 it runs.

Then ``quizgym export --check``'s emulator must report exactly the differences found here.
"""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import CHROMIUM_ARGS, require_module, require_tool
from export_checkers import DATA, SPECIAL, parse_gift, strip_namespaces
from lms_rules import (
    canvas_answers,
    canvas_correct,
    canvas_submitted,
    gift_numerical,
    moodle_fraction,
    moodle_stored,
    run_converter,
)
from lxml import etree
from test_export_moodle import cloze_blanks

from quizgym.accept import CANVAS, FINE, typed_text
from quizgym.answers import grade_response
from quizgym.export import exporter
from quizgym.export.plan import Blank, Item, plan, split_parts
from quizgym.export.qti21 import ncname
from quizgym.export.scoring import Probe, check_export, probes, read_canvas
from quizgym.loader import load_bank
from quizgym.solver import CompiledBank, compiled

pytestmark = pytest.mark.slow

PHYSICS = DATA / "export" / "physics-stats.yaml"
BEFORE = DATA / "export" / "canvas-before-issue-15"
JS = Path(__file__).resolve().parent / "js"
CASES = [("bert-mlm", 0, 0), (str(PHYSICS), 0, 0), (str(PHYSICS), 3, 2), (str(SPECIAL), 2, 1)]
IDS = ["bert-mlm", "physics-stats", "physics-stats-variants", "special-chars-variants"]


MIGRATION_TOOL = Path(__file__).resolve().parent / "vendor" / "qti-migration-tool"
"""Canvas's QTIMigrationTool, carried with the tests (BSD: see ``tests/vendor/README.md``)."""


def migration_tool() -> Path:
    """Canvas's QTIMigrationTool: ``$QUIZGYM_QTI_MIGRATION_TOOL`` (another checkout) or the copy
    carried with the tests; never fetched, so it runs on every machine, offline."""
    where = os.environ.get("QUIZGYM_QTI_MIGRATION_TOOL")
    tool = Path(where) if where else MIGRATION_TOOL
    if not (tool / "migrate.py").is_file():
        pytest.fail(f"Canvas's QTIMigrationTool is not in {tool}: no migrate.py")
    require_module("lxml")
    return tool


@dataclass(frozen=True)
class Case:
    """One numeric blank of one exported item."""

    name: str
    """The blank as the report names it (``item`` or ``item.part``)."""
    ident: str
    """The item as the format names it."""
    index: int
    """The blank's place in that item."""
    item: Item
    slot: Blank


def cases(book: CompiledBank, fmt: str, variants: int, seed: int) -> Iterator[Case]:
    split = fmt in {"qti12", "gift"}
    for pool in plan(book, variants=variants, seed=seed):
        for whole in pool.items:
            if not whole.slots:
                continue
            if split:
                for piece in split_parts(whole):
                    yield Case(piece.ident, piece.ident, 0, whole, piece.slots[0])
                continue
            ident = ncname(whole.ident) if fmt == "qti21" else whole.ident
            for index, slot in enumerate(whole.slots):
                name = f"{whole.ident}.{slot.part}" if slot.part else whole.ident
                yield Case(name, ident, index, whole, slot)


def engine(book: CompiledBank, case: Case, text: str) -> float:
    verdict = grade_response(book, case.item.question, text, part=case.slot.part,
                             variant=case.item.variant)  # fmt: skip
    return verdict.score / verdict.max_score


@dataclass(frozen=True)
class Difference:
    name: str
    text: str
    severe: bool


def compare(
    book: CompiledBank,
    fmt: str,
    tried: list[tuple[Case, Probe, float, str | None]],
) -> set[Difference]:
    """The differences between the LMS's scores (credit, and the number it scored) and the
    engine's, each judged: only what the LMS cannot see or express may differ."""
    out = set()
    for case, probe, lms, seen in tried:
        ours = engine(book, case, probe.text)
        if math.isclose(ours, lms, abs_tol=1e-9):
            continue
        number = float(probe.text)
        plain = typed_text(_dec(probe.text))  # the number typed the plain way (2.30, 10.5)
        if 0 < ours < 1 and lms == 0 and fmt == "qti12":
            severe = False  # Canvas has no partial credit for a numerical answer
        elif plain != probe.text and math.isclose(engine(book, case, plain), lms, abs_tol=1e-9):
            severe = False  # the LMS sees the number, quizgym also reads how it was typed
        elif fmt == "qti12" and probe.edge and seen is not None and float(seen) != number:
            severe = False  # Canvas rounded a 6-figure answer to 4 places
        else:
            severe = True
        out.add(Difference(case.name, probe.text, severe))
    return out


def _dec(text: str) -> Any:
    from decimal import Decimal

    return Decimal(text)


def reported(
    book: CompiledBank, fmt: str, data: bytes, variants: int, seed: int
) -> set[Difference]:
    """What ``export --check``'s own emulator reports, in the same terms."""
    report = check_export(book, fmt=fmt, data=data, variants=variants, seed=seed)
    return {
        Difference(blank.ident, finding.text.split(" ")[0], finding.severe)
        for blank in report.blanks
        for finding in blank.findings
        if finding.kind != "feedback"
    }


# --- Canvas ---------------------------------------------------------------------------------


def canvas_scores(
    book: CompiledBank, data: bytes, tmp_path: Path, variants: int, seed: int
) -> list[tuple[Case, Probe, float, str | None]]:
    package = tmp_path / "qti12"
    zipfile.ZipFile(io.BytesIO(data)).extractall(package)
    converted = run_converter(migration_tool(), package, tmp_path / "converted")
    all_cases = list(cases(book, "qti12", variants, seed))
    tried = [(case, probe) for case in all_cases for probe in probes(case.slot, grid=CANVAS)]
    submitted = canvas_submitted(sorted({p.text for _, p in tried}))
    out = []
    for case, probe in tried:
        answers = canvas_answers(converted[case.ident])
        sent = submitted[probe.text]
        lms = 1.0 if canvas_correct(answers, sent) else 0.0
        out.append((case, probe, lms, sent or None))
    return out


@pytest.mark.parametrize(("source", "variants", "seed"), CASES, ids=IDS)
def test_canvas_scores_as_quizgym(source: str, variants: int, seed: int, tmp_path: Path) -> None:
    book = compiled(load_bank(source))
    data = exporter("qti12", book, variants=variants, seed=seed).to_bytes()
    tried = canvas_scores(book, data, tmp_path, variants, seed)
    found = compare(book, "qti12", tried)
    # Only a key finer than Canvas's 4 places can be scored wrong: where no 4-decimal number
    # but one lies in what quizgym accepts (ln(100/99) = 0.01005 of the bundled bank).
    for difference in (d for d in found if d.severe):
        case = next(c for c, *_ in tried if c.name == difference.name)
        widest = max(run.high - run.low for run in case.slot.runs)
        assert widest < CANVAS.step(0) * 2, (difference, case.slot.runs)
    assert reported(book, "qti12", data, variants, seed) == found
    assert len(tried) > 100


def test_canvas_imports_only_what_the_engine_accepts(tmp_path: Path) -> None:
    # The converter's output, read by Canvas's rules, holds exactly the library's ranges: no
    # exact answer, no mistake, no precision answer.
    book = compiled(load_bank("bert-mlm"))
    data = exporter("qti12", book).to_bytes()
    package = tmp_path / "qti12"
    zipfile.ZipFile(io.BytesIO(data)).extractall(package)
    converted = run_converter(migration_tool(), package, tmp_path / "converted")
    ours = read_canvas(data)
    assert set(ours) <= set(converted)
    for ident, (answers,) in ours.items():
        theirs = canvas_answers(converted[ident])
        assert {a.numerical_answer_type for a in theirs} <= {"range_answer"}, ident
        assert [(repr(a.start), repr(a.end)) for a in theirs] == [
            (repr(float(a.start)), repr(float(a.end))) for a in answers
        ], ident
    two = canvas_answers(converted["num-mlm-two"])
    assert [(a.start, a.end) for a in two] == [(2.3003, 2.3048), (2.3, 2.3)]


def test_canvas_before_this_fix_gave_wrong_answers_full_credit(tmp_path: Path) -> None:
    # Regression: two items of the QTI 1.2 export as it was before issue 15, through Canvas's
    # converter and rules: every mistake's range became a full-credit answer, and the key's
    # varequal-or became an exact answer with a margin taken from the upper bound.
    converted = run_converter(migration_tool(), BEFORE, tmp_path / "converted")
    two = canvas_answers(converted["num-mlm-two"])
    assert len(two) == 5 and {a.weight for a in two} == {100}
    assert two[0].numerical_answer_type == "exact_answer"
    submitted = canvas_submitted(["1.00", "-2.30", "1.15", "3.32", "2.30", "2.302"])
    assert canvas_correct(two, submitted["1.00"])  # log base 10 for ln 10: full credit
    assert canvas_correct(two, submitted["-2.30"])  # the sign slip: full credit
    assert canvas_correct(two, submitted["1.15"])  # the mean (worth 50 % in quizgym): full
    assert not canvas_correct(two, submitted["2.30"])  # ln 10 to 3 figures: refused
    assert canvas_correct(two, submitted["2.302"])
    book = compiled(load_bank("bert-mlm"))
    question = book.bank.question("num-mlm-two")
    assert grade_response(book, question, "1.00").score == 0
    assert grade_response(book, question, "2.30").is_correct
    uniform = canvas_answers(converted["num-uniform-baseline"])
    wrong = canvas_submitted(["4.48", "-10.3"])
    assert canvas_correct(uniform, wrong["4.48"]) and canvas_correct(uniform, wrong["-10.3"])
    # And the library's check, fed the old package, reports those as differences.
    old = io.BytesIO()
    with zipfile.ZipFile(old, "w") as archive:
        for path in sorted(BEFORE.rglob("*.xml")):
            archive.write(path, path.relative_to(BEFORE).as_posix())
    report = check_export(book, fmt="qti12", data=old.getvalue())
    by_name = {b.ident: b for b in report.blanks}
    severe = [f.text for f in by_name["num-mlm-two"].findings if f.severe]
    assert any(t.startswith("1.00 ") for t in severe), severe
    assert any(t.startswith("2.30 ") for t in severe), severe
    assert report.failed


# --- Moodle XML and GIFT ------------------------------------------------------------------


def moodle_scores(
    book: CompiledBank, fmt: str, data: bytes, tmp_path: Path, variants: int, seed: int
) -> list[tuple[Case, Probe, float, str | None]]:
    answers: dict[str, list[list[Any]]] = {}
    if fmt == "gift":
        path = tmp_path / "bank.gift"
        path.write_bytes(data)
        for question in parse_gift(path):
            if question.get("type") == "Numerical":
                answers[question["id"]] = [gift_numerical(question["choices"])]
    else:
        for question in etree.fromstring(data).iter("question"):
            ident = question.findtext("idnumber")
            if question.get("type") == "numerical":
                answers[ident] = [
                    [
                        moodle_stored(
                            float(a.findtext("text")),
                            float(a.findtext("tolerance")),
                            float(a.get("fraction")) / 100,
                        )  # fmt: skip
                        for a in question.findall("answer")
                    ]
                ]
            elif question.get("type") == "cloze":
                answers[ident] = [
                    [moodle_stored(v, t, p / 100) for p, v, t, _ in blank]
                    for blank in cloze_blanks(question)
                ]
    out = []
    for case in cases(book, fmt, variants, seed):
        blank = answers[case.ident][case.index]
        for probe in probes(case.slot, grid=FINE):
            out.append((case, probe, moodle_fraction(blank, float(probe.text)), None))
    return out


@pytest.mark.parametrize("fmt", ["moodle", "gift"])
@pytest.mark.parametrize(("source", "variants", "seed"), CASES, ids=IDS)
def test_moodle_scores_as_quizgym(
    fmt: str, source: str, variants: int, seed: int, tmp_path: Path
) -> None:
    book = compiled(load_bank(source))
    data = exporter(fmt, book, variants=variants, seed=seed).to_bytes()
    tried = moodle_scores(book, fmt, data, tmp_path, variants, seed)
    found = compare(book, fmt, tried)
    assert not [d for d in found if d.severe]
    assert reported(book, fmt, data, variants, seed) == found
    # partial credit travels: some mistake is scored at its credit, as quizgym scores it
    partial = [lms for _, _, lms, _ in tried if 0 < lms < 1]
    assert partial or "special" in source


# --- QTI 2.1: Citolab's player in headless Chromium ----------------------------------------

PAGE = b"""<!doctype html><html><body><div id="item"></div><script type="module">
import * as qti from './qti-components.js'; window.qti = qti; window.ready = true;
</script></body></html>"""
SCORE = """async ([xml, trials]) => {
  const html = window.qti.qtiTransformItem().parse(xml).html();
  const box = document.getElementById('item');
  const scores = [];
  for (const [response, answer] of trials) {
    box.innerHTML = html;
    const item = box.querySelector('qti-assessment-item');
    await customElements.whenDefined('qti-assessment-item');
    await item.updateComplete;
    item.updateResponseVariable(response, answer);
    item.processResponse();
    scores.push(Number(item.getOutcome('SCORE').value));
  }
  return scores;
}"""


Scorer = Callable[[str, list[tuple[str, str]]], list[float]]


@pytest.fixture(scope="module")
def citolab() -> Iterator[Scorer]:
    """Citolab's player in one headless Chromium for the module (a few seconds to start)."""
    score = citolab_scorer()
    yield score
    score.close()  # type: ignore[attr-defined]


def citolab_scorer() -> Scorer:
    chromium = require_tool("chromium")
    require_module("playwright")
    bundle = JS / "node_modules" / "@citolab" / "qti-components" / "cdn" / "index.js"
    if not bundle.is_file():
        message = "@citolab/qti-components is not installed (scripts/setup.d/50-export.sh)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import Route, sync_playwright

    script = bundle.read_bytes()
    manager = sync_playwright().start()
    browser = manager.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
    page = browser.new_page()

    def serve(route: Route) -> None:
        if route.request.url.endswith("qti-components.js"):
            route.fulfill(body=script, content_type="text/javascript")
        else:
            route.fulfill(body=PAGE, content_type="text/html")

    page.route("http://qti.invalid/**", serve)
    page.goto("http://qti.invalid/index.html")
    page.wait_for_function("window.ready === true")

    def score(xml: str, trials: list[tuple[str, str]]) -> list[float]:
        return [float(s) for s in page.evaluate(SCORE, [xml, trials])]

    score.close = lambda: (browser.close(), manager.stop())  # type: ignore[attr-defined]
    return score


def qti3_items(data: bytes, tmp_path: Path) -> dict[str, str]:
    """Every item of the package as QTI 3, by Citolab's own converter (in node)."""
    node = require_tool("node")
    folder = tmp_path / "qti21"
    zipfile.ZipFile(io.BytesIO(data)).extractall(folder)
    files = sorted(str(p) for p in (folder / "items").glob("*.xml"))
    done = subprocess.run(
        [node, str(JS / "qti2to3.mjs"), *files], capture_output=True, text=True, check=False,
        cwd=JS,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    converted: dict[str, str] = json.loads(done.stdout)
    return {
        strip_namespaces(etree.fromstring(Path(f).read_bytes())).get("identifier"): xml
        for f, xml in converted.items()
    }


@pytest.mark.parametrize(("source", "variants", "seed"), CASES, ids=IDS)
def test_qti21_scores_as_quizgym_in_citolabs_player(
    source: str, variants: int, seed: int, tmp_path: Path, citolab: Scorer
) -> None:
    book = compiled(load_bank(source))
    data = exporter("qti21", book, variants=variants, seed=seed).to_bytes()
    items = qti3_items(data, tmp_path)
    score = citolab
    tried = []
    all_cases = list(cases(book, "qti21", variants, seed))
    for ident in sorted({c.ident for c in all_cases}):
        mine = [c for c in all_cases if c.ident == ident]
        trials = []
        for case in mine:
            response = f"RESPONSE_{case.slot.part}" if len(mine) > 1 or case.slot.part else (
                "RESPONSE")  # fmt: skip
            trials += [(case, p, response) for p in probes(case.slot, grid=FINE)]
        scores = score(items[ident], [(r, p.text) for _, p, r in trials])
        tried += [
            (case, probe, points / case.slot.points, None)
            for (case, probe, _), points in zip(trials, scores, strict=True)
        ]
    found = compare(book, "qti21", tried)
    assert not [d for d in found if d.severe]
    assert reported(book, "qti21", data, variants, seed) == found
    assert len(tried) > 100


def test_citolabs_player_refuses_the_old_tolerance_mode(tmp_path: Path, citolab: Scorer) -> None:
    # Why QTI 2.1 numeric items now use gte/lte: Citolab's player does not apply an `equal`'s
    # toleranceMode (its QtiEqual answers false for any mode but exact, and the converted
    # `tolerance-mode` attribute does not even reach it): only the key typed in full scores.
    item = """<assessmentItem xmlns="http://www.imsglobal.org/xsd/imsqti_v2p1" identifier="eq"
      title="eq" adaptive="false" timeDependent="false">
      <responseDeclaration identifier="RESPONSE" cardinality="single" baseType="float">
        <correctResponse><value>2.302585092994046</value></correctResponse>
      </responseDeclaration>
      <outcomeDeclaration identifier="SCORE" cardinality="single" baseType="float">
        <defaultValue><value>0</value></defaultValue></outcomeDeclaration>
      <itemBody><p><textEntryInteraction responseIdentifier="RESPONSE"/></p></itemBody>
      <responseProcessing><responseCondition><responseIf>
        <equal toleranceMode="absolute" tolerance="0.0023 0.0023" includeLowerBound="true"
               includeUpperBound="true">
          <variable identifier="RESPONSE"/><correct identifier="RESPONSE"/></equal>
        <setOutcomeValue identifier="SCORE"><baseValue baseType="float">1</baseValue>
        </setOutcomeValue></responseIf></responseCondition></responseProcessing>
    </assessmentItem>"""
    package = io.BytesIO()
    with zipfile.ZipFile(package, "w") as archive:
        archive.writestr("items/eq.xml", item)
    xml = qti3_items(package.getvalue(), tmp_path)["eq"]
    trials = [("RESPONSE", "2.302585092994046"), ("RESPONSE", "2.30"), ("RESPONSE", "2.3026")]
    assert citolab(xml, trials) == [1, 0, 0]
