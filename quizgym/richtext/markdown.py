"""A parsed document in, normalised Markdown out: the Markdown worksheets and keys."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from quizgym.richtext.subscripts import parse_math
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

_SPECIAL = re.compile(r"([\\`*_#~$])|(<)|(&(?=#?\w+;))|(\](?=[(\[:]))")
_BLOCK_START = re.compile(r"^(?:([-+]|\d{1,9}[.)])(?=\s|$)|(>)|(=+\s*$))")
_SPACE = re.compile(r"\s+")


def escape_markdown(text: str) -> str:
    """Make text print literally in Markdown: no emphasis, code, formulas, links or raw HTML.

    ``[MASK]`` stays readable: a bracket only becomes a link when ``](``, ``][`` or ``]:``
    follows it, so only such a ``]`` is escaped.
    """

    def one(match: re.Match[str]) -> str:
        if match.group(2):
            return "&lt;"
        if match.group(3):
            return "&amp;"
        return "\\" + match.group(0)

    return _SPECIAL.sub(one, text)


def _no_image(image: Image) -> str | None:
    return image.src


@dataclass(frozen=True, kw_only=True)
class MarkdownStyle:
    """How a document is written as Markdown."""

    subscripts: bool = True
    """Print ``L_MLM`` as ``L<sub>MLM</sub>`` in plain text."""
    variables: frozenset[str] = frozenset()
    """Parameters whose ``{name}`` placeholders print symbolically, as ``*name*``."""
    image: Callable[[Image], str | None] = field(default=_no_image)
    """The path written for an image (None prints its alt text)."""


def to_markdown(doc: Doc, style: MarkdownStyle, *, inline: bool = True) -> str:
    """The document as Markdown.

    The Markdown written is *normalised*: whatever the bank wrote, the output holds only what the
    tree holds (no raw HTML but our own ``<sub>``/``<sup>``/``<br>``), every character of text is
    escaped so it prints literally, formulas are ``$…$``/``$$…$$`` (GitHub, GitLab, pandoc and
    Obsidian draw them), tables are GitHub's pipe tables and images point at the copies ``quizgym
    render`` writes beside the file.

    Args:
        doc: the parsed text.
        style: how to write it.
        inline: one paragraph prints as one line of inline Markdown (for a choice or a
            sentence the template continues); other text prints as blocks separated by blank
            lines.

    Returns:
        The Markdown, without a trailing newline.
    """
    pieces = doc.inline if inline else None
    if pieces is not None:
        return _start(_inlines(pieces, style))
    return "\n\n".join(_block(block, style) for block in doc.blocks)


def _start(line: str) -> str:
    """A paragraph's first line, escaped where it would start a list, a quote or a heading."""
    return _BLOCK_START.sub(lambda m: m.group(0)[:-1] + "\\" + m.group(0)[-1], line, count=1)


def _block(block: Block, style: MarkdownStyle) -> str:
    if isinstance(block, Paragraph):
        return _start(_inlines(block.children, style))
    if isinstance(block, ListBlock):
        lines = []
        for number, item in enumerate(block.items, block.start):
            marker = f"{number}. " if block.ordered else "- "
            body = ("\n" if block.tight else "\n\n").join(_block(b, style) for b in item)
            indent = " " * len(marker)
            lines.append(
                marker + body.replace("\n", "\n" + indent).replace(f"\n{indent}\n", "\n\n")
            )
        return ("\n" if block.tight else "\n\n").join(lines)
    if isinstance(block, Quote):
        inner = "\n\n".join(_block(b, style) for b in block.children)
        return "\n".join(f"> {line}" if line else ">" for line in inner.split("\n"))
    if isinstance(block, CodeBlock | Verbatim):
        fence = "`" * max(3, _longest(block.text, "`") + 1)
        return f"{fence}\n{block.text}\n{fence}"
    if isinstance(block, MathBlock):
        return f"$$\n{_tex(block.tex)}\n$$"
    if isinstance(block, Table):
        return _table(block, style)
    if isinstance(block, Rule):
        return "* * *"
    raise AssertionError(block)  # pragma: no cover


def _table(table: Table, style: MarkdownStyle) -> str:
    def row(cells: tuple[tuple[Inline, ...], ...]) -> str:
        return "| " + " | ".join(_inlines(c, style).replace("|", "\\|") for c in cells) + " |"

    marks = {"left": ":---", "center": ":---:", "right": "---:", "": "---"}
    lines = [row(table.head), "| " + " | ".join(marks[a] for a in table.aligns) + " |"]
    lines += [row(r) for r in table.rows]
    return "\n".join(lines)


def _longest(text: str, char: str) -> int:
    runs = re.findall(f"{re.escape(char)}+", text)
    return max((len(r) for r in runs), default=0)


def _inlines(pieces: tuple[Inline, ...], style: MarkdownStyle) -> str:
    return "".join(_inline(piece, style) for piece in pieces)


def _inline(piece: Inline, style: MarkdownStyle) -> str:
    if isinstance(piece, Text):
        return _text(_SPACE.sub(" ", piece.text), style)
    if isinstance(piece, Code):
        text = _SPACE.sub(" ", piece.text)
        fence = "`" * (_longest(text, "`") + 1)
        pad = " " if text.startswith("`") or text.endswith("`") else ""
        return f"{fence}{pad}{text}{pad}{fence}"
    if isinstance(piece, Math):
        tex = _tex(_SPACE.sub(" ", piece.tex))
        return f"$${tex}$$" if piece.display else f"${tex}$"
    if isinstance(piece, Emph):
        return f"*{_inlines(piece.children, style)}*"
    if isinstance(piece, Strong):
        return f"**{_inlines(piece.children, style)}**"
    if isinstance(piece, Link):
        return f"[{_inlines(piece.children, style)}](<{_url(piece.href)}>)"
    if isinstance(piece, Image):
        url = style.image(piece)
        if url is None:
            return f"\\[{escape_markdown(piece.alt or piece.src)}\\]"
        return f"![{escape_markdown(piece.alt)}](<{_url(url)}>)"
    if isinstance(piece, Break):
        return "<br>"
    raise AssertionError(piece)  # pragma: no cover


def _tex(tex: str) -> str:
    """TeX as Markdown carries it: a ``<`` that could start a tag is ``\\lt`` (MathJax and
    KaTeX read it), so a reader without mathematics never sees a tag in a formula (``a < b``
    stays as written); an ``&`` that would start an entity gets a space."""
    tex = re.sub(r"<(?=[A-Za-z/!?])", r"\\lt ", tex)
    return re.sub(r"&(?=#?\w+;)", "& ", tex)


def _url(url: str) -> str:
    return url.replace("<", "%3C").replace(">", "%3E").replace("\n", "%0A").replace(" ", "%20")


def _text(text: str, style: MarkdownStyle) -> str:
    if not style.subscripts:
        return escape_markdown(text)
    out = []
    for node in parse_math(text, variables=style.variables):
        out.append(_node(node))
    return "".join(out)


def _node(node: object) -> str:
    if isinstance(node, str):
        return escape_markdown(node)
    assert isinstance(node, tuple)
    name, inner = node
    if name == "var":
        return f"*{escape_markdown(inner)}*"
    return f"<{name}>{''.join(_node(n) for n in inner)}</{name}>"
