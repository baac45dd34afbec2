"""Independent checkers for the export tests, and what the bank says each item must be.

The checkers are the consumers' own parsers or schemas (gift-pegjs, the QTI DTD and XSDs, the
IMS CP schema, the anki package); the expectations come from the bank and the engine's public
functions (keys_of, interval, mistakes_for), never from the exporters' own plan.
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import require_tool

from quizgym.answers import mistakes_for
from quizgym.model import Bank, Numeric
from quizgym.richtext import HtmlStyle, html_plain, parse, to_html
from quizgym.solver import keys_of, slots, variant_of
from quizgym.tolerance import interval

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
SPECIAL = DATA / "special-chars.yaml"
GIFT_PARSER = Path(__file__).resolve().parent / "js" / "parse-gift.js"

# Moodle's question_bank::fraction_options_full(), restated from the reference, as percentages.
MOODLE_GRADES = [
    100, 90, 83.33333, 80, 75, 70, 66.66667, 60, 50, 40, 33.33333, 30, 25, 20, 16.66667,
    14.28571, 12.5, 11.11111, 10, 5, 0,
]  # fmt: skip


def _missing(message: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


SCHEMAS = REPO / "quizgym" / "export" / "schemas"
"""The official schemas, inside the project (package data; see its README for the licences)."""


def strip_tags(text: str) -> str:
    """HTML as the plain text a student reads."""
    return html.unescape(re.sub(r"<[^>]+>", " ", text.replace("<br>", "\n"))).strip()


def plain(text: str) -> str:
    """Compare texts with whitespace folded (HTML rendering folds it too)."""
    return " ".join(text.split())


def said(text: str, math: str = "tex") -> str:
    """What bank text (Markdown) says, as an LMS shows it in plain text, whitespace folded:
    backslash escapes read, emphasis markers gone, formulas as their ``\\(…\\)`` TeX (the
    LMS's filter draws them) or, with ``math="mathml"``, as MathML's characters (QTI 2.1)."""
    style = HtmlStyle(math=math, image=lambda image: image.src)
    return plain(html_plain(to_html(parse(text), style, inline=False)))


def parse_gift(path: Path) -> list[dict[str, object]]:
    """Parse a GIFT file with gift-pegjs (exits 1 with a location on a syntax error)."""
    node = require_tool("node")
    if not (GIFT_PARSER.parent / "node_modules" / "gift-pegjs").is_dir():
        _missing("gift-pegjs is not installed (make test runs scripts/setup.d/50-export.sh)")
    done = subprocess.run(
        [node, str(GIFT_PARSER), str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    result: list[dict[str, object]] = json.loads(done.stdout)
    return result


def strip_namespaces(doc: object) -> object:
    """Remove namespaces and xsi attributes (a DTD is namespace-blind)."""
    from lxml import etree

    for element in doc.iter():  # type: ignore[attr-defined]
        if isinstance(element.tag, str) and element.tag.startswith("{"):
            element.tag = etree.QName(element).localname
        for attr in [a for a in element.attrib if a.startswith("{")]:
            del element.attrib[attr]
    etree.cleanup_namespaces(doc)
    return doc


@functools.cache
def qti12_dtd() -> object:
    from lxml import etree

    return etree.DTD(str(SCHEMAS / "qti12" / "ims_qtiasiv1p2p1.dtd"))


@functools.cache
def qti21_schema() -> object:
    from lxml import etree

    return etree.XMLSchema(etree.parse(str(SCHEMAS / "qti21" / "qtiv2p1" / "imsqti_v2p1.xsd")))


@functools.cache
def cp_schema() -> object:
    from lxml import etree

    return etree.XMLSchema(etree.parse(str(SCHEMAS / "qti21" / "imscp_v1p1.xsd")))


@dataclass(frozen=True)
class ExpectedSlot:
    """What the engine says one numeric blank accepts and which mistakes it knows."""

    part: str | None
    key: float
    low: float
    high: float
    mistakes: list[tuple[float, str, float]]  # value, feedback, credit


def expected_slots(bank: Bank, question: Numeric, seed: int | None = None) -> list[ExpectedSlot]:
    """Keys, accepted intervals and mistakes of a numeric question from the engine."""
    variant = variant_of(bank, question, student=None, seed=seed)
    out = []
    for index, ((part, slot), key) in enumerate(
        zip(slots(question), keys_of(bank, question, variant), strict=True)
    ):
        tolerance = slot.tolerance if slot.tolerance is not None else bank.defaults.tolerance
        low, high = interval(key=key.number, tolerance=tolerance)
        mistakes = [
            (m.value, m.feedback, m.credit) for m in mistakes_for(bank, question, variant, index)
        ]
        out.append(ExpectedSlot(part, key.number, low, high, mistakes))
    return out


def covers(ranges: list[tuple[float, float]], low: float, high: float) -> bool:
    """Whether the union of closed ranges is [low, high] (ends may be wider by a relative 1e-7)."""
    slack = 1e-7 * max(abs(low), abs(high), high - low)
    if not ranges:
        return False
    lo = min(r[0] for r in ranges)
    hi = max(r[1] for r in ranges)
    inside = all(r[0] >= low - slack and r[1] <= high + slack for r in ranges)
    return inside and lo <= low + 1e-15 and hi >= high - 1e-15 and _connected(ranges)


def _connected(ranges: list[tuple[float, float]]) -> bool:
    ordered = sorted(ranges)
    reach = ordered[0][1]
    for lo, hi in ordered[1:]:
        if lo > reach:
            return False
        reach = max(reach, hi)
    return True


def inside(ranges: list[tuple[float, float]], low: float, high: float) -> bool:
    """Whether every closed range lies within [low, high] (ends may be wider by a relative 1e-9).

    An export holds exactly what the engine accepts (the scoring tests prove it answer by
    answer); structurally, no full-credit range may reach past the engine's outer interval.
    """
    slack = 1e-9 * max(abs(low), abs(high), high - low)
    return bool(ranges) and all(r[0] >= low - slack and r[1] <= high + slack for r in ranges)


def holds(ranges: list[tuple[float, float]], value: float) -> bool:
    """Whether a value lies in one of the ranges."""
    return any(r[0] <= value <= r[1] for r in ranges)
