"""The array helpers the grading run writes with equal what they stand for (NumPy, Python)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quizgym.arrays import arrow_bools, arrow_strings, distinct
from quizgym.grading.cells import defuse
from quizgym.grading.outputs import write_table

pa = pytest.importorskip("pyarrow")

NUMBERS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [0.0, -0.0, float("nan"), -float("nan"), 0.5, 1.0]
)


@settings(max_examples=60, deadline=None)
@given(
    pool=st.lists(NUMBERS, min_size=1, max_size=40),
    picks=st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=30),
    length=st.integers(min_value=1, max_value=5000),
)
def test_distinct_is_numpy_unique_on_floats(
    pool: list[float], picks: list[int], length: int
) -> None:
    """Long columns (hashed in pyarrow) and short ones: the same distinct values, each row the
    same index, -0.0 merged with 0.0 and every NaN with the others, as NumPy does."""
    rng = np.random.default_rng(sum(picks))
    values = np.asarray(pool, dtype=np.float64)[rng.integers(0, len(pool), length)]
    unique, inverse = distinct(values)
    want_unique, want_inverse = np.unique(values, return_inverse=True)
    assert np.array_equal(unique, want_unique, equal_nan=True)
    assert np.array_equal(inverse, want_inverse.reshape(-1))
    assert inverse.dtype == np.int64
    assert np.array_equal(unique[inverse], values, equal_nan=True)


@settings(max_examples=30, deadline=None)
@given(
    pool=st.lists(st.integers(min_value=-(2**40), max_value=2**40), min_size=1, max_size=20),
    length=st.integers(min_value=1000, max_value=3000),
)
def test_distinct_is_numpy_unique_on_integers(pool: list[int], length: int) -> None:
    rng = np.random.default_rng(length)
    values = np.asarray(pool, dtype=np.int64)[rng.integers(0, len(pool), length)]
    unique, inverse = distinct(values)
    want_unique, want_inverse = np.unique(values, return_inverse=True)
    assert np.array_equal(unique, want_unique)
    assert np.array_equal(inverse, want_inverse.reshape(-1))


TEXTS = st.lists(
    st.text(alphabet=st.sampled_from(list("ab1.=-+@\t\r é€😀\"',\n")), max_size=8), max_size=60
)


@settings(max_examples=100, deadline=None)
@given(words=TEXTS)
def test_arrow_strings_holds_every_text(words: list[str]) -> None:
    """ASCII or not, empty or not: the array holds the texts as they were."""
    assert arrow_strings(pa, words).to_pylist() == words


@settings(max_examples=100, deadline=None)
@given(mask=st.lists(st.booleans(), max_size=200), start=st.integers(0, 9))
def test_arrow_bools_holds_every_flag(mask: list[bool], start: int) -> None:
    flags = np.array(mask, dtype=np.bool_)
    assert arrow_bools(pa, flags[start:]).to_pylist() == mask[start:]


@settings(max_examples=60, deadline=None)
@given(words=TEXTS.filter(bool))
def test_a_written_table_reads_back_defused(
    tmp_path_factory: pytest.TempPathFactory, words: list[str]
) -> None:
    """Every cell that could run as a spreadsheet formula is written defused, and only those:
    the CSV read back with Python's own reader is each text through ``defuse``."""
    path = Path(tmp_path_factory.mktemp("table")) / "t.csv"
    codes = np.arange(len(words), dtype=np.int64)[::-1].copy()
    write_table(
        path, ["text", "=sum"], [(words, codes), (["x"], np.zeros(len(words), dtype=np.int64))]
    )
    with path.open(encoding="utf-8", newline="") as stream:
        rows = list(csv.reader(stream))
    assert rows[0] == ["text", defuse("=sum")]
    assert [row[0] for row in rows[1:]] == [defuse(words[c]) for c in codes]
    assert {row[1] for row in rows[1:]} == {"x"}


def test_a_long_column_keeps_the_positive_zero() -> None:
    values = np.array([-0.0, 0.5, 0.0, -0.0] * 600)
    unique, inverse = distinct(values)
    assert list(unique) == [0.0, 0.5] and not np.signbit(unique[0])
    assert np.array_equal(unique[inverse], values)
