"""The parsed form of one piece of bank text, from which every output is written: a small tree of
blocks and inline pieces."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

# --- inline pieces --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Text:
    """Literal text (a soft line break is a newline in it)."""

    text: str


@dataclass(frozen=True, slots=True)
class Code:
    """A code span: ``x = 1``, shown in a fixed-width font, never interpreted."""

    text: str


@dataclass(frozen=True, slots=True)
class Math:
    """A formula in LaTeX: ``$…$`` (inline) or ``$$…$$`` inside a paragraph (display)."""

    tex: str
    display: bool = False


@dataclass(frozen=True, slots=True)
class Emph:
    """Emphasis: ``*word*`` or ``_word_``."""

    children: tuple[Inline, ...]


@dataclass(frozen=True, slots=True)
class Strong:
    """Strong emphasis: ``**word**``."""

    children: tuple[Inline, ...]


@dataclass(frozen=True, slots=True)
class Link:
    """A link to a web page (``http``, ``https`` or ``mailto`` only)."""

    href: str
    children: tuple[Inline, ...]


@dataclass(frozen=True, slots=True)
class Image:
    """An image: ``![alt](figures/x.png)``, a path relative to the bank's file."""

    src: str
    alt: str


@dataclass(frozen=True, slots=True)
class Break:
    """A hard line break (two spaces or a backslash at the end of a line)."""


Inline = Text | Code | Math | Emph | Strong | Link | Image | Break

# --- blocks ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Paragraph:
    """A paragraph of inline pieces."""

    children: tuple[Inline, ...]


@dataclass(frozen=True, slots=True)
class ListBlock:
    """A bulleted or numbered list; each item is a sequence of blocks."""

    ordered: bool
    start: int
    tight: bool
    """A tight list's paragraphs print without the space between paragraphs."""
    items: tuple[tuple[Block, ...], ...]


@dataclass(frozen=True, slots=True)
class Quote:
    """A block quote (``> …``)."""

    children: tuple[Block, ...]


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """A code block (indented or fenced), shown as is."""

    text: str


@dataclass(frozen=True, slots=True)
class MathBlock:
    """A display formula on its own lines: ``$$ … $$``."""

    tex: str


Cell = tuple[Inline, ...]


@dataclass(frozen=True, slots=True)
class Table:
    """A table (GitHub's pipe syntax): a header row and body rows of equal width."""

    aligns: tuple[str, ...]
    """Per column: ``left``, ``center``, ``right`` or ``''`` (the reader's default)."""
    head: tuple[Cell, ...]
    rows: tuple[tuple[Cell, ...], ...]


@dataclass(frozen=True, slots=True)
class Rule:
    """A thematic break (``---``)."""


@dataclass(frozen=True, slots=True)
class Verbatim:
    """Text shown exactly as written, because it is past what quizgym lays out (see limits)."""

    text: str


Block = Paragraph | ListBlock | Quote | CodeBlock | MathBlock | Table | Rule | Verbatim


@dataclass(frozen=True)
class Doc:
    """One field of a bank (a prompt, a choice, a feedback …) parsed.

    ``problems`` lists what did not parse as the author meant (the ``check`` command reports
    them); the document still prints, with such text shown literally.

    Every output (HTML, Markdown, plain text, the terminal, each LMS format) is written from this
    tree, never from the Markdown source, so what a bank says reaches every output the same way and
    nothing the tree does not hold (raw HTML, scripts, unknown link schemes) can reach any of them.
    """

    source: str
    blocks: tuple[Block, ...]
    problems: tuple[str, ...] = ()

    @property
    def inline(self) -> tuple[Inline, ...] | None:
        """The inline pieces when the text is one paragraph (most bank text), else None."""
        if len(self.blocks) == 1 and isinstance(self.blocks[0], Paragraph):
            return self.blocks[0].children
        if not self.blocks:
            return ()
        return None

    def inlines(self) -> Iterator[Inline]:
        """Every inline piece, depth first (images, formulas and code included)."""
        for block in self.blocks:
            yield from _block_inlines(block)

    def images(self) -> list[Image]:
        """Every image, in order."""
        return [piece for piece in self.inlines() if isinstance(piece, Image)]

    def formulas(self) -> list[Math]:
        """Every formula, in order (display blocks as display formulas)."""
        out: list[Math] = []
        for block in self.blocks:
            out += _block_math(block)
        return out


def _block_math(block: Block) -> list[Math]:
    if isinstance(block, MathBlock):
        return [Math(block.tex, display=True)]
    if isinstance(block, ListBlock):
        return [m for item in block.items for b in item for m in _block_math(b)]
    if isinstance(block, Quote):
        return [m for b in block.children for m in _block_math(b)]
    return [piece for piece in _block_inlines(block) if isinstance(piece, Math)]


def _block_inlines(block: Block) -> Iterator[Inline]:
    if isinstance(block, Paragraph):
        yield from _walk(block.children)
    elif isinstance(block, ListBlock):
        for item in block.items:
            for child in item:
                yield from _block_inlines(child)
    elif isinstance(block, Quote):
        for child in block.children:
            yield from _block_inlines(child)
    elif isinstance(block, Table):
        for cell in (*block.head, *(c for row in block.rows for c in row)):
            yield from _walk(cell)


def _walk(pieces: tuple[Inline, ...]) -> Iterator[Inline]:
    for piece in pieces:
        yield piece
        if isinstance(piece, Emph | Strong | Link):
            yield from _walk(piece.children)
