"""Plain decimals of a whole column at once: what :func:`quizgym.expr.read_answer` gives each.

Most numeric answers a class types are plain decimals (``2.30``, ``-0,5``, ``= 8.24``). The
single-answer path reads each one with a regular expression (:data:`quizgym.expr.PLAIN_NUMBER`)
and builds its reading; here the same expression runs over a column of distinct texts in pyarrow
compute, and the numbers the grader compares come out as arrays: the value (a float, correctly
rounded from the digits as typed), the decimal places and significant figures typed, the
trailing zeros of a whole number, and how the answer reads (``2,30`` reads as ``2.30``).
A plain decimal followed by a unit word (``2.30 nats``, ``2.3nat``, ``15 %``) is read the same
way, its word apart: the batch grader scores it in the column when the word is the slot's own
unit as the single-answer path reads it (not ``2.30 e``, which is 2.30·e).
``tests/test_plain_numbers.py`` holds every field equal to the single-answer path's reading.

Without pyarrow (an optional dependency) there is no column path: every text is read one by one,
with the same results.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from quizgym.arrays import arrow_bools, arrow_call, arrow_compute, arrow_strings
from quizgym.expr import MAX_LENGTH, PLAIN_NUMBER, Reading, read_answer

__all__ = ["PlainColumn", "read_plain_column", "reads_as_unit"]

_WHOLE = "^" + PLAIN_NUMBER.pattern + r"(?:(?P<unit>[A-Za-z]{1,40}|%) *)?$"
"""The single-answer path's pattern, anchored (RE2 and Python read it alike), with a unit word
after it or not (``2.30 nats``, ``15%``)."""


@dataclass(frozen=True)
class PlainColumn:
    """The plain decimals among a column's texts (each array has one entry per text)."""

    plain: npt.NDArray[np.bool_]
    """Whether the text is a plain decimal (what :func:`quizgym.expr.read_answer` reads with its
    fast path); the other entries of the arrays are 0 or '', but for a plain decimal followed
    by a unit word."""
    unit: list[str]
    """The unit word after a plain decimal (``nats`` in ``2.30 nats``, ``%``), or ''. Whether
    the word is a unit, a constant (``2.30 e`` is 2.30·e) or no unit at all is not judged here:
    its entries (value, digits, ``read_as`` with the unit as the single-answer path shows it)
    are what the text reads as when the word is a unit."""
    values: npt.NDArray[np.float64]
    decimals: npt.NDArray[np.int64]
    sigfigs: npt.NDArray[np.int64]
    zeros: npt.NDArray[np.int64]
    read_as: list[str]

    def take(self, rows: npt.NDArray[np.int64]) -> PlainColumn:
        """The entries of some texts, in the order of ``rows``."""
        picked = rows.tolist()
        return PlainColumn(
            plain=self.plain[rows],
            unit=[self.unit[r] for r in picked],
            values=self.values[rows],
            decimals=self.decimals[rows],
            sigfigs=self.sigfigs[rows],
            zeros=self.zeros[rows],
            read_as=[self.read_as[r] for r in picked],
        )


def read_plain_column(texts: Sequence[str | None]) -> PlainColumn | None:
    """The plain decimals among ``texts`` (None entries are not), or None without pyarrow.

    The pattern, the lengths, the digit counts, how each plain answer reads and its value all
    come from pyarrow, a column at once. No Python value is handed to pyarrow and no array is
    turned into NumPy by pyarrow: either would import pandas (0.4 s) when it is installed, so
    constants are built as arrays and arrays are read from their buffers.
    """
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - the optional dependency is missing
        return None
    # Only ASCII can be plain: anything else is read as "" (never plain), so no text is encoded
    # that could fail to encode (a lone surrogate from a library caller).
    column = arrow_strings(pa, [t if isinstance(t, str) and t.isascii() else "" for t in texts])
    pc = arrow_compute()
    groups = arrow_call("extract_regex", column, options=pc.ExtractRegexOptions(_WHOLE))
    sign, whole, sep, frac, unit = (
        groups.field(name) for name in ("sign", "whole", "sep", "frac", "unit")
    )
    united = _lengths(arrow_call("utf8_length", unit)) > 0
    frac_length = _lengths(arrow_call("utf8_length", frac))
    comma = _bools(arrow_call("match_substring", sep, options=pc.MatchSubstringOptions(",")))
    read = (
        _bools(arrow_call("is_valid", groups))
        & (_lengths(arrow_call("utf8_length", column)) <= MAX_LENGTH)
        & ~(comma & (frac_length == 3))  # "2,302": the parser refuses it
    )
    plain = read & ~united
    zeros_trimmed = pc.TrimOptions("0")
    has_sep = _lengths(arrow_call("utf8_length", sep)) > 0
    # Significant figures: the digits after leading zeros (of the whole part, or of the fraction
    # when the whole part is all zeros); a zero typed alone has one, or as many as its decimals.
    whole_length = _lengths(arrow_call("utf8_length", whole))
    whole_significant = _lengths(
        arrow_call("utf8_length", arrow_call("utf8_ltrim", whole, options=zeros_trimmed))
    )
    frac_significant = _lengths(
        arrow_call("utf8_length", arrow_call("utf8_ltrim", frac, options=zeros_trimmed))
    )
    significant = np.where(whole_significant > 0, whole_significant + frac_length, frac_significant)
    sigfigs = np.where(significant > 0, significant, np.maximum(1, frac_length))
    whole_zeros = whole_length - _lengths(
        arrow_call("utf8_length", arrow_call("utf8_rtrim", whole, options=zeros_trimmed))
    )
    zeros = np.where(has_sep, 0, whole_zeros)
    # How each plain answer reads (sign, digits, the point for a comma; then the unit word, as
    # read_answer shows a number with a unit: "2.30 nats", "15%") and its value (pyarrow's
    # parser rounds correctly, as Python's float() does), for the texts read, "" for the others.
    # No Python value is handed to pyarrow (that imports pandas): constants are arrays.
    n, rows = len(texts), np.flatnonzero(read)
    taken, nothing = (
        arrow_bools(pa, read),
        _repeated(pa, column.type, "", np.zeros(n, dtype=np.bool_)),
    )
    percent = _bools(
        arrow_call("match_substring", unit, options=pc.MatchSubstringOptions("%"))
    )  # a unit word is letters, or "%"
    dots, spaces = (
        _repeated(pa, column.type, ".", has_sep),
        _repeated(pa, column.type, " ", united & ~percent),
    )
    digits = arrow_call("binary_join_element_wise", whole, dots, frac, nothing)
    shown = arrow_call("binary_join_element_wise", sign, digits, nothing)
    # The value is read without a "+": an older pyarrow's parser may refuse one.
    negative = _bools(arrow_call("match_substring", sign, options=pc.MatchSubstringOptions("-")))
    minus = _repeated(pa, column.type, "-", negative)
    signed = arrow_call("binary_join_element_wise", minus, digits, nothing)
    values = np.zeros(n)
    values[rows] = _floats(
        arrow_call(
            "cast", arrow_call("filter", signed, taken), options=pc.CastOptions.safe(pa.float64())
        )
    )
    values += 0.0  # -0 reads as 0, as the single-answer path has it
    joined = arrow_call("binary_join_element_wise", shown, spaces, unit, nothing)
    read_as = _scattered(n, rows, arrow_call("filter", joined, taken).to_pylist())
    units = _scattered(n, rows, arrow_call("filter", unit, taken).to_pylist())
    keep = read.astype(np.int64)
    return PlainColumn(
        plain=plain,
        unit=units,
        values=values,
        decimals=frac_length * keep,
        sigfigs=sigfigs * keep,
        zeros=zeros * keep,
        read_as=read_as,
    )


@functools.lru_cache(maxsize=256)
def reads_as_unit(word: str) -> bool:
    """Whether a plain decimal followed by ``word`` reads, on the single-answer path, as the
    number with ``word`` as its unit, however it is typed (``2.30 e`` is 2.30·e, a constant;
    ``2.30 nats`` is 2.30 with the unit nats). Asked of the single-answer path itself."""
    for head in ("1 ", "1", "1.5", "= -2,50 "):
        probe = read_answer(head + word + " ")
        if not isinstance(probe, Reading) or probe.unit != word or probe.typed:
            return False
        number = read_answer(head)
        assert isinstance(number, Reading)
        if probe.read_as != number.read_as + (word if word == "%" else " " + word):
            return False
    return True


def _lengths(array: Any) -> npt.NDArray[np.int64]:
    """An integer array without nulls (``utf8_length`` of strings: int32, or int64 for large
    strings past 2 GiB), as int64."""
    width = np.int64 if array.type.bit_width == 64 else np.int32
    data = np.frombuffer(array.buffers()[1], dtype=width)
    return data[array.offset : array.offset + len(array)].astype(np.int64)


def _repeated(pa: Any, kind: Any, text: str, where: npt.NDArray[np.bool_]) -> Any:
    """A pyarrow array of strings of type ``kind`` (string or large string, as the column's):
    ``text`` where ``where`` is true, "" elsewhere."""
    size = len(text.encode())
    width = np.int64 if kind == pa.large_string() else np.int32
    offsets = np.zeros(len(where) + 1, dtype=width)
    np.cumsum(where * size, out=offsets[1:])
    data = pa.py_buffer(text.encode() * int(np.count_nonzero(where)))
    return pa.Array.from_buffers(kind, len(where), [None, pa.py_buffer(offsets), data])


def _scattered(size: int, rows: npt.NDArray[np.intp], texts: list[str]) -> list[str]:
    """``texts`` at ``rows`` of a list of ``size`` texts, "" elsewhere."""
    out = np.full(size, "", dtype=object)
    out[rows] = texts
    return cast(list[str], out.tolist())


def _floats(array: Any) -> npt.NDArray[np.float64]:
    """A float64 array without nulls, read from its buffer."""
    assert array.null_count == 0
    data = np.frombuffer(array.buffers()[1], dtype=np.float64)
    return data[array.offset : array.offset + len(array)].copy()


def _bools(array: Any) -> npt.NDArray[np.bool_]:
    """A boolean array without nulls, unpacked from its bitmap."""
    bits = np.unpackbits(np.frombuffer(array.buffers()[1], dtype=np.uint8), bitorder="little")
    return bits[array.offset : array.offset + len(array)].astype(np.bool_)
