"""Derived parameters, where: constraints and number formats in placeholders: drawn alike on
every path, and held by ``quizgym check``."""

from __future__ import annotations

import pytest

from quizgym.check import lint_bank
from quizgym.errors import BankError
from quizgym.loader import parse_bank
from quizgym.model import Bank
from quizgym.solver import compile_bank

HEAD = "bank: d\ntitle: D\nquestions:\n"


def _bank(question: str) -> Bank:
    return parse_bank(HEAD + question, path="d.yaml")


VARIANCE = """
  - id: var
    type: numeric
    prompt: "n = {n}, Σx = {sx}, Σx² = {sxx}, df = {df}. Variance?"
    params:
      n: {choices: [4, 6]}
      sx: {min: 0, max: 40, step: 2}
      sxx: {min: 0, max: 300, step: 10}
    derived:
      df: n - 1
      ss: sxx - sx^2 / n
    where: ["ss > 0"]
    answer: ss / df
"""


def test_constraints_hold_for_every_student_on_both_paths() -> None:
    book = compile_bank(_bank(VARIANCE))
    question = book.bank.question("var")
    students = [f"s{k}" for k in range(400)]
    seeds = [k % 7 for k in range(400)]
    variants, codes = book.variants(question, students=students, seeds=seeds)
    for k, (student, seed) in enumerate(zip(students, seeds, strict=True)):
        one = book.variant(question, student=student, seed=seed)
        assert variants[int(codes[k])] == one
        assert one.derived["ss"] > 0 and one.derived["df"] == one.params["n"] - 1
    # Some students were drawn again: their first draws broke the constraint.
    assert len({v.signature for v in variants}) > 50


def test_a_question_without_constraints_draws_as_before() -> None:
    plain = VARIANCE.replace('    where: ["ss > 0"]\n', "")
    with_rule, without = compile_bank(_bank(VARIANCE)), compile_bank(_bank(plain))
    kept = 0
    for k in range(100):
        a = with_rule.variant("var", student=f"s{k}", seed=1)
        b = without.variant("var", student=f"s{k}", seed=1)
        kept += a == b
        assert a == b or b.derived["ss"] <= 0  # only a broken draw is drawn again
    assert kept > 50


def test_derived_values_fill_prompts_keys_and_feedback() -> None:
    book = compile_bank(_bank(VARIANCE))
    variant = book.variant("var")  # n = 4, sx = 0, sxx = 0 breaks ss > 0: check says so
    assert variant.derived == {"df": 3, "ss": 0}
    report = lint_bank(book.bank)[0]
    assert [f.message for f in report] == [
        "var: the default variant (n=4, sx=0, sxx=0) breaks where: ss > 0"
    ]


def test_check_fails_when_too_few_or_no_draws_survive() -> None:
    rare = VARIANCE.replace("sx: {min: 0, max: 40, step: 2}", "sx: {min: 0, max: 400, step: 2}")
    rare = rare.replace("sxx: {min: 0, max: 300, step: 10}", "sxx: {min: 10, max: 300, step: 10}")
    notes: list[str] = []
    findings, _ = lint_bank(_bank(rare), notes=notes)
    assert notes and notes[0].startswith("var: where: ")
    survived = int(notes[0].split()[2])
    assert survived < 20
    assert [f.message for f in findings] == [
        f"var: only {survived} of 200 draws meet the where conditions; at least 10% must, or "
        "students would get the default variant: loosen the conditions or narrow the parameters"
    ]
    only_default = (
        "  - {id: one, type: numeric, prompt: P?, answer: p + 1, "
        "params: {p: {min: 0, max: 100000, step: 1}}, where: ['p == 0']}\n"
    )
    findings, _ = lint_bank(_bank(only_default))
    assert [f.message for f in findings] == [
        "one: no draw meets the where conditions; at least 10% must, or students would get "
        "the default variant: loosen the conditions or narrow the parameters"
    ]


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ('["ss = 0"]', "Write == to compare"),
        ('["ss"]', "A condition compares two expressions"),
        ('["zz > 0"]', "Unknown name 'zz'"),
    ],
)
def test_a_bad_condition_is_a_located_finding(where: str, message: str) -> None:
    with pytest.raises(BankError) as caught:
        compile_bank(_bank(VARIANCE.replace('["ss > 0"]', where)))
    (finding,) = caught.value.findings
    assert finding.line == 15 and message in finding.message  # the where: line


FORMATS = """
  - id: fmt
    type: numeric
    prompt: "p = {p:.0%}, n = {n:d}, x = {x:.2f}, y = {y:.1f}"
    params:
      p: {choices: [0.25, 0.5]}
      n: 12
      x: 1.5
      y: {choices: [0.5, 0.25]}
    answer: p * n + x + y
"""


def test_formats_show_numbers_and_check_names_the_lossy_one() -> None:
    bank = _bank(FORMATS)
    book = compile_bank(bank)
    assert (
        book.variant("fmt").fill(bank.questions[0].prompt) == "p = 25%, n = 12, x = 1.50, y = 0.5"
    )
    findings, _ = lint_bank(bank)
    assert [(f.severity, f.message) for f in findings] == [
        (
            "warning",
            "fmt: {y:.1f} shows 0.25 as 0.2: students would compute with another number than "
            "the key; give the format more digits, or choose values it shows exactly",
        )
    ]


def test_a_whole_number_keeps_its_digits_in_any_integer_format() -> None:
    from fractions import Fraction

    from quizgym.solver.variants import show_number

    # {n:n} is locale-aware and takes integers and floats: a whole value is written whole
    assert show_number(Fraction(1234567), "n") == "1234567"
    assert show_number(Fraction(5, 2), "n") == "2.5"
    assert show_number(Fraction(255), "x") == "ff"
    assert show_number(Fraction(5, 2), "d") == "2.5"  # shown as written (check warns)


def test_a_format_that_is_no_number_format_is_refused_at_its_line() -> None:
    with pytest.raises(BankError) as caught:
        _bank(FORMATS.replace("{x:.2f}", "{x:.2q}"))
    assert "placeholder {x:.2q}: '.2q' is not a number format" in str(caught.value)


ALTERNATIVES = """
  - id: rate
    type: numeric
    prompt: What is the rate?
    answer: 0.05
    answers: ["5"]
    mistakes:
      - {answer: "0.5", feedback: "As a percentage, that is 50% too: accepted.", credit: 1}
      - {answer: "50", feedback: "Off by a factor of 10.", tag: factor-ten}
"""


@pytest.mark.parametrize(
    ("text", "status", "feedback", "tag"),
    [
        ("0.05", "correct", "", None),
        ("5", "correct", "", None),
        ("0.5", "correct", "As a percentage, that is 50% too: accepted.", None),
        ("50", "incorrect", "Off by a factor of 10.", "factor-ten"),
    ],
)
def test_alternative_correct_answers(
    text: str, status: str, feedback: str, tag: str | None
) -> None:
    from quizgym.answers import grade_response

    bank = _bank(ALTERNATIVES)
    verdict = grade_response(bank, bank.question("rate"), text)
    assert (str(verdict.status), verdict.feedback, verdict.tag) == (status, feedback, tag)
    assert verdict.score == (1.0 if status == "correct" else 0.0)
    assert lint_bank(bank)[0] == []


def test_a_variant_rebuilt_from_its_parameters_gets_its_derived_values() -> None:
    from quizgym.solver import Variant

    book = compile_bank(_bank(VARIANCE))
    drawn = book.variant("var", student="s1", seed=1)
    rebuilt = Variant(question="var", params=dict(drawn.params))  # as an issue manifest holds it
    assert book.keys("var", rebuilt) == book.keys("var", drawn)
    assert book.complete(rebuilt).derived == drawn.derived


def test_a_whole_number_format_of_a_fraction_shows_it_as_written_and_check_says_so() -> None:
    # {n:d} with n = 2.5 crashed check, render and export (format(2.5, "d")).
    bank = _bank(FORMATS.replace("n: 12", "n: {choices: [12, 2.5]}"))
    book = compile_bank(bank)
    question = bank.questions[0]
    shown = {book.variant("fmt", seed=s).fill(question.prompt) for s in range(40)}
    assert any("n = 2.5," in text for text in shown) and any("n = 12," in text for text in shown)
    findings, _ = lint_bank(bank)
    assert (
        "warning",
        "fmt: {n:d} is a format for whole numbers, but n can be 2.5: it is shown as 2.5; drop "
        "the format or choose whole values",
    ) in [(f.severity, f.message) for f in findings]
