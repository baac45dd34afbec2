"""Parquet submissions: the same wide and long tables as CSV, read in row groups.

Rows are numbered as the lines of the same table written as CSV (the header is line 1, the first
row line 2), so a rejection names the same line in both formats. A column of lists (a
multiple-answer question) is read as JSON Lines lists are; a column of bytes is decoded as UTF-8;
a column of any other nested type (struct, map, a list of lists) is reported and ignored.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from quizgym.arrays import arrow_call, arrow_compute
from quizgym.errors import QuizgymError, SubmissionError
from quizgym.grading.census import Census
from quizgym.grading.readers.text import Record
from quizgym.grading.rows import list_answer

__all__ = ["column_kind", "count_parquet", "describe", "open_parquet", "parquet_rows"]


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


def column_kind(kind: Any) -> str | None:
    """How a Parquet column of this Arrow type is read: ``text`` (strings, numbers, true/false,
    dates: cast to text), ``binary`` (bytes, decoded as UTF-8: a row holding other bytes is
    rejected), ``list`` (a list of such values: a multiple-answer cell), or None (a struct, a
    map, a list of lists…: the column cannot be read)."""
    import pyarrow as pa
    import pyarrow.types as pt

    if pt.is_dictionary(kind):
        return column_kind(kind.value_type)
    if pt.is_binary(kind) or pt.is_large_binary(kind) or pt.is_fixed_size_binary(kind):
        return "binary"
    if pt.is_list(kind) or pt.is_large_list(kind) or pt.is_fixed_size_list(kind):
        return "list" if column_kind(kind.value_type) == "text" else None
    if pt.is_nested(kind) or isinstance(kind, pa.ExtensionType):
        return None
    return "text"


def describe(kind: Any) -> str:
    """An Arrow type as a rejection names it (``struct``, ``list of list``…)."""
    import pyarrow.types as pt

    if pt.is_list(kind) or pt.is_large_list(kind) or pt.is_fixed_size_list(kind):
        return f"list of {describe(kind.value_type)}"
    if pt.is_struct(kind):
        return "struct"
    if pt.is_map(kind):
        return "map"
    return str(kind)


def parquet_rows(
    path: Path,
    *,
    row_groups: Sequence[int],
    skip: int,
    rows: int,
    line: int,
    columns: Sequence[str],
    batch_rows: int,
) -> Iterator[Record]:
    """Rows of a Parquet file as CSV-like string cells (null → empty), numbered as CSV lines.

    Args:
        path: the file.
        row_groups: the row groups holding the rows.
        skip: rows of the first row group before them.
        rows: how many rows.
        line: the line number of the first one.
        columns: the columns to read, in order (each of a kind :func:`column_kind` reads).
        batch_rows: rows per batch read at once.
    """
    import pyarrow as pa

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
        cells = [_cells(pa, batch.column(k)) for k in range(batch.num_columns)]
        for row in zip(*cells, strict=True):
            yield Record(start=line, end=line, cells=list(row))
            line += 1
        left -= batch.num_rows
        if left <= 0:
            return


def _cells(pa: Any, column: Any) -> list[str]:
    """One column of a batch as text cells (null → empty)."""
    kind = column_kind(column.type)
    if kind == "binary":
        return [
            "" if v is None else bytes(v).decode("utf-8", errors="surrogateescape")
            for v in column.to_pylist()
        ]
    if kind == "list":
        return [
            "" if v is None else list_answer(["" if i is None else str(i) for i in v])
            for v in column.to_pylist()
        ]
    try:
        to_text = arrow_compute().CastOptions.safe(pa.string())
        values = arrow_call("cast", column, options=to_text).to_pylist()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        values = [None if v is None else str(v) for v in column.to_pylist()]
    # Nulls become "" in Python: pc.fill_null(…, "") would convert "" with pa.scalar, which
    # imports pandas (0.4 s in every process, Dask workers included) when it is installed.
    return ["" if v is None else v for v in values]


def count_parquet(path: Path) -> Census:
    """A Parquet file's rows, as its metadata says (the file was opened by its reader first).

    Raises:
        SubmissionError: the file cannot be read as Parquet.
    """
    import pyarrow.parquet as pq

    try:
        return Census(records=pq.read_metadata(path).num_rows)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError…
        raise SubmissionError(path, f"cannot read as Parquet: {exc}") from exc
