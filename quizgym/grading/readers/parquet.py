"""Parquet submissions: the same wide and long tables as CSV, read in row groups.

Rows are numbered as the lines of the same table written as CSV (the header is line 1, the first
row line 2), so a rejection names the same line in both formats.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from quizgym.errors import QuizgymError, SubmissionError

__all__ = ["open_parquet", "parquet_rows"]


def open_parquet(path: Path) -> Any:
    """A ``pyarrow.parquet.ParquetFile``.

    Raises:
        QuizgymError: pyarrow is not installed.
        SubmissionError: the file cannot be read, or is not Parquet.
    """
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise QuizgymError(
            f'{path}: reading Parquet needs pyarrow: pip install "quizgym[parquet]"'
        ) from exc

    try:
        return pq.ParquetFile(path)
    except OSError as exc:
        raise SubmissionError(path, f"cannot read as Parquet: {exc}") from exc
    except Exception as exc:  # pyarrow raises ArrowInvalid for a file that is not Parquet
        raise SubmissionError(path, f"not a Parquet file: {exc}") from exc


def parquet_rows(
    path: Path,
    *,
    row_groups: Sequence[int],
    skip: int,
    rows: int,
    line: int,
    columns: Sequence[str],
    batch_rows: int,
) -> Iterator[tuple[int, list[str]]]:
    """Rows of a Parquet file as CSV-like string cells (null → empty), numbered as CSV lines.

    Args:
        path: the file.
        row_groups: the row groups holding the rows.
        skip: rows of the first row group before them.
        rows: how many rows.
        line: the line number of the first one.
        columns: the columns to read, in order.
        batch_rows: rows per batch read at once.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    handle = open_parquet(path)
    left = rows
    batches = handle.iter_batches(
        batch_size=batch_rows, row_groups=list(row_groups), columns=list(columns)
    )
    for batch in batches:
        if skip >= batch.num_rows:
            skip -= batch.num_rows
            continue
        batch = batch.slice(skip, min(left, batch.num_rows - skip))
        skip = 0
        # Nulls become "" in Python: pc.fill_null(…, "") would convert "" with pa.scalar, which
        # imports pandas (0.4 s in every process, Dask workers included) when it is installed.
        cells = [
            ["" if v is None else v for v in pc.cast(batch.column(k), pa.string()).to_pylist()]
            for k in range(batch.num_columns)
        ]
        for row in zip(*cells, strict=True):
            yield line, cast(list[str], row)
            line += 1
        left -= batch.num_rows
        if left <= 0:
            return
