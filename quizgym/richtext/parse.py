"""Bank text in, a :class:`~quizgym.richtext.tree.Doc` out (markdown-it-py, CommonMark), within
limits that keep every output bounded."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

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

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.tree import SyntaxTreeNode

MAX_TEXT = 10_000
"""Longest field laid out, in characters."""
MAX_DEPTH = 8
"""Deepest nesting of lists and quotes laid out."""
MAX_COLUMNS = 20
"""Widest table laid out."""
MAX_ROWS = 100
"""Longest table laid out (body rows)."""
LINK_SCHEMES = ("http://", "https://", "mailto:")
"""The only addresses a link may point to."""

_NESTING = 64  # markdown-it's own cap on token nesting (it drops content past it: see _truncated)
_DELIMITER_ROW = re.compile(r"^ {0,3}\|?(?:\s*:?-+:?\s*\|)+\s*(?::?-+:?)?\s*$", re.M)


class _TooDeepError(Exception):
    pass


@functools.lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = MarkdownIt(
        "commonmark",
        {"html": False, "linkify": False, "typographer": False, "maxNesting": _NESTING},
    )
    # No headings (a choice "#" or "# of tokens" is text, not an empty heading), no entity
    # references (a bank's "&lt;" has always printed as written) and no reference links.
    md.enable("table").disable(["reference", "heading", "lheading", "entity"])
    md.use(
        dollarmath_plugin,
        allow_labels=False,
        allow_space=False,
        allow_digits=False,
        double_inline=True,
    )
    return md


def _too_big_table(text: str) -> str | None:
    """Why a table in the text is past the limits (checked before parsing: a wide header over
    many short lines makes a parser build rows × columns cells)."""
    lines = text.splitlines()
    for match in _DELIMITER_ROW.finditer(text):
        row = match.group(0).strip().strip("|")
        columns = row.count("|") + 1
        if columns > MAX_COLUMNS:
            return f"a table of {columns} columns (quizgym lays out at most {MAX_COLUMNS})"
        start = text.count("\n", 0, match.start()) + 1
        rows = 0
        for line in lines[start:]:
            if not line.strip():
                break
            rows += 1
        if rows > MAX_ROWS:
            return f"a table of {rows} rows (quizgym lays out at most {MAX_ROWS})"
    return None


_PLAIN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9 ,.;:?'\"%/()=+-]*[A-Za-z0-9.?)'\"%]|[A-Za-z]")
"""One line of words and plain punctuation, starting with a letter: nothing markdown would
read as markup (no list marker, emphasis, code, link, math, escape or line break), so it is one
paragraph of its own text, and markdown-it need not be imported for it."""


_KNOWN: dict[str, Doc] = {}
"""Documents :func:`parse` made of these texts before, handed back by :func:`remember`."""


def remember(docs: dict[str, Doc]) -> None:
    """Take documents this code's :func:`parse` made of these texts earlier (the drill keeps its
    first screen's in the compiled-bank cache): they are returned as they are, and markdown-it
    is not imported to parse them again."""
    _KNOWN.update(docs)


@functools.lru_cache(maxsize=16384)
def parse(text: str) -> Doc:
    """Parse one field of bank text (never raises; memoised).

    The parser is CommonMark with GitHub's tables and ``$…$``/``$$…$$`` mathematics
    (mdit-py-plugins' dollarmath, with pandoc's rule: ``$5 and $10`` is not a formula, because a
    closing dollar may not be followed by a digit nor an opening one by a space). Raw HTML is off:
    ``<script>`` is text. Reference-style links are off, so ``[MASK]`` is always text, whatever else
    the bank says; so are headings (a choice ``#`` is a hash sign) and entity references (``&lt;``
    prints as written), which bank text has never meant. Links print only to ``http``, ``https`` and
    ``mailto`` addresses.

    Limits keep every output bounded whatever a shared bank holds: a field longer than
    :data:`MAX_TEXT`, lists or quotes nested deeper than :data:`MAX_DEPTH`, or a table wider than
    :data:`MAX_COLUMNS` or longer than :data:`MAX_ROWS` is shown verbatim (exactly as written, as
    text), and the ``check`` command reports it.

    Args:
        text: the text as written in the bank (placeholders already filled, or not).

    Returns:
        The document. Text past the limits is one :class:`Verbatim` block, and ``problems``
        says why.
    """
    known = _KNOWN.get(text)
    if known is not None:
        return known
    if not text.strip():
        return Doc(text, ())
    if len(text) > MAX_TEXT:
        why = f"text of {len(text)} characters (quizgym lays out at most {MAX_TEXT})"
        return Doc(text, (Verbatim(text),), (f"{why}; it is printed as written",))
    if _PLAIN_TEXT.fullmatch(text) and "  " not in text:
        return Doc(text, (Paragraph((Text(text),)),))  # what markdown-it makes of it (a test)
    big = _too_big_table(text)
    if big:
        return Doc(text, (Verbatim(text),), (f"{big}; the text is printed as written",))
    tokens = _parser().parse(text)
    if any(token.level >= _NESTING - 2 for token in tokens):
        return _deep(text)
    from markdown_it.tree import SyntaxTreeNode

    reader = _Reader()
    try:
        blocks = tuple(
            block for node in SyntaxTreeNode(tokens).children for block in reader.block(node, 0)
        )
    except _TooDeepError:
        return _deep(text)
    return Doc(text, blocks, tuple(dict.fromkeys(reader.problems)))


def _deep(text: str) -> Doc:
    why = f"lists or quotes nested more than {MAX_DEPTH} deep; the text is printed as written"
    return Doc(text, (Verbatim(text),), (why,))


class _Reader:
    """Turns markdown-it's syntax tree into ours, collecting what it had to leave out."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def block(self, node: SyntaxTreeNode, depth: int) -> list[Block]:
        kind = node.type
        if kind == "paragraph":
            return [Paragraph(self.inline(node))]
        if kind in {"bullet_list", "ordered_list"}:
            if depth >= MAX_DEPTH:
                raise _TooDeepError
            items = tuple(
                tuple(b for child in item.children for b in self.block(child, depth + 1))
                for item in node.children
            )
            tight = all(
                child.hidden for item in node.children for child in item.children
                if child.type == "paragraph"
            )  # fmt: skip
            start = _int(node.attrs.get("start"), 1) if kind == "ordered_list" else 1
            return [ListBlock(kind == "ordered_list", start, tight, items)]
        if kind == "blockquote":
            if depth >= MAX_DEPTH:
                raise _TooDeepError
            return [Quote(tuple(b for c in node.children for b in self.block(c, depth + 1)))]
        if kind in {"code_block", "fence"}:
            return [CodeBlock(node.content.rstrip("\n"))]
        if kind == "math_block":
            return [MathBlock(node.content.strip())]
        if kind == "hr":
            return [Rule()]
        if kind == "table":
            return [self.table(node)]
        # Anything else markdown-it may grow (nothing today, with html off) prints as text.
        return [Paragraph((Text(node.content),))] if node.content else []

    def table(self, node: SyntaxTreeNode) -> Table:
        rows: list[list[tuple[str, tuple[Inline, ...]]]] = []
        for section in node.children:
            for tr in section.children:
                rows.append(
                    [(_align(cell.attrs.get("style")), self.inline(cell)) for cell in tr.children]
                )
        head = rows[0] if rows else []
        aligns = tuple(a for a, _ in head)
        width = len(head)
        body = tuple(
            tuple(c for _, c in row[:width]) + ((),) * (width - len(row)) for row in rows[1:]
        )
        return Table(aligns, tuple(c for _, c in head), body)

    def inline(self, node: SyntaxTreeNode) -> tuple[Inline, ...]:
        pieces: list[Inline] = []
        for child in node.children:
            if child.type == "inline":
                pieces += self.pieces(child.children)
        return _merge(pieces)

    def pieces(self, nodes: list[SyntaxTreeNode]) -> list[Inline]:
        out: list[Inline] = []
        for node in nodes:
            kind = node.type
            if kind in {"text", "text_special"}:
                out.append(Text(node.content))
            elif kind == "softbreak":
                out.append(Text("\n"))
            elif kind == "hardbreak":
                out.append(Break())
            elif kind == "code_inline":
                out.append(Code(node.content))
            elif kind == "math_inline":
                out.append(Math(node.content.strip()))
            elif kind == "math_inline_double":
                out.append(Math(node.content.strip(), display=True))
            elif kind == "em":
                out.append(Emph(_merge(self.pieces(node.children))))
            elif kind == "strong":
                out.append(Strong(_merge(self.pieces(node.children))))
            elif kind == "link":
                href = str(node.attrs.get("href", ""))
                label = _merge(self.pieces(node.children))
                if href.lower().startswith(LINK_SCHEMES):
                    out.append(Link(href, label))
                else:
                    self.problems.append(
                        f"the link to {href or '(nothing)'} is printed as text: links may only "
                        "point to http, https or mailto addresses"
                    )
                    out += [Text("["), *label, Text(f"]({href})")]
            elif kind == "image":
                alt = _flat(self.pieces(node.children))
                out.append(Image(unquote(str(node.attrs.get("src", ""))), alt))
            else:  # pragma: no cover - markdown-it's inline types are all handled above
                out.append(Text(node.content))
        return out


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _align(style: Any) -> str:
    match = re.search(r"text-align:\s*(left|center|right)", str(style or ""))
    return match.group(1) if match else ""


def _merge(pieces: list[Inline]) -> tuple[Inline, ...]:
    out: list[Inline] = []
    for piece in pieces:
        if isinstance(piece, Text) and out and isinstance(out[-1], Text):
            out[-1] = Text(out[-1].text + piece.text)
        elif not (isinstance(piece, Text) and not piece.text):
            out.append(piece)
    return tuple(out)


def _flat(pieces: list[Inline]) -> str:
    """Inline pieces as their plain characters (an image's alt text)."""
    out = []
    for piece in pieces:
        if isinstance(piece, Text | Code):
            out.append(piece.text)
        elif isinstance(piece, Math):
            out.append(piece.tex)
        elif isinstance(piece, Emph | Strong | Link):
            out.append(_flat(list(piece.children)))
        elif isinstance(piece, Image):
            out.append(piece.alt)
    return " ".join("".join(out).split())
