"""Plain bank text (``L_MLM``, ``x_i``, ``Σ_{i∈M}``, ``2^−3``) in, its subscripts and superscripts
as pieces out."""

from __future__ import annotations

import re
from typing import Any

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

    Banks written before formulas existed type mathematics the way people do; worksheets and keys
    keep printing that as they always have. A subscript starts at "_" after a single letter that is
    not part of a longer word (so mlm_loss and dog_id stay as they are); its argument is {…}, (…),
    […] or a run of letters and digits, optionally after "∖". Everything else is literal text. (Text
    inside ``$…$`` is a formula and never read this way.)

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
