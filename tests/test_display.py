"""Exact forms read unambiguously: every key of every bundled and test bank prints as text that
the answer grammar reads back as the same exact value; long keys are shown exactly; a bank can
ask for decimals; and the comparator's edges are what a person reads."""

from __future__ import annotations

from pathlib import Path

import mpmath
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from quizgym.answers import Status, grade_response
from quizgym.errors import BankError
from quizgym.expr import parse, to_sympy
from quizgym.loader import load_bank, parse_bank
from quizgym.model import AbsTolerance, DecimalsTolerance, RelTolerance
from quizgym.resources import bundled_banks
from quizgym.solver import CompiledBank, Key, compile_bank, display, exact_key
from quizgym.tolerance import compare, compare_array

DATA = Path(__file__).parent / "data"


NOT_BANKS = [DATA / "packs" / "physics.yaml"]
"""The YAML files under tests/data, outside hostile/ and invalid/, that are no bank (a domain
pack); every other one must compile, and its test fails when it no longer does."""


def _banks() -> list[Path]:
    found = list(bundled_banks().values())
    for path in sorted(DATA.rglob("*.yaml")):
        if "hostile" in path.parts or "invalid" in path.parts or path in NOT_BANKS:
            continue
        found.append(path)
    return found


BANKS = _banks()


@pytest.mark.parametrize("path", NOT_BANKS, ids=[p.stem for p in NOT_BANKS])
def test_the_files_left_out_are_no_banks(path: Path) -> None:
    with pytest.raises(BankError, match="bank: missing required field"):
        load_bank(path)


def _same(a: sympy.Expr, b: sympy.Expr) -> bool:
    if a == b:
        return True
    with mpmath.workdps(60):
        difference = sympy.N(a - b, 50)
    return bool(abs(difference) <= 10**-40 * max(1, abs(sympy.N(a, 20))))


def _variants(book: CompiledBank, question: object, count: int) -> list[object]:
    out = [book.variant(question)]  # type: ignore[arg-type]
    out += [book.variant(question, student=f"d{k}", seed=k) for k in range(count)]  # type: ignore[arg-type]
    return out


def test_there_are_banks_of_several_fields() -> None:
    names = {p.stem for p in BANKS}
    assert {"bert-mlm", "stats-mechanics", "physics-stats"} <= names


@pytest.mark.parametrize("path", BANKS, ids=[p.stem for p in BANKS])
def test_every_key_prints_as_text_that_reads_back_as_its_exact_value(path: Path) -> None:
    book = compile_bank(load_bank(path))
    checked = 0
    for question in book.bank.questions:
        slots = book.slots_of(question)
        if not slots or not slots[0].is_numeric:
            continue
        for variant in _variants(book, question, 5):
            for slot, key in zip(slots, book.keys(question, variant), strict=True):  # type: ignore[arg-type]
                if slot.display is not None:
                    # Shown as a decimal on purpose: it reads back within its digits.
                    again = to_sympy(book.table.parse(key.text))
                    assert abs(float(again) - key.number) <= abs(key.number) * 10 ** (
                        1 - slot.display
                    )
                    continue
                again = to_sympy(book.table.parse(key.text))
                assert key.exact is not None
                assert _same(again, key.exact), (slot.id, key.text, key.exact)
                checked += 1
    numeric = [q for q in book.bank.questions if getattr(q, "type", "") == "numeric"]
    assert checked or not numeric


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (sympy.log(2) / 3, "ln(2)/3"),
        (8 * sympy.sqrt(10) / 3, "(8 sqrt 10)/3"),
        (-8 * sympy.sqrt(10) / 3, "-(8 sqrt 10)/3"),
        (5 * sympy.log(2) / 3, "(5 ln 2)/3"),
        (8 * sympy.log(2), "8 ln 2"),
        (sympy.log(10), "ln 10"),
        (sympy.log(3) ** 2, "ln(3)^2"),
        (sympy.log(2) * sympy.log(3), "ln(2)*ln 3"),
        (
            sympy.log(sympy.Rational(10, 9)) / sympy.log(sympy.Rational(100, 99)),
            "ln(10/9)/ln(100/99)",
        ),
    ],
)
def test_display_leaves_no_argument_in_doubt(expr: sympy.Expr, text: str) -> None:
    assert display(expr) == text
    assert _same(to_sympy(parse(text)), expr)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 60),
    st.integers(1, 30),
    st.sampled_from(["ln", "sqrt", "exp", "log2"]),
    st.integers(2, 99),
)
def test_display_round_trips_coefficients_over_divisors(p: int, q: int, f: str, n: int) -> None:
    function = {
        "ln": sympy.log,
        "sqrt": sympy.sqrt,
        "exp": sympy.exp,
        "log2": lambda x: sympy.log(x, 2),
    }[f]
    expr = sympy.Rational(p, q) * function(sympy.Integer(n))
    assert _same(to_sympy(parse(display(expr))), expr)


def test_long_whole_keys_are_shown_exactly() -> None:
    key = exact_key(parse("floor(ln(2)*10^50)"), {})
    assert key.text == "69314718055994530941723212145817656807550013436025"
    assert key.shown == f"{key.text} ≈ 6.9315e49"
    assert Key.of(sympy.Integer(12)).text == "12"
    tiny = Key.of(sympy.Rational(1, 2**60))
    assert tiny.text == "8.67361737988403547205962240695953369140625e-19"
    assert to_sympy(parse(tiny.text)) == sympy.Rational(1, 2**60)


def test_a_bank_can_show_a_key_as_a_decimal() -> None:
    text = (
        "bank: b\ntitle: B\nconstants: {g: 9.81}\nquestions:\n"
        "  - {id: exact, type: numeric, prompt: How far?, answer: 250 / g, units: m, "
        "display: exact}\n"
        "  - {id: plain, type: numeric, prompt: How far?, answer: 250 / g, units: m, "
        "display: decimal}\n"
        "  - {id: four, type: numeric, prompt: How far?, answer: 250 / g, units: m, "
        "display: {decimal: 4}}\n"
        # a key that rests on a measured constant is shown as a decimal unless told otherwise
        "  - {id: measured, type: numeric, prompt: How far?, answer: 250 / g, units: m}\n"
        "  - {id: sixth, type: numeric, prompt: How far?, answer: 250 / 6, units: m}\n"
    )
    bank = parse_bank(text, path="b.yaml")
    ids = ("exact", "plain", "four", "measured", "sixth")
    shown = [grade_response(bank, bank.question(q), None).expected for q in ids]
    assert shown == [
        "25000/981 ≈ 25.484 m", "25.484 m", "25.48 m", "25.484 m", "125/3 ≈ 41.667 m",
    ]  # fmt: skip


# --- the comparator's edges ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "key", "tolerance", "ok"),
    [
        (1.95, 2.0, AbsTolerance(abs=0.05), True),
        (2.05, 2.0, AbsTolerance(abs=0.05), True),
        (1.9499, 2.0, AbsTolerance(abs=0.05), False),
        (0.27, 0.3, RelTolerance(rel=0.1), True),
        (0.33, 0.3, RelTolerance(rel=0.1), True),
        (0.2699, 0.3, RelTolerance(rel=0.1), False),
        (2.04, 2.035, DecimalsTolerance(decimals=2), True),
    ],
)
def test_a_band_includes_its_edges_despite_binary_noise(
    value: float, key: float, tolerance: object, ok: bool
) -> None:
    scalar = compare(
        value=value, key=key, tolerance=tolerance, kind="decimal", decimals=4, sigfigs=4
    )  # type: ignore[arg-type]
    array, _ = compare_array(
        values=[value], keys=[key], tolerance=tolerance, kinds=[0], decimals=[4], sigfigs=[4]
    )  # type: ignore[arg-type]
    assert scalar.ok is bool(array[0]) is ok


@pytest.mark.parametrize(
    ("text", "key", "status"),
    [
        ("1230", 1234.9, Status.CORRECT),  # 3 figures: the zero is a placeholder
        ("1235", 1234.9, Status.CORRECT),
        ("1200", 1234.9, Status.INCORRECT),  # 2 figures are too few
        ("100", 100.4, Status.CORRECT),  # 3 figures, all of them significant
        ("12300", 12345.0, Status.CORRECT),
        ("12350", 12345.0, Status.CORRECT),  # 4 figures, correctly rounded half up
        ("12340", 12355.0, Status.INCORRECT),  # off by 0.12 %, and not the key rounded
    ],
)
def test_trailing_zeros_of_a_whole_number_may_be_placeholders(
    text: str, key: float, status: Status
) -> None:
    bank = parse_bank(
        f"bank: b\ntitle: B\nquestions:\n  - {{id: q, type: numeric, prompt: N?, answer: {key}}}\n",
        path="b.yaml",
    )
    assert grade_response(bank, bank.question("q"), text).status is status
