"""A parsed document in, plain text out: what a terminal, a text layer or a log line shows."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from quizgym.richtext.subscripts import parse_math
from quizgym.richtext.tex import tex_to_text
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

_SPACE = re.compile(r"[ \t\r\n]+")


def to_plain(doc: Doc, *, subscripts: bool = False) -> str:
    """The document as plain text (blocks separated by blank lines, no trailing newline).

    Formulas read as Unicode (``\\bar{x}`` → ``x̄``), emphasis loses its markers, an image is
    ``[image: alt]``, a table is laid out in aligned columns, lists keep their bullets and numbers.

    Args:
        doc: the parsed text.
        subscripts: drop the ``_`` of ``L_MLM`` as a printed subscript does (``LMLM``).
    """
    return "\n\n".join(block_plain(b, subscripts=subscripts) for b in doc.blocks)


def block_plain(block: Block, *, subscripts: bool = False) -> str:
    """One block as plain text."""
    if isinstance(block, Paragraph):
        return inline_plain(block.children, subscripts=subscripts)
    if isinstance(block, ListBlock):
        lines = []
        for number, item in enumerate(block.items, block.start):
            marker = f"{number}. " if block.ordered else "- "
            body = "\n".join(block_plain(b, subscripts=subscripts) for b in item)
            lines.append(marker + body.replace("\n", "\n" + " " * len(marker)))
        return "\n".join(lines)
    if isinstance(block, Quote):
        inner = "\n".join(block_plain(b, subscripts=subscripts) for b in block.children)
        return "\n".join(f"> {line}" for line in inner.split("\n"))
    if isinstance(block, CodeBlock | Verbatim):
        return block.text
    if isinstance(block, MathBlock):
        return tex_to_text(block.tex)
    if isinstance(block, Table):
        return table_plain(block, subscripts=subscripts)
    if isinstance(block, Rule):
        return "---"
    raise AssertionError(block)  # pragma: no cover


def table_plain(table: Table, *, subscripts: bool = False) -> str:
    """A table as aligned columns separated by `` | ``, with a rule under the header."""
    rows = [
        [inline_plain(c, subscripts=subscripts) for c in row] for row in (table.head, *table.rows)
    ]
    widths = [max(display_width(r[k]) for r in rows) for k in range(len(table.aligns))]

    def line(cells: list[str]) -> str:
        out = []
        for text, width, align in zip(cells, widths, table.aligns, strict=True):
            pad = width - display_width(text)
            if align == "right":
                out.append(" " * pad + text)
            elif align == "center":
                out.append(" " * (pad // 2) + text + " " * (pad - pad // 2))
            else:
                out.append(text + " " * pad)
        return " | ".join(out).rstrip()

    rule = "-+-".join("-" * w for w in widths)
    return "\n".join([line(rows[0]), rule, *(line(r) for r in rows[1:])])


def display_width(text: str) -> int:
    """Columns a text takes in a terminal (combining marks take none)."""
    return sum(0 if unicodedata.combining(ch) else 1 for ch in text)


def inline_plain(pieces: tuple[Inline, ...], *, subscripts: bool = False) -> str:
    """Inline pieces as plain text, whitespace folded."""
    out = "".join(_inline(p, subscripts=subscripts) for p in pieces)
    return "\n".join(_SPACE.sub(" ", line).strip() for line in out.split("\x00"))


def _inline(piece: Inline, *, subscripts: bool) -> str:
    if isinstance(piece, Text):
        if not subscripts:
            return piece.text
        return _flatten(parse_math(piece.text))
    if isinstance(piece, Code):
        return piece.text
    if isinstance(piece, Math):
        return tex_to_text(piece.tex)
    if isinstance(piece, Emph | Strong):
        return "".join(_inline(p, subscripts=subscripts) for p in piece.children)
    if isinstance(piece, Link):
        label = "".join(_inline(p, subscripts=subscripts) for p in piece.children)
        return label if label.strip() == piece.href else f"{label} ({piece.href})"
    if isinstance(piece, Image):
        return f"[image: {piece.alt or piece.src}]"
    if isinstance(piece, Break):
        return "\x00"
    raise AssertionError(piece)  # pragma: no cover


def _flatten(nodes: Sequence[object]) -> str:
    out = []
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
        else:
            assert isinstance(node, tuple)
            name, inner = node
            out.append(inner if name == "var" else _flatten(inner))
    return "".join(out)
