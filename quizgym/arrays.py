"""Small NumPy helpers shared by the variant draws, the batch grader and the item analysis."""

from __future__ import annotations

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


def arrow_strings(pa: Any, words: Sequence[str]) -> Any:
    """A pyarrow string array of ``words`` (``pa`` is the pyarrow module), built from its buffers:
    ``pa.array`` imports pandas (0.4 s) when it is installed, only to check whether its argument
    is a pandas object."""
    encoded = [w.encode() for w in words]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    kind = pa.large_string() if offsets[-1] >= 2**31 else pa.string()
    if kind == pa.string():
        offsets = offsets.astype(np.int32)
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(kind, len(encoded), buffers)


def objects(items: Sequence[Any]) -> npt.NDArray[np.object_]:
    """A sequence as a one-dimensional object array, its items never read as sequences (to
    take from with codes, or to fill at positions)."""
    return np.fromiter(items, dtype=object, count=len(items))
