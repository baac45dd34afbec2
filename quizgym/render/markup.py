"""Mathematics in bank text, as HTML, Markdown and plain text.

Escaping for HTML and Markdown lives here and only here: everything bank authors and students
write reaches a document through these functions (or Jinja's autoescape).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from markupsafe import Markup, escape

# Banks write mathematics the way people type it: L_MLM, x_i, x_∖M, Σ_{i∈M}, w_(x_i)ᵀ, h_[CLS],
# 2^−3. A subscript starts at "_" after a single letter that is not part of a longer word (so
# mlm_loss and dog_id stay as they are); its argument is {…}, (…), […] or a run of letters and
# digits, optionally after "∖". Everything else is literal text. The same tree prints as HTML
# (<sub>/<sup>), as Markdown (inline <sub>, which CommonMark and GitHub render) and as plain text.

_MATH = re.compile(
    r"(?<!\w)(?P<base>[A-Za-zΑ-Ωα-ω])_"
    r"(?P<sub>\{[^{}]*\}|\((?:[^()]|\([^()]*\))*\)|\[[^\[\]]*\]|∖?[A-Za-z0-9]+)"
    r"|\^(?P<sup>\{[^{}]*\}|[−-]?[0-9]+|[A-Za-z])"
    r"|\{(?P<var>[a-z_][a-z0-9_]*)\}"
)

Node = str | tuple[str, Any]
"""A piece of marked-up text: plain text, ("sub"|"sup", [nodes]) or ("var", name)."""


def parse_math(text: str, *, variables: frozenset[str] = frozenset()) -> list[Node]:
    """Split bank text into plain text, subscripts, superscripts and parameter names.

    Args:
        text: the text as written in the bank.
        variables: parameter names whose ``{name}`` placeholders stay symbolic (answer keys that
            list several variants); other braces are literal.

    Returns:
        The nodes, in order.
    """
    nodes: list[Node] = []
    at = 0
    for match in _MATH.finditer(text):
        if match.group("var") is not None and match.group("var") not in variables:
            continue
        nodes.append(text[at : match.start()])
        at = match.end()
        if match.group("var") is not None:
            nodes.append(("var", match.group("var")))
            continue
        kind = "sub" if match.group("sub") is not None else "sup"
        arg = match.group(kind)
        if arg[0] in "{(":
            arg = arg[1:-1]
        if kind == "sub":
            nodes.append(match.group("base"))
        nodes.append((kind, parse_math(arg, variables=variables)))
    nodes.append(text[at:])
    return [n for n in nodes if n != ""]


def _walk(nodes: list[Node], *, text: Callable[[str], str], tag: Callable[[str, str], str]) -> str:
    out = []
    for node in nodes:
        if isinstance(node, str):
            out.append(text(node))
        elif node[0] == "var":
            out.append(tag("var", text(node[1])))
        else:
            out.append(tag(node[0], _walk(node[1], text=text, tag=tag)))
    return "".join(out)


def _squash(text: str) -> str:
    return " ".join(text.split())


@functools.lru_cache(maxsize=8192)
def math_html(text: str, variables: frozenset[str] = frozenset()) -> Markup:
    """Bank text as safe HTML, with subscripts and superscripts (the ``math`` filter)."""
    # Safe by construction: every piece of bank text is escaped; only our own tags are added.
    return Markup(  # noqa: S704
        _walk(
            parse_math(_squash(str(text)), variables=variables),
            text=lambda s: str(escape(s)),
            tag=lambda name, inner: f"<{name}>{inner}</{name}>",
        )
    )


_MD_SPECIAL = re.compile(r"([\\`*_#~])|(<)|(&(?=#?\w+;))|(\](?=[(\[:]))")


def escape_markdown(text: str) -> str:
    """Make text print literally in Markdown: no emphasis, code, links or raw HTML.

    ``[MASK]`` stays readable: a bracket only becomes a link when ``](``, ``][`` or ``]:``
    follows it, so only such a ``]`` is escaped.
    """

    def one(match: re.Match[str]) -> str:
        if match.group(2):
            return "&lt;"
        if match.group(3):
            return "&amp;"
        return "\\" + match.group(0)

    return _MD_SPECIAL.sub(one, text)


@functools.lru_cache(maxsize=8192)
def math_markdown(text: str, variables: frozenset[str] = frozenset()) -> str:
    """Bank text as Markdown that prints literally, with <sub>/<sup> (the ``md`` filter)."""
    return _walk(
        parse_math(_squash(str(text)), variables=variables),
        text=escape_markdown,
        tag=lambda name, inner: f"*{inner}*" if name == "var" else f"<{name}>{inner}</{name}>",
    )


def math_plain(text: str) -> str:
    """Bank text as it reads once printed, without markup (``L_MLM`` → ``LMLM``)."""
    return _walk(parse_math(_squash(text)), text=str, tag=lambda _name, inner: inner)


def _math_html_filter(text: Any, variables: Any = ()) -> Markup:
    return math_html(str(text), frozenset(variables))


def _math_md_filter(text: Any, variables: Any = ()) -> str:
    return math_markdown(str(text), frozenset(variables))


FILTERS: dict[str, Callable[..., Any]] = {"math": _math_html_filter, "md": _math_md_filter}
"""Filters every worksheet and key template may use."""
