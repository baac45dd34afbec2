"""Paths that skip sympy give exactly what sympy gives.

``quizgym solve`` works out plain arithmetic on decimals with exact fractions, and parameter
values are shown from exact fractions: both are held here to the sympy forms they replace.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import sympy
from hypothesis import example, given
from hypothesis import strategies as st

from quizgym.expr import evaluate, format_value, parse
from quizgym.model import ParamRange
from quizgym.solver import exact as exact_path
from quizgym.solver import keys, param_values, show_number, to_mpf

DECIMALS = st.decimals(
    min_value=-1000, max_value=1000, allow_nan=False, allow_infinity=False, places=4
).map(lambda d: format(d.normalize(), "f"))


@st.composite
def arithmetic(draw: st.DrawFn, depth: int = 3) -> str:
    """Plain arithmetic a student types: decimals, signs, + - * /, small integer powers."""
    if depth == 0 or draw(st.booleans()):
        return draw(DECIMALS)
    op = draw(st.sampled_from(["+", "-", "*", "/", "^"]))
    left = draw(arithmetic(depth - 1))
    right = str(draw(st.integers(-4, 4))) if op == "^" else draw(arithmetic(depth - 1))
    sign = draw(st.sampled_from(["", "-"]))
    return f"{sign}({left}) {op} ({right})"


@given(arithmetic())
def test_solving_plain_arithmetic_without_sympy_agrees_with_sympy(text: str) -> None:
    try:
        fast = str(keys.solve(text))
    except keys.AnswerParseError as exc:
        fast = f"refused: {exc.message}"
    original = keys.rational_value
    keys.rational_value = lambda parsed, env=None: None  # type: ignore[assignment]  # the sympy path, as before
    try:
        slow = str(keys.solve(text))
    except keys.AnswerParseError as exc:
        slow = f"refused: {exc.message}"
    finally:
        keys.rational_value = original
    assert fast == slow


def _shown_by_sympy(value: float) -> str:
    """How a parameter was shown when its values were sympy rationals."""
    exact = sympy.Integer(int(value)) if float(value).is_integer() else sympy.Rational(repr(value))
    return str(int(exact)) if exact.is_Integer else format_value(to_mpf(exact), 15)


@given(st.floats(min_value=-1e20, max_value=1e20, allow_nan=False))
def test_a_parameter_is_shown_as_its_exact_sympy_value_was(x: float) -> None:
    assert show_number(param_values(x)[0]) == _shown_by_sympy(x)


def test_ranges_keep_their_exact_steps() -> None:
    values = param_values(ParamRange(min=0.1, max=0.3, step=0.05))
    assert list(values) == [Fraction(k, 20) for k in (2, 3, 4, 5, 6)]
    assert [show_number(v) for v in values] == ["0.1", "0.15", "0.2", "0.25", "0.3"]


# --- plain arithmetic without mpmath (quizgym/solver/exact.py) -----------------------------------

TINY_OR_HUGE = st.builds(
    lambda mantissa, exponent: f"{mantissa}e{exponent}",
    st.integers(-(10**40), 10**40),
    st.integers(-1300, 1300),
)
"""Numbers near the walker's limits (2^±4096 ≈ 10^±1233) and with more digits than 30."""


@st.composite
def hard_arithmetic(draw: st.DrawFn, depth: int = 3) -> str:
    """Arithmetic meant to trip rounding: cancellation (1 + 10^-40 - 1), divisors that round to
    zero, values at the range's ends, long mantissas, powers of all of these."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.one_of(DECIMALS, TINY_OR_HUGE, st.sampled_from(["1", "0", "2", "0.1"])))
    op = draw(st.sampled_from(["+", "-", "*", "/", "^"]))
    left = draw(hard_arithmetic(depth - 1))
    exponent = str(draw(st.integers(-70, 70)))
    right = exponent if op == "^" else draw(hard_arithmetic(depth - 1))
    return f"({left}) {op} ({right})"


def _solved(text: str) -> tuple[str, object]:
    try:
        solution = keys.solve(text)
    except keys.AnswerParseError as exc:
        return f"refused: {exc.message}", None
    return str(solution), solution.value


@given(st.one_of(arithmetic(), hard_arithmetic()))
def test_plain_arithmetic_without_mpmath_agrees_with_mpmath(text: str) -> None:
    # The quick path (exact fractions, a proven bound on mpmath's rounding) against the path
    # that evaluates with mpmath first, as solve did before: the same text, the same value.
    fast = _solved(text)
    original = keys.evaluates
    keys.evaluates = lambda parsed: False  # type: ignore[assignment]  # evaluate with mpmath
    try:
        slow = _solved(text)
    finally:
        keys.evaluates = original
    assert fast == slow


@given(hard_arithmetic())
def test_what_the_quick_path_takes_evaluates(text: str) -> None:
    # Soundness of the bound: whatever exact_path.evaluates accepts, mpmath's guarded walker
    # evaluates, within the bound of the exact value.
    try:
        parsed = parse(text)
    except keys.AnswerParseError:
        return
    bounded = exact_path._walk(parsed.tree)
    if bounded is None:
        return
    value, error = bounded
    approx = evaluate(parsed)  # must not raise
    with mpmath.workdps(60):
        assert abs(mpmath.mpf(approx) - mpmath.mpf(value.numerator) / value.denominator) <= (
            mpmath.mpf(error.numerator) / error.denominator
            + abs(mpmath.mpf(value.numerator) / value.denominator) * mpmath.mpf(2) ** -150
        )


FRACTIONS = st.one_of(
    st.fractions(),
    st.builds(
        lambda p, q, k: Fraction(p, q) * Fraction(10) ** k,
        st.integers(-(10**60), 10**60),
        st.integers(1, 10**60),
        st.integers(-1100, 1100),
    ),
    # ties and near-ties of the 16-digit rounding: d.ddddddddddddddd5 and its neighbours
    st.builds(
        lambda m, k, nudge: (
            Fraction(m * 10 + 5) / Fraction(10) ** (16 + k) + Fraction(nudge, 10**40)
        ),
        st.integers(10**15, 10**16 - 1),
        st.integers(-20, 20),
        st.integers(-3, 3),
    ),
)


@given(FRACTIONS)
def test_a_fraction_is_rounded_and_shown_as_mpmath_does(value: Fraction) -> None:
    with mpmath.workdps(30):
        rounded = mpmath.mpf(value.numerator) / value.denominator
    sign, man, exp, _ = rounded._mpf_
    assert exact_path.round_to_mpf(value) == (sign, int(man), int(exp))
    for digits in (16, 5, 7):
        shown = exact_path.shown_value(value, digits)
        assert shown is None or shown == format_value(rounded, digits)


# --- one logarithm without sympy ------------------------------------------------------------------

SMALL_RATIONALS = st.one_of(
    st.sampled_from(["2", "3", "10", "0.5", "0.9", "1.5", "1", "4", "0.2", "1/3", "2/3", "9/10"]),
    DECIMALS,
    st.builds(lambda p, q: f"{p}/{q}", st.integers(-50, 50), st.integers(1, 50)),
    st.builds(lambda n, k: f"{n}^{k}", st.integers(-12, 12), st.integers(-5, 5)),
)


@st.composite
def log_terms(draw: st.DrawFn, depth: int = 3, argument: str | None = None) -> str:
    """Sums, differences, products and quotients of rationals and logarithms of rationals,
    mostly of one argument (written as itself, its reciprocal or a power of it, so that sympy
    collects ln 2 + ln 0.5), and now and then something outside what the quick path takes (a
    logarithm of another argument, exp, sqrt, e, log10, a logarithm of a logarithm), which must
    go to sympy and print as before."""
    if argument is None:
        argument = draw(SMALL_RATIONALS)
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        leaf = draw(st.integers(0, 19))
        if leaf < 9:
            name = draw(st.sampled_from(["ln", "log", "-ln", "2 ln", "-3/4*ln"]))
            written = draw(st.sampled_from(["{}", "1/({})", "({})^2", "({})^-1"]))
            return f"{name}({written.format(argument)})"
        if leaf < 17:
            return f"({draw(SMALL_RATIONALS)})"
        other = draw(st.sampled_from(["e", "sqrt(2)", "exp(1/2)", "log10(5)", "ln(ln(3))"]))
        return f"ln({draw(SMALL_RATIONALS)})" if leaf == 17 else other
    op = draw(st.sampled_from(["+", "-", "*", "/", "*", "/"]))
    left = draw(log_terms(depth - 1, argument))
    right = draw(log_terms(depth - 1, argument))
    return f"({left}) {op} ({right})"


POSITIVE_RATIONALS = st.one_of(
    st.sampled_from(["2", "10", "0.5", "0.9", "1.5", "4", "0.2", "1/3", "9/10", "100/99"]),
    st.fractions(min_value=Fraction(1, 10**6), max_value=10**6, max_denominator=10**6).map(str),
    st.decimals(min_value="0.0001", max_value="1000", places=4).map(lambda d: format(d, "f")),
)


@st.composite
def single_logs(draw: st.DrawFn) -> str:
    """What a loss key or a student's exact answer looks like: a sum of multiples of the
    logarithm of one rational (``-ln 0.9``, ``8 ln 2``, ``2*ln(3)/5 - ln(3)``)."""
    argument = draw(POSITIVE_RATIONALS)
    terms = []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(["ln", "log", "-ln"]))
        written = draw(st.sampled_from(["{}", "{}", "{}", "1/({})", "({})^2"]))
        log = f"{name}({written.format(argument)})"
        shape = draw(st.sampled_from(["{}", "({r})*{}", "{}/({r})", "({r})*{}/({r2})"]))
        terms.append(shape.format(log, r=draw(SMALL_RATIONALS), r2=draw(SMALL_RATIONALS)))
    signs = [draw(st.sampled_from([" + ", " - "])) for _ in terms[1:]]
    return terms[0] + "".join(sign + term for sign, term in zip(signs, terms[1:], strict=True))


@given(st.one_of(single_logs(), log_terms()))
@example("ln(1 + 10^-40)")  # sympy's 30-digit value is 0: solve shows it, as the keys have it
@example("10^40*ln(1 + 10^-40)")
@example("ln((1 + 10^-48)^3)")
@example("-ln(1 - 10^-20)")
@example("ln(0.1584) + 2 ln(0.1584^2)/(9/10) - 2 ln(1/0.1584)*0.1584")  # 4,300+ digits
def test_one_logarithm_without_sympy_prints_what_sympy_prints(text: str) -> None:
    fast = _solved(text)[0]
    original = keys.quick_log
    keys.quick_log = lambda parsed: None  # type: ignore[assignment]  # sympy works it out
    try:
        slow = _solved(text)[0]
    finally:
        keys.quick_log = original
    assert fast == slow


@given(st.one_of(single_logs(), log_terms()))
def test_one_logarithm_is_the_value_sympy_finds(text: str) -> None:
    # The quick path's 30-digit value is sympy's to within what both can tell apart (sympy's
    # evalf aims at 30 digits, the quick path rounds a value worked out to 200 more bits).
    try:
        parsed = parse(text)
        evaluate(parsed)
    except keys.AnswerParseError:
        return
    form = exact_path.log_form(parsed)
    value = form.value() if form is not None else None
    if value is None:
        return
    with mpmath.workdps(40):
        exact = mpmath.mpf(sympy.N(keys.to_sympy(parsed), 40))
        assert abs(value - exact) <= abs(exact) * mpmath.mpf(10) ** -29


@given(st.one_of(single_logs(), log_terms()))
def test_what_the_quick_logarithm_takes_evaluates(text: str) -> None:
    # Soundness of the bound with logarithms: whatever the walk accepts, mpmath's guarded
    # walker evaluates, within the bound of the exact value.
    try:
        parsed = parse(text)
    except keys.AnswerParseError:
        return
    walked = exact_path._log_walk(parsed.tree)
    if walked is None:
        return
    approx = evaluate(parsed)  # must not raise
    with mpmath.workdps(80):
        if walked.a is None:
            exact = mpmath.mpf(walked.c.numerator) / walked.c.denominator
        else:
            a = walked.a
            exact = mpmath.log(mpmath.mpf(a.numerator) / a.denominator) * walked.c.numerator
            exact /= walked.c.denominator
        error = mpmath.mpf(walked.error.numerator) / walked.error.denominator
        assert abs(mpmath.mpf(approx) - exact) <= error + abs(exact) * mpmath.mpf(2) ** -200
        assert walked.low <= abs(Fraction(str(mpmath.nstr(exact, 60)))) * (1 + Fraction(1, 10**50))
        assert abs(Fraction(str(mpmath.nstr(exact, 60)))) <= walked.high * (1 + Fraction(1, 10**50))


@given(POSITIVE_RATIONALS.map(Fraction))
def test_the_integer_logarithm_brackets_mpmaths(value: Fraction) -> None:
    low, high = exact_path.ln_bounds(value)
    with mpmath.workprec(600):
        exact = mpmath.log(mpmath.mpf(value.numerator) / value.denominator)
        assert mpmath.mpf(low.numerator) / low.denominator <= exact
        assert exact <= mpmath.mpf(high.numerator) / high.denominator
    assert high - low <= Fraction(1, 2**260)
