"""One rich bank in every output: goldens, the consumers' own parsers, the image in every package.

``tests/data/rich/rich.yaml`` has a table, inline and display formulas with placeholders, an
image beside the bank, emphasis, lists and code spans. Each output is pinned as a golden and read
back by what reads it in real use: lxml and the official QTI/IMS CP schemas, gift-pegjs, the
``anki`` package's own importer, pdftotext, and the drill in a real pseudo-terminal.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import require_module, require_tool
from export_checkers import cp_schema, parse_gift, qti12_dtd, qti21_schema, strip_namespaces
from practice_helpers import run

from quizgym.cli import cli
from quizgym.export import exporter
from quizgym.loader import load_bank
from quizgym.render import Student, html_to_pdf, render_key, render_worksheet, select_questions

DATA = Path(__file__).parent / "data" / "rich"
RICH = DATA / "rich.yaml"
GOLDENS = Path(__file__).parent / "goldens" / "rich"
IMAGE = (DATA / "figures" / "histogram.png").read_bytes()
DATE = "2026-01-05"
STUDENTS = [Student("s001", "Row One"), Student("s002")]
MATHML = "http://www.w3.org/1998/Math/MathML"


def check_golden(name: str, text: str, update: bool) -> None:
    path = GOLDENS / name
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing; run pytest --update-goldens"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs; see --update-goldens"


def listing(package: zipfile.ZipFile) -> str:
    """A zip as text: each entry's text, or its size and hash when it is binary."""
    out = []
    for name in package.namelist():
        data = package.read(name)
        try:
            body = data.decode("utf-8")
        except UnicodeDecodeError:
            body = f"<{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()[:16]}>\n"
        out.append(f"==> {name} <==\n{body}")
    return "".join(out)


@pytest.fixture(scope="module")
def bank() -> Any:
    return load_bank(RICH)


# --- worksheets and keys --------------------------------------------------------------------------

DOCUMENTS = [
    ("worksheet-s001.html", "worksheet", "html"),
    ("worksheet-s001.md", "worksheet", "md"),
    ("key-class.html", "key", "html"),
    ("key-class.md", "key", "md"),
]


def _document(bank: Any, kind: str, fmt: str, *, for_pdf: bool = False) -> str:
    questions = select_questions(bank)
    if kind == "worksheet":
        return render_worksheet(
            bank, questions, fmt=fmt, student=STUDENTS[0], seed=7, date=DATE, for_pdf=for_pdf
        )
    return render_key(
        bank, questions, fmt=fmt, students=STUDENTS, seed=7, date=DATE, for_pdf=for_pdf
    )


@pytest.mark.parametrize(("name", "kind", "fmt"), DOCUMENTS)
def test_documents_match_goldens(
    bank: Any, name: str, kind: str, fmt: str, update_goldens: bool
) -> None:
    text = _document(bank, kind, fmt)
    check_golden(name, text, update_goldens)
    if fmt == "html":
        assert text.count("<math ") >= 4 and "<table>" in text and "<em>" in text
        assert f"data:image/png;base64,{base64.b64encode(IMAGE).decode()}" in text
        assert "<code>1.5 × IQR</code>" in text or kind == "key"
    else:
        assert "![A histogram of 40 marks" in text and "](<figures/histogram.png>)" in text
        assert "| student | mark |" in text and "$\\bar{x}" in text


def test_render_writes_the_image_beside_markdown(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["render", str(RICH), "--format", "md", "--format", "html", "-o", str(out), "--key"]
    )
    assert result.exit_code == 0, result.output
    assert (out / "figures" / "histogram.png").read_bytes() == IMAGE
    assert "(html, md)" in result.output  # the copy is not a document kind


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["worksheet", "key"])
def test_pdf_draws_formulas_embeds_the_image_and_keeps_the_text(
    bank: Any, kind: str, tmp_path: Path, update_goldens: bool
) -> None:
    require_module("weasyprint")
    pdftotext = require_tool("pdftotext")
    from pypdf import PdfReader

    pdf = html_to_pdf(_document(bank, kind, "html", for_pdf=True))
    reader = PdfReader(io.BytesIO(pdf))
    images = [image for page in reader.pages for image in page.images]
    assert any(image.data and len(image.data) > 100 for image in images)  # the histogram
    path = tmp_path / f"{kind}.pdf"
    path.write_bytes(pdf)
    text = subprocess.run(
        [pdftotext, "-layout", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout
    # The formula's characters are in the text layer, as the drill reads them.
    assert "x̄ = 1/n ∑ᵢ₌₁ⁿ xᵢ" in text
    # The worksheet fills in s001's number; the class key keeps it symbolic (students differ).
    assert "x₃ = c" in text if kind == "key" else re.search(r"x₃ = 1[013]\b", text)
    check_golden(f"{kind}.pdf.txt", re.sub(r"[ \t]+\n", "\n", text), update_goldens)


# --- the report ----------------------------------------------------------------------------------

CLASS = """\
student,num-mean-table,tf-histogram,mc-median,ste-variance,free-outlier,num-spread.range,num-spread.median
s01,12,false,"A, B",A,an outlier by the iqr rule,9,14
s02,12.5,true,A,B,unusual,9,14
s03,12,false,"A, B, C",A,no idea,8,12
s04,15,false,B,C,outlier beyond the interquartile range,9,14
"""


def test_report_shows_each_question_with_its_formulas_table_and_image(
    tmp_path: Path, update_goldens: bool
) -> None:
    answers = tmp_path / "class.csv"
    answers.write_text(CLASS, encoding="utf-8")
    out = tmp_path / "graded"
    result = CliRunner().invoke(
        cli, ["grade", str(RICH), str(answers), "-o", str(out), "--version", "default"]
    )
    assert result.exit_code == 0, result.output
    assert result.output == (
        # s03's "no idea" is no answer: a blank, not a review row
        f"graded 4 students (28 responses) → {out}/; 3 answers to review (3 in review.csv)\n"
    )
    report = (out / "report.html").read_text(encoding="utf-8")
    assert f"data:image/png;base64,{base64.b64encode(IMAGE).decode()}" in report
    assert report.count(f'<math xmlns="{MATHML}"') >= 5 and "<table><thead>" in report
    assert "<var>c</var>" in report  # a number that varied between students stays symbolic
    check_golden("report.html", report, update_goldens)


# --- the drill, in a real terminal ---------------------------------------------------------------

QUIZGYM = Path(sys.executable).with_name("quizgym")
SESSION = [
    ("Your answer in marks > ", "12.2"),  # the mean, for this student's c (in its unit)
    ("Enter: next", ""),
    ("True or false? (t/f) > ", "f"),
    ("Enter: next", ""),
    ("Your choices (e.g. A C) > ", "A B"),
    ("Enter: next", ""),
    ("Your choice > ", "A"),
    ("Enter: next", ""),
    ("Your answer (one line) > ", "it is an outlier by the iqr rule"),
    ("Your mark: ", ""),
    ("Enter: next", ""),
    ("range = > ", "9"),
    ("median = > ", "14"),
    ("Enter: next", "q"),
]


@pytest.mark.slow
def test_drill_screen_in_a_pty(tmp_path: Path, update_goldens: bool) -> None:
    import pexpect

    env = {
        **os.environ,
        "QUIZGYM_DB": str(tmp_path / "p.sqlite3"),
        "QUIZGYM_NOW": "2026-01-05T09:00:00+00:00",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "COLUMNS": "100",
    }
    # The pty's size decides the screen: a LINES the runner set (pytest-xdist's workers have
    # one) would make rich lay it out for another terminal.
    env.pop("LINES", None)
    child = pexpect.spawn(
        str(QUIZGYM),
        ["practice", str(RICH), "--seed", "1", "--new", "6"],
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 100),
    )
    screen = io.StringIO()
    child.logfile_read = screen
    try:
        for prompt, typed in SESSION:
            child.expect_exact(prompt)
            child.sendline(typed)
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    text = screen.getvalue().replace("\r\n", "\n")
    text = re.sub(r"[ \t]+\n", "\n", text)
    assert "│ │ C       │   11 │" in text.replace("\n", "") or "│ C       │   11 │" in text
    assert "x̄ = 1/n ∑ᵢ₌₁ⁿ xᵢ" in text and "x̄ = (50 + 11)/5" in text
    assert "[image: A histogram of 40 marks" in text
    assert "• at least half the values are ≤ m;" in text
    check_golden("drill.txt", text, update_goldens)


# --- every export format, read back by its own parser ---------------------------------------


def test_moodle_xml_packs_the_image_and_writes_tex(bank: Any, update_goldens: bool) -> None:
    from lxml import etree

    data = exporter("moodle", bank).to_bytes()
    check_golden("rich.moodle.xml", data.decode(), update_goldens)
    quiz = etree.fromstring(data)
    question = next(q for q in quiz.iter("question") if q.findtext("idnumber") == "tf-histogram")
    text = question.findtext("questiontext/text")
    assert '<img src="@@PLUGINFILE@@/figures/histogram.png" alt="A histogram' in text
    files = question.findall("questiontext/file")
    assert [(f.get("name"), f.get("path"), f.get("encoding")) for f in files] == [
        ("histogram.png", "/figures/", "base64")
    ]
    assert base64.b64decode(files[0].text) == IMAGE
    mean = next(q for q in quiz.iter("question") if q.findtext("idnumber") == "num-mean-table")
    stem = mean.findtext("questiontext/text")
    assert "\\(\\bar{x} = \\frac{1}{n}\\sum_{i=1}^{n} x_i\\)" in stem and "<table>" in stem
    feedback = mean.findtext("generalfeedback/text")
    assert "\\[\\bar{x} = \\frac{50 + 10}{5}\\]" in feedback


def test_gift_parses_and_carries_escaped_tex_and_the_image(
    bank: Any, tmp_path: Path, update_goldens: bool
) -> None:
    data = exporter("gift", bank).to_bytes()
    check_golden("rich.gift", data.decode(), update_goldens)
    assert "\\\\(\\\\bar\\{x\\} \\= \\\\frac\\{1\\}\\{n\\}" in data.decode()  # GIFT-escaped TeX
    path = tmp_path / "rich.gift"
    path.write_bytes(data)
    questions = {q["title"]: q for q in parse_gift(path) if q.get("type") != "Category"}
    stem = questions["tf-histogram"]["stem"]["text"]
    assert f'src="data:image/png;base64,{base64.b64encode(IMAGE).decode()}"' in stem
    assert "\\(\\bar{x} = \\frac{1}{n}" in questions["num-mean-table"]["stem"]["text"]


def test_qti12_is_valid_and_packs_the_image(bank: Any, update_goldens: bool) -> None:
    from lxml import etree

    package = zipfile.ZipFile(io.BytesIO(exporter("qti12", bank).to_bytes()))
    check_golden("rich.qti12.txt", listing(package), update_goldens)
    assert package.read("web_resources/figures/histogram.png") == IMAGE
    manifest = etree.fromstring(package.read("imsmanifest.xml"))
    hrefs = [f.get("href") for f in manifest.iter("{*}file")]
    assert "web_resources/figures/histogram.png" in hrefs
    assessment = package.read("quizgym-rich-stats/quizgym-rich-stats.xml")
    dtd = qti12_dtd()
    doc = strip_namespaces(etree.fromstring(assessment))
    assert dtd.validate(doc), dtd.error_log.filter_from_errors()  # type: ignore[attr-defined]
    text = assessment.decode()
    assert "$IMS-CC-FILEBASE$/figures/histogram.png" in text and "\\(\\bar{x}" in text


def test_qti21_is_valid_with_mathml_and_packs_the_image(bank: Any, update_goldens: bool) -> None:
    from lxml import etree

    package = zipfile.ZipFile(io.BytesIO(exporter("qti21", bank).to_bytes()))
    check_golden("rich.qti21.txt", listing(package), update_goldens)
    assert package.read("media/figures/histogram.png") == IMAGE
    manifest = etree.fromstring(package.read("imsmanifest.xml"))
    assert cp_schema().validate(manifest), cp_schema().error_log  # type: ignore[attr-defined]
    files = sorted(f.get("href") for f in manifest.iter("{*}file"))
    assert sorted(set(files)) == sorted(n for n in package.namelist() if n != "imsmanifest.xml")
    schema = qti21_schema()
    maths = 0
    for name in package.namelist():
        if name.startswith("items/") and name.endswith(".xml"):
            item = etree.fromstring(package.read(name))
            assert schema.validate(item), (name, schema.error_log)  # type: ignore[attr-defined]
            maths += len(item.findall(f".//{{{MATHML}}}math"))
    assert maths >= 8
    histogram = etree.fromstring(package.read("items/tf-histogram.xml"))
    image = histogram.find(".//{*}img")
    assert image is not None and image.get("src") == "../media/figures/histogram.png"


def test_anki_imports_the_image_and_mathjax(
    bank: Any, tmp_path: Path, update_goldens: bool
) -> None:
    require_module("anki")
    from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest

    path = exporter("anki", bank).save(tmp_path / "rich.apkg")
    package = zipfile.ZipFile(path)
    assert json.loads(package.read("media")) == {"0": "figures_histogram.png"}
    assert package.read("0") == IMAGE
    collection = Collection(str(tmp_path / "collection.anki2"))
    try:
        request = ImportAnkiPackageRequest(
            package_path=str(path), options=ImportAnkiPackageOptions(with_scheduling=False)
        )
        collection.import_anki_package(request)
        notes = {note["QID"]: note for note in map(collection.get_note, collection.find_notes(""))}
        media = Path(collection.media.dir()) / "figures_histogram.png"
        assert media.read_bytes() == IMAGE
        fields = {
            qid: {k: note[k] for k in ("Question", "Answer", "Explanation")}
            for qid, note in sorted(notes.items())
        }
    finally:
        collection.close()
    assert '<img src="figures_histogram.png"' in fields["tf-histogram"]["Question"]
    assert "\\(\\bar{x} = \\frac{1}{n}" in fields["num-mean-table"]["Question"]
    check_golden(
        "rich.anki.json", json.dumps(fields, indent=1, ensure_ascii=False) + "\n", update_goldens
    )


def test_blackboard_carries_the_image_inline(bank: Any, update_goldens: bool) -> None:
    data = exporter("blackboard", bank).to_bytes().decode()
    check_golden("rich.blackboard.txt", data, update_goldens)
    rows = [line.split("\t") for line in data.splitlines()]
    assert len(rows) == 7 and all("\n" not in cell for row in rows for cell in row)
    assert any(
        f"data:image/png;base64,{base64.b64encode(IMAGE).decode()}" in row[1] for row in rows
    )


# --- headless Chromium: formulas and tables drawn, nothing overflows -------------------------

LAYOUT_JS = """() => {
  const maths = [...document.querySelectorAll('math')];
  const fractions = [...document.querySelectorAll('mfrac')].map(f => {
    const [top, bottom] = [...f.children].map(c => c.getBoundingClientRect());
    return top.bottom <= bottom.top + 1;  // drawn stacked: the numerator above the denominator
  });
  const table = document.querySelector('.q table');
  return {
    maths: maths.length,
    drawn: maths.filter(m => {
      const r = m.getBoundingClientRect();
      return r.width > 4 && r.height > 4 && getComputedStyle(m).display.includes('math');
    }).length,
    fractions,
    rows: table ? table.querySelectorAll('tr').length : 0,
    tableWidth: table ? table.getBoundingClientRect().width : 0,
    image: (() => { const i = document.querySelector('.q img'); return i ? i.naturalWidth : 0; })(),
    text: document.body.innerText,
  };
}"""


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["worksheet", "key"])
def test_chromium_draws_the_formulas_and_the_table(bank: Any, kind: str, tmp_path: Path) -> None:
    chromium = require_tool("chromium")
    from PIL import Image
    from playwright.sync_api import sync_playwright
    from test_render_print import A4_PX, CHROMIUM_ARGS, OVERFLOW_JS

    page_file = tmp_path / f"{kind}.html"
    page_file.write_text(_document(bank, kind, "html"), encoding="utf-8")
    shot = tmp_path / f"{kind}.png"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": A4_PX[0], "height": A4_PX[1]})
            page.goto(page_file.as_uri())
            for media in ("screen", "print"):
                page.emulate_media(media=media)
                layout = page.evaluate(OVERFLOW_JS)
                assert layout["bad"] == [], (media, layout)
                assert layout["scroll"] <= layout["width"], (media, layout)
            page.emulate_media(media="screen")
            found = page.evaluate(LAYOUT_JS)
            page.screenshot(path=str(shot))
        finally:
            browser.close()
    assert found["maths"] >= 8 and found["drawn"] == found["maths"], found
    assert found["fractions"] and all(found["fractions"]), found["fractions"]
    assert found["rows"] == 6 and found["tableWidth"] > 50
    assert found["image"] == 240  # the histogram, decoded from its data: URI
    for tex in ("\\frac", "\\bar", "\\sum", "$"):
        assert tex not in found["text"], tex  # no raw TeX on the page
    image = Image.open(shot).convert("L")
    inked = sum(image.histogram()[:200]) / (A4_PX[0] * A4_PX[1])
    assert 0.02 < inked < 0.5, inked


# --- GitHub's own renderer reads the Markdown worksheets back -----------------------------------


def _cmark(text: str) -> str:
    cmark = require_tool("cmark-gfm")
    done = subprocess.run(
        [cmark, "-e", "table", "-e", "tasklist", "--unsafe"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.mark.parametrize("kind", ["worksheet", "key"])
def test_cmark_gfm_reads_the_markdown_as_meant(bank: Any, kind: str) -> None:
    page = _cmark(_document(bank, kind, "md"))
    rows = re.search(r"<table>.*?</table>", page, flags=re.DOTALL)
    assert rows is not None and rows.group(0).count("<tr>") == 6
    assert '<img src="figures/histogram.png" alt="A histogram of 40 marks' in page
    # Formulas reach the page whole (GitHub's math then draws them): no emphasis, no escapes.
    assert "$\\bar{x} = \\frac{1}{n}\\sum_{i=1}^{n} x_i$" in page
    assert "<em>two decimal places</em>" in page or kind == "key"
    assert "<code>1.5 × IQR</code>" in page
    # Choice B's own list is a list inside the choice, not a code block.
    assert re.search(r"It satisfies both:</p>\s*<ul>\s*<li>at least half", page)
    assert "<pre>" not in page
    tags = set(re.findall(r"</?([a-z0-9]+)", page))
    assert tags <= {
        "h1", "h3", "p", "strong", "em", "code", "hr", "small", "table", "thead", "tbody", "tr",
        "th", "td", "img", "ul", "ol", "li", "input", "blockquote", "sub", "sup", "br",
    }, tags  # fmt: skip


# --- hostile Markdown, in every output ----------------------------------------------------

WIDE = "|" + "a|" * 400 + "\\n|" + "-|" * 400 + "\\n" + "x\\n" * 600
DEEP = "".join("  " * i + "- deeper\\n" for i in range(12))
HOSTILE_BANK = f"""\
bank: hostile-rich
title: Hostile rich text
questions:
  - id: tf-script
    type: true_false
    prompt: "<script>alert(1)</script> <img src=x onerror=alert(1)> [x](javascript:alert(1))"
    answer: true
    explanation: "<iframe src=javascript:alert(1)></iframe> [y](JaVaScRiPt:alert(2))"
  - id: mc-tricks
    type: multiple_choice
    prompt: "$\\\\text{{</math><script>alert(3)</script>}}$, $\\\\href{{javascript:alert(4)}}{{x}}$"
    choices:
      - {{text: "<a href='javascript:alert(5)'>a</a>", correct: true}}
      - {{text: "![x](javascript:alert(6))", feedback: "<svg onload=alert(7)>"}}
  - id: tf-wide
    type: true_false
    prompt: "{WIDE}"
    answer: false
  - id: tf-deep
    type: true_false
    prompt: "{DEEP}"
    answer: false
"""
EVIL = re.compile(
    r"<(script|iframe|object|embed)\b|<[^>]*\son\w+\s*="
    r"|<[^>]*\b(href|src)\s*=\s*[\"']?\s*(javascript|data:text)",
    re.I,
)  # a tag that runs code, an event handler, or a link that runs code, inside any tag


def _inert(text: str, where: str) -> None:
    found = EVIL.search(text)
    assert found is None, (where, text[max(0, found.start() - 80) : found.end() + 80])


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    path = tmp_path_factory.mktemp("hostile") / "hostile.yaml"
    path.write_text(HOSTILE_BANK, encoding="utf-8")
    return path, load_bank(path)


def test_hostile_markdown_is_inert_and_bounded_in_every_output(
    hostile: tuple[Path, Any], tmp_path: Path
) -> None:
    path, bank = hostile
    size = len(HOSTILE_BANK)
    outputs: dict[str, str] = {}
    questions = select_questions(bank)
    for kind in ("worksheet", "key"):
        for fmt in ("html", "md"):
            render = render_worksheet if kind == "worksheet" else render_key
            outputs[f"{kind}.{fmt}"] = render(bank, questions, fmt=fmt, date=DATE)
        outputs[f"{kind}.md as GitHub shows it"] = _cmark(outputs[f"{kind}.md"])
    from lxml import etree

    for fmt in ("gift", "blackboard"):  # their fields are HTML as written
        outputs[fmt] = exporter(fmt, bank).to_bytes().decode()
    # Moodle XML and QTI 1.2 carry HTML as the text of XML elements: read it out of the XML.
    quiz = etree.fromstring(exporter("moodle", bank).to_bytes())
    outputs["moodle"] = "\n".join(t.text or "" for t in quiz.iter("text"))
    qti12 = zipfile.ZipFile(io.BytesIO(exporter("qti12", bank).to_bytes()))
    assessment = etree.fromstring(qti12.read("quizgym-hostile-rich/quizgym-hostile-rich.xml"))
    outputs["qti12"] = "\n".join(t.text or "" for t in assessment.iter("{*}mattext"))
    # QTI 2.1 items are XHTML themselves.
    outputs["qti21"] = listing(zipfile.ZipFile(io.BytesIO(exporter("qti21", bank).to_bytes())))
    anki = zipfile.ZipFile(exporter("anki", bank).save(tmp_path / "h.apkg"))
    (tmp_path / "c.anki2").write_bytes(anki.read("collection.anki2"))
    connection = sqlite3.connect(tmp_path / "c.anki2")
    outputs["anki"] = "\n".join(r[0] for r in connection.execute("SELECT flds FROM notes"))
    connection.close()
    result = CliRunner().invoke(cli, ["check", str(path)])
    outputs["check"] = result.output
    answers = tmp_path / "class.csv"
    answers.write_text("student,tf-script,mc-tricks,tf-wide,tf-deep\ns1,true,A,false,false\n")
    CliRunner().invoke(cli, ["grade", str(path), str(answers), "-o", str(tmp_path / "g")])
    outputs["report"] = (tmp_path / "g" / "report.html").read_text(encoding="utf-8")
    drill = run(tmp_path / "p.sqlite3", ["t", "", "A", "", "f", "", "f", "", "q"], str(path))
    assert drill.exit_code == 0, drill.output
    outputs["drill"] = drill.output
    assert "<script>alert(1)</script>" in drill.output  # printed as the text it is
    assert "\x1b" not in drill.output
    for where, text in outputs.items():
        if where == "drill":  # a terminal runs no HTML: its text only has to be there, bounded
            assert len(text) < 40 * size
            continue
        _inert(text, where)
        assert len(text) < 40 * size, (where, len(text))  # each output is bounded by its input
    # What check says about it, at its lines.
    assert "a table of 400 columns (quizgym lays out at most 20)" in outputs["check"]
    assert "lists or quotes nested more than 8 deep" in outputs["check"]
    assert "links in formulas (\\href) are not printed" in outputs["check"]


@pytest.mark.parametrize("fmt", ["moodle", "gift", "qti12", "qti21"])
def test_export_check_scores_the_rich_bank_as_quizgym_does(fmt: str, tmp_path: Path) -> None:
    target = tmp_path / f"rich.{fmt}"
    result = CliRunner().invoke(
        cli, ["export", str(RICH), "--to", fmt, "--check", "-o", str(target)]
    )
    assert result.exit_code == 0, result.output
    assert re.search(r"ok: 3 numeric blanks, \d+ typed answers: .* 0 scored wrong", result.output)
