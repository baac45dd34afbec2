"""Print quality checked by what prints: WeasyPrint's PDF and a real headless Chromium."""

from __future__ import annotations

import io
import re
import unicodedata
from pathlib import Path

import pytest
from conftest import CHROMIUM_ARGS, require_module, require_tool

from quizgym.loader import load_bank, parse_bank
from quizgym.render import html_to_pdf, math_plain, render_worksheet, select_questions
from quizgym.solver import prompt_of, variant_of

SMALL = Path(__file__).parent / "data" / "render" / "small.yaml"
A4_PX = (794, 1123)  # 210 × 297 mm at 96 px per inch


def _squeeze(text: str) -> str:
    """Text as a PDF text layer gives it back: NFKC (ligatures), no whitespace."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


@pytest.fixture(scope="module")
def bundled_pdf() -> tuple[bytes, list[str]]:
    require_module("weasyprint")
    bank = load_bank("bert-mlm")
    html = render_worksheet(bank, select_questions(bank), date="2026-01-05", for_pdf=True)
    prompts = [f"{q.id}\x00{math_plain(prompt_of(q, variant_of(bank, q)))}" for q in bank.questions]
    return html_to_pdf(html), prompts


@pytest.mark.slow
def test_bundled_bank_prints_every_prompt_on_numbered_a4_pages(
    bundled_pdf: tuple[bytes, list[str]],
) -> None:
    from pypdf import PdfReader

    pdf, prompts = bundled_pdf
    reader = PdfReader(io.BytesIO(pdf))
    pages = [page.extract_text() for page in reader.pages]
    count = len(pages)
    assert 8 <= count <= 40, count
    for number, text in enumerate(pages, 1):
        assert f"Page {number} of {count}" in text
    box = reader.pages[0].mediabox
    assert (round(float(box.width)), round(float(box.height))) == (595, 842)
    layer = _squeeze("".join(pages))
    missing = [p.split("\x00")[0] for p in prompts if _squeeze(p.split("\x00")[1]) not in layer]
    assert missing == []
    for entry in prompts:
        assert entry.split("\x00")[0] in layer


@pytest.mark.slow
def test_poppler_reads_the_mathematics(
    bundled_pdf: tuple[bytes, list[str]], tmp_path: Path
) -> None:
    import subprocess

    pdftotext = require_tool("pdftotext")
    path = tmp_path / "w.pdf"
    path.write_bytes(bundled_pdf[0])
    text = subprocess.run(
        [pdftotext, "-layout", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout
    # The formula is drawn as SVG; its characters are laid under the drawing, in reading order.
    assert re.search(r"In ℒ_MLM = −∑_\{i∈M\} ln P\(xᵢ ∣ x_∖M\) *, what does M denote\?", text)


def test_letter_paper_prints_on_letter() -> None:
    require_module("weasyprint")
    from pypdf import PdfReader

    bank = load_bank(SMALL)
    pdf = html_to_pdf(render_worksheet(bank, select_questions(bank), paper="letter"))
    box = PdfReader(io.BytesIO(pdf)).pages[0].mediabox
    assert (round(float(box.width)), round(float(box.height))) == (612, 792)


LONG = "x" * 40 + "/" + "verylongunbrokentoken" * 12
OVERFLOW_JS = """() => {
  const width = document.documentElement.clientWidth;
  const bad = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && (r.right > width + 0.5 || r.left < -0.5)) {
      bad.push(el.tagName + '.' + el.className + ': ' + (el.textContent || '').slice(0, 40));
    }
  }
  return {scroll: document.documentElement.scrollWidth, width, bad};
}"""


@pytest.mark.slow
def test_first_page_in_chromium_is_drawn_and_nothing_overflows(tmp_path: Path) -> None:
    chromium = require_tool("chromium")
    from PIL import Image
    from playwright.sync_api import sync_playwright

    bank = load_bank("bert-mlm")
    worksheet = tmp_path / "worksheet.html"
    worksheet.write_text(render_worksheet(bank, select_questions(bank)), encoding="utf-8")
    long_bank = parse_bank(
        "bank: long\ntitle: Long\nquestions:\n"
        f"  - {{id: q, type: true_false, prompt: 'See {LONG} now', answer: true}}\n"
        f"  - {{id: n, type: numeric, prompt: '{LONG}', answer: '1', units: '{LONG[:30]}'}}\n"
    )
    long_page = tmp_path / "long.html"
    long_page.write_text(render_worksheet(long_bank, select_questions(long_bank)), encoding="utf-8")
    shot = tmp_path / "first-page.png"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": A4_PX[0], "height": A4_PX[1]})
            for path in (worksheet, long_page):
                page.goto(path.as_uri())
                for media in ("screen", "print"):
                    page.emulate_media(media=media)
                    layout = page.evaluate(OVERFLOW_JS)
                    assert layout["bad"] == [], (path.name, media, layout)
                    assert layout["scroll"] <= layout["width"], (path.name, media, layout)
            page.goto(worksheet.as_uri())
            page.emulate_media(media="screen")
            page.screenshot(path=str(shot))
        finally:
            browser.close()
    image = Image.open(shot).convert("L")
    assert image.size == A4_PX
    histogram = image.histogram()  # 256 grey levels
    inked = sum(histogram[:200]) / (A4_PX[0] * A4_PX[1])
    assert 0.01 < inked < 0.5, inked
    # Text reaches down the page, not only a heading at the top.
    lower = image.crop((0, A4_PX[1] // 2, A4_PX[0], A4_PX[1]))
    assert sum(lower.histogram()[:128]) > 1000


def test_a_class_is_laid_out_in_parallel_and_combined_for_printing(tmp_path: Path) -> None:
    require_module("weasyprint")
    from pypdf import PdfReader

    from quizgym.render import render_files

    roster = tmp_path / "class.csv"
    roster.write_text("student\nann\nbob\ncy\n", encoding="utf-8")
    out = tmp_path / "out"
    result = render_files(
        load_bank(SMALL),
        out_dir=out,
        formats=["pdf"],
        roster=roster,
        seed=3,
        date="2026-01-05",
        combine=True,
        duplex=True,
        workers=2,
    )
    assert result.combined == out / "worksheets.pdf"
    assert "all worksheets in worksheets.pdf" in result.summary()
    own = [PdfReader(out / f"worksheet-{s}.pdf") for s in ("ann", "bob", "cy")]
    combined = PdfReader(out / "worksheets.pdf")
    start = 0
    for reader in own:  # each student's pages, in roster order, each on a fresh sheet
        for k, page in enumerate(reader.pages):
            assert combined.pages[start + k].extract_text() == page.extract_text()
        start += len(reader.pages) + len(reader.pages) % 2
    assert len(combined.pages) == start
    # laid out here, one at a time, each sheet says the same
    alone = render_files(
        load_bank(SMALL),
        out_dir=tmp_path / "alone",
        formats=["pdf"],
        roster=roster,
        seed=3,
        date="2026-01-05",
        workers=1,
    )
    for path in alone.files:
        if path.suffix == ".pdf":
            here = [p.extract_text() for p in PdfReader(path).pages]
            there = [p.extract_text() for p in PdfReader(out / path.name).pages]
            assert here == there
