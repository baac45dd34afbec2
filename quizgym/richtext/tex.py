"""A LaTeX formula in; sanitised MathML for browsers and QTI, Unicode text for terminals and SVG for
PDF out."""

from __future__ import annotations

import contextvars
import functools
import html
import re
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass

MATHML_NS = "http://www.w3.org/1998/Math/MathML"
_Q = f"{{{MATHML_NS}}}"

MAX_TEX = 2000
"""Longest formula read, in characters (a formula is a line or two of TeX, not a document)."""
MAX_GROUPS = 24
"""Deepest nesting of ``{…}`` groups read (the parser recurses once per level)."""
MAX_NESTING = 6
"""Deepest nesting of a formula's layout (fractions, roots, powers, indices, brackets, tables
inside each other) that is drawn. Each level doubles the time ziamath takes to draw a formula:
six levels take 0.1-0.5 s, sixteen took over a minute per PDF page (docs/performance.md)."""
_LAYOUT = frozenset(
    {"mfrac", "msqrt", "mroot", "msup", "msub", "msubsup", "munder", "mover", "munderover"}
    | {"mtable", "mtr", "mtd"}
)

ELEMENTS = frozenset(
    [
        "math",
        "mrow",
        "mi",
        "mn",
        "mo",
        "ms",
        "mtext",
        "mspace",
        "msub",
        "msup",
        "msubsup",
        "mfrac",
        "msqrt",
        "mroot",
        "mover",
        "munder",
        "munderover",
        "mtable",
        "mtr",
        "mtd",
        "mstyle",
        "mpadded",
        "mphantom",
        "menclose",
        "merror",
        "mfenced",
    ]
)
"""Presentation MathML that formulas may produce (no ``semantics``, ``maction`` or links)."""
ATTRIBUTES = frozenset(
    [
        "display",
        "mathvariant",
        "stretchy",
        "fence",
        "form",
        "separator",
        "accent",
        "accentunder",
        "columnalign",
        "rowalign",
        "columnspacing",
        "rowspacing",
        "columnlines",
        "rowlines",
        "frame",
        "width",
        "height",
        "depth",
        "lspace",
        "rspace",
        "displaystyle",
        "scriptlevel",
        "linethickness",
        "notation",
        "minsize",
        "maxsize",
        "movablelimits",
        "largeop",
        "symmetric",
        "mathcolor",
        "mathbackground",
        "open",
        "close",
        "separators",
    ]
)

# latex2mathml maps \setminus to U+29F5 (reverse solidus operator), which common fonts lack;
# U+2216 SET MINUS is the character LaTeX's own Unicode tables give it.
_REMAP = str.maketrans({"\u29f5": "\u2216"})
_COMMAND = re.compile(r"\\[A-Za-z]+")


@dataclass(frozen=True)
class Formula:
    """One formula read: its sanitised MathML (or None) and what is wrong with it."""

    tex: str
    display: bool
    element: ET.Element | None
    problems: tuple[str, ...]


def _depth(tex: str) -> int:
    depth = deepest = 0
    escaped = False
    for ch in tex:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return -1
    return deepest if depth == 0 else -1


def _clean(element: ET.Element, problems: list[str]) -> ET.Element | None:
    """A copy of a latex2mathml element with only allowed elements and attributes."""
    name = element.tag.removeprefix(_Q)
    if name not in ELEMENTS:
        problems.append(f"the formula makes <{name}>, which quizgym does not print")
        return None
    out = ET.Element(name)
    for key, value in element.attrib.items():
        if key in ATTRIBUTES:
            out.set(key, value)
        elif key == "href":
            problems.append("links in formulas (\\href) are not printed")
    if element.text:
        # latex2mathml leaves its own character references (&#x02211;) as literal text.
        out.text = html.unescape(element.text).translate(_REMAP)
        if name in {"mi", "mo"} and _COMMAND.fullmatch(out.text):
            problems.append(f"unknown LaTeX command {out.text}")
    for child in element:
        cleaned = _clean(child, problems)
        if cleaned is not None:
            out.append(cleaned)
    return out


@functools.lru_cache(maxsize=4096)
def read_tex(tex: str, display: bool = False) -> Formula:
    """Read one formula (never raises).

    One parser reads every formula: latex2mathml turns the TeX into a MathML element tree, which is
    then *sanitised* here (an allow-list of presentation elements and attributes; ``\\href`` links,
    event handlers and anything unknown are dropped and reported), because latex2mathml's own string
    output passes ``\\text{<script>}`` through unescaped. The same tree is read back as plain
    Unicode text for the drill and the PDF's text layer (``\\bar{x}`` → ``x̄``, ``\\sum_{i \\in M}``
    → ``Σ_{i∈M}``), and drawn as SVG with ziamath for PDF (WeasyPrint draws SVG, but lays MathML out
    as a flat run of characters).

    Every function is a pure function of its text and memoised; none raises for a bad formula:
    :func:`tex_problems` says what is wrong, and the renderers then show the TeX source as code.

    Args:
        tex: the TeX between the dollars, e.g. ``\\bar{x} = \\frac{1}{n}\\sum_i x_i``.
        display: a display formula (``$$…$$``).

    Returns:
        The formula; ``element`` is None when it cannot be read, and ``problems`` says why.
    """
    if not tex.strip():
        return Formula(tex, display, None, ("an empty formula",))
    if len(tex) > MAX_TEX:
        return Formula(tex, display, None, (f"a formula longer than {MAX_TEX} characters",))
    depth = _depth(tex)
    if depth < 0:
        return Formula(tex, display, None, ("unbalanced braces { } in the formula",))
    if depth > MAX_GROUPS:
        message = f"braces nested more than {MAX_GROUPS} deep in the formula"
        return Formula(tex, display, None, (message,))
    from latex2mathml.converter import convert_to_element

    try:
        raw = convert_to_element(tex, display="block" if display else "inline")
    except Exception as exc:  # noqa: BLE001 (any failure of the parser is a bad formula)
        detail = str(exc).strip() or type(exc).__name__
        return Formula(tex, display, None, (f"the formula does not parse: {detail}",))
    problems: list[str] = []
    element = _clean(raw, problems)
    if element is not None and _nesting(element) > MAX_NESTING:  # MathML and text still are
        problems.append(
            f"a formula nested more than {MAX_NESTING} deep (fractions, roots, powers or "
            "brackets inside each other) takes too long to draw; split it, or name a part"
        )
    return Formula(tex, display, element, tuple(dict.fromkeys(problems)))


def _nesting(element: ET.Element, parent: str = "math") -> int:
    """How deep a formula's layout nests: each layout element counts, and each group that is
    not a layout element's own argument (``\\left( … \\right)``, ``{…}`` in a row)."""
    name = element.tag
    own = name in _LAYOUT or (name == "mrow" and parent not in _LAYOUT and parent != "math")
    below = max((_nesting(child, name) for child in element), default=0)
    return below + (1 if own else 0)


def tex_problems(tex: str, *, display: bool = False) -> tuple[str, ...]:
    """What is wrong with a formula (empty when it prints)."""
    return read_tex(tex, display).problems


@functools.lru_cache(maxsize=4096)
def tex_to_mathml(tex: str, display: bool = False) -> str | None:
    """The formula as a ``<math>`` element (a string), or None when it cannot be read."""
    formula = read_tex(tex, display)
    if formula.element is None:
        return None
    text = ET.tostring(formula.element, encoding="unicode", short_empty_elements=True)
    # The namespace, for XML readers (QTI); HTML allows exactly this xmlns on <math>.
    return text.replace("<math", f'<math xmlns="{MATHML_NS}"', 1)


# --- plain Unicode text ---------------------------------------------------------------------------

_SUB = dict(
    zip("0123456789+-−=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ", strict=True)
)
_SUP = dict(
    zip("0123456789+-−=()in⊤T", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁱⁿᵀᵀ", strict=True)  # noqa: RUF001
)
_ACCENTS = {
    "\u00af": "\u0304",  # macron: x̄
    "\u203e": "\u0305",  # overline
    "^": "\u0302",  # hat: ŷ
    "\u02c6": "\u0302",
    "~": "\u0303",  # tilde: x̃
    "\u02dc": "\u0303",
    "\u02d9": "\u0307",  # dot: ẋ
    "\u00a8": "\u0308",  # double dot: ẍ
    "\u2192": "\u20d7",  # vector arrow: v⃗
    "\u02c7": "\u030c",  # caron
}
_SMALL: contextvars.ContextVar[bool] = contextvars.ContextVar("small_scripts", default=True)
_SPACED = set("=<>≤≥≈≠≡∼≃→←↔⇒⇐⇔∈∉⊂⊆⊃⊇∝×÷±∓·+−∣|") | {"-"}
_FUNCTIONS = re.compile(r"[A-Za-z]{2,}")


def _atom(text: str) -> bool:
    """Whether a piece of text reads as one symbol after _ or ^ (no brackets needed)."""
    return bool(re.fullmatch(r".|∖?\w+|[+\-−]?[0-9.]+|\W\w?", text))


def _script(text: str, table: dict[str, str], mark: str) -> str:
    text = text.replace(" ", "")  # scripts read tight: Σ_{i∈M}, not Σ_{i ∈ M}
    if text and _SMALL.get() and all(ch in table for ch in text):
        return "".join(table[ch] for ch in text)
    if _atom(text):
        return f"{mark}{text}"
    return f"{mark}{{{text}}}"


def _group(text: str) -> str:
    return text if _atom(text) or (text.startswith("(") and text.endswith(")")) else f"({text})"


def _plain(element: ET.Element) -> str:
    name = element.tag.removeprefix(_Q)
    kids = list(element)
    text = element.text or ""
    if name in {"mi", "mn", "mtext", "ms"}:
        return text
    if name == "mo":
        return text
    if name == "mspace":
        return " "
    if name in {"msub", "munder"} and len(kids) == 2:
        return _plain(kids[0]) + _script(_plain(kids[1]), _SUB, "_")
    if name in {"msup"} and len(kids) == 2:
        return _plain(kids[0]) + _script(_plain(kids[1]), _SUP, "^")
    if name in {"msubsup", "munderover"} and len(kids) == 3:
        return (
            _plain(kids[0])
            + _script(_plain(kids[1]), _SUB, "_")
            + _script(_plain(kids[2]), _SUP, "^")
        )
    if name == "mover" and len(kids) == 2:
        base, accent = _plain(kids[0]), _plain(kids[1])
        combining = _ACCENTS.get(accent)
        if combining and len(base) == 1:
            return base + combining
        if combining:
            return f"({base}){combining}"
        return base + _script(accent, _SUP, "^")
    if name == "mfrac" and len(kids) == 2:
        return f"{_group(_plain(kids[0]))}/{_group(_plain(kids[1]))}"
    if name == "msqrt":
        return "√" + _group(_row(kids))
    if name == "mroot" and len(kids) == 2:
        index = _plain(kids[1])
        prefix = {"3": "∛", "4": "∜"}.get(index)
        return (prefix or _script(index, _SUP, "^") + "√") + _group(_plain(kids[0]))
    if name == "mtable":
        return "; ".join(", ".join(_row(list(cell)) for cell in row) for row in kids)
    if name == "mphantom":
        return ""
    return _row(kids)


_SCRIPTED = {"msub", "msup", "msubsup", "munder", "munderover", "mover", "mfrac"}
_LARGE = set("∑∏∐∫∬∭∮⋃⋂⨁⨂")


def _row(kids: list[ET.Element]) -> str:
    """An mrow's children as text: spaced relations and binary operators, spaced function names,
    a space after a sum's limits and between scripted symbols (``xᵢ yⱼ``)."""
    out = ""
    pieces = [_plain(kid) for kid in kids]  # once each: a nested row is never re-read
    for index, kid in enumerate(kids):
        piece = pieces[index]
        name = kid.tag.removeprefix(_Q)
        before = kids[index - 1] if index else None
        before_text = pieces[index - 1] if index else ""
        opens = name == "mo" and piece in {"(", "[", "{", "|", "∣"}
        if before is not None and (name != "mo" or opens) and out and not out.endswith(" "):
            kind = before.tag.removeprefix(_Q)
            large = kind in _SCRIPTED and before_text[:1] in _LARGE
            glued = opens or piece[:1] in ")]}"  # (x − x̄)², not (x − x̄ )²
            if large or (
                not glued and kind in _SCRIPTED and name in _SCRIPTED | {"mi", "mn", "mrow"}
            ):
                out += " "
        if name == "mo" and piece in _SPACED:
            previous = before.tag.removeprefix(_Q) if before is not None else ""
            unary = before is None or (previous == "mo" and out.rstrip()[-1:] not in ")]}|")
            if unary and piece in "+-−±∓":
                out += piece
                continue
            out = out.rstrip() + f" {piece} "
            continue
        if name == "mo" and piece in {",", ";"}:
            out = out.rstrip() + piece + " "
            continue
        after_function = (
            before is not None
            and not out.endswith(" ")
            and _FUNCTIONS.fullmatch(before_text) is not None
        )
        if after_function and name in {"mi", "mn", "mrow", "msub", "msup", "mfrac"}:
            out += " "  # ln P, not lnP
        out += piece
    return out


@functools.lru_cache(maxsize=4096)
def tex_to_text(tex: str, small_scripts: bool = True) -> str:
    """The formula as plain Unicode text a person reads: ``\\bar{x}`` → ``x̄``.

    Subscripts and superscripts use Unicode's small digits and letters where they exist
    (``x_i`` → ``xᵢ``, ``2^{-3}`` → ``2⁻³``) and ``_``/``^`` otherwise (``Σ_{i∈M}``), or
    always, without ``small_scripts`` (a terminal that prints ASCII: ``x_i``); a fraction reads
    ``a/b``. A formula that cannot be read is its TeX source.
    """
    formula = read_tex(tex)
    if formula.element is None:
        return tex
    token = _SMALL.set(small_scripts)
    try:
        return " ".join(_plain(formula.element).split())
    finally:
        _SMALL.reset(token)


# --- SVG, for PDF ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Drawing:
    """A formula drawn as SVG: the document and its size in CSS pixels."""

    svg: str
    width: float
    height: float
    depth: float
    """How far the drawing reaches below the text's baseline (for ``vertical-align``)."""


@functools.lru_cache(maxsize=2048)
def tex_to_svg(tex: str, display: bool = False, size: float = 14.0) -> Drawing | None:
    """The formula drawn by ziamath (STIX Two Math outlines), or None when it cannot be.

    Args:
        tex: the formula.
        display: a display formula.
        size: the font size in CSS pixels (10.5 pt is 14 px).

    Returns:
        The drawing; None when the formula cannot be read, nests deeper than
        :data:`MAX_NESTING` or ziamath is not installed (the caller then prints its text).
    """
    mathml = tex_to_mathml(tex, display)
    if mathml is None:
        return None
    formula = read_tex(tex, display)
    if formula.element is None or _nesting(formula.element) > MAX_NESTING:
        return None  # its time to draw doubles with each level: printed as text
    # ziamath loads its fonts with importlib.resources.path, deprecated since Python 3.11: its
    # warning is not ours to act on (and is an error under the tests' warning filter).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            import ziamath.zmath
        except ImportError:
            return None
        try:
            drawn = ziamath.zmath.Math(mathml, size=size, margin=0)
            svg = drawn.svg()
        except Exception:  # noqa: BLE001 (a formula ziamath cannot lay out prints as text)
            return None
    root = ET.fromstring(svg)  # noqa: S314 (ziamath's own output, not outside input)
    width = float(root.get("width", "0"))
    height = float(root.get("height", "0"))
    box = [float(v) for v in (root.get("viewBox") or "0 0 0 0").split()]
    depth = height + box[1] if len(box) == 4 else 0.0
    return Drawing(svg, width, height, max(0.0, depth))
