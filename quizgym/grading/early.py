"""A class's files, read while the grader is still being imported.

``quizgym grade`` spends its first 0.2 s importing the answer engine, on one core. Reading a wide
CSV needs no bank for two of its parts: pyarrow's read of the file (which does not hold the GIL)
and the census of its records (:mod:`quizgym.grading.census`: Python, so a helper process on a
core to spare, :mod:`quizgym.grading.helper`). The command starts both here, before it imports
the grader (:func:`start_reads`); :func:`~quizgym.grading.readers.submissions.read_submissions`
takes them when its own look at the file asks for what was started, and does the work itself
otherwise:

- a read is taken only for the same file, unchanged (size, times, inode), with the same head
  (:func:`~quizgym.grading.readers.text.csv_head`) and with the same columns read as plain
  strings (the header's ``student``, ``seed`` and roster columns, which the bank could make
  otherwise: a slot named ``email``);
- the helper's count is taken only when it ended well, before it was needed, and says the file
  is one pyarrow may read; and the reader takes pyarrow's table only when it holds as many rows
  as the count says (:func:`~quizgym.grading.readers.wide.read_wide_arrow`), so the two agree.
  Otherwise the file is counted here, as always.

Whatever is not taken is ended by :meth:`EarlyReads.close`: no read outlives the command, no
helper outlives its count.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from quizgym.grading.census import Census
from quizgym.grading.helper import KEYS_HELPER, WarmHelper, cores, helper_command, may_help
from quizgym.grading.readers.layout import layout_of
from quizgym.grading.readers.text import Head, csv_head
from quizgym.grading.rows import ID_SPACE, ROSTER

__all__ = [
    "HELPER_BYTES",
    "ArrowTable",
    "EarlyRead",
    "EarlyReads",
    "arrow_readable",
    "start_arrow_read",
    "start_reads",
]

HELPER_BYTES = 1 << 22
"""The smallest file (4 MiB, some 50,000 students) whose records a helper process counts:
starting one costs more than counting a smaller file here."""

MOST_EARLY_FILES = 4
"""The most files read before the grader is imported: the others are read one after another,
as before (a class in thirty section files does not hold thirty tables at once)."""

MOST_ARROW_COLUMNS = 4096
"""pyarrow is given a type per column: past this many, the careful path is as fast."""

_CENSUS = (
    "import json, sys\n"
    "sys.path[:0] = json.loads(sys.argv[1])\n"
    "from pathlib import Path\n"
    "from quizgym.grading.census import count_csv\n"
    "found = count_csv(Path(sys.argv[2]), delimiter=sys.argv[3])\n"
    "print(json.dumps([found.records, found.multiline, found.blank, found.broken]))\n"
)
"""The helper: the census of one file, as a JSON list of its four fields."""


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


def _identity(path: Path) -> tuple[int, ...] | None:
    """What tells a file changed: its device, inode, size and modification time."""
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


def _guessed_plain(header: Sequence[str]) -> frozenset[int]:
    """The columns a wide header's reader wants as plain strings, as far as the header alone
    says: ``student``, ``seed`` and the roster columns (a bank may make one a slot)."""
    names = [h.casefold() for h in header]
    return frozenset(k for k, name in enumerate(names) if name in {"student", "seed", *ROSTER})


@dataclass(eq=False)
class EarlyRead:
    """One file's read and count, started before the grader was imported."""

    path: Path
    identity: tuple[int, ...]
    head: Head
    plain: frozenset[int]
    """The columns the read takes as plain strings."""
    table: Future[ArrowTable] | None
    """pyarrow's read (None: pyarrow is not installed)."""
    helper: subprocess.Popen[bytes] | None = None
    """The helper process counting the file's records."""
    taken: bool = False

    def census(self) -> Census | None:
        """The helper's count of the file, if it has ended well by now (never waited for: a
        helper still counting is stopped, and the file is counted by whoever asked)."""
        helper, self.helper = self.helper, None
        if helper is None:
            return None
        if helper.poll() is None or helper.returncode != 0:
            _stop(helper)
            return None
        answer, _ = helper.communicate()
        if _identity(self.path) != self.identity:  # changed while it was counted
            return None
        return _census_of(answer)

    def end(self) -> None:
        """Stop the helper and wait for the read, if either is not taken."""
        if self.helper is not None:
            _stop(self.helper)
            self.helper = None
        if self.table is not None and not self.taken:
            wait([self.table])


def _stop(helper: subprocess.Popen[bytes]) -> None:
    if helper.poll() is None:
        helper.kill()
    helper.communicate()


def _census_of(answer: bytes) -> Census | None:
    """A helper's answer as a census, if it is exactly one."""
    try:
        records, multiline, blank, broken = json.loads(answer)
    except (ValueError, TypeError):
        return None
    counts = (records, blank, broken)
    if not all(type(n) is int and n >= 0 for n in counts) or type(multiline) is not bool:
        return None
    return Census(records=records, multiline=multiline, blank=blank, broken=broken)


@dataclass(eq=False)
class EarlyReads:
    """The reads :func:`start_reads` started, by file, until each is taken or closed."""

    reads: dict[Path, EarlyRead] = field(default_factory=dict)
    keys: WarmHelper | None = None
    """A helper for a large class's draw keys (:mod:`quizgym.grading.keys`), started ahead."""

    def take(self, path: Path, head: Head) -> EarlyRead | None:
        """The read started for this file, if it is unchanged and read as ``head`` says."""
        read = self.reads.pop(path, None)
        if read is None:
            return None
        if read.head != head or _identity(path) != read.identity:
            read.end()
            return None
        return read

    def close(self) -> None:
        """End every read not taken, and the keys' helper if no run took it (a read taken is
        ended by whoever took it)."""
        reads, self.reads = list(self.reads.values()), {}
        for read in reads:
            read.end()
        if self.keys is not None:
            self.keys.close()


def start_reads(paths: Iterable[Path]) -> EarlyReads:
    """Start reading and counting each wide CSV among ``paths`` (others are left to the
    readers). Never fails: a file that cannot be read here is read, and reported, later."""
    early = EarlyReads()
    paths = list(paths)
    if any(path.suffix.lower() == ".parquet" for path in paths):
        return early  # a run with a Parquet file reads every file in pieces
    helpers = max(1, cores() - 1)  # at most a helper a spare core
    for path in paths:
        if path in early.reads or path.suffix.lower() in {".jsonl", ".ndjson"}:
            continue
        if len(early.reads) >= MOST_EARLY_FILES:  # the others are read one after another
            break
        try:
            read = _start(path, helper=helpers > 0)
        except Exception:  # noqa: BLE001 - the readers read this file and say what is wrong
            read = None
        if read is not None:
            early.reads[path] = read
            helpers -= read.helper is not None
    if any(read.identity[2] >= HELPER_BYTES for read in early.reads.values()) and may_help():
        try:
            early.keys = WarmHelper(KEYS_HELPER)
        except OSError:  # none can start here: the keys start their own, or are hashed here
            early.keys = None
    return early


def _start(path: Path, *, helper: bool = True) -> EarlyRead | None:
    identity = _identity(path)
    if identity is None or not path.is_file():
        return None
    head = csv_head(path, recognised=lambda cells: layout_of(cells) is not None)
    if layout_of(head.cells) != "wide" or not arrow_readable(head):
        return None
    counter = None
    if helper and identity[2] >= HELPER_BYTES and may_help():
        command = helper_command(_CENSUS, os.fsdecode(path), head.delimiter)
        try:
            counter = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
        except OSError:  # no helper: the file is counted here
            counter = None
    try:
        plain = _guessed_plain(head.cells)
        # One thread of pyarrow's on a machine of two cores: the other core is the imports'.
        student = [h.casefold() for h in head.cells].index("student")  # as the reader finds it
        table = start_arrow_read(path, head, plain, student, threads=cores() > 2)
    except BaseException:
        if counter is not None:  # no helper outlives a read that could not start
            _stop(counter)
        raise
    return EarlyRead(path, identity, head, plain, table, counter)
