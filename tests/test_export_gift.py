"""GIFT export, parsed by gift-pegjs (the npm package) and compared with the bank item by item."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from export_checkers import (
    MOODLE_GRADES,
    SPECIAL,
    expected_slots,
    holds,
    inside,
    parse_gift,
    plain,
    said,
    strip_tags,
)

from quizgym.export import exporter
from quizgym.export.gift import gift_escape
from quizgym.export.plan import html_text
from quizgym.loader import load_bank
from quizgym.model import Bank, FreeText, MultipleChoice, Numeric, SpotTheError, TrueFalse
from quizgym.solver import slots

pytestmark = pytest.mark.slow


def _text(field: Any) -> str:
    return strip_tags(field["text"]) if field else ""


def _parsed(bank: Bank, tmp_path: Path, **options: int) -> list[dict[str, Any]]:
    path = tmp_path / "bank.gift"
    exporter("gift", bank, **options).save(path)
    return [q for q in parse_gift(path) if q["type"] != "Category"]


@pytest.fixture(scope="module")
def bert() -> Bank:
    return load_bank("bert-mlm")


@pytest.fixture(scope="module")
def special() -> Bank:
    return load_bank(SPECIAL)


def check_against_bank(bank: Bank, parsed: list[dict[str, Any]], seed: int | None = None) -> int:
    """Hold every parsed question to its bank question; return how many were checked."""
    by_title = {q["title"]: q for q in parsed}
    checked = 0
    for question in bank.questions:
        suffix = "" if seed is None else f".seed{seed}"
        if isinstance(question, Numeric):
            for expected in expected_slots(bank, question, seed if suffix else None):
                title = question.id + suffix + (f".{expected.part}" if expected.part else "")
                if title not in by_title and suffix:
                    title = title.replace(suffix, "", 1)
                got = by_title[title]
                assert got["type"] == "Numerical", title
                full = [
                    (
                        c["text"]["number"] - c["text"]["range"],
                        c["text"]["number"] + c["text"]["range"],
                    )
                    for c in got["choices"]
                    if c["weight"] == 100
                ]
                assert inside(full, expected.low, expected.high), (title, full, expected)
                assert holds(full, expected.key), (title, full, expected)
                for value, feedback, credit in expected.mistakes:
                    matches = [
                        c
                        for c in got["choices"]
                        if c["weight"] == pytest.approx(credit * 100)
                        and abs(c["text"]["number"] - value) <= c["text"]["range"] + 1e-12
                        and plain(_text(c["feedback"])) == plain(feedback)
                    ]
                    assert matches, (title, value, feedback)
                checked += 1
            continue
        got = by_title[question.id]
        stem = _text(got["stem"])
        if isinstance(question, TrueFalse):
            assert got["type"] == "TF"
            assert got["isTrue"] is question.answer
            # Moodle shows the first feedback to a student who is wrong: compare by position.
            wrong = "true" if question.answer else "false"
            assert _text(got["trueFeedback"]) == f"The statement is {wrong}."
            assert plain(stem) == said(question.prompt)
        elif isinstance(question, MultipleChoice | SpotTheError):
            assert got["type"] == "MC"
            if isinstance(question, SpotTheError):
                assert plain(stem) == said(f"{question.statement} {question.prompt}")
            else:
                assert plain(stem) == said(question.prompt)
            choices = got["choices"]
            assert [_text(c["text"]) for c in choices] == [c.text for c in question.choices]
            assert [_text(c["feedback"]) for c in choices] == [
                c.feedback or "" for c in question.choices
            ]
            if isinstance(question, MultipleChoice) and question.multiple:
                weights = [c["weight"] for c in choices]
                assert all(min(abs(abs(w) - g) for g in MOODLE_GRADES) < 1e-5 for w in weights)
                assert sum(w for w in weights if w > 0) == pytest.approx(100, abs=1e-3)
            else:
                assert [c["isCorrect"] for c in choices] == [c.correct for c in question.choices]
        elif isinstance(question, FreeText):
            assert got["type"] == "Essay"
            assert plain(_text(got["globalFeedback"])).startswith(
                said(f"Model answer: {question.model_answer}")
            )
        if question.explanation and not isinstance(question, FreeText):
            assert said(question.explanation) in plain(_text(got["globalFeedback"]))
        assert got["id"] == question.id
        assert (got["tags"] or []) == question.tags
        checked += 1
    return checked


def test_bundled_bank_parses_and_matches(bert: Bank, tmp_path: Path) -> None:
    parsed = _parsed(bert, tmp_path)
    parts = sum(len(slots(q)) for q in bert.questions if isinstance(q, Numeric))
    numeric = sum(1 for q in bert.questions if isinstance(q, Numeric))
    assert len(parsed) == len(bert.questions) - numeric + parts
    assert check_against_bank(bert, parsed) == len(parsed)


def test_special_characters_round_trip(special: Bank, tmp_path: Path) -> None:
    parsed = _parsed(special, tmp_path)
    assert check_against_bank(special, parsed) == len(parsed)
    choice = next(q for q in parsed if q["title"] == "mc-specials")["choices"][0]
    assert choice["weight"] is None  # "%50%answer" is text, not a weight
    assert _text(choice["text"]) == "%50%answer#feedback"


def test_variants_become_categories_of_pools(special: Bank, tmp_path: Path) -> None:
    path = tmp_path / "v.gift"
    exporter("gift", special, variants=3, seed=5).save(path)
    everything = parse_gift(path)
    categories = [q["title"] for q in everything if q["type"] == "Category"]
    assert "$course$/top/quizgym/special-chars/variants/num-specials" in categories
    titles = [q["title"] for q in everything if q["type"] != "Category"]
    assert "num-specials.seed5" in titles
    assert "num-parts-specials.seed5.total" in titles
    parsed = [q for q in everything if q["type"] != "Category"]
    check_against_bank(special, parsed, seed=5)


def test_golden(special: Bank, update_goldens: bool) -> None:
    golden = Path(__file__).parent / "goldens" / "export" / "special-chars.gift"
    data = exporter("gift", special, variants=2, seed=1).to_bytes()
    if update_goldens:
        golden.write_bytes(data)
    assert data == golden.read_bytes()


ESCAPE_TABLE = [
    "a~b=c#d{e}f:g\\h",
    "%50%weight-like",
    "ends with backslash \\",
    "\\{ already escaped? \\}",
    "[MASK] and [html] mid-text",
    "line one\nline two",
    "::not a title::",
    "####not feedback",
    "&amp; literally, <tag>",
]


def test_escaping_survives_any_text(tmp_path: Path) -> None:
    rng = random.Random(7)
    alphabet = list("ab ~=#{}:\\%<>&[]\n")
    texts = ESCAPE_TABLE + [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 20))) for _ in range(300)
    ]
    texts = [t for t in texts if t.strip()]
    blocks = []
    for n, text in enumerate(texts):
        stem = gift_escape(html_text(text))
        answer = gift_escape(html_text(text.strip()), answer=True)
        blocks.append(f"::t{n}::[html]x{stem}{{\n=ok\n~{answer}\n}}")
    path = tmp_path / "many.gift"
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    parsed = parse_gift(path)
    assert len(parsed) == len(texts)
    for text, question in zip(texts, parsed, strict=True):
        assert plain(_text(question["stem"])) == plain("x" + text), text
        assert plain(_text(question["choices"][1]["text"])) == plain(text.strip()), text
