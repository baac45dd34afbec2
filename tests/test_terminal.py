"""Text made inert for the terminal: what would be obeyed is spelled out, the rest is kept."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quizgym.terminal import escape_controls

CASES = [
    ("retitle \x1b]0;pwned\x07", "retitle \\x1b]0;pwned\\x07"),
    ("clear \x1b[2J\x1b[H", "clear \\x1b[2J\\x1b[H"),
    ("8-bit CSI \x9b2J, NEL \x85", "8-bit CSI \\x9b2J, NEL \\x85"),
    ("over\rwrite\b, DEL \x7f, NUL \x00", "over\\x0dwrite\\x08, DEL \\x7f, NUL \\x00"),
    ("RLO \u202eevil\u202c", "RLO \\u202eevil\\u202c"),
    ("LRE RLE PDF LRO \u202a\u202b\u202c\u202d", "LRE RLE PDF LRO \\u202a\\u202b\\u202c\\u202d"),
    ("isolates \u2066\u2067\u2068x\u2069", "isolates \\u2066\\u2067\\u2068x\\u2069"),
    ("undecodable byte \udcff", "undecodable byte \\udcff"),
    # kept as they are: newline, tab, Unicode maths, markup-like brackets, RTL text itself
    ("line\nnext\tcell", "line\nnext\tcell"),
    ("L = −Σ_{i∈M} ln P(x_i | x_∖M) ≈ 2.30 [MASK]", "L = −Σ_{i∈M} ln P(x_i | x_∖M) ≈ 2.30 [MASK]"),
    ("שלום مرحبا \u200f", "שלום مرحبا \u200f"),
]


@pytest.mark.parametrize(("text", "shown"), CASES)
def test_controls_and_bidi_overrides_are_spelled_out(text: str, shown: str) -> None:
    assert escape_controls(text) == shown


@given(st.text())
def test_the_result_holds_nothing_a_terminal_obeys(text: str) -> None:
    shown = escape_controls(text)
    for char in shown:
        code = ord(char)
        assert char in "\n\t" or (code >= 0x20 and not 0x7F <= code <= 0x9F)
        assert not (0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069)
        assert not 0xD800 <= code <= 0xDFFF
    shown.encode("utf-8")  # printable on a UTF-8 terminal


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs"))))
def test_text_without_controls_is_unchanged(text: str) -> None:
    bidi = {chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]}
    if not bidi & set(text):
        assert escape_controls(text) == text
