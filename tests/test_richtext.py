"""Rich bank text: what Markdown and formulas mean, what stays inert, what check says about it."""

from __future__ import annotations

import importlib
import re
import shutil
import string
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from quizgym.cli import cli
from quizgym.loader import load_bank, parse_bank
from quizgym.model import placeholders
from quizgym.richtext import (
    MAX_COLUMNS,
    MAX_DEPTH,
    HtmlStyle,
    MarkdownStyle,
    image_findings,
    parse,
    plain_text,
    tex_problems,
    tex_to_mathml,
    tex_to_text,
    text_findings,
    to_html,
    to_markdown,
)
from quizgym.solver import variant_of

richtext_parse = importlib.import_module("quizgym.richtext.parse")  # the module, not parse()

RICH = Path(__file__).parent / "data" / "rich"


def html(text: str, **style: object) -> str:
    return to_html(parse(text), HtmlStyle(**style), inline=False)  # type: ignore[arg-type]


# --- what Markdown means ------------------------------------------------------------------------

MARKDOWN_HTML = [
    ("plain text, as ever", "<p>plain text, as ever</p>"),
    ("*em*, **strong**, `code`", "<p><em>em</em>, <strong>strong</strong>, <code>code</code></p>"),
    ("- one\n- two", "<ul><li>one</li><li>two</li></ul>"),
    ("3. three\n4. four", '<ol start="3"><li>three</li><li>four</li></ol>'),
    ("line one\\\nline two", "<p>line one<br>line two</p>"),
    ("soft\nbreak", "<p>soft break</p>"),
    ("first\n\nsecond", "<p>first</p><p>second</p>"),
    (
        "| a | b |\n|:--|--:|\n| 1 | 2 |",
        '<table><thead><tr><th style="text-align: left">a</th><th style="text-align: right">b'
        '</th></tr></thead><tbody><tr><td style="text-align: left">1</td><td style="text-align:'
        ' right">2</td></tr></tbody></table>',
    ),
    ("> quoted", "<blockquote><p>quoted</p></blockquote>"),
    ("```\nx = 1 < 2\n```", "<pre><code>x = 1 &lt; 2</code></pre>"),
    ("[MASK] and [CLS] stay text", "<p>[MASK] and [CLS] stay text</p>"),
    ("M = {3, 5}", "<p>M = {3, 5}</p>"),
    ("costs $5 and $10", "<p>costs $5 and $10</p>"),
    ("a \\$ sign and \\*stars\\*", "<p>a $ sign and *stars*</p>"),
    ("# of tokens", "<p># of tokens</p>"),
    ("#", "<p>#</p>"),
    ("Use &lt; for <", "<p>Use &amp;lt; for &lt;</p>"),
    ("[docs](https://x.org/a?b=1&c=2)", '<p><a href="https://x.org/a?b=1&amp;c=2">docs</a></p>'),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), MARKDOWN_HTML)
def test_markdown_means_what_commonmark_says(text: str, expected: str) -> None:
    assert html(text) == expected


def test_formulas_print_as_mathml_tex_or_unicode() -> None:
    text = "Mean $\\bar{x} = {p}$ and\n\n$$\n\\sum_{i=1}^{n} x_i\n$$"
    mathml = html(text)
    assert mathml.startswith("<p>Mean <math xmlns=")
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in mathml
    assert (
        html(text, math="tex")
        == "<p>Mean \\(\\bar{x} = {p}\\) and</p><p>\\[\\sum_{i=1}^{n} x_i\\]</p>"
    )
    assert plain_text(text) == "Mean x̄ = p and\n\n∑ᵢ₌₁ⁿ xᵢ"
    md = to_markdown(parse(text), MarkdownStyle(), inline=False)
    assert md == "Mean $\\bar{x} = {p}$ and\n\n$$\n\\sum_{i=1}^{n} x_i\n$$"


UNICODE = [
    ("\\bar{x}", "x̄"),
    ("\\sum_{i \\in M} x_i", "∑_{i∈M} xᵢ"),
    ("P(x_i \\mid x_{\\setminus M})", "P(xᵢ ∣ x_∖M)"),
    ("\\mathcal{L}_{\\text{MLM}} = -\\sum_{i \\in M} \\ln P", "ℒ_MLM = −∑_{i∈M} ln P"),
    ("\\frac{e^{z_i}}{\\sum_j e^{z_j}}", "(e^zᵢ)/(∑ⱼ e^zⱼ)"),
    ("0.15 \\times 0.80 = 12\\%", "0.15 × 0.80 = 12%"),
    ("2^{-3}", "2⁻³"),
    ("\\sqrt{2}", "√2"),
    ("P \\to 0^{+}", "P → 0⁺"),
]


@pytest.mark.parametrize(("tex", "text"), UNICODE)
def test_terminal_reads_formulas_as_unicode(tex: str, text: str) -> None:
    assert tex_to_text(tex) == text
    assert tex_problems(tex) == ()


@pytest.mark.parametrize(
    ("opening", "inner", "closing"),
    [("{", "x_1", " y}"), ("{a_1 ", "x", " b_2}"), ("\\sqrt{", "x_i", " y}")],
)
def test_deeply_nested_formula_reads_as_text_at_once(
    opening: str, inner: str, closing: str
) -> None:
    """Each nested row's text is computed once: a bank check passes (braces as deep as allowed)
    must not hang practice, the PDF or plain text (it took 13 s at 22 levels, ×4 per level)."""
    tex_module = importlib.import_module("quizgym.richtext.tex")
    depth = tex_module.MAX_GROUPS
    tex = opening * depth + inner + closing * depth
    # check refuses it (too deep to draw in a PDF); a bank built in code still reads it
    assert [p.split(" (")[0] for p in tex_problems(tex)] == ["a formula nested more than 6 deep"]
    tex_to_text.cache_clear()
    start = time.process_time()
    text = tex_to_text(tex)
    plain = plain_text(f"${tex}$")
    assert time.process_time() - start < 1.0
    assert text.startswith(("x", "a₁", "√")) and plain == text


def test_formula_problems_are_reported_and_the_source_shown() -> None:
    assert tex_problems("P(x_i | x_\\M)") == ("unknown LaTeX command \\M",)
    assert tex_problems("\\frac{1}{") == ("unbalanced braces { } in the formula",)
    assert tex_problems("{" * 40 + "x" + "}" * 40) == (
        "braces nested more than 24 deep in the formula",
    )
    assert html("$\\frac{1}{$") == '<p><code class="tex">\\frac{1}{</code></p>'


# --- placeholders and TeX -----------------------------------------------------------------------


def test_placeholders_leave_tex_groups_alone() -> None:
    assert placeholders("M = {3, 5} and {p1}") == ["p1"]
    assert placeholders("$\\bar{x} = {p}$, $x_{i}$, $e^{k}$, $\\frac{a}{b}$") == ["p"]
    assert placeholders("$e^{{k}}$ and $\\sqrt[3]{n}$ and $\\{x\\}$") == ["k"]


def test_a_formula_with_tex_groups_loads_and_fills_its_placeholder() -> None:
    bank = parse_bank(
        "bank: t\ntitle: T\nquestions:\n  - id: n\n    type: numeric\n"
        "    prompt: 'With $\\bar{x} = {m}$, what is $e^{{k}}$?'\n"
        "    params: {m: {choices: [2]}, k: {choices: [3]}}\n    answer: exp(k)\n"
    )
    variant = variant_of(bank, bank.questions[0])
    assert variant.fill(bank.questions[0].prompt) == "With $\\bar{x} = 2$, what is $e^{3}$?"


# --- inert and bounded ------------------------------------------------------------------------


def test_mathml_is_sanitised() -> None:
    script = tex_to_mathml("\\text{<script>alert(1)</script>} & x")
    assert script is not None
    assert "<script" not in script and "&lt;script&gt;" in script
    link = tex_to_mathml("\\href{javascript:alert(1)}{x}")
    assert link is not None and "href" not in link and "javascript" not in link
    assert tex_problems("\\href{javascript:alert(1)}{x}") == (
        "links in formulas (\\href) are not printed",
    )


HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "<a href='javascript:alert(1)'>x</a>",
    "![x](javascript:alert(1))",
    "<javascript:alert(1)>",
    "[x](data:text/html;base64,PHNjcmlwdD4=)",
    "$\\text{</math><script>alert(1)</script>}$",
]


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("math", ["mathml", "tex"])
def test_hostile_text_never_becomes_markup(text: str, math: str) -> None:
    out = to_html(parse(text), HtmlStyle(math=math, image=lambda image: None), inline=False)
    assert "<script" not in out.lower() and "<img" not in out.lower()
    assert not re.search(r"<[^>]*\son\w+\s*=", out)  # no event handler inside any tag
    assert 'href="javascript' not in out.lower() and 'href="data' not in out.lower()
    assert "</math><script" not in out


def test_huge_tables_and_deep_nesting_print_verbatim_within_bounds() -> None:
    wide = "|" + "a|" * 500 + "\n|" + "-|" * 500 + "\n" + "x\n" * 2000
    long = "| a | b |\n|---|---|\n" + "| 1 | 2 |\n" * 5000
    deep = "".join("  " * i + "- x\n" for i in range(30))
    quotes = ">" * 5000 + " x"
    for text in (wide, long, deep, quotes):
        # CPU time of this process: a busy machine stretches the wall clock, not this.
        start = time.process_time()
        doc = parse(text)
        out = to_html(doc, HtmlStyle(), inline=False)
        assert time.process_time() - start < 2.0
        assert doc.problems, text[:40]
        assert len(out) < 5 * len(text) + 100  # the text, escaped (> is &gt;), in one <pre>
        assert out.startswith("<pre>")
    assert any(f"{MAX_COLUMNS}" in p for p in parse(wide).problems)
    assert any(f"{MAX_DEPTH} deep" in p for p in parse(deep).problems)


# --- check: images, formulas and limits, at file:line --------------------------------------------

IMAGES = """\
bank: pics
title: Pictures
questions:
  - id: tf-missing
    type: true_false
    prompt: |
      Look at this:

      ![a chart](figures/missing.png)
    answer: true
  - id: tf-absolute
    type: true_false
    prompt: "See ![a chart](/etc/chart.png) and ![a map](https://example.org/map.png)."
    answer: true
  - id: tf-outside
    type: true_false
    prompt: "See ![a chart](../outside.png)."
    answer: true
  - id: tf-no-alt
    type: true_false
    prompt: >-
      The figure
      ![](figures/ok.png) shows it.
    answer: true
  - id: mc-formula
    type: multiple_choice
    prompt: Which is right?
    choices:
      - {text: "$\\\\frac{1}{$", correct: true}
      - {text: "$\\\\foo x$", feedback: "![ok figure](figures/ok.png) is fine"}
"""


@pytest.fixture
def pictures(tmp_path: Path) -> Path:
    (tmp_path / "bank").mkdir()
    (tmp_path / "bank" / "figures").mkdir()
    shutil.copy(RICH / "figures" / "histogram.png", tmp_path / "bank" / "figures" / "ok.png")
    (tmp_path / "outside.png").write_bytes((RICH / "figures" / "histogram.png").read_bytes())
    path = tmp_path / "bank" / "pics.yaml"
    path.write_text(IMAGES, encoding="utf-8")
    return path


def test_check_reports_every_image_and_formula_problem_at_its_line(pictures: Path) -> None:
    folder = pictures.parent.resolve()
    result = CliRunner().invoke(cli, ["check", str(pictures)])
    assert result.exit_code == 1
    expected = [
        f"{pictures}:9:7: tf-missing: prompt: image figures/missing.png does not exist (no file "
        f"{folder / 'figures' / 'missing.png'})",
        f"{pictures}:13:18: tf-absolute: prompt: image /etc/chart.png is an absolute path or an "
        "address; write a path relative to the bank's folder (figures/x.png), so the image "
        "travels with the bank",
        f"{pictures}:13:49: tf-absolute: prompt: image https://example.org/map.png is an absolute "
        "path or an address; write a path relative to the bank's folder (figures/x.png), so the "
        "image travels with the bank",
        f"{pictures}:17:18: tf-outside: prompt: image ../outside.png leaves the bank's folder; "
        "keep images beside the bank",
        f"{pictures}:23:7: tf-no-alt: prompt: image figures/ok.png has no alt text: write what it "
        "shows, ![a bar chart of …](figures/ok.png)",
        f"{pictures}:29:19: mc-formula: choices.0.text: $\\frac{{1}}{{$: unbalanced braces {{ }} "
        "in the formula",
        f"{pictures}:30:19: mc-formula: choices.1.text: $\\foo x$: unknown LaTeX command \\foo",
    ]
    for line in expected:
        assert line in result.output, line
    assert result.output.count(str(pictures)) == len(expected) + 1  # and the summary line


def test_render_and_export_refuse_a_bank_whose_images_cannot_ship(
    pictures: Path, tmp_path: Path
) -> None:
    bank = load_bank(pictures)
    findings = [str(f) for f in image_findings(bank)]
    assert len(findings) == 5
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["render", str(pictures), "-o", str(out)])
    assert result.exit_code == 1
    assert result.output.splitlines() == findings
    assert not out.exists()
    for fmt in ("moodle", "qti21", "gift"):
        target = tmp_path / f"x.{fmt}"
        result = CliRunner().invoke(cli, ["export", str(pictures), "--to", fmt, "-o", str(target)])
        assert result.exit_code == 1, result.output
        assert result.output.splitlines() == findings
        assert not target.exists()


def test_a_parameter_glued_to_a_letter_is_a_warning() -> None:
    bank = parse_bank(
        "bank: g\ntitle: G\nquestions:\n  - id: n\n    type: numeric\n"
        "    prompt: 'The value x{p} or {p}'\n    params: {p: {choices: [1, 2]}}\n"
        "    answer: p\n"
    )
    messages = [f.message for f in text_findings(bank) if f.severity == "warning"]
    assert messages == [
        "n: {p} follows a letter or a TeX command, so it is TeX, not the parameter p; put a "
        "space before it, or write {{p}} inside a formula"
    ]


def test_the_rich_bank_and_the_bundled_bank_are_clean() -> None:
    assert text_findings(load_bank(RICH / "rich.yaml")) == []
    assert text_findings(load_bank("bert-mlm")) == []


_PIECES = st.sampled_from(
    ["a", "Bc", "x1", "7", " ", ".", ",", ";", ":", "?", "'", '"', "%", "/", "(", ")", "=", "+",
     "-", "1.", "2)", "*", "_", "`", "$", "#", "\\", "[", "]", "<", ">", "&", "!", "|", "~", "\n"]
)  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(
    st.lists(_PIECES, max_size=10).map("".join) | st.text(alphabet=string.printable, max_size=30)
)
def test_plain_text_is_parsed_as_markdown_it_parses_it(text: str) -> None:
    # A line of words and plain punctuation skips markdown-it; what it gives must be what
    # markdown-it gives (the alphabet also has what would make markup, to probe the edges).
    fast = richtext_parse.parse.__wrapped__(text)
    if richtext_parse._PLAIN_TEXT.fullmatch(text) and "  " not in text:
        richtext_parse._PLAIN_TEXT, saved = re.compile(r"(?!)"), richtext_parse._PLAIN_TEXT
        try:
            slow = richtext_parse.parse.__wrapped__(text)
        finally:
            richtext_parse._PLAIN_TEXT = saved
        assert fast == slow, text


@pytest.mark.parametrize(
    "text", ["Which model is causal?", "P(A) = 0.5", "I bought some milk.", "x", "2 is not", "- a"]
)
def test_plain_text_examples(text: str) -> None:
    saved = richtext_parse._PLAIN_TEXT
    richtext_parse._PLAIN_TEXT = re.compile(r"(?!)")
    try:
        slow = richtext_parse.parse.__wrapped__(text)
    finally:
        richtext_parse._PLAIN_TEXT = saved
    assert richtext_parse.parse.__wrapped__(text) == slow


def test_the_package_imports_each_module_when_one_of_its_names_is_first_asked_for() -> None:
    import subprocess
    import sys

    code = (
        "import sys, quizgym.richtext as r\n"
        "before = sorted(m for m in sys.modules if m.startswith('quizgym.richtext.'))\n"
        "missing = [n for n in r.__all__ if getattr(r, n, None) is None]\n"
        "print(before, missing, r.Doc is __import__('quizgym.richtext.tree').richtext.tree.Doc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # the parser and its tree only: the writers, images and fields wait to be asked for
    assert done.stdout.split() == [
        "['quizgym.richtext.parse',",
        "'quizgym.richtext.tree']",
        "[]",
        "True",
    ]
