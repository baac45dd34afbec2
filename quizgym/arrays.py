"""Arrays in, their groups, distinct values and Arrow forms out: small NumPy and pyarrow helpers
shared by the variant draws, the batch grader and the item analysis."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


def group(key: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """``np.unique(key, return_index=True, return_inverse=True)``, in O(n) for small codes.

    Grouping codes are products of small factor counts, so a bucket pass over ``0..max`` is
    usually possible and avoids sorting every response; wide code ranges fall back to sorting.
    """
    if not len(key):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    span = int(key.max()) + 1
    if int(key.min()) < 0 or span > 4 * len(key) + 4096:
        unique, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        return unique, first, inverse.reshape(-1)
    present = np.zeros(span, dtype=np.bool_)
    present[key] = True
    unique = np.flatnonzero(present)
    inverse = (np.cumsum(present) - 1)[key]
    first_at = np.empty(span, dtype=np.int64)
    first_at[key[::-1]] = np.arange(len(key) - 1, -1, -1, dtype=np.int64)  # first occurrence wins
    return unique.astype(np.int64), first_at[unique], inverse.astype(np.int64)


@functools.cache
def arrow_compute() -> Any:
    """pyarrow's compute functions (``call_function``) and their options (``TrimOptions`` …).

    They come from ``pyarrow._compute``, the extension that ``pyarrow.compute`` re-exports:
    importing ``pyarrow.compute`` builds a Python wrapper and its docstring for each of its 286
    functions, at every grading run. ``pyarrow.compute`` is the fallback.

    Raises:
        ImportError: pyarrow is not installed.
    """
    try:
        import pyarrow._compute as compute
    except ImportError:  # pragma: no cover - another pyarrow layout
        import pyarrow.compute as compute
    return compute


def arrow_call(name: str, *args: Any, options: Any = None) -> Any:
    """pyarrow's compute function ``name`` on ``args`` (see :func:`arrow_compute`)."""
    return arrow_compute().call_function(name, list(args), options)


def arrow_strings(pa: Any, words: Sequence[str]) -> Any:
    """A pyarrow string array of ``words`` (``pa`` is the pyarrow module), built from its buffers:
    ``pa.array`` imports pandas when it is installed, only to check whether its argument
    is a pandas object."""
    joined = "".join(words)
    data = joined.encode()  # one encode; a text's length in bytes is its length in characters,
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    if len(data) != len(joined):  # but for the texts that are not ASCII
        ascii = np.fromiter(map(str.isascii, words), dtype=np.bool_, count=len(words))
        wide = np.flatnonzero(~ascii).tolist()
        lengths[wide] = [len(words[k].encode()) for k in wide]
    offsets = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    kind = pa.large_string() if offsets[-1] >= 2**31 else pa.string()
    if kind == pa.string():
        offsets = offsets.astype(np.int32)
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    return pa.Array.from_buffers(kind, len(words), buffers)


def arrow_bools(pa: Any, mask: npt.NDArray[np.bool_]) -> Any:
    """A pyarrow boolean array of a NumPy one, built from its bits (``pa.array`` would import
    pandas, as for :func:`arrow_strings`)."""
    bits = np.packbits(np.asarray(mask, dtype=np.bool_), bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(mask), [None, pa.py_buffer(bits)])


def sorted_unique(values: npt.ArrayLike) -> npt.NDArray[Any]:
    """``np.unique(values)``: asked for with counts, which are dropped. Asked for alone, NumPy
    (2.3 and later) first checks whether the array is masked, which imports ``numpy.ma`` at the
    first call in every process."""
    unique: npt.NDArray[Any] = np.unique(values, return_counts=True)[0]
    return unique


def objects(items: Sequence[Any]) -> npt.NDArray[np.object_]:
    """A sequence as a one-dimensional object array, its items never read as sequences (to
    take from with codes, or to fill at positions)."""
    return np.fromiter(items, dtype=object, count=len(items))


def distinct(values: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], IntArray]:
    """``np.unique(values, return_inverse=True)`` for a column of numbers, by hashing.

    NumPy sorts the whole column to find its few distinct values (a class's scores); pyarrow
    hashes it in one pass, and only the distinct values are then sorted and merged as NumPy
    merges them (``-0.0`` with ``0.0``, every NaN with the others). Of the two zeros, a long
    column keeps ``0.0`` (NumPy keeps whichever its sort puts first). Without pyarrow, or for
    short columns and other kinds of values, this is ``np.unique``.
    """
    a = np.asarray(values)
    if a.ndim != 1 or a.dtype.kind not in "fiu" or len(a) < 1024:
        unique, inverse = np.unique(a, return_inverse=True)
        return unique, inverse.reshape(-1).astype(np.int64, copy=False)
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - the optional dependency is missing
        unique, inverse = np.unique(a, return_inverse=True)
        return unique, inverse.reshape(-1).astype(np.int64, copy=False)
    data = np.ascontiguousarray(a)
    kind = pa.from_numpy_dtype(data.dtype)
    coded = arrow_call(
        "dictionary_encode", pa.Array.from_buffers(kind, len(data), [None, pa.py_buffer(data)])
    )
    # Read from the buffers: ``to_numpy`` would import pandas (0.4 s) when it is installed.
    found = coded.dictionary
    hashed = np.frombuffer(found.buffers()[1], dtype=data.dtype)[
        found.offset : found.offset + len(found)
    ]
    indices = coded.indices
    width = np.dtype(f"int{indices.type.bit_width}")
    codes = np.frombuffer(indices.buffers()[1], dtype=width)[
        indices.offset : indices.offset + len(indices)
    ]
    unique, merged = np.unique(hashed, return_inverse=True)
    if unique.dtype.kind == "f":
        unique = unique + 0.0  # the zero kept is +0.0, whichever sign the column held first
    return unique, merged.reshape(-1).astype(np.int64)[codes]
