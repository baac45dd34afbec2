"""Moodle XML, parsed with lxml and held to the rules of Moodle's importer (format.php).

No XSD exists; the rules restated here are the reference's: every fraction an allowed grade,
true/false answers literally ``true``/``false``, a tolerance on every numerical answer, single
choice with one 100% answer, multiple choice whose positive fractions sum to 100%, Cloze blanks
that match Moodle's ``ANSWER_REGEX``. Then each question is compared with the bank.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from export_checkers import (
    MOODLE_GRADES,
    SPECIAL,
    expected_slots,
    holds,
    inside,
    plain,
    said,
    strip_tags,
)
from lxml import etree

from quizgym.errors import BankError
from quizgym.export import exporter
from quizgym.loader import load_bank, parse_bank
from quizgym.model import Bank, FreeText, MultipleChoice, Numeric, SpotTheError, TrueFalse

NUMBER = r"-?(?:\d+[.,]?\d*|[.,]\d+)(?:[eE][-+]?\d+)?"
# Moodle's multianswer regexes, restated (fixed-width look-behinds, as Python's re needs).
CLOZE = re.compile(r"\{(\d+):(NUMERICAL|NM):((?:[^}\\]|\\.)*)\}")
ALTERNATIVE = re.compile(rf"^(=|%(-?\d+(?:[.,]\d*)?)%)?({NUMBER})(?::({NUMBER}))?(?:#(.*))?$", re.S)


def _allowed(percent: str) -> bool:
    value = abs(float(percent))
    return any(abs(value - grade) < 1e-5 for grade in MOODLE_GRADES)


def _split_unescaped(text: str, sep: str) -> list[str]:
    return [p.replace("\\" + sep, sep) for p in re.split(rf"(?<!\\){re.escape(sep)}", text)]


def _unescape_cloze(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _xml(bank: Bank, **options: int) -> Any:
    data = exporter("moodle", bank, **options).to_bytes()
    return etree.fromstring(data)


def _text(element: Any, path: str) -> str:
    found = element.find(path)
    return strip_tags(found.text or "") if found is not None else ""


def check_rules(quiz: Any) -> None:
    """What Moodle's importer would reject."""
    for question in quiz.iter("question"):
        kind = question.get("type")
        answers = question.findall("answer")
        for answer in answers:
            assert _allowed(answer.get("fraction")), etree.tostring(answer)
        fractions = [float(a.get("fraction")) for a in answers]
        if kind == "truefalse":
            assert sorted(a.findtext("text") for a in answers) == ["false", "true"]
            assert sorted(fractions) == [0, 100]
        elif kind == "numerical":
            assert all(a.find("tolerance") is not None for a in answers)
            assert all(re.fullmatch(NUMBER, a.findtext("tolerance")) for a in answers)
            assert all(re.fullmatch(NUMBER, a.findtext("text")) for a in answers)
            assert 100 in fractions
        elif kind == "multichoice":
            if question.findtext("single") == "true":
                assert fractions.count(100) == 1
            else:
                assert sum(f for f in fractions if f > 0) == pytest.approx(100, abs=1e-3)
        elif kind == "cloze":
            text = question.find("questiontext/text").text
            blanks = CLOZE.findall(text)
            assert blanks, "a cloze question without blanks"
            assert text.count("{") - text.count("\\{") >= len(blanks)
            for _, _, body in blanks:
                alternatives = _split_unescaped(body, "~")
                parsed = [ALTERNATIVE.match(a) for a in alternatives]
                assert all(parsed), alternatives
                assert any(m.group(1) in {"=", "%100%"} for m in parsed if m)
                for m in parsed:
                    assert m is not None
                    if m.group(2) is not None:
                        assert _allowed(m.group(2))


def cloze_blanks(question: Any) -> list[list[tuple[float, float, float, str]]]:
    """Each blank's alternatives as (percent, value, tolerance, feedback)."""
    text = question.find("questiontext/text").text
    out = []
    for _, _, body in CLOZE.findall(text):
        alternatives = []
        for alternative in re.split(r"(?<!\\)~", body):
            m = ALTERNATIVE.match(alternative)
            assert m is not None
            percent = 100.0 if m.group(1) == "=" else float(m.group(2))
            feedback = strip_tags(_unescape_cloze(m.group(5) or ""))
            alternatives.append((percent, float(m.group(3)), float(m.group(4) or 0), feedback))
        out.append(alternatives)
    return out


def check_against_bank(bank: Bank, quiz: Any) -> int:
    by_id = {
        q.findtext("idnumber"): q for q in quiz.iter("question") if q.get("type") != "category"
    }
    for question in bank.questions:
        got = by_id[question.id]
        assert got.findtext("name/text") == question.id
        stem = _text(got, "questiontext/text")
        tags = [t.findtext("text") for t in got.iterfind("tags/tag")]
        assert tags == question.tags
        if question.explanation:
            assert said(question.explanation) in plain(_text(got, "generalfeedback/text"))
        if isinstance(question, TrueFalse):
            assert got.get("type") == "truefalse"
            right = next(a for a in got.iter("answer") if a.get("fraction") == "100")
            assert right.findtext("text") == ("true" if question.answer else "false")
            wrong = next(a for a in got.iter("answer") if a.get("fraction") == "0")
            assert _text(wrong, "feedback/text") == f"The statement is {right.findtext('text')}."
            assert plain(stem) == said(question.prompt)
        elif isinstance(question, MultipleChoice | SpotTheError):
            assert got.get("type") == "multichoice"
            answers = got.findall("answer")
            assert [_text(a, "text") for a in answers] == [c.text for c in question.choices]
            assert [_text(a, "feedback/text") for a in answers] == [
                c.feedback or "" for c in question.choices
            ]
            assert [float(a.get("fraction")) > 0 for a in answers] == [
                c.correct for c in question.choices
            ]
            if isinstance(question, SpotTheError):
                assert said(question.statement) in plain(stem)
                assert said(question.correction) in plain(_text(got, "generalfeedback/text"))
            assert got.findtext("shuffleanswers") == ("true" if question.shuffle else "false")
        elif isinstance(question, FreeText):
            assert got.get("type") == "essay"
            assert said(question.model_answer) in plain(_text(got, "graderinfo/text"))
        else:
            assert isinstance(question, Numeric)
            expected = expected_slots(bank, question)
            if question.parts:
                assert got.get("type") == "cloze"
                blanks = cloze_blanks(got)
                assert len(blanks) == len(expected)
            else:
                assert got.get("type") == "numerical"
                blanks = [
                    [
                        (
                            float(a.get("fraction")),
                            float(a.findtext("text")),
                            float(a.findtext("tolerance")),
                            _text(a, "feedback/text"),
                        )
                        for a in got.findall("answer")
                    ]
                ]
            for blank, slot in zip(blanks, expected, strict=True):
                full = [(v - t, v + t) for p, v, t, _ in blank if p == 100]
                assert inside(full, slot.low, slot.high), (question.id, full, slot)
                assert holds(full, slot.key), (question.id, full, slot)
                assert blank[0][1] == pytest.approx(slot.key)  # the key is shown as the answer
                for value, feedback, credit in slot.mistakes:
                    assert any(
                        p == pytest.approx(credit * 100)
                        and abs(v - value) <= t + 1e-12
                        and plain(f) == plain(feedback)
                        for p, v, t, f in blank
                    ), (question.id, value, feedback)
    return len(by_id)


@pytest.mark.parametrize("source", ["bert-mlm", str(SPECIAL)])
def test_export_follows_the_importer_rules_and_the_bank(source: str) -> None:
    bank = load_bank(source)
    quiz = _xml(bank)
    check_rules(quiz)
    assert check_against_bank(bank, quiz) == len(bank.questions)


def test_variants_go_to_a_category_per_question() -> None:
    bank = load_bank(SPECIAL)
    quiz = _xml(bank, variants=4, seed=3)
    check_rules(quiz)
    current = None
    placed: dict[str, str] = {}
    for question in quiz.iter("question"):
        if question.get("type") == "category":
            current = question.findtext("category/text")
        else:
            placed[question.findtext("idnumber")] = current or ""
    pool = "$course$/top/quizgym/special-chars/variants/num-specials"
    seeds = [i for i, c in placed.items() if c == pool]
    assert seeds and all(i.startswith("num-specials.seed") for i in seeds)
    assert len(seeds) <= 4
    assert placed["tf-specials"] == "$course$/top/quizgym/special-chars"
    assert placed["num-abs-specials"] == "$course$/top/quizgym/special-chars"


def test_cdata_end_and_entities_stay_text() -> None:
    quiz = _xml(load_bank(SPECIAL))
    got = next(q for q in quiz.iter("question") if q.findtext("idnumber") == "tf-false-specials")
    assert "]]>" in _text(got, "questiontext/text")
    assert "50% < 1 && 2 > 1" in _text(got, "questiontext/text")


def test_weight_moodle_cannot_take_is_an_error_with_the_line(tmp_path: Path) -> None:
    source = (SPECIAL.parent / "special-chars.yaml").read_text(encoding="utf-8")
    bad = source.replace("credit: 0.5}", "credit: 0.45}")
    bank = parse_bank(bad, path="bad.yaml")
    with pytest.raises(BankError) as caught:
        exporter("moodle", bank).to_bytes()
    line = next(i for i, text in enumerate(bad.splitlines(), 1) if "id: num-specials" in text)
    assert str(caught.value) == (
        f"bad.yaml:{line}:5: num-specials: Moodle accepts no weight of 45%; use a credit or a "
        "number of correct choices that gives an allowed grade (1/2, 1/3, …, 1/10, 1/20, 0.3, "
        "0.4, …)"
    )


def test_golden(update_goldens: bool) -> None:
    golden = Path(__file__).parent / "goldens" / "export" / "special-chars.moodle.xml"
    data = exporter("moodle", load_bank(SPECIAL), variants=2, seed=1).to_bytes()
    if update_goldens:
        golden.write_bytes(data)
    assert data == golden.read_bytes()
