"""The plain-decimal fast path of the answer reader gives exactly what the full reader gives."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from quizgym import expr

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
    fast = expr._read_plain(text)
    slow = expr._read_parsed(text)
    if fast is None:
        # Only what the fast path does not claim: more than 15 digits, no digit before the
        # separator or after it, or a comma that may be a thousands separator.
        match = expr._PLAIN_NUMBER.fullmatch(text)
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
    fast = expr._read_plain(text)
    if fast is not None:
        assert fast == expr._read_parsed(text)


def test_read_answer_takes_the_fast_path_for_plain_decimals_only() -> None:
    assert expr._read_plain("2.30") is not None
    for text in ("2.3e-3", "ln 10", "12,345.6", "2,400", ".5", "5.", "10 m/s", "15%", "1/2"):
        assert expr._read_plain(text) is None, text


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=80))
def test_printable_ascii_folds_to_itself(text: str) -> None:
    # The premise of _normalize's shortcut for printable ASCII: superscripts, NFKC and the
    # character map leave every such character as it is, at its own offset.
    assert expr._fold(text) == (text, list(range(len(text))))


def test_every_printable_ascii_character_folds_to_itself() -> None:
    for code in range(0x20, 0x7F):
        assert expr._fold(chr(code)) == (chr(code), [0]), hex(code)
