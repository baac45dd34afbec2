"""pyarrow's read of a wide CSV: the file in, a table of its columns and the checks its reader
makes of whole columns out (pyarrow reads without holding the GIL, in a thread of its own)."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quizgym.grading.readers.text import Head
from quizgym.grading.rows import ID_SPACE

__all__ = ["ArrowTable", "arrow_readable", "start_arrow_read"]

MOST_ARROW_COLUMNS = 4096
"""pyarrow is given a type per column: past this many, the careful path is as fast."""


def arrow_readable(head: Head) -> bool:
    """Whether a wide CSV's head lets pyarrow read it as quizgym does: valid UTF-8 with
    ``\\n`` line endings, its header alone on line 1, not too wide, no column named twice."""
    header = head.cells
    return (
        head.survey.clean
        and head.line == 1
        and head.next_line == 2
        and len(header) <= MOST_ARROW_COLUMNS
        and len(set(header)) == len(header)
    )


@dataclass(frozen=True, eq=False)
class ArrowTable:
    """What pyarrow read of a wide CSV, with what its reader checks of whole columns worked out
    in the reading thread (pyarrow's compute functions do not hold the GIL either)."""

    table: Any
    """The table, one dictionary per dictionary-encoded column."""
    longest: list[int]
    """Per column, its longest text in characters (0 for none)."""
    students: Any
    """The student column, each id stripped of spaces (:data:`~quizgym.grading.rows.ID_SPACE`)."""
    named_once: bool
    """Every student has an id, and no two the same."""


def start_arrow_read(
    path: Path, head: Head, plain: frozenset[int], student: int, *, threads: bool = True
) -> Future[ArrowTable] | None:
    """Start pyarrow reading a wide CSV in a thread of its own: the columns at ``plain`` as
    strings, the others dictionary-encoded (distinct texts and codes, made by the reader
    itself), the column at ``student`` the students' ids; with ``threads``, in pyarrow's
    threads too. None when pyarrow is not installed."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv

        from quizgym.arrays import arrow_call, arrow_compute
    except ImportError:  # pragma: no cover - the parquet extra is not installed
        return None
    header = head.cells
    options = {
        "read_options": pacsv.ReadOptions(column_names=header, skip_rows=1, use_threads=threads),
        "parse_options": pacsv.ParseOptions(delimiter=head.delimiter),
        "convert_options": pacsv.ConvertOptions(
            column_types={
                h: pa.string() if k in plain else pa.dictionary(pa.int32(), pa.string())
                for k, h in enumerate(header)
            },
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    }
    trim = arrow_compute().TrimOptions(ID_SPACE)

    def read() -> ArrowTable:
        table = pacsv.read_csv(str(path), **options).unify_dictionaries()
        longest = []
        for index in range(table.num_columns):
            column = table.column(index)
            values = (
                column.chunk(0).dictionary if index not in plain and column.num_chunks else column
            )
            most = (
                arrow_call("max", arrow_call("utf8_length", values)).as_py() if len(values) else 0
            )
            longest.append(most or 0)
        students = arrow_call("utf8_trim", table.column(student), options=trim)
        named_once = not len(students) or (
            arrow_call("count_distinct", students).as_py() == len(students)
            and arrow_call("min", arrow_call("utf8_length", students)).as_py() > 0
        )
        return ArrowTable(table, longest, students, named_once)

    pool = ThreadPoolExecutor(1, thread_name_prefix="quizgym-read")
    table = pool.submit(read)
    pool.shutdown(wait=False)  # the thread ends with its read
    return table
