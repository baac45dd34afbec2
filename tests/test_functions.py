"""The language's functions (for keys and students alike) and functions a bank writes itself:
values, exact forms, domain errors, hostile arguments, and the checks made when a bank loads."""

from __future__ import annotations

import math
import time

import mpmath
import pytest
import sympy

from quizgym.errors import AnswerParseError, BankError
from quizgym.expr import Reading, evaluate, parse, read_answer, to_sympy, to_text
from quizgym.loader import parse_bank
from quizgym.solver import compile_bank
from quizgym.solver.functions import MAX_COST

# (text, value, exact form as printed)
VALUES = [
    ("sin(pi/6)", 0.5, "1/2"),
    ("cos(0)", 1.0, "1"),
    ("tan(pi/4)", 1.0, "1"),
    ("asin(1)", math.pi / 2, "pi/2"),
    ("acos(0.5)", math.pi / 3, "pi/3"),
    ("atan(1)", math.pi / 4, "pi/4"),
    ("atan2(1, -1)", 3 * math.pi / 4, "3*pi/4"),
    ("atan2(-1, 0)", -math.pi / 2, "-pi/2"),
    ("sind(30)", 0.5, "1/2"),
    ("cosd(60)", 0.5, "1/2"),
    ("tand(45)", 1.0, "1"),
    ("sind(180)", 0.0, "0"),
    ("sinh(1)", math.sinh(1), "sinh(1)"),
    ("cosh(0)", 1.0, "1"),
    ("tanh(0.5)", math.tanh(0.5), "tanh(1/2)"),
    ("factorial(5)", 120.0, "120"),
    ("5!", 120.0, "120"),
    ("2^3!", 64.0, "64"),
    ("-3!", -6.0, "-6"),
    ("comb(5, 2)", 10.0, "10"),
    ("comb(10^12, 5)", math.comb(10**12, 5), str(math.comb(10**12, 5))),
    ("comb(3, 5)", 0.0, "0"),
    ("perm(5, 2)", 20.0, "20"),
    ("gamma(5)", 24.0, "24"),
    ("gamma(0.5)", math.sqrt(math.pi), "sqrt(pi)"),
    ("gamma(1/3)", math.gamma(1 / 3), "gamma(1/3)"),
    ("erf(1)", math.erf(1), "erf(1)"),
    ("erfc(1)", math.erfc(1), "erfc(1)"),
    ("normal_cdf(0)", 0.5, "1/2"),
    ("normal_cdf(1.96)", 0.9750021048517795, "normal_cdf(49/25)"),
    ("normal_cdf(180, 170, 10)", 0.8413447460685429, "normal_cdf(1)"),
    ("normal_pdf(0)", 1 / math.sqrt(2 * math.pi), "sqrt(2)/(2*sqrt(pi))"),
    ("binom_pmf(3, 10, 0.5)", 120 / 1024, "15/128"),
    ("binom_pmf(0, 5, 0)", 1.0, "1"),
    ("min(3, 2, 5)", 2.0, "2"),
    ("max(1, sqrt(2))", math.sqrt(2), "sqrt(2)"),
    ("floor(2.7)", 2.0, "2"),
    ("ceil(2.1)", 3.0, "3"),
    ("round(2.5)", 3.0, "3"),
    ("round(2.345, 2)", 2.35, "47/20"),
    ("round(1234, -2)", 1200.0, "1200"),
]


@pytest.mark.parametrize(("text", "value", "exact"), VALUES, ids=[v[0] for v in VALUES])
def test_values_and_exact_forms(text: str, value: float, exact: str) -> None:
    parsed = parse(text)
    assert float(evaluate(parsed)) == pytest.approx(value, rel=1e-12, abs=1e-300)
    form = to_sympy(parsed)
    assert to_text(form) == exact
    assert float(sympy.N(form, 30)) == pytest.approx(value, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize(("text", "value", "exact"), VALUES[:20], ids=[v[0] for v in VALUES[:20]])
def test_students_may_type_them_too(text: str, value: float, exact: str) -> None:
    reading = read_answer(text)
    assert isinstance(reading, Reading)
    assert float(reading.value) == pytest.approx(value, rel=1e-12, abs=1e-300)


HOSTILE = [
    "factorial(10^9)",
    "factorial(factorial(100))",
    "comb(10^12, 10^6)",
    "comb(2^4000, 2^3000)",
    "perm(10^300, 10^5)",
    "gamma(10^6)",
    "gamma(-10^6 - 0.5)",
    "binom_pmf(10^6, 10^12, 0.5)",
    "erfc(10^300)",
    "normal_cdf(-10^300)",
    "normal_pdf(10^300)",
    "sinh(10^6)",
    "sin(10^1000)",
    "tand(10^300)",
    "round(10^300, 300)",
    "sin(" * 10_000 + "1" + ")" * 10_000,
    "sin(" * 60 + "1" + ")" * 60,
    "3!" + "!" * 100,
    "max(" + ",".join(["9^9^9"] * 40) + ")",
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_arguments_are_refused_or_answered_quickly(text: str) -> None:
    start = time.process_time()
    for exact in (False, True):
        try:
            parsed = parse(text)
            to_sympy(parsed) if exact else evaluate(parsed)
        except AnswerParseError as exc:
            assert exc.message
    assert time.process_time() - start < 0.5


def _bank(functions: str, answer: str = "range(20, 0.5)", extra: str = "") -> str:
    return (
        "bank: b\ntitle: B\nconstants: {g: 9.81}\n"
        f"functions:\n{functions}{extra}"
        "questions:\n"
        f"  - {{id: q, type: numeric, prompt: How far?, answer: '{answer}'}}\n"
    )


RANGE = '  "range(v, theta)": "v^2 * sin(2*theta) / g"\n'


def test_a_bank_function_is_a_key_function() -> None:
    book = compile_bank(parse_bank(_bank(RANGE), path="b.yaml"))
    (slot,) = book.slots
    key = book.key(slot, book.variant(slot.question))
    assert float(key.value) == pytest.approx(400 * math.sin(1.0) / 9.81)
    # g is exact (9.81 = 981/100), and a key resting on a measured constant is shown as a decimal
    assert str(key.exact) == "40000*sin(1)/981" and key.text == "34.311"


@pytest.mark.parametrize(
    ("functions", "answer", "message"),
    [
        ('  "f(x)": "f(x) + 1"\n', "f(1)", "f calls itself: a function may call only"),
        ('  "f(x)": "g2(x)"\n  "g2(x)": "x"\n', "f(1)", "f: Unknown name 'g2'"),
        ('  "f(x)": "y + x"\n', "f(1)", "f: Unknown name 'y'"),
        ('  "f(x, x)": "x"\n', "f(1, 1)", "f: a parameter is named twice"),
        ('  "sin(x)": "x"\n', "1", "sin is already a function or constant"),
        ('  "g(x)": "x"\n', "1", "g is already a function or constant"),
        ('  "f x": "x"\n', "1", "'f x' is not a function head"),
        ('  "f(x)": "x"\n', "f(1, 2)", "f() takes one argument"),
        # a message names only the parameters, plainly (it is filled with them as shown)
        (
            '  f(n):\n    expr: "n"\n    requires: ["n >= 2"]\n    message: "bad {x}"\n',
            "f(3)",
            "f: its message can name only its parameters ({n})",
        ),
        (
            '  f(n):\n    expr: "n"\n    requires: ["n >= 2"]\n    message: "bad {n:.2f}"\n',
            "f(3)",
            "f: its message can name only its parameters ({n})",
        ),
    ],
)
def test_bank_functions_are_checked_when_the_bank_loads(
    functions: str, answer: str, message: str
) -> None:
    with pytest.raises(BankError) as caught:
        compile_bank(parse_bank(_bank(functions, answer), path="b.yaml"))
    assert any(message in f.message for f in caught.value.findings), caught.value.findings


def test_nesting_functions_cannot_multiply_the_work() -> None:
    # f1(x) = x + x, f2 = f1(f1(x)), … doubles the cost at each level.
    lines = '  "f1(x)": "x + x"\n' + "".join(
        f'  "f{k}(x)": "f{k - 1}(f{k - 1}(x))"\n' for k in range(2, 20)
    )
    start = time.process_time()
    with pytest.raises(BankError) as caught:
        compile_bank(parse_bank(_bank(lines, "f19(1)"), path="b.yaml"))
    assert time.process_time() - start < 1.0
    assert any(f"at most {MAX_COST}" in f.message for f in caught.value.findings)


def test_a_requirement_says_what_it_needs() -> None:
    spec = (
        '  sv(n):\n    expr: "1/(n - 1)"\n    requires: ["n >= 2"]\n'
        '    message: "n must be at least 2, got {n}"\n'
    )
    book = compile_bank(parse_bank(_bank(spec, "sv(1)"), path="b.yaml"))
    (slot,) = book.slots
    with pytest.raises(AnswerParseError, match="n must be at least 2, got 1"):
        book.key(slot, book.variant(slot.question))
    plain = '  sv(n):\n    expr: "1/(n - 1)"\n    requires: ["n >= 2"]\n'
    book = compile_bank(parse_bank(_bank(plain, "sv(1)"), path="b.yaml"))
    with pytest.raises(AnswerParseError, match=r"sv needs n >= 2 \(got n = 1\)"):
        book.key(book.slots[0], book.variant(book.slots[0].question))


def test_students_cannot_call_a_banks_functions() -> None:
    reading = read_answer("range(20, 0.5)")
    assert not isinstance(reading, Reading)


def test_a_function_evaluates_exactly_like_its_body() -> None:
    book = compile_bank(parse_bank(_bank(RANGE, "range(20, pi/12)"), path="b.yaml"))
    key = book.key(book.slots[0], book.variant(book.slots[0].question))
    assert key.exact == sympy.Rational(20000, 981)  # sin(pi/6) = 1/2, exactly
    with mpmath.workdps(30):
        assert key.value == mpmath.mpf(20000) / 981
