"""The safe expression language: the reference's §8 corpora, hostile input, exactness, fuzzing."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

import mpmath
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from quizgym.errors import AnswerParseError
from quizgym.expr import (
    CONSTANTS,
    STUDENT_FUNCTIONS,
    Function,
    ParseFailure,
    Reading,
    evaluate,
    format_value,
    parse,
    read_answer,
    to_sympy,
    to_text,
)

LN10 = math.log(10)

# --- accepted: (input, value) -------------------------------------------------------------------

ACCEPTED = [
    # localization (§8)
    ("2.30", 2.30),
    ("2,30", 2.30),
    ("≈ 2.30", 2.30),
    ("≈2.30", 2.30),
    ("~ 2.30", 2.30),
    ("= 2.30", 2.30),
    ("L = 2.30", 2.30),
    ("２．３０", 2.30),
    ("L_MLM ≈ 2.3026", 2.3026),
    ("0,105", 0.105),
    ("30 000", 30000.0),
    ("30\u00a0000", 30000.0),
    ("30\u2009000", 30000.0),
    ("1 000 000", 1e6),
    ("78.539 816 339", 78.539816339),
    ("-2.30", -2.30),
    ("−2.30", -2.30),
    (".5", 0.5),
    ("  2.30  ", 2.30),
    # ln 10 and friends
    ("ln 10", LN10),
    ("ln(10)", LN10),
    ("LN(10)", LN10),
    ("log(5)+log(2)", LN10),
    ("-log(0.2) - log(0.5)", LN10),
    ("−ln(0.2) − ln(0.5)", LN10),
    ("8 ln 2", 8 * math.log(2)),
    ("8ln2", 8 * math.log(2)),
    ("8*log(2)", 8 * math.log(2)),
    ("8·ln 2", 8 * math.log(2)),
    ("8×ln(2)", 8 * math.log(2)),
    ("-ln(0.9)", -math.log(0.9)),
    ("\u2212ln(0.9)", -math.log(0.9)),
    ("log(30 000)", math.log(30000)),
    ("ln2.5", math.log(2.5)),
    ("log10(1000)", 3.0),
    ("lg 100", 2.0),
    ("log2(8)", 3.0),
    ("log₂(8)", 3.0),
    ("sqrt2", math.sqrt(2)),
    ("abs(-2)", 2.0),
    ("exp(1)", math.e),
    # numbers and operators
    ("1/2", 0.5),
    ("½", 0.5),
    ("2³", 8.0),
    ("10⁻³", 1e-3),
    ("e⁻²", math.exp(-2)),
    ("e^2", math.exp(2)),
    ("e**2", math.exp(2)),
    ("2 pi", 2 * math.pi),
    ("2π", 2 * math.pi),
    ("2e", 2 * math.e),
    ("10^-3", 1e-3),
    ("1e-3", 1e-3),
    ("2e3", 2000.0),
    ("2E+3", 2000.0),
    ("2,5e-3", 2.5e-3),
    ("2(3)", 6.0),
    ("(2)(3)", 6.0),
    ("(2)3", 6.0),
    ("-2^2", -4.0),
    ("(-2)^2", 4.0),
    ("2^3^2", 512.0),
    ("2^-1", 0.5),
    ("(-2)^3", -8.0),
    ("1/2 pi", math.pi / 2),
    ("23/10", 2.3),
    ("2 - -3", 5.0),
    ("+2", 2.0),
    ("ln(e)", 1.0),
    ("sqrt(2^2000)", 2.0**1000),
    ("exp(-700)", math.exp(-700)),
    ("log(2,10)", math.log(2.10)),  # one-argument call: the comma is a decimal comma (§7)
]


def _value(text: str) -> float:
    return float(evaluate(parse(text)))


def _outcome(text: str) -> AnswerParseError | None:
    try:
        evaluate(parse(text))
    except AnswerParseError as exc:
        return exc
    return None


STEPS = 50_000
"""The most Python steps (calls and lines, in quizgym and every library it calls) reading one
input may take: about 50 ms of work. Counted, not timed, so that a busy machine fails nothing,
while an input that makes the reader loop (or sympy grind) fails on any machine."""


def _steps(work: Callable[[], object]) -> int:
    """The Python steps ``work`` takes (its imports already done: call it once before)."""
    count = 0

    def counted(frame: object, event: str, arg: object) -> object:
        nonlocal count
        count += 1
        return counted

    previous = sys.gettrace()
    sys.settrace(counted)  # type: ignore[arg-type]
    try:
        work()
    finally:
        sys.settrace(previous)
    return count


def _sympy_refusal(text: str) -> str:
    try:
        to_sympy(parse(text))
    except AnswerParseError as exc:
        return exc.message
    return "accepted"


@pytest.mark.parametrize(("text", "expected"), ACCEPTED)
def test_accepted(text: str, expected: float) -> None:
    assert _value(text) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("text", ["0e999999", "0.0e-999999", "-0e+999999", "ln(0e-999999 + 1)"])
def test_zero_with_a_huge_exponent_is_quick(text: str) -> None:
    assert abs(_value(text)) == 0
    assert _steps(lambda: to_sympy(parse(text))) < STEPS


@pytest.mark.parametrize(
    ("text", "log2"), [("2^4095", 4095), ("2^-4096", -4096), ("1e1232", 4092.7)]
)
def test_accepted_up_to_the_limits(text: str, log2: float) -> None:
    assert float(mpmath.log(evaluate(parse(text)), 2)) == pytest.approx(log2, abs=0.1)


# --- rejected: (input, distinctive part of the message) -------------------------------------------

TOO_BIG = "too large or too small"
UNKNOWN = "Unknown name"

REJECTED = [
    ("__import__('os').system('id')", "Unexpected character '_'"),
    ("().__class__.__bases__", "Unexpected character '.'"),
    ("lambda: 1", "Unknown name 'lambda'"),
    ("f'{1}'", "Unknown name 'f'"),
    ("True", "Unknown name 'True'"),
    ("2j", "Unknown name 'j'"),
    ("x+1", "Unknown name 'x'"),
    ("1 if 1 else 0", "Unknown name 'if'"),
    ("[1]", "Unexpected character '['"),
    ("'a'", 'Unexpected character "\'"'),
    ("a.b", UNKNOWN),
    ("9**9**9", TOO_BIG),
    ("9^9^9^9", TOO_BIG),
    ("((9**9)**9999)**9999", TOO_BIG),
    ("2^4097", TOO_BIG),
    ("2^4096", TOO_BIG),
    ("10**-5000", TOO_BIG),
    ("1e99999", TOO_BIG),
    ("1e-1300", TOO_BIG),
    ("1.000001^(10^10)", TOO_BIG),
    ("exp(exp(exp(10)))", "exp argument too large"),
    ("exp(3000)", "exp argument too large"),
    ("exp(-3000)", "exp argument too large"),
    ("factorial(factorial(20))", "factorial: the result is too large"),
    ("factorial(1000000)", "factorial: the result is too large"),
    ("factorial(10^9)", "factorial: the result is too large"),
    ("1000!", "factorial: the result is too large"),
    ("3!!", "double factorial"),
    ("factorial(2.5)", "factorial needs a whole number ≥ 0, but got 2.5"),
    ("factorial(-1)", "factorial needs a whole number ≥ 0, but got -1"),
    ("comb(10^12, 10^6)", "comb: the result is too large"),
    ("comb(5, -1)", "comb needs a whole number ≥ 0"),
    ("comb(5)", "comb takes at least 2 and at most 2 arguments, but got 1"),
    ("perm(10^6, 10^5)", "perm: the result is too large"),
    ("gamma(0)", "gamma is undefined at 0 and the negative whole numbers"),
    ("gamma(-3)", "gamma is undefined"),
    ("gamma(1000)", "gamma: the result is too large"),
    ("erfc(100)", "too small"),
    ("tan(pi/2)", "tan is undefined at odd multiples of pi/2"),
    ("tand(90)", "tand is undefined at odd multiples of 90"),
    ("tand(-270)", "tand is undefined"),
    ("asin(2)", "asin needs a number from -1 to 1, but got 2"),
    ("acos(-1.5)", "acos needs a number from -1 to 1"),
    ("atan2(0, 0)", "atan2(0, 0) is undefined"),
    ("sinh(3000)", "sinh argument too large"),
    ("cosh(-3000)", "cosh argument too large"),
    ("normal_cdf(1, 0, 0)", "normal_cdf needs sigma > 0"),
    ("normal_pdf(0, 0, -1)", "normal_pdf needs sigma > 0"),
    ("normal_cdf(-100)", "too small"),
    ("binom_pmf(2, 10, 1.5)", "binom_pmf needs a probability from 0 to 1"),
    ("binom_pmf(2.5, 10, 0.5)", "binom_pmf needs a whole number"),
    ("binom_pmf(5, 10^12, 0.5)", "binom_pmf: the result is too large"),
    ("min()", "min takes at least 1"),
    ("round(2.5, 0.5)", "round(x, n) needs a whole number of digits n"),
    ("round(2.5, 400)", "at most 300 digits"),
    ("ln 3!", "ambiguous; use parentheses: ln(3!) or ln(3)!"),
    ("sin(" * 25 + "1" + ")" * 25, "nested too deeply"),
    ("sin(" * 10_000 + "1" + ")" * 10_000, "too long"),
    ("log(-1)", "ln needs a positive number, but got -1"),
    ("ln(0)", "ln needs a positive number, but got 0"),
    ("log10(-2)", "log10 needs a positive number"),
    ("sqrt(-1)", "sqrt needs a number that is not negative"),
    ("1/0", "Division by zero"),
    ("1/(1-1)", "Division by zero"),
    ("0^0", "0 cannot be raised to a zero or negative power"),
    ("0^-1", "0 cannot be raised to a zero or negative power"),
    ("(-8)^(1/3)", "negative number cannot be raised to a fractional power"),
    ("15%", "A percent sign belongs after a number, as its unit: 15.3%."),
    ("3 % 2", "A percent sign belongs after a number"),
    (
        "1,000",
        "ambiguous: write it with a decimal point (e.g. 1.000) or without separators (e.g. 1000)",
    ),
    (
        "2,302",
        "ambiguous: write it with a decimal point (e.g. 2.302) or without separators (e.g. 2302)",
    ),
    ("1,00,000", "more than one comma, not in groups of three digits"),
    ("1,000.5,2", "mixed separators"),
    ("1.000.5", "more than one decimal point, not in groups of three digits"),
    ("2,5 + 0.5", "mixed separators"),
    ("1.2.3", "more than one decimal point"),
    ("1,2,3", "more than one comma"),
    ("8 2", "Two numbers separated by a space; use * to multiply."),
    ("2.30 5", "Two numbers separated by a space"),
    ("1234 567", "Two numbers separated by a space"),
    ("2 .5", "Two numbers separated by a space"),
    ("ln 10^2", "ambiguous; use parentheses"),
    ("ln ln 2", "Use parentheses with nested functions"),
    ("ln 2 pi", "ambiguous; use parentheses"),
    ("ln -2", "needs its argument in parentheses"),
    ("ln", "needs its argument in parentheses"),
    ("ln()", "ln needs one argument"),
    ("log(2, 10)", "Functions take one argument; use log10(x) or log2(x) for other bases."),
    ("sqrt(4, 2)", "Functions take one argument"),
    ("log28", "log28 is ambiguous: write log(28) or log2(8)"),
    ("2.30 bits", "Unknown name 'bits'"),  # parse alone reads no unit: read_answer does
    ("10 m/s", "Unknown name 'm'"),
    ("2, 30", "Unexpected ','"),
    ("(1, 2)", "Unexpected ','"),
    ("", "no number or expression"),
    ("   ", "no number or expression"),
    ("nats", "Unknown name 'nats'"),
    ("é", "The character 'é' (U+00E9) is not allowed"),
    ("2\u200b3", "U+200B"),
    ("2 + \x00", "U+0000"),
    ("1½", "mixed number"),
    ("()", "Empty parentheses"),
    ("(2", "never closed"),
    ("2)", "Unexpected ')'"),
    ("2 +", "ends too early"),
    ("*2", "Unexpected '*'"),
    ("2 // 3", "Unexpected '/'"),
    ("2 = 3", "Unexpected character '='"),
    ("-" * 250 + "1", "nested too deeply"),
    ("(" * 100 + "1" + ")" * 100, "nested too deeply"),
    ("(" * 200 + "1" + ")" * 200, "too long"),
    ("-" * 300 + "1", "too long"),
    ("1+" * 149 + "1", "too complex"),
    ("1" * 100_000, "too long"),
    ("9" * 5000, "too long"),
    ("π" * 301, "too long"),
    ("\ufdfa" * 40, "too long"),  # one character, 18 after NFKC
    ("π" * 150, "Unknown name 'pipipipipipipipipipi...'"),
]


@pytest.mark.parametrize(("text", "fragment"), REJECTED)
def test_rejected_quickly_with_a_specific_message(text: str, fragment: str) -> None:
    with pytest.raises(AnswerParseError) as caught:
        evaluate(parse(text))
    assert fragment in caught.value.message
    steps = _steps(lambda: _outcome(text))
    assert steps < STEPS, f"{steps:,} steps"


def test_sympy_is_refused_what_would_hang_it() -> None:
    # mpmath copes with these (a modest value), exact rationals would not (billions of digits).
    for text in ["1.000001^(10^9)", "(1.000001^4096)^4096", "(pi/3.14159)^(10^9)"]:
        assert mpmath.isfinite(evaluate(parse(text)))
        assert "too many digits" in _sympy_refusal(text)
        assert _steps(lambda: _sympy_refusal(text)) < STEPS  # noqa: B023 (called right here)
    for text in ["sqrt(2^4000+1)", "(2^4000+1)^(1/3)"]:
        assert "cannot be taken exactly" in _sympy_refusal(text)
        assert _steps(lambda: _sympy_refusal(text)) < STEPS  # noqa: B023 (called right here)


@pytest.mark.parametrize("text", ["9^9^9", "exp(3000)", "ln(-1)", "1/0", "0^0", "10^-5000"])
def test_to_sympy_applies_the_same_guards(text: str) -> None:
    with pytest.raises(AnswerParseError) as exact:
        to_sympy(parse(text))
    with pytest.raises(AnswerParseError) as approx:
        evaluate(parse(text))
    assert exact.value.message == approx.value.message


# --- how an answer is read ------------------------------------------------------------------------

READINGS = [
    # (input, canonical, kind, decimals, sigfigs)
    ("2.30", "2.30", "decimal", 2, 3),
    ("2,30", "2.30", "decimal", 2, 3),
    ("-2.30", "-2.30", "decimal", 2, 3),
    ("0.105", "0.105", "decimal", 3, 3),
    ("30000", "30000", "decimal", 0, 5),
    ("30 000", "30000", "decimal", 0, 5),
    ("1.0", "1.0", "decimal", 1, 2),
    ("2", "2", "decimal", 0, 1),
    ("0.0", "0.0", "decimal", 1, 1),
    ("1e-3", "1e-3", "decimal", 3, 1),
    ("2.5e-3", "2.5e-3", "decimal", 4, 2),
    ("1.23e4", "1.23e4", "decimal", -2, 3),
    ("2E+03", "2e3", "decimal", -3, 1),
    (".5", "0.5", "decimal", 1, 1),
    ("ln 10", "ln(10)", "expression", 0, 0),
    ("8 ln 2", "8*ln(2)", "expression", 0, 0),
    ("log(5)+log(2)", "ln(5) + ln(2)", "expression", 0, 0),
    ("lg 2", "log10(2)", "expression", 0, 0),
    ("1/2", "1/2", "expression", 0, 0),
    ("23/10", "23/10", "expression", 0, 0),
    ("2³", "2^3", "expression", 0, 0),
    ("10⁻³", "10^(-3)", "expression", 0, 0),
    ("-2^2", "-2^2", "expression", 0, 0),
    ("(-2)^2", "(-2)^2", "expression", 0, 0),
    ("(2^3)^2", "(2^3)^2", "expression", 0, 0),
    ("1 - (2 - 3)", "1 - (2 - 3)", "expression", 0, 0),
    ("-(1 + 2)", "-(1 + 2)", "expression", 0, 0),
    ("2/(3*4)", "2/(3*4)", "expression", 0, 0),
    ("1e-3*5", "1e-3*5", "expression", 0, 0),
    ("8*0.6931", "8*0.6931", "mixed", 0, 0),
    ("-ln(0.2)-ln(0.5)", "-ln(0.2) - ln(0.5)", "mixed", 0, 0),
    ("--2.30", "-(-2.30)", "mixed", 0, 0),
]


@pytest.mark.parametrize(("text", "canonical", "kind", "decimals", "sigfigs"), READINGS)
def test_how_it_was_read(text: str, canonical: str, kind: str, decimals: int, sigfigs: int) -> None:
    parsed = parse(text)
    assert (parsed.canonical, parsed.kind, parsed.decimals, parsed.sigfigs) == (
        canonical,
        kind,
        decimals,
        sigfigs,
    )
    assert parsed.source == text
    assert parsed.names == frozenset()


@pytest.mark.parametrize(
    ("text", "read_as"),
    [
        ("2.30", "2.30"),
        ("2,30", "2.30"),
        ("ln 10", "ln(10) ≈ 2.302585"),
        ("8 ln 2", "8*ln(2) ≈ 5.545177"),
        ("1/2", "1/2 = 0.5"),
        ("1e-3", "1e-3 = 0.001"),
        ("log(30 000)", "ln(30000) ≈ 10.30895"),
    ],
)
def test_read_answer_echoes_the_reading(text: str, read_as: str) -> None:
    reading = read_answer(text)
    assert isinstance(reading, Reading)
    assert reading.read_as == read_as


def test_read_answer_failure_is_a_value_with_a_caret() -> None:
    failure = read_answer("8 ln 2 + é")
    assert isinstance(failure, ParseFailure)
    assert failure.message.startswith("Your answer could not be read. The character 'é'")
    assert failure.offset == 9
    assert failure.pointer == "8 ln 2 + é\n         ^"
    evaluated = read_answer("ln(-1)")
    assert isinstance(evaluated, ParseFailure)
    assert evaluated.message == (
        "Your answer could not be evaluated. ln needs a positive number, but got -1."
    )


def test_offsets_point_into_the_raw_text() -> None:
    # "²" becomes "^(2)" and "−" becomes "-" on the way; the offset still counts raw characters.
    with pytest.raises(AnswerParseError) as caught:
        parse("−2² + x")
    assert caught.value.offset == 6


def test_read_answer_is_memoized() -> None:
    assert read_answer("ln 10") is read_answer("ln 10")


def test_evaluate_leaves_the_global_precision_alone() -> None:
    before = mpmath.mp.dps
    evaluate(parse("ln 10"))
    to_sympy(parse("ln 10"))
    assert mpmath.mp.dps == before


# --- exactness ------------------------------------------------------------------------------------


def test_key_is_exact() -> None:
    exact = to_sympy(parse("-ln(0.2)-ln(0.5)"))
    assert sympy.simplify(exact - sympy.log(10)) == 0
    assert to_sympy(parse("0.2")) == sympy.Rational(1, 5)
    assert to_sympy(parse("1e-3")) == sympy.Rational(1, 1000)
    assert to_sympy(parse("8 ln 2")) == 8 * sympy.log(2)
    assert to_sympy(parse("e^2")) == sympy.exp(2)
    assert to_sympy(parse("lg 1000")) == 3


AGREEMENT = [
    "ln 10",
    "-ln(0.2)-ln(0.5)",
    "8 ln 2",
    "sqrt(2)/3",
    "e^pi",
    "pi^e",
    "2^0.5",
    "log2(10) + log10(2)",
    "exp(-2.5) * 1e-3",
    "abs(-ln(0.9))",
    "(1/3)^(1/7)",
    "1.0001^50",
    "10^-300 * 3",
]


@pytest.mark.parametrize("text", AGREEMENT)
def test_evaluate_agrees_with_sympy_to_25_digits(text: str) -> None:
    parsed = parse(text)
    approx = evaluate(parsed)
    with mpmath.workdps(40):  # convert sympy's 40 digits without rounding them to 15
        exact = mpmath.mpf(sympy.N(to_sympy(parsed), 40))
        assert abs(approx - exact) <= mpmath.mpf(10) ** -25 * abs(exact)


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (sympy.log(10), "ln(10)"),
        (8 * sympy.log(2), "8*ln(2)"),
        (sympy.log(30000), "ln(30000)"),
        (sympy.E, "e"),
        (sympy.exp(2), "exp(2)"),
        (sympy.log(2) / sympy.log(10), "ln(2)/ln(10)"),
        (sympy.pi**2, "pi^2"),
        (sympy.sqrt(2), "sqrt(2)"),
        (sympy.Abs(sympy.Symbol("x")), "abs(x)"),
        (sympy.Rational(23, 10), "23/10"),
    ],
)
def test_to_text_prints_our_language(expr: sympy.Expr, text: str) -> None:
    assert to_text(expr) == text
    if not expr.free_symbols:  # and reads back to the same number
        assert _value(text) == pytest.approx(float(expr), rel=1e-12)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (LN10, "2.302585"),
        (8 * math.log(2), "5.545177"),
        (math.log(30000), "10.30895"),
        (-math.log(0.9), "0.1053605"),
        (0.5, "0.5"),
        (100.0, "100"),
        (0.0, "0"),
        (-2.5, "-2.5"),
        (1e8, "1e8"),
        (1.5e-9, "1.5e-9"),
        (123456789.0, "1.234568e8"),
        (mpmath.mpf(2) ** 4000, "1.318204e1204"),
        (math.inf, "inf"),
        (math.nan, "nan"),
    ],
)
def test_format_value(value: Any, text: str) -> None:
    assert format_value(value) == text


def test_format_value_digits() -> None:
    assert format_value(LN10, 3) == "2.3"
    assert format_value(LN10, 16) == "2.302585092994046"


# --- author mode -------------------------------------------------------------------------------


def _mlm(*ps: Any) -> Any:
    return -mpmath.fsum(mpmath.log(p) for p in ps)


AUTHOR_FUNCTIONS = {
    **STUDENT_FUNCTIONS,
    "mlm": Function("mlm", 1, None, _mlm, lambda *ps: -sympy.Add(*(sympy.log(p) for p in ps))),
    "hyp": Function(
        "hyp", 2, 2, lambda a, b: mpmath.sqrt(a**2 + b**2), lambda a, b: sympy.sqrt(a**2 + b**2)
    ),
}


def test_author_mode_names_and_functions() -> None:
    parsed = parse(
        "mlm(p1, p2) / ln(10) + hyp(3, a)", names=["p1", "p2", "a"], functions=AUTHOR_FUNCTIONS
    )
    assert parsed.names == frozenset({"p1", "p2", "a"})
    assert parsed.canonical == "mlm(p1, p2)/ln(10) + hyp(3, a)"
    env = {"p1": mpmath.mpf("0.2"), "p2": mpmath.mpf("0.5"), "a": mpmath.mpf(4)}
    assert float(evaluate(parsed, env)) == pytest.approx(1.0 + 5.0)
    exact = to_sympy(
        parsed, {"p1": sympy.Rational(1, 5), "p2": sympy.Rational(1, 2), "a": sympy.Integer(4)}
    )
    assert sympy.simplify(exact) == 6
    symbolic = to_sympy(parsed, {"p1": sympy.Symbol("p1"), "p2": sympy.Rational(1, 2), "a": 4})
    assert symbolic.free_symbols == {sympy.Symbol("p1")}


def test_author_mode_commas_separate_arguments() -> None:
    parsed = parse("mlm(0.2,0.5)", functions=AUTHOR_FUNCTIONS)
    assert parsed.canonical == "mlm(0.2, 0.5)"
    assert float(evaluate(parsed)) == pytest.approx(LN10)
    nested = parse("mlm(1, (0,5))", functions=AUTHOR_FUNCTIONS)  # in a group: a decimal comma
    assert float(evaluate(nested)) == pytest.approx(math.log(2))


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("hyp(3)", "hyp takes at least 2 and at most 2 arguments, but got 1"),
        ("hyp 3", "Write hyp(...) with parentheses"),
        ("mlm()", "mlm takes at least 1 and any number of arguments, but got 0"),
        ("q + 1", "Unknown name 'q'; the names here are a, e, pi, and the functions."),
        ("sine(1)", "Unknown name 'sine'; did you mean sin?"),
    ],
)
def test_author_mode_errors(text: str, fragment: str) -> None:
    with pytest.raises(AnswerParseError) as caught:
        parse(text, names=["a"], functions=AUTHOR_FUNCTIONS)
    assert fragment in caught.value.message


def test_names_are_for_authors_only() -> None:
    with pytest.raises(AnswerParseError, match="Unknown name 'p1'"):
        parse("p1")
    parsed = parse("2 p1", names=["p1"])
    with pytest.raises(AnswerParseError, match="p1 has no value here"):
        evaluate(parsed)
    with pytest.raises(AnswerParseError, match="p1 has no value here"):
        to_sympy(parsed, {})
    assert float(evaluate(parsed, {"p1": 0.25})) == 0.5


@pytest.mark.parametrize("name", ["Bad", "1x", "x-y", ""])
def test_names_must_be_identifiers(name: str) -> None:
    with pytest.raises(ValueError, match="cannot be used as a name"):
        parse("1", names=[name])


@pytest.mark.parametrize("name", ["e", "pi", "ln", "hyp"])
def test_names_must_not_shadow_the_vocabulary(name: str) -> None:
    with pytest.raises(AnswerParseError, match="already a function or constant"):
        parse("1", names=[name], functions=AUTHOR_FUNCTIONS)


def test_function_errors_point_at_the_call() -> None:
    def fussy(x: Any) -> Any:
        raise AnswerParseError("a probability must lie in (0, 1]")

    functions = {"p": Function("p", 1, 1, fussy, lambda x: x)}
    with pytest.raises(AnswerParseError) as caught:
        evaluate(parse("1 + p(2)", functions=functions))
    assert caught.value.offset == 4


def test_vocabulary() -> None:
    assert set(STUDENT_FUNCTIONS) == {
        *("ln", "log", "log10", "lg", "log2", "exp", "sqrt", "abs"),
        *("sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sind", "cosd", "tand"),
        *("sinh", "cosh", "tanh", "factorial", "comb", "perm", "gamma", "erf", "erfc"),
        *("normal_cdf", "normal_pdf", "binom_pmf", "min", "max", "floor", "ceil", "round"),
    }
    assert STUDENT_FUNCTIONS["log"].name == "ln"
    assert set(CONSTANTS) == {"e", "pi"}


# --- fuzzing ---------------------------------------------------------------------------------

ALPHABET = "0123456789.,+-*/^() eElnogpisqrtabx%²³⁻½−×·≈=~_'[]!"
TOKENS = st.sampled_from(
    ["1", "2", "0", "9", "10", "0.5", "2,30", "1e-3", ".", ",", " ", "+", "-", "*", "/", "^",
     "**", "(", ")", "ln", "log", "log10", "exp", "sqrt", "abs", "e", "pi", "²", "⁻", "x", "%"]
)  # fmt: skip


def _read(text: str) -> None:
    error = _outcome(text)  # anything but AnswerParseError propagates and fails the test
    if error is not None:
        assert error.message
        assert error.offset is None or 0 <= error.offset <= len(text)
    assert _steps(lambda: _outcome(text)) < STEPS
    if error is None:  # the exact path too: only AnswerParseError, and quickly
        assert _steps(lambda: _sympy_refusal(text)) < STEPS


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_any_text_parses_or_raises_answer_parse_error(text: str) -> None:
    _read(text)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=60))
def test_any_text_near_the_grammar_parses_or_raises(text: str) -> None:
    _read(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(TOKENS, max_size=40).map("".join))
def test_any_token_soup_parses_or_raises(text: str) -> None:
    _read(text)


def _combine(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    operators = st.sampled_from([" + ", "-", "*", "/", "^", "**", " "])
    functions = st.sampled_from(["ln", "log", "log10", "log2", "sqrt", "exp", "abs"])
    return st.one_of(
        st.tuples(inner, operators, inner).map("".join),
        inner.map(lambda text: f"({text})"),
        inner.map(lambda text: f"-{text}"),
        st.tuples(functions, inner).map(lambda pair: f"{pair[0]}({pair[1]})"),
    )


ATOMS = st.sampled_from(["2", "10", "3", "0.5", "0,25", "1e-3", "2.30", "30 000", "e", "pi", "½"])
EXPRESSIONS = st.recursive(ATOMS, _combine, max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(EXPRESSIONS)
def test_the_canonical_form_reads_back_the_same(text: str) -> None:
    try:
        parsed = parse(text)
    except AnswerParseError:
        return
    again = parse(parsed.canonical)
    assert again.canonical == parsed.canonical
    assert (again.kind, again.decimals, again.sigfigs) == (
        parsed.kind,
        parsed.decimals,
        parsed.sigfigs,
    )
    first, second = _outcome(text), _outcome(parsed.canonical)
    if first is None:
        assert second is None
        assert evaluate(again) == evaluate(parsed)
    else:
        assert second is not None
        assert second.message == first.message


@pytest.mark.parametrize("text", ["1.5 x 10^-3", "1.5x10^-3", "1.5 X 10^-3", "1.5 × 10^-3"])
def test_a_letter_x_before_a_power_of_ten_is_a_times_sign(text: str) -> None:
    reading = read_answer(text)
    assert isinstance(reading, Reading)
    assert float(reading.value) == pytest.approx(1.5e-3)


def test_a_parameter_named_x_is_never_read_as_a_times_sign() -> None:
    # An author's key "3 x 10^2" with a parameter x is 3·x·10², not 300 with x dropped.
    parsed = parse("3 x 10^2", names=["x"])
    assert float(evaluate(parsed, {"x": mpmath.mpf(2)})) == 600
    assert "x" in parsed.names
