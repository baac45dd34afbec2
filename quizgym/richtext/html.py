"""A parsed document in, HTML out: worksheets, keys, the report and every HTML-based LMS export."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from quizgym.richtext.subscripts import parse_math
from quizgym.richtext.tex import tex_to_mathml, tex_to_svg, tex_to_text
from quizgym.richtext.tree import (
    Block,
    Break,
    Code,
    CodeBlock,
    Doc,
    Emph,
    Image,
    Inline,
    Link,
    ListBlock,
    Math,
    MathBlock,
    Paragraph,
    Quote,
    Rule,
    Strong,
    Table,
    Text,
    Verbatim,
)

_SPACE = re.compile(r"\s+")
_VAR = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


def _no_image(image: Image) -> str | None:
    return None


@dataclass(frozen=True, kw_only=True)
class HtmlStyle:
    """How a document is written as HTML."""

    math: str = "mathml"
    """``mathml``, ``tex`` or ``svg`` (see the module's docstring)."""
    subscripts: bool = False
    """Print ``L_MLM`` as L<sub>MLM</sub> in plain text (worksheets and keys)."""
    variables: frozenset[str] = frozenset()
    """Parameters whose ``{name}`` placeholders print symbolically, as <var>name</var>."""
    image: Callable[[Image], str | None] = field(default=_no_image)
    """The URL written for an image (None prints its alt text instead)."""
    qti: bool = False
    """QTI 2.1's XHTML: table cells aligned with ``align``, display formulas inside ``div``."""
    math_size: float = 14.0
    """The font size formulas are drawn at for ``svg``, in CSS pixels."""
    quotes: bool = False
    """Escape ``'`` and ``"`` in text too (as Jinja's autoescape does, for the documents)."""


def escape(text: str) -> str:
    """Text for an HTML text node: ``<``, ``>`` and ``&`` escaped."""
    return html.escape(text, quote=False)


def attr(text: str) -> str:
    """Text for a quoted HTML attribute (quotes as Jinja writes them: ``&#34;``, ``&#39;``)."""
    return html.escape(text, quote=False).replace('"', "&#34;").replace("'", "&#39;")


def to_html(doc: Doc, style: HtmlStyle, *, inline: bool = True) -> str:
    """The document as HTML.

    The output is HTML; with ``qti`` it is XHTML (void elements closed), which the QTI 2.1 exporter
    reads as XML. Every character of bank text is escaped here; only the elements the tree can hold
    are written, with attributes this module sets itself. Formulas print as one of three forms, by
    ``style.math``:

    - ``mathml``: MathML (browsers draw it natively, offline; QTI 2.1 carries it);
    - ``tex``: ``\\(…\\)`` and ``\\[…\\]``, for the LMS's own TeX filter (Moodle, Canvas, Anki's
      MathJax);
    - ``svg``: drawn by ziamath, with the formula's text laid transparently over it (PDF: WeasyPrint
      draws SVG, and the text layer keeps the characters for search, copy and screen readers).

    Args:
        doc: the parsed text.
        style: how to write it.
        inline: one paragraph prints as its inline content, without ``<p>`` (for a choice, a
            table cell or a sentence the template continues); other text prints as blocks.

    Returns:
        The HTML (safe: nothing of the bank text is markup).
    """
    pieces = doc.inline if inline else None
    if pieces is not None:
        return _inlines(pieces, style)
    return "".join(_block(block, style) for block in doc.blocks)


def _block(block: Block, style: HtmlStyle, *, tight: bool = False) -> str:
    if isinstance(block, Paragraph):
        body = _inlines(block.children, style)
        return body if tight else f"<p>{body}</p>"
    if isinstance(block, ListBlock):
        tag = "ol" if block.ordered else "ul"
        start = f' start="{block.start}"' if block.ordered and block.start != 1 else ""
        items = "".join(
            "<li>" + "".join(_block(b, style, tight=block.tight) for b in item) + "</li>"
            for item in block.items
        )
        return f"<{tag}{start}>{items}</{tag}>"
    if isinstance(block, Quote):
        return "<blockquote>" + "".join(_block(b, style) for b in block.children) + "</blockquote>"
    if isinstance(block, CodeBlock):
        return f"<pre><code>{escape(block.text)}</code></pre>"
    if isinstance(block, Verbatim):
        return f"<pre>{escape(block.text)}</pre>"
    if isinstance(block, MathBlock):
        return _math(Math(block.tex, display=True), style, block=True)
    if isinstance(block, Table):
        return _table(block, style)
    if isinstance(block, Rule):
        return _void("hr", "", style)
    raise AssertionError(block)  # pragma: no cover


def _table(table: Table, style: HtmlStyle) -> str:
    def cell(tag: str, align: str, content: tuple[Inline, ...]) -> str:
        if not align:
            how = ""
        elif style.qti:
            how = f' align="{align}"'
        else:
            how = f' style="text-align: {align}"'
        return f"<{tag}{how}>{_inlines(content, style)}</{tag}>"

    head = "".join(cell("th", a, c) for a, c in zip(table.aligns, table.head, strict=True))
    rows = "".join(
        "<tr>" + "".join(cell("td", a, c) for a, c in zip(table.aligns, row, strict=True)) + "</tr>"
        for row in table.rows
    )
    body = f"<tbody>{rows}</tbody>" if rows else ""
    return f"<table><thead><tr>{head}</tr></thead>{body}</table>"


def _inlines(pieces: tuple[Inline, ...], style: HtmlStyle) -> str:
    return "".join(_inline(piece, style) for piece in pieces)


def _inline(piece: Inline, style: HtmlStyle) -> str:
    if isinstance(piece, Text):
        # A soft line break is a space. Documents fold all whitespace, as they always have;
        # LMS text keeps a tab or a double space as written (the browser folds it there).
        text = _SPACE.sub(" ", piece.text) if style.subscripts else piece.text.replace("\n", " ")
        return _text(text, style)
    if isinstance(piece, Code):
        return f"<code>{escape(piece.text)}</code>"
    if isinstance(piece, Math):
        return _math(piece, style, block=False)
    if isinstance(piece, Emph):
        return f"<em>{_inlines(piece.children, style)}</em>"
    if isinstance(piece, Strong):
        return f"<strong>{_inlines(piece.children, style)}</strong>"
    if isinstance(piece, Link):
        return f'<a href="{attr(piece.href)}">{_inlines(piece.children, style)}</a>'
    if isinstance(piece, Image):
        url = style.image(piece)
        if url is None:
            return f"[{escape(piece.alt or piece.src)}]"
        return _void("img", f' src="{attr(url)}" alt="{attr(piece.alt)}"', style)
    if isinstance(piece, Break):
        return _void("br", "", style)
    raise AssertionError(piece)  # pragma: no cover


def _void(tag: str, attrs: str, style: HtmlStyle) -> str:
    """A void element: ``<br>`` in HTML, ``<br />`` in QTI's XHTML (an XML parser reads it)."""
    return f"<{tag}{attrs} />" if style.qti else f"<{tag}{attrs}>"


def _text(text: str, style: HtmlStyle) -> str:
    esc = attr if style.quotes else escape
    if style.subscripts:
        return _nodes(parse_math(text, variables=style.variables), esc)
    if style.variables:
        return _VAR.sub(
            lambda m: f"<var>{m[1]}</var>" if m[1] in style.variables else esc(m[0]),
            esc(text),
        )
    return esc(text)


def _nodes(nodes: Sequence[object], esc: Callable[[str], str]) -> str:
    out = []
    for node in nodes:
        if isinstance(node, str):
            out.append(esc(node))
        else:
            assert isinstance(node, tuple)
            name, inner = node
            body = esc(inner) if name == "var" else _nodes(inner, esc)
            out.append(f"<{name}>{body}</{name}>")
    return "".join(out)


def _math(piece: Math, style: HtmlStyle, *, block: bool) -> str:
    tex = piece.tex
    if style.math == "tex":
        shown = f"\\[{escape(tex)}\\]" if piece.display else f"\\({escape(tex)}\\)"
        return f"<p>{shown}</p>" if block else shown
    if style.math == "svg":
        return _svg(piece, style, block=block)
    mathml = tex_to_mathml(tex, piece.display)
    if mathml is None:  # a formula that cannot be read shows its source
        shown = f'<code class="tex">{escape(tex)}</code>'
        return f"<p>{shown}</p>" if block else shown
    if block or (style.qti and piece.display):
        return f"<div>{mathml}</div>"
    return mathml


def _svg(piece: Math, style: HtmlStyle, *, block: bool) -> str:
    text = escape(tex_to_text(piece.tex))
    drawing = tex_to_svg(piece.tex, piece.display, style.math_size)
    if drawing is None:
        inner = f'<span class="math-plain">{text}</span>'
    else:
        data = base64.b64encode(drawing.svg.encode()).decode("ascii")
        size = (
            f"width: {drawing.width:.2f}px; height: {drawing.height:.2f}px; "
            f"vertical-align: {-drawing.depth:.2f}px"
        )
        # The text first, in a box of no width that the drawing then covers: the text layer
        # holds the characters in reading order, and nothing of them shows.
        inner = (
            f'<span class="math-svg"><span class="math-text">{text}</span>'
            f'<img src="data:image/svg+xml;base64,{data}" '
            f'alt="{attr(tex_to_text(piece.tex))}" style="{size}"></span>'
        )
    if block or piece.display:
        return f'<span class="math-display">{inner}</span>'
    return inner


_TAG = re.compile(r"<[^>]+>")


def html_plain(markup: str) -> str:
    """HTML as the plain text an LMS shows in its reports: tags gone, entities read, spaces
    folded (a block's end is a space)."""
    return " ".join(html.unescape(_TAG.sub(" ", markup)).split())
