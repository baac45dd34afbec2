"""The plain-decimal fast path of the answer reader gives exactly what the full reader gives."""

from __future__ import annotations

import pytest
from grading_helpers import single_verdict
from hypothesis import example, given, settings
from hypothesis import strategies as st

from quizgym import expr
from quizgym.expr import normalize, read
from quizgym.grading import decimals as plain_module
from quizgym.grading.batch import grade_partition
from quizgym.grading.decimals import read_plain_column
from quizgym.grading.table import ClassAnswers
from quizgym.loader import parse_bank
from quizgym.solver import compile_bank

NUMBERS = st.from_regex(r"\A *(= *)?[+-]?[0-9]{0,17}([.,][0-9]{0,17})? *\Z", fullmatch=True)
"""Plain decimals as students type them, and their near misses: no digits, 16 or 17 digits,
a lone separator, a decimal comma with three digits (refused as ambiguous); after ``=`` too."""


@settings(max_examples=1500, deadline=None)
@given(NUMBERS)
@example("-0")
@example("0.000")
@example("+0.5")
@example(" -2,30 ")
@example(" = -2.30 ")
@example("=8.2418")
@example("2,400")
@example("1200")
@example("007")
@example("999999999999999.999999999999999")
@example(" " * 300 + "5")  # too long: refused, however plain
def test_the_fast_path_reads_a_plain_decimal_as_the_parser_does(text: str) -> None:
    fast = read._read_plain(text)
    slow = read._read_parsed(text)
    if fast is None:
        # Only what the fast path does not claim: more than 15 digits, no digit before the
        # separator or after it, or a comma that may be a thousands separator.
        match = expr.PLAIN_NUMBER.fullmatch(text)
        assert (
            match is None
            or (match[4] == "," and len(match[5] or "") == 3)
            or len(text) > expr.MAX_LENGTH
        )
        return
    assert isinstance(slow, expr.Reading), slow
    assert fast == slow
    assert fast.parsed.tree == slow.parsed.tree  # offsets and all
    assert fast.value._mpf_ == slow.value._mpf_  # the same 30-digit value, bit for bit
    assert fast.number == float(slow.value)  # and the float answers are compared as


@given(st.text(max_size=12))
def test_anything_else_is_left_to_the_parser(text: str) -> None:
    fast = read._read_plain(text)
    if fast is not None:
        assert fast == read._read_parsed(text)


def test_read_answer_takes_the_fast_path_for_plain_decimals_only() -> None:
    assert read._read_plain("2.30") is not None
    for text in ("2.3e-3", "ln 10", "12,345.6", "2,400", ".5", "5.", "10 m/s", "15%", "1/2"):
        assert read._read_plain(text) is None, text


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=80))
def test_printable_ascii_folds_to_itself(text: str) -> None:
    # The premise of _normalize's shortcut for printable ASCII: superscripts, NFKC and the
    # character map leave every such character as it is, at its own offset.
    assert normalize._fold(text) == (text, list(range(len(text))))


def test_every_printable_ascii_character_folds_to_itself() -> None:
    for code in range(0x20, 0x7F):
        assert normalize._fold(chr(code)) == (chr(code), [0]), hex(code)


@settings(max_examples=300, deadline=None)
@given(st.lists(NUMBERS | st.none() | st.text(max_size=8), max_size=30))
def test_a_column_reads_every_plain_decimal_as_the_fast_path_does(texts: list[str | None]) -> None:
    column = read_plain_column(texts)
    assert column is not None
    for k, text in enumerate(texts):
        reading = None if text is None else read._read_plain(text)
        assert bool(column.plain[k]) == (reading is not None), text
        if reading is not None:
            got = (column.decimals[k], column.sigfigs[k], column.zeros[k], column.read_as[k])
            parsed = reading.parsed
            assert got == (parsed.decimals, parsed.sigfigs, parsed.zeros, reading.read_as)
            assert repr(float(column.values[k])) == repr(reading.number)  # -0 and all


UNITS_BANK = """
bank: plain-units
title: Plain numbers, with and without units
questions:
  - id: speed
    type: numeric
    prompt: "How fast, in m/s?"
    answer: "10"
    units: m/s
    tolerance: {decimals: 1}
  - id: speed-required
    type: numeric
    prompt: "How fast?"
    answer: "10"
    units: m/s
    require_units: {penalty: 0.5}
  - id: information
    type: numeric
    prompt: "How many nats?"
    answer: ln(10)
    units: nats
    tolerance: {sigfigs: 3}
  - id: count
    type: numeric
    prompt: "How many tokens?"
    answer: "12"
    units: tokens
    require_units: {penalty: 1}
  - id: charge
    type: numeric
    prompt: "What charge, in elementary charges? (2.30 e reads as 2.30 times Euler's e)"
    answer: "2.3"
    units: e
  - id: share
    type: numeric
    prompt: "What share?"
    answer: "15"
    units: "%"
  - id: loss
    type: numeric
    prompt: "ln {a}?"
    params: {a: {choices: [2, 3, 10]}}
    answer: ln(a)
    tolerance: {sigfigs: 3}
    mistakes:
      - {answer: log10(a), feedback: "That is log10.", tag: base}
"""


WORDS = st.sampled_from(
    ["nats", "nat", "Nats", "bits", "m", "ms", "s", "kg", "eV", "tokens", "token", "Tokens", "%"]
    + ["percent", "e", "E", "pi", "PI", "x", "ln", "foo"]
)
"""Words after a number: units (the slot's own, in another form, convertible, of something
else), labels, constants (``2.30 e`` is 2.30·e), function names and no unit at all."""
WITH_UNITS = st.builds(
    lambda number, gap, word, tail: number + gap + word + tail,
    st.from_regex(r"\A *(= *)?[+-]?[0-9]{1,4}([.,][0-9]{1,4})?\Z", fullmatch=True),
    st.sampled_from(["", " ", "  "]),
    WORDS,
    st.sampled_from(["", " "]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(WITH_UNITS | st.none(), max_size=20))
def test_a_column_reads_a_number_with_a_unit_word_as_the_reader_does(
    texts: list[str | None],
) -> None:
    column = read_plain_column(texts)
    assert column is not None
    for k, text in enumerate(texts):
        if text is None or not column.unit[k]:
            continue
        reading = expr.read_answer(text)
        if isinstance(reading, expr.Reading) and reading.unit == column.unit[k]:
            # the word is read as a unit: the column has the number and how it reads
            assert column.read_as[k] == reading.read_as, text
            assert repr(float(column.values[k])) == repr(reading.number)
            parsed = reading.parsed
            got = (column.decimals[k], column.sigfigs[k], column.zeros[k])
            assert got == (parsed.decimals, parsed.sigfigs, parsed.zeros)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        NUMBERS
        | WITH_UNITS
        | st.sampled_from(["10", "10.0", "10 m/s", "36 km/h", "0.693", "0.69", "1.10", "2.30"])
        | st.sampled_from(["2.30 nats", "2.3nat", "12 tokens", "12", "15%", "15 %", "0.15"])
        | st.sampled_from(["2.3 e", "2.30e", "2.3 E"])
        | st.none(),
        min_size=1,
        max_size=12,
    )
)
def test_the_batch_grades_typed_numbers_as_the_single_answer_path(
    cells: list[str | None],
) -> None:
    # Plain decimals take the column path in the batch and the fast path alone: the verdicts
    # (status, score, read_as, feedback, tag, value, doubt) are the same, in slots with a unit,
    # with a required unit (which the column path leaves to the reader) and per-student keys;
    # so do numbers followed by a word, which the column path scores only when the word is the
    # slot's own unit as the reader reads it.
    bank = parse_bank(UNITS_BANK, path="plain-units.yaml")
    book = compile_bank(bank)
    answers = ClassAnswers(book.slot_ids())
    for slot in book.slot_ids():
        answers.mark_present(slot)
    for k, cell in enumerate(cells):
        row = answers.add_student(f"s{k}", 7, ("test", k))
        for slot in book.slot_ids():
            answers.mark_present(slot)[row] = cell
    graded = grade_partition(book, answers)
    for g in graded.slots:
        for row, cell in enumerate(cells):
            assert answers.students[row] == f"s{row}" and answers.seeds[row] == 7
            single = single_verdict(book, answers, g.slot, row)
            assert g.verdict(row) == single, (g.slot.id, cell)


def test_a_column_with_text_that_cannot_be_encoded_is_still_read() -> None:
    # A lone surrogate (a library caller's cell; the readers refuse them) is not plain, and the
    # rest of the column is read.
    column = read_plain_column(["2.3026\udc80", "2.30", None, "٣"])
    assert column is not None
    assert column.plain.tolist() == [False, True, False, False]
    assert column.read_as[1] == "2.30"


def test_a_column_past_2_gib_reads_as_a_shorter_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """A column whose texts pass 2 GiB is a pyarrow large-string array: its constants are made
    of the same type (shown here by making every column one)."""
    pa = pytest.importorskip("pyarrow")
    texts = ["2.30", "-0,5", "15 %", "2.30 nats", "= 8", "abc", None, "", "+3.000"]
    expected = read_plain_column(texts)
    made = plain_module.arrow_strings
    wide = lambda pa, words: made(pa, words).cast(pa.large_string())  # noqa: E731
    monkeypatch.setattr(plain_module, "arrow_strings", wide)
    assert wide(pa, ["x"]).type == pa.large_string()
    assert _fields(read_plain_column(texts)) == _fields(expected)


def _fields(column: object) -> tuple[object, ...]:
    names = ("plain", "unit", "values", "decimals", "sigfigs", "zeros", "read_as")
    return tuple(
        value.tolist() if hasattr(value, "tolist") else value
        for value in (getattr(column, name) for name in names)
    )


def test_a_plus_sign_is_not_handed_to_pyarrow_s_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """An older pyarrow may refuse "+5" as a float (the parser it bundled follows C++'s
    from_chars, which does): the sign is kept for how the answer reads, not for its value."""
    real = plain_module.arrow_call

    def strict(name: str, *args: object, options: object = None) -> object:
        if name == "cast":
            assert not any(str(t).startswith("+") for t in args[0].to_pylist())  # type: ignore[attr-defined]
        return real(name, *args, options=options)

    monkeypatch.setattr(plain_module, "arrow_call", strict)
    column = read_plain_column(["+5", "+0,25", "-3", "+0"])
    assert column is not None
    assert column.values.tolist() == [5.0, 0.25, -3.0, 0.0]
    assert column.read_as == ["+5", "+0.25", "-3", "+0"]
