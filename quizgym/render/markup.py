"""Bank text in; the HTML (with MathML or SVG formulas) or Markdown that a worksheet, a key or the
report shows out, as template filters."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from quizgym.errors import QuizgymError
from quizgym.richtext import (
    HtmlStyle,
    Image,
    MarkdownStyle,
    escape_markdown,
    find_image,
    image_folder,
    parse,
    parse_math,
    plain_text,
    to_html,
    to_markdown,
)
from quizgym.richtext.tree import Doc, Paragraph

__all__ = [
    "FILTERS",
    "Target",
    "escape_markdown",
    "math_html",
    "math_markdown",
    "math_plain",
    "parse_math",
]


@dataclass(frozen=True)
class Target:
    """What a document is rendered for: ``html`` (MathML), ``pdf`` (SVG formulas) or ``md``,
    and the folder its bank's images are found in."""

    kind: str = "html"
    folder: Path | None = None

    def image_url(self, image: Image) -> str:
        """An image as the document refers to it: inlined (HTML, PDF) or the relative path of
        the copy written beside the document (Markdown).

        Raises:
            QuizgymError: the image cannot be found or shipped.
        """
        folder = self.folder or image_folder("")
        try:
            found = find_image(image.src, folder=folder)
        except ValueError as exc:
            raise QuizgymError(str(exc)) from exc
        return found.name if self.kind == "md" else _data_uri(found.path, found.mime)


@functools.lru_cache(maxsize=256)
def _data_uri(path: Path, mime: str) -> str:
    import base64

    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


DEFAULT = Target()


def _html_style(target: Target, variables: frozenset[str]) -> HtmlStyle:
    return HtmlStyle(
        math="svg" if target.kind == "pdf" else "mathml",
        subscripts=True,
        variables=variables,
        image=target.image_url,
        quotes=True,
    )


@functools.lru_cache(maxsize=16384)
def math_html(
    text: str, variables: frozenset[str] = frozenset(), *, target: Target = DEFAULT
) -> Markup:
    """Bank text as safe HTML: inline when one paragraph, blocks otherwise (the ``math``
    filter).

    Every piece of bank text reaches a document through these filters (or Jinja's autoescape); the
    text is parsed once (:func:`quizgym.richtext.parse`) and written as HTML with MathML (browsers),
    HTML with SVG formulas (the HTML WeasyPrint prints to PDF) or Markdown, for the document being
    rendered. Plain text reads as it always has, with ``L_MLM`` printed as L<sub>MLM</sub>.

    The filters a template may use:

    - ``text|math``: HTML, inline when the text is one paragraph (a choice, a sentence), blocks
      otherwise; ``text|math(variables)`` keeps those parameters' placeholders symbolic;
    - ``text|rich("class", tag="p", lead="")``: an element of that class around the text: one
      paragraph is ``<p class="…">`` (or ``tag``), anything longer a ``<div class="…">`` of blocks;
      ``lead`` (HTML) starts the first paragraph (``Correction:``);
    - ``text|md``, ``text|md(variables, indent=2, wrap="**")``: Markdown, inline when one paragraph,
      blocks otherwise (``indent`` indents the lines after the first, inside a list item; ``wrap``
      puts one paragraph in emphasis, ``*`` or ``**``, spelled ``_``/``__`` when the text has
      emphasis of its own; blocks are not wrapped);
    - ``text|md_quote``: Markdown as a block quote, italic when one paragraph;
    - ``text|one_paragraph``: whether the text is a single paragraph (it fits inside a line).
    """
    # Safe by construction: the renderer escapes every piece of bank text.
    return Markup(to_html(parse(str(text)), _html_style(target, variables)))  # noqa: S704


@functools.lru_cache(maxsize=16384)
def math_markdown(
    text: str, variables: frozenset[str] = frozenset(), *, target: Target = DEFAULT
) -> str:
    """Bank text as Markdown that prints what the bank means and nothing else (the ``md``
    filter)."""
    style = MarkdownStyle(
        subscripts=True,
        variables=variables,
        image=Target("md", target.folder).image_url,
    )
    return to_markdown(parse(str(text)), style)


def math_plain(text: str) -> str:
    """Bank text as it reads once printed, without markup (``L_MLM`` → ``LMLM``, formulas in
    Unicode)."""
    return plain_text(text, subscripts=True)


def _target(context: Any) -> Target:
    found = context.get("render_target") if context is not None else None
    return found if isinstance(found, Target) else DEFAULT


@jinja2.pass_context
def _math_filter(context: Any, text: Any, variables: Any = ()) -> Markup:
    return math_html(str(text), frozenset(variables), target=_target(context))


@jinja2.pass_context
def _rich_filter(
    context: Any,
    text: Any,
    cls: str = "",
    tag: str = "p",
    lead: Any = "",
    variables: Any = (),
) -> Markup:
    return _rich(str(text), cls, tag, str(escape(lead)), frozenset(variables), _target(context))


@functools.lru_cache(maxsize=16384)
def _rich(
    text: str, cls: str, tag: str, lead_html: str, variables: frozenset[str], target: Target
) -> Markup:
    style = _html_style(target, variables)
    doc = parse(text)
    css = f' class="{escape(cls)}"' if cls else ""
    if doc.inline is not None:
        body = to_html(doc, style)
        return Markup(f"<{tag}{css}>{lead_html}{body}</{tag}>")  # noqa: S704
    blocks = list(doc.blocks)
    first = ""
    if lead_html:
        if isinstance(blocks[0], Paragraph):
            first = f"<p>{lead_html}{to_html(Doc('', (blocks.pop(0),)), style)}</p>"
        else:
            first = f"<p>{lead_html}</p>"
    rest = to_html(Doc("", tuple(blocks)), style, inline=False) if blocks else ""
    return Markup(f"<div{css}>{first}{rest}</div>")  # noqa: S704


@jinja2.pass_context
def _md_filter(
    context: Any, text: Any, variables: Any = (), indent: int = 0, wrap: str = ""
) -> str:
    out = math_markdown(str(text), frozenset(variables), target=_target(context))
    if wrap and parse(str(text)).inline is not None:
        # Emphasis inside the same emphasis would close it early (*a *b* c*): the other
        # spelling (_, __) nests.
        if wrap in out:
            wrap = wrap.replace("*", "_")
        return f"{wrap}{out}{wrap}"
    return out.replace("\n", "\n" + " " * indent) if indent else out


@jinja2.pass_context
def _md_quote_filter(context: Any, text: Any) -> str:
    doc = parse(str(text))
    out = math_markdown(str(text), target=_target(context))
    if doc.inline is not None:
        return f"> *{out}*"
    return "\n".join(f"> {line}" if line else ">" for line in out.split("\n"))


def _one_paragraph(text: Any) -> bool:
    return parse(str(text)).inline is not None


FILTERS: dict[str, Callable[..., Any]] = {
    "one_paragraph": _one_paragraph,
    "math": _math_filter,
    "rich": _rich_filter,
    "md": _md_filter,
    "md_quote": _md_quote_filter,
}
"""Filters every worksheet and key template may use."""
