"""Comparison policies: the reference's §4 table, PrairieLearn semantics, scalar == vectorized."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quizgym.expr import Reading, read_answer
from quizgym.model import (
    AbsTolerance,
    DecimalsTolerance,
    RelTolerance,
    SigfigsTolerance,
    Tolerance,
)
from quizgym.tolerance import (
    HINT_DECIMALS,
    HINT_NONE,
    HINT_SIGFIGS,
    KIND_CODES,
    compare,
    compare_array,
    describe,
    hint_text,
    interval,
    rounds_to,
    within_sigfigs,
)

LN10 = math.log(10)
NSP = -math.log(0.9)  # 0.1053605
VOCAB = math.log(30000)  # 10.30895
SIGFIG_HINT = "Give at least 3 significant figures."


def _typed(text: str, key: float, tolerance: Tolerance = "auto") -> tuple[bool, str | None]:
    reading = read_answer(text)
    assert isinstance(reading, Reading), text
    match = compare(
        value=float(reading.value),
        key=key,
        tolerance=tolerance,
        kind=reading.parsed.kind,
        decimals=reading.parsed.decimals,
        sigfigs=reading.parsed.sigfigs,
    )
    return match.ok, match.hint


# The "quizgym auto" column of §4 "Same inputs under each default", then more auto cases.
AUTO = [
    (LN10, "2.3026", True, None),
    (LN10, "2.302", True, None),  # truncated, 0.025 %
    (LN10, "2.30", True, None),  # 0.112 %, but correctly rounded
    (LN10, "2.3", False, SIGFIG_HINT),
    (LN10, "2.31", False, None),  # mis-rounded, 0.32 %
    (LN10, "2.28", False, None),
    (NSP, "0.105", True, None),  # 0.34 %, correctly rounded
    (NSP, "0.11", False, SIGFIG_HINT),
    (VOCAB, "10.3", True, None),
    (VOCAB, "10.326", False, None),  # = ln 30522, a distractor
    # expressions must be exact; mixed ones within 0.1 %
    (LN10, "ln 10", True, None),
    (LN10, "-ln(0.2) - ln(0.5)", True, None),
    (LN10, "23/10", False, None),
    (LN10, "ln(10.1)", False, None),
    (8 * math.log(2), "8*0.6931", True, None),
    (8 * math.log(2), "8*0.69", False, None),
    # signs, exact short answers, e-notation
    (-LN10, "-2.30", True, None),
    (LN10, "-2.30", False, None),
    (1.0, "1", True, None),  # exact needs no 3 figures
    (0.5, "0.5", True, None),
    (2.0, "2.1", False, None),  # short AND wrong when rounded: no precision hint
    (12.0, "3", False, None),  # a hint about figures would mislead here
    (2.04, "2.0", False, SIGFIG_HINT),  # right to the digits typed: ask for more
    (12345.6, "1.23e4", True, None),  # rounded to the hundreds it typed
    (12345.6, "12300", False, None),  # typed as 5 figures
    (0.00123456, "1.23e-3", True, None),
    (2.345, "2.35", True, None),  # half up, although 2.345 is 2.34499... in binary
    (2.345, "2.34", False, None),
    (1.005, "1.01", True, None),
]


@pytest.mark.parametrize(("key", "text", "ok", "hint"), AUTO)
def test_auto(key: float, text: str, ok: bool, hint: str | None) -> None:
    assert _typed(text, key) == (ok, hint)


POLICIES = [
    # relabs: |s - t| <= abs + rel |t|
    (RelTolerance(rel=0.01), 100.0, "101", True, None),
    (RelTolerance(rel=0.01), 100.0, "101.01", False, None),
    (RelTolerance(rel=0.01, abs=0.5), 100.0, "101.4", True, None),
    (RelTolerance(rel=1e-3), LN10, "2.3", False, None),  # no 3-figure rule outside auto
    (RelTolerance(rel=1e-3), LN10, "ln 10", True, None),
    # abs
    (AbsTolerance(abs=0.01), LN10, "2.31", True, None),
    (AbsTolerance(abs=0.01), LN10, "2.29", False, None),
    (AbsTolerance(abs=0.01), LN10, "2.3", True, None),
    # PrairieLearn sigfig: eps = 0.51 * 10^-n, strict (window [1.2289, 1.2391] for 1.234)
    (SigfigsTolerance(sigfigs=3), 1.234, "1.23", True, None),
    (SigfigsTolerance(sigfigs=3), 1.234, "1.229", True, None),
    (SigfigsTolerance(sigfigs=3), 1.234, "1.228", False, None),
    (SigfigsTolerance(sigfigs=3), 1.234, "1.24", False, None),
    (SigfigsTolerance(sigfigs=3), 1.234, "1.2", False, SIGFIG_HINT),
    (SigfigsTolerance(sigfigs=2), 0.0, "0.04", True, None),  # t = 0: n = digits - 1
    (SigfigsTolerance(sigfigs=2), 0.0, "0.060", False, None),
    (SigfigsTolerance(sigfigs=2), 0.0, "0.06", False, None),
    (SigfigsTolerance(sigfigs=2), 0.0123, "0.01", False, "Give at least 2 significant figures."),
    (SigfigsTolerance(sigfigs=4), LN10, "2.3", False, "Give at least 4 significant figures."),
    # PrairieLearn decdig: eps = 0.51 * 10^-digits, strict
    (DecimalsTolerance(decimals=2), math.pi, "3.14", True, None),
    (DecimalsTolerance(decimals=2), math.pi, "3.145", True, None),
    (DecimalsTolerance(decimals=2), math.pi, "3.15", False, None),
    (DecimalsTolerance(decimals=2), math.pi, "3.1", False, "Give at least 2 decimal places."),
    (DecimalsTolerance(decimals=0), 2.4, "2", True, None),
]


@pytest.mark.parametrize(("tolerance", "key", "text", "ok", "hint"), POLICIES)
def test_policies(tolerance: Tolerance, key: float, text: str, ok: bool, hint: str | None) -> None:
    assert _typed(text, key, tolerance) == (ok, hint)


ALL_POLICIES: list[Tolerance] = [
    "auto",
    RelTolerance(rel=1e-3),
    AbsTolerance(abs=0.01),
    SigfigsTolerance(sigfigs=3),
    DecimalsTolerance(decimals=2),
]


@pytest.mark.parametrize("tolerance", ALL_POLICIES)
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, complex(2.30, 0), 2.3 + 1j])
def test_nan_inf_complex_never_ok(tolerance: Tolerance, value: complex) -> None:
    for key in (LN10, value if not isinstance(value, complex) else LN10):
        match = compare(
            value=value, key=key, tolerance=tolerance, kind="decimal", decimals=2, sigfigs=3
        )
        assert (match.ok, match.exact, match.hint) == (False, False, None)
    ok, hint = compare_array(
        values=np.array([value]), keys=LN10, tolerance=tolerance, kinds=0, decimals=2, sigfigs=3
    )
    assert not ok.any()
    assert not hint.any()


@pytest.mark.parametrize("tolerance", ALL_POLICIES)
def test_nan_key_never_matches(tolerance: Tolerance) -> None:
    match = compare(
        value=math.nan, key=math.nan, tolerance=tolerance, kind="decimal", decimals=2, sigfigs=3
    )
    assert not match.ok


def test_exact_flag() -> None:
    assert compare(
        value=LN10 * (1 + 1e-12),
        key=LN10,
        tolerance="auto",
        kind="expression",
        decimals=0,
        sigfigs=0,
    ).exact
    assert not compare(
        value=2.3026, key=LN10, tolerance="auto", kind="decimal", decimals=4, sigfigs=5
    ).exact


@pytest.mark.parametrize(
    ("value", "key", "decimals", "expected"),
    [
        (2.35, 2.345, 2, True),
        (2.34, 2.345, 2, False),
        (-2.35, -2.345, 2, True),  # half away from zero: symmetric in sign
        (2.35, -2.345, 2, False),
        (0.0, 0.004, 2, True),
        (-0.0, 0.004, 2, True),
        (1.01, 1.005, 2, True),
        (12300.0, 12345.6, -2, True),
        (12000.0, 12345.6, -3, True),
        (2.30, LN10, 2, True),
        (2.3, LN10, 1, True),
        (2.0, LN10, 0, True),
        (1e20, 1e20, 400, False),  # out of range: never by rounding
        (3.0, 2.5, 0, True),
        (2.0, 2.5, 0, False),
    ],
)
def test_rounds_to(value: float, key: float, decimals: int, expected: bool) -> None:
    assert rounds_to(value=value, key=key, decimals=decimals) is expected


def test_sigfig_window_matches_prairielearn() -> None:
    # PrairieLearn#12450: the sigfig window for 1.234 at 3 figures is (1.2289, 1.2391).
    assert within_sigfigs(value=1.2290, key=1.234, digits=3)
    assert not within_sigfigs(value=1.2288, key=1.234, digits=3)
    assert within_sigfigs(value=1.2390, key=1.234, digits=3)
    assert not within_sigfigs(value=1.2392, key=1.234, digits=3)
    # exact powers of ten: floor(log10) must not be off by one
    assert within_sigfigs(value=1000.0, key=1000.0, digits=1)
    assert within_sigfigs(value=1004.0, key=1000.0, digits=3)
    assert not within_sigfigs(value=1006.0, key=1000.0, digits=3)


@pytest.mark.parametrize(
    ("tolerance", "text"),
    [
        ("auto", "within 0.1% or correctly rounded (at least 3 significant figures)"),
        (RelTolerance(rel=1e-3), "within 0.1%"),
        (RelTolerance(rel=0.01, abs=1e-6), "within 1% or ±1e-06"),
        (AbsTolerance(abs=0.01), "±0.01"),
        (SigfigsTolerance(sigfigs=3), "to 3 significant figures"),
        (SigfigsTolerance(sigfigs=1), "to 1 significant figure"),
        (DecimalsTolerance(decimals=2), "to 2 decimal places"),
    ],
)
def test_describe(tolerance: Tolerance, text: str) -> None:
    assert describe(tolerance) == text


@pytest.mark.parametrize(
    ("tolerance", "key", "low", "high"),
    [
        ("auto", LN10, 2.30, LN10 * 1.001 + 1e-9),
        ("auto", -LN10, -LN10 * 1.001 - 1e-9, -2.30),
        ("auto", NSP, 0.105, NSP * 1.001 + 1e-9),
        ("auto", 2.3, 2.3 - 0.0023 - 1e-9, 2.3 + 0.0023 + 1e-9),
        ("auto", 0.0, -1e-9, 1e-9),
        (RelTolerance(rel=0.01, abs=0.5), 100.0, 98.5, 101.5),
        (AbsTolerance(abs=0.01), 2.0, 1.99, 2.01),
        (SigfigsTolerance(sigfigs=3), 1.234, 1.234 - 0.0051, 1.234 + 0.0051),
        (DecimalsTolerance(decimals=2), math.pi, math.pi - 0.0051, math.pi + 0.0051),
    ],
)
def test_interval(tolerance: Tolerance, key: float, low: float, high: float) -> None:
    lower, upper = interval(key=key, tolerance=tolerance)
    assert lower == pytest.approx(low)
    assert upper == pytest.approx(high)


def test_interval_needs_a_finite_key() -> None:
    with pytest.raises(ValueError, match="no interval"):
        interval(key=math.inf, tolerance="auto")


def test_hint_text() -> None:
    assert hint_text(code=HINT_NONE, tolerance="auto") is None
    assert hint_text(code=HINT_SIGFIGS, tolerance="auto") == SIGFIG_HINT
    assert hint_text(code=HINT_SIGFIGS, tolerance=SigfigsTolerance(sigfigs=4)) == (
        "Give at least 4 significant figures."
    )
    assert hint_text(code=HINT_DECIMALS, tolerance=DecimalsTolerance(decimals=2)) == (
        "Give at least 2 decimal places."
    )


def test_kind_codes_cover_every_kind() -> None:
    kinds = {read_answer(t).parsed.kind for t in ("2.30", "ln 10", "8*0.6931")}  # type: ignore[union-attr]
    assert kinds == set(KIND_CODES)


def test_compare_array_broadcasts_keys_per_variant() -> None:
    # 3 students × 2 variants of the key: ln 10 and ln 30000.
    values = np.array([[2.30, 10.3], [2.3, 10.4], [LN10, VOCAB]])
    keys = np.array([LN10, VOCAB])
    kinds = np.array([[0, 0], [0, 0], [1, 1]])
    decimals = np.array([[2, 1], [1, 1], [0, 0]])
    sigfigs = np.array([[3, 3], [2, 3], [0, 0]])
    ok, hint = compare_array(
        values=values, keys=keys, tolerance="auto", kinds=kinds, decimals=decimals, sigfigs=sigfigs
    )
    assert ok.tolist() == [[True, True], [False, False], [True, True]]
    assert hint.tolist() == [[0, 0], [HINT_SIGFIGS, 0], [0, 0]]
    assert hint.dtype == np.int8


# --- properties -------------------------------------------------------------------------------

finite = st.floats(allow_nan=False, allow_infinity=False)
anything = st.one_of(
    st.floats(),
    st.sampled_from([0.0, -0.0, 1.0, 2.345, 1000.0, 1e-300, 1e300, 5e-324]),
)
policies = st.one_of(
    st.just("auto"),
    st.builds(
        RelTolerance,
        rel=st.floats(min_value=1e-12, max_value=0.99),
        abs=st.floats(min_value=0, max_value=1e6),
    ),
    st.builds(AbsTolerance, abs=st.floats(min_value=1e-300, max_value=1e300)),
    st.builds(SigfigsTolerance, sigfigs=st.integers(1, 15)),
    st.builds(DecimalsTolerance, decimals=st.integers(0, 15)),
)
kinds = st.sampled_from(sorted(KIND_CODES))


@settings(max_examples=500)
@given(
    st.lists(
        st.tuples(anything, anything, kinds, st.integers(-400, 400), st.integers(0, 30)),
        min_size=1,
        max_size=20,
    ),
    policies,
)
def test_scalar_and_array_forms_agree(
    rows: list[tuple[float, float, str, int, int]], tolerance: Tolerance
) -> None:
    values, keys, kind_names, decimals, sigfigs = (
        list(column) for column in zip(*rows, strict=True)
    )
    ok, hint = compare_array(
        values=np.array(values),
        keys=np.array(keys),
        tolerance=tolerance,
        kinds=np.array([KIND_CODES[k] for k in kind_names]),
        decimals=np.array(decimals),
        sigfigs=np.array(sigfigs),
    )
    for i, (value, key, kind, places, figures) in enumerate(rows):
        match = compare(
            value=value, key=key, tolerance=tolerance, kind=kind, decimals=places, sigfigs=figures
        )
        assert bool(ok[i]) == match.ok, (value, key, kind, places, figures)
        assert hint_text(code=int(hint[i]), tolerance=tolerance) == match.hint


@settings(max_examples=300)
@given(finite, finite.filter(lambda x: x != 0), st.integers(-20, 20), kinds)
def test_scalar_and_array_agree_near_the_key(
    key: float, scale: float, places: int, kind: str
) -> None:
    # Random pairs are rarely close; these sit near the key, where the rules differ.
    for tolerance in ALL_POLICIES:
        values = [key + scale * 10.0**k for k in range(-16, 2)] + [round(key, 3)]
        ok, _ = compare_array(
            values=np.array(values), keys=key, tolerance=tolerance,
            kinds=KIND_CODES[kind], decimals=places, sigfigs=3,
        )  # fmt: skip
        expected = [
            compare(value=v, key=key, tolerance=tolerance, kind=kind, decimals=places, sigfigs=3).ok
            for v in values
        ]
        assert ok.tolist() == expected


@settings(max_examples=300)
@given(finite, policies, kinds, st.integers(-30, 30), st.integers(0, 30))
def test_an_answer_is_within_tolerance_of_itself(
    x: float, tolerance: Tolerance, kind: str, places: int, figures: int
) -> None:
    assert compare(
        value=x, key=x, tolerance=tolerance, kind=kind, decimals=places, sigfigs=figures
    ).ok


@settings(max_examples=300)
@given(
    finite,
    finite,
    st.floats(min_value=1e-12, max_value=0.5),
    st.floats(min_value=1.0, max_value=1.9),
    st.floats(min_value=0, max_value=1e3),
)
def test_a_wider_tolerance_never_turns_right_into_wrong(
    value: float, key: float, rel: float, factor: float, atol: float
) -> None:
    narrow = RelTolerance(rel=rel, abs=atol)
    wide = RelTolerance(rel=min(rel * factor, 0.99), abs=atol * factor)
    args = {"value": value, "key": key, "kind": "decimal", "decimals": 2, "sigfigs": 3}
    if compare(tolerance=narrow, **args).ok:  # type: ignore[arg-type]
        assert compare(tolerance=wide, **args).ok  # type: ignore[arg-type]
    if compare(tolerance=AbsTolerance(abs=rel), **args).ok:  # type: ignore[arg-type]
        assert compare(tolerance=AbsTolerance(abs=rel * factor), **args).ok  # type: ignore[arg-type]


@settings(max_examples=300)
@given(
    st.floats(min_value=1e-6, max_value=1e6) | st.floats(min_value=-1e6, max_value=-1e-6),
    st.integers(0, 8),
)
def test_auto_interval_holds_every_correctly_rounded_answer(key: float, extra: int) -> None:
    # Type the key rounded half up to 3 + extra significant figures, as a student would.
    typed = Decimal(repr(key))
    mantissa = typed.scaleb(-typed.adjusted()).quantize(Decimal(10) ** -(2 + extra), ROUND_HALF_UP)
    text = f"{mantissa}e{typed.adjusted()}"
    ok, _ = _typed(text, key)
    low, high = interval(key=key, tolerance="auto")
    assert ok
    assert low <= float(text) <= high
