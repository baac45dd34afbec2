"""Every module's docstring opens with one sentence of what goes in and what comes out."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "quizgym"
MODULES = sorted(str(p.relative_to(PACKAGE.parent)) for p in PACKAGE.rglob("*.py"))

NOT_YET: set[str] = set()
"""Modules whose docstring still opens with more than one sentence (work under way elsewhere):
each must still fail the rule, so that this list only shrinks."""

_CODE = re.compile(r"``.*?``|`[^`]*`")
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|et al|etc|cf|vs)\.")
_END = re.compile(r"[.!?](?=\s+[A-Z]|$)")


def sentences(paragraph: str) -> int:
    """How many sentences a paragraph holds: ends of a sentence (``.``, ``!``, ``?`` before a
    capital or at the end), outside code and after the usual abbreviations."""
    text = _ABBREVIATION.sub("x", _CODE.sub("x", " ".join(paragraph.split())))
    return len(_END.findall(text))


def first_paragraph(module: str) -> str:
    doc = ast.get_docstring(ast.parse((PACKAGE.parent / module).read_text(encoding="utf-8")))
    assert doc, f"{module} has no docstring"
    return doc.strip().split("\n\n")[0]


@pytest.mark.parametrize(
    ("paragraph", "count"),
    [
        ("Bank text in, HTML out.", 1),
        ("A bank in, its findings out (e.g. a key that is off), each at ``path:line``.", 1),
        ("Keys in. Values out.", 2),
        ("Are the variants fair? Counts in, a test out.", 2),
        ("A value in, ``x. Y`` out, as Feldt et al. write it.", 1),
        ("Nothing ends here", 0),
    ],
)
def test_sentences_are_counted(paragraph: str, count: int) -> None:
    assert sentences(paragraph) == count


@pytest.mark.parametrize("module", MODULES)
def test_a_module_docstring_opens_with_one_sentence(module: str) -> None:
    count = sentences(first_paragraph(module))
    if module in NOT_YET:
        assert count != 1, f"{module} now opens with one sentence: take it off NOT_YET"
    else:
        assert count == 1, f"{module}: {first_paragraph(module)!r}"
