"""The cloze type, on a chemistry bank: the bank format and its errors (each at its line), one
answer to each kind of blank graded, worksheets and keys, the drill, and every export read back
by the parser its tests already use."""

from __future__ import annotations

from pathlib import Path

import pytest

from quizgym.answers import Status, grade_response
from quizgym.check import lint_bank
from quizgym.errors import BankError
from quizgym.loader import load_bank
from quizgym.model import Cloze
from quizgym.solver import compile_bank
from quizgym.types import blanks_of, choices_of, word_of

CHEM = """
bank: chem-cloze
title: Solutions
questions:
  - id: water
    type: cloze
    prompt: >-
      The molar mass of water is {{mass}}; the pH of 0.01 M HCl is {{ph}}. Its bonds are
      {{bond}}, and the gas given off at the cathode is {{gas}}.
    blanks:
      mass: {answer: 2*1.008 + 15.999, units: g/mol, tolerance: {rel: 0.01}, points: 2}
      ph: {answer: -log10(0.01), tolerance: {abs: 0.05}}
      bond:
        choices: [ionic, polar covalent, metallic]
        answer: polar covalent
        feedback: Oxygen pulls the shared electrons to itself.
        tag: bond-kinds
      gas: {accept: [hydrogen, H2, hydrogen gas], feedback: Water is reduced to hydrogen.}
  - id: salt
    type: cloze
    points: 6
    prompt: "{{moles}} mol of NaCl weigh {{grams}}; its formula is written {{formula}}."
    blanks:
      moles: {answer: 2}
      grams: {answer: moles * 58.44, units: g, tolerance: {rel: 0.005}}
      formula: {accept: [NaCl], case_sensitive: true}
"""


@pytest.fixture
def bank_path(tmp_path: Path) -> Path:
    path = tmp_path / "chem.yaml"
    path.write_text(CHEM, encoding="utf-8")
    return path


def _bad(tmp_path: Path, prompt: str, blanks: str) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "bank: bad\ntitle: Bad\nquestions:\n  - id: c\n    type: cloze\n"
        f"    prompt: '{prompt}'\n    blanks:\n{blanks}",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    ("prompt", "blanks", "line", "message"),
    [
        ("A {{x}} and {{y}}.", "      x: {answer: 1}\n", 7, "the prompt's {{y}} names no blank"),
        (
            "A {{x}}.",
            "      x: {answer: 1}\n      y: {answer: 2}\n",
            7,
            "blank 'y' is never used in the prompt",
        ),
        ("A {{x}} {{x}}.", "      x: {answer: 1}\n", 7, "blank 'x' is used twice in the prompt"),
        ("A {{x}}.", "      x: {accept: ['  ']}\n", 8, "accept holds an empty spelling"),
        ("A {{x}}.", "      x: {accept: []}\n", 8, "accept is empty"),
        ("A {{x}}.", "      x: {choices: [a, b], answer: c}\n", 8, "'c' is not among its choices"),
        ("A {{x}}.", "      x: {choices: [a, b]}\n", 8, "a choice blank needs answer"),
        ("A {{x}}.", "      x: {choices: [a, a], answer: a}\n", 8, "choice 'a' appears twice"),
        ("A {{x}}.", "      x: {accept: [a], units: m}\n", 8, "units is for a number blank"),
        ("A {{x}}.", "      x: {}\n", 8, "a blank needs answer (a number), choices"),
        ("A {{x}}.", "      x: {answer: 1, case_sensitive: true}\n", 8, "case_sensitive is for"),
        ("A {{X}}.", "      X: {answer: 1}\n", 8, "X"),
    ],
)
def test_a_bad_cloze_is_refused_at_its_line(
    tmp_path: Path, prompt: str, blanks: str, line: int, message: str
) -> None:
    with pytest.raises(BankError) as caught:
        load_bank(_bad(tmp_path, prompt, blanks))
    (text,) = str(caught.value).splitlines()
    assert message in text
    assert f"bad.yaml:{line}:" in text


@pytest.mark.parametrize(
    ("blanks", "message"),
    [
        ("      x: {answer: 1/0}\n", "c.x: the key cannot be evaluated: Division by zero"),
        ("      x: {answer: nope + 1}\n", "c: blanks.x.answer: Unknown name 'nope'"),
    ],
)
def test_check_refuses_a_number_blank_whose_key_fails_at_its_line(
    tmp_path: Path, blanks: str, message: str
) -> None:
    findings, _ = lint_bank(load_bank(_bad(tmp_path, "A {{x}}.", blanks)))
    (finding,) = [f for f in findings if f.severity == "error"]
    assert message in str(finding)
    assert finding.line == 8


def test_each_blank_is_a_slot_in_the_prompts_order_worth_its_points(bank_path: Path) -> None:
    bank = load_bank(bank_path)
    book = compile_bank(bank)
    assert bank.slot_ids() == book.slot_ids()
    assert [(s.id, s.points, s.is_numeric) for s in book.slots_of("water")] == [
        ("water.mass", 2.0, True),
        ("water.ph", 1.0, True),
        ("water.bond", 1.0, False),
        ("water.gas", 1.0, False),
    ]
    # The question's points are shared by its blanks; a later blank's key names an earlier one.
    assert [s.points for s in book.slots_of("salt")] == [2.0, 2.0, 2.0]
    grams = book.slot("salt.grams")
    assert grams.earlier == ("moles",)
    assert float(book.key(grams, book.variant("salt")).value) == pytest.approx(116.88)
    question = bank.question("water")
    assert isinstance(question, Cloze)
    assert question.total_points(bank.defaults) == 5.0
    assert book.slot("water.bond").options == ["ionic", "polar covalent", "metallic"]
    assert book.slot("water.gas").prompt.startswith("The molar mass of water is (1); the pH")
    assert "is ___." in book.slot("water.gas").prompt
    assert choices_of(question, "gas") is None
    assert word_of(question, "gas") is not None
    blanks = blanks_of(question)
    assert blanks is not None and blanks.names == ["mass", "ph", "bond", "gas"]


@pytest.mark.parametrize(
    ("part", "typed", "status", "score"),
    [
        ("mass", "18 g/mol", Status.CORRECT, 2.0),
        ("mass", "18.0", Status.CORRECT, 2.0),
        ("mass", "0.018 kg/mol", Status.CORRECT, 2.0),
        ("mass", "16", Status.INCORRECT, 0.0),
        ("mass", "idk", Status.BLANK, 0.0),
        ("mass", "eighteen", Status.INVALID, 0.0),
        ("ph", "2", Status.CORRECT, 1.0),
        ("ph", "1.97", Status.CORRECT, 1.0),
        ("ph", "1.9", Status.INCORRECT, 0.0),
        ("bond", "B", Status.CORRECT, 1.0),
        ("bond", " Polar  covalent ", Status.CORRECT, 1.0),
        ("bond", "ionic", Status.INCORRECT, 0.0),
        ("bond", "D", Status.INVALID, 0.0),
        ("bond", "", Status.BLANK, 0.0),
        ("gas", "Hydrogen", Status.CORRECT, 1.0),
        ("gas", "hydrogen   gas", Status.CORRECT, 1.0),
        ("gas", "h2", Status.CORRECT, 1.0),
        ("gas", "hydrogn", Status.INCORRECT, 0.0),
        ("gas", "oxygen", Status.INCORRECT, 0.0),
        ("gas", "n/a", Status.BLANK, 0.0),
    ],
)
def test_one_answer_to_each_kind_of_blank(
    bank_path: Path, part: str, typed: str, status: Status, score: float
) -> None:
    book = compile_bank(load_bank(bank_path))
    verdict = grade_response(book, book.bank.question("water"), typed, part=part)
    assert (verdict.status, verdict.score, verdict.question) == (status, score, f"water.{part}")


def test_wrong_words_and_choices_say_why_and_a_near_spelling_is_flagged(bank_path: Path) -> None:
    book = compile_bank(load_bank(bank_path))
    water = book.bank.question("water")
    near = grade_response(book, water, "hydrogn", part="gas")
    assert near.feedback == "Water is reduced to hydrogen."
    assert near.doubt == "close to the accepted spelling 'hydrogen'"
    assert near.expected == "hydrogen"
    assert grade_response(book, water, "oxygen", part="gas").doubt == ""
    wrong = grade_response(book, water, "A", part="bond")
    assert (wrong.tag, wrong.feedback) == (
        "bond-kinds",
        "Oxygen pulls the shared electrons to itself.",
    )
    assert wrong.expected == "B: polar covalent"
    salt = book.bank.question("salt")
    assert grade_response(book, salt, "NaCl", part="formula").status is Status.CORRECT
    assert grade_response(book, salt, "nacl", part="formula").status is Status.INCORRECT
    # Error carried forward: 58.4 g is wrong for 2 mol, right for the student's own 1 mol.
    carried = grade_response(book, salt, "58.4 g", part="grams", earlier={"moles": "1"})
    assert carried.status is Status.CORRECT
    assert "error carried forward" in carried.feedback
    with pytest.raises(KeyError, match="no blank 'nope'"):
        grade_response(book, water, "1", part="nope")


def test_worksheet_draws_numbered_lines_and_the_key_gives_each_blank(bank_path: Path) -> None:
    from quizgym.render.documents import render_key, render_worksheet
    from quizgym.render.roster import Student

    book = compile_bank(load_bank(bank_path))
    questions = list(book.bank.questions)
    sheet = render_worksheet(book, questions, fmt="md", student=Student(id="s1"), seed=2)
    line = r"\_" * 10
    assert (
        f"The molar mass of water is **(1)** {line} g/mol; the pH of 0.01 M HCl is **(2)** {line}."
        in sheet
    )
    assert f"**(3)** {line} (ionic / polar covalent / metallic)" in sheet
    assert "{{" not in sheet
    html = render_worksheet(book, questions, fmt="html", student=Student(id="s1"), seed=2)
    assert "<strong>(4)</strong> __________." in html
    assert "{{" not in html
    key = render_key(book, questions, fmt="md", students=[Student(id="s1")], seed=2)
    assert "**(1)** mass: **18.015** g/mol" in key
    assert "Accepted: within 1%: 17.8348 to 18.1951" in key
    assert "**(3)** bond: **B: polar covalent**" in key
    assert "Accepted: these spellings, any case, spacing ignored: hydrogen, H2, hydrogen gas" in key
    assert "Accepted: these spellings, case counts, spacing ignored: NaCl" in key
    assert "**(2)** grams: **116.88** g" in key


def test_every_student_of_a_roster_gets_the_same_blanks(bank_path: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from quizgym.cli import cli

    roster = tmp_path / "roster.csv"
    roster.write_text("student\nana\nbo\n", encoding="utf-8")
    out = tmp_path / "sheets"
    result = CliRunner().invoke(
        cli,
        ["render", str(bank_path), "--roster", str(roster), "--format", "md", "--key",
         "--seed", "3", "-o", str(out), "--date", ""],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    sheets = sorted(out.glob("*worksheet*.md")) or sorted(out.glob("*.md"))
    texts = {p.name: p.read_text(encoding="utf-8") for p in sheets if "key" not in p.name}
    assert len(texts) == 2
    bodies = {text.split("---", 1)[1] for text in texts.values()}
    assert len(bodies) == 1  # nothing of a cloze varies by student


def test_the_drill_asks_one_blank_at_a_time(bank_path: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from quizgym.cli import cli

    answers = ["18 g/mol", "2", "polar covalent", "hydrogn", "", "q"]
    result = CliRunner().invoke(
        cli,
        ["practice", str(bank_path), "--seed", "7", "--limit", "1"],
        input="".join(f"{a}\n" for a in answers),
        env={
            "QUIZGYM_NOW": "2026-01-05T10:00:00+00:00",
            "QUIZGYM_DB": str(tmp_path / "p.sqlite3"),
            "COLUMNS": "200",
        },
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert "The molar mass of water is (1) __________ g/mol" in out
    for name in ("mass", "ph", "bond", "gas"):
        assert out.count(f"{name} = ") == 1  # asked once, each on its own
    assert "Its bonds are ___ (ionic / polar covalent / metallic)" in out
    assert "(mass) ✓ Correct" in out
    assert "(gas) ✗" in out
    assert "Water is reduced to hydrogen." in out


def test_the_bundled_bank_s_cloze_items_state_the_80_10_10_rule_by_the_solver() -> None:
    book = compile_bank(load_bank("bert-tokens"))
    rule = book.bank.question("cloze-mask-rule")
    keys = [float(book.key(s, book.variant(rule)).value) for s in book.slots_of(rule)]
    assert keys == [15.0, 80.0, 10.0, 10.0]
    counts = book.bank.question("cloze-mask-counts")
    keys = [float(book.key(s, book.variant(counts)).value) for s in book.slots_of(counts)]
    assert keys == pytest.approx([76.8, 61.44])
    assert grade_response(book, rule, "15 %", part="selected").status is Status.CORRECT
    slip = grade_response(book, rule, "15", part="masked")
    assert (slip.status, slip.tag) == (Status.INCORRECT, "selected-vs-masked")
    tokens = book.bank.question("cloze-special-tokens")
    assert grade_response(book, tokens, "[CLS]", part="first").status is Status.CORRECT
    assert grade_response(book, tokens, "next sentence prediction", part="head").is_correct
    assert grade_response(book, tokens, "[MASK]", part="end").tag == "sep-role"


def test_the_web_form_numbers_the_blanks_and_asks_each_by_its_slot(bank_path: Path) -> None:
    pytest.importorskip("starlette")
    from quizgym.serve.forms import draw_question, read_answers

    book = compile_bank(load_bank(bank_path))
    water = book.bank.question("water")
    html = draw_question(book, water, book.variant(water), heading="Question 1")
    assert "{{" not in html
    assert html.count("(1)") >= 1 and "(4)" in html
    assert [f"Blank ({n})" in html for n in (1, 2, 3, 4)] == [True] * 4
    for blank in ("mass", "ph", "gas"):
        assert f'name="water.{blank}"' in html
    assert html.count('name="water.bond"') == 3  # one radio button per option
    assert '<span class="units">(in g/mol)</span>' in html
    for key in ("18.015", "hydrogen gas", "H2", "Oxygen pulls"):
        assert key not in html
    read = read_answers(
        book, [water], [("water.mass", "18 g/mol"), ("water.bond", "B"), ("water.gas", "H2")]
    )
    assert read == {
        "water.mass": "18 g/mol",
        "water.ph": None,
        "water.bond": "B",
        "water.gas": "H2",
    }
    verdicts = {
        part: grade_response(book, water, read[f"water.{part}"], part=part).status
        for part in ("mass", "bond", "gas")
    }
    assert verdicts == dict.fromkeys(("mass", "bond", "gas"), Status.CORRECT)
