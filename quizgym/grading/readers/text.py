"""Submission files as text: their encoding and delimiter, and CSV records read line by line.

Every CSV reader, whole file or a byte range of one (a piece of a chunked run), reads records
through :func:`csv_records`, so the rules below hold the same everywhere:

- **Lines** end at ``\\n``, ``\\r\\n`` or a lone ``\\r``. A file is read one line at a time,
  never more than :data:`~quizgym.grading.rows.MAX_RECORD` bytes of it at once: a longer line
  is skipped to its end without being kept.
- **Records** follow CSV's quoting (a ``"`` that starts a field opens it, ``""`` inside is a
  quote, a single ``"`` closes it): a quoted value may hold line breaks, so a record may span
  lines. Blank records are skipped. Three kinds of record are rejected, each as one record
  with its line range, and reading goes on after it:

  1. **A quote that swallows rows**: a record still open at a line that is, read alone, a
     well-formed row with as many cells as the header (the header's width). That line starts
     a new record, and the open one (from its first line to the line before) is rejected. So a
     stray ``"`` costs its own row only, never the rows after it; a genuine multi-line answer
     is read whole unless one of its lines looks exactly like a row of the table (then it is
     rejected, never silently split).
  2. **A record longer than** :data:`~quizgym.grading.rows.MAX_RECORD` bytes: rejected at the
     line where it passes the limit; the next line starts afresh, outside any quote.
  3. **A quote still open at the end of the file.**

- **Encoding** (:func:`survey`): UTF-8, with or without a byte-order mark. A file that is not
  valid UTF-8 and holds no valid UTF-8 sequence of two or more bytes (every byte above 127 is
  on its own: é, ü, ñ as one byte each) is Windows-1252 (cp1252, which includes Latin-1, the
  encoding Excel writes "CSV" in on Western Windows): it is read as such, with a note. A file
  with valid UTF-8 sequences *and* invalid bytes is UTF-8 with a few bad bytes: the rows that
  hold them are rejected one by one, the rest is graded.
- **Delimiter** (:func:`csv_head`): the first of ``,`` ``;`` and tab that makes the header a
  submissions header (a ``student`` column, a Canvas or Moodle export); European Excel writes
  ``;``.

:mod:`quizgym.grading.census` counts the same records by another way (bytes, its own
scanner), so a run can check at its end that every record was graded or rejected.
"""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from quizgym.errors import SubmissionError
from quizgym.grading.rows import (
    MAX_RECORD,
    Reason,
    blank,
    never_closed,
    record_too_long,
    swallowed,
)

__all__ = [
    "DELIMITERS",
    "Head",
    "Line",
    "Record",
    "Survey",
    "csv_head",
    "csv_records",
    "physical_lines",
    "survey",
]

DELIMITERS = (",", ";", "\t")
"""The delimiters a CSV header is tried with, in this order."""
_BOM = b"\xef\xbb\xbf"
_BLOCK = 1 << 20
_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
"""Byte-order marks of the wide encodings (UTF-32's first: its little-endian mark begins with
UTF-16's), and the codec that reads each."""


def wide_encoding(path: Path) -> str | None:
    """``utf-16`` or ``utf-32`` when a file starts with that encoding's byte-order mark (as
    Excel's "Unicode text" and some LMS exports are written), else None.

    Raises:
        SubmissionError: the file cannot be read.
    """
    try:
        with path.open("rb") as stream:
            start = stream.read(4)
    except OSError as exc:
        raise SubmissionError(path, exc.strerror or "cannot read") from exc
    return next((name for mark, name in _WIDE_BOMS if start.startswith(mark)), None)


def utf8_copy(path: Path, encoding: str, folder: Path) -> Path:
    """A UTF-8 copy, in ``folder``, of a file written in a wide encoding, line for line (so its
    rows keep their line numbers).

    Raises:
        SubmissionError: the file cannot be read or is not that encoding throughout.
    """
    target = folder / path.name
    try:
        with (
            path.open("r", encoding=encoding, newline="") as source,
            target.open("w", encoding="utf-8", newline="") as out,
        ):
            while block := source.read(_BLOCK):
                out.write(block)
    except OSError as exc:
        raise SubmissionError(path, exc.strerror or "cannot read") from exc
    except UnicodeError as exc:
        message = f"starts as {encoding.upper()} (its byte-order mark) but is not: {exc}"
        raise SubmissionError(path, message) from exc
    return target


_HEAD = 4096
_LONE_CR = re.compile(rb"(?<=\r)(?!\n)")
_CR_THEN_OTHER = re.compile(rb"\r[^\n]")
_UTF8_SEQUENCE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}"
    rb"|\xed[\x80-\x9f][\x80-\xbf]|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}"
    rb"|\xf4[\x80-\x8f][\x80-\xbf]{2}"
)
"""A valid UTF-8 sequence of two or more bytes."""
_CP1252_UNDEFINED = re.compile(rb"[\x81\x8d\x8f\x90\x9d]")


@dataclass(frozen=True, kw_only=True)
class Survey:
    """What one pass over a file's bytes says about it, before any of it is parsed."""

    encoding: str
    """``utf-8`` or ``cp1252``."""
    bad_bytes: bool = False
    """UTF-8 with some invalid bytes: the rows holding them are rejected."""
    lone_cr: bool = False
    """Some line ends with a lone ``\\r`` (old Mac line endings)."""
    note: str | None = None
    """What a teacher should know about how the file was read (a file read as cp1252)."""

    @property
    def clean(self) -> bool:
        """Valid UTF-8 with ``\\n`` or ``\\r\\n`` line endings: what pyarrow reads as we do."""
        return self.encoding == "utf-8" and not self.bad_bytes and not self.lone_cr


def survey(path: Path) -> Survey:
    """Decide a file's encoding (see the module docs) in one pass of 1 MiB blocks.

    Raises:
        SubmissionError: the file cannot be read.
    """
    wide = wide_encoding(path)
    if wide is not None:  # read_submissions reads a UTF-8 copy; a file read in place cannot be
        raise SubmissionError(
            path,
            f"the file is {wide.upper()} (its byte-order mark says so): grade it without "
            "--chunk-rows and --engine (they read files in place), or save it as UTF-8",
        )
    try:
        with path.open("rb") as stream:
            decoder = codecs.getincrementaldecoder("utf-8")("strict")
            valid, lone_cr, last = True, False, b""
            first = True
            while block := stream.read(_BLOCK):
                if first and block.startswith(_BOM):
                    block = block[3:]
                first = False
                if valid and not (block.isascii() and decoder.getstate()[0] == b""):
                    try:
                        decoder.decode(block)
                    except UnicodeDecodeError:
                        valid = False
                if not lone_cr and b"\r" in block:  # a \r ending the block is decided next
                    lone_cr = _CR_THEN_OTHER.search(last + block) is not None
                last = block[-1:]
            if last == b"\r":
                lone_cr = True
            if valid:
                try:
                    decoder.decode(b"", final=True)
                except UnicodeDecodeError:
                    valid = False
            if valid:
                return Survey(encoding="utf-8", lone_cr=lone_cr)
            stream.seek(0)
            sequences = undefined = False
            tail = b""
            while block := stream.read(_BLOCK):
                # a sequence cut by a block boundary is whole in the tail and the next block
                if _UTF8_SEQUENCE.search(tail + block):
                    sequences = True
                    break
                undefined = undefined or _CP1252_UNDEFINED.search(block) is not None
                tail = block[-3:]
    except OSError as exc:
        raise SubmissionError(path, exc.strerror or "cannot read") from exc
    if sequences or undefined:
        return Survey(encoding="utf-8", bad_bytes=True, lone_cr=lone_cr)
    return Survey(
        encoding="cp1252",
        lone_cr=lone_cr,
        note=f"{path}: not UTF-8; read as Windows-1252 (cp1252, which includes Latin-1), as "
        "Excel writes CSV on Western Windows: check accented names in the outputs",
    )


class Line(NamedTuple):
    """One physical line of a file (a tuple: a file has many, each made at C speed)."""

    number: int
    text: str | None
    """The line with its ending; None for a line longer than ``MAX_RECORD`` (not kept)."""
    size: int
    """Its bytes, ending included."""
    end: int
    """The byte offset after it."""
    head: str = ""
    """A line too long: its first few kilobytes (to name the student of a rejected row)."""


def physical_lines(
    path: Path, *, offset: int = 0, number: int = 1, encoding: str = "utf-8"
) -> Iterator[Line]:
    """The lines of a file from a byte offset (which is on line ``number``), each read no
    further than ``MAX_RECORD`` bytes (see the module docs). A BOM at the start is skipped.

    Undecodable bytes of a UTF-8 file stay in the text as lone surrogates (their rows are then
    rejected one by one).
    """
    errors = "surrogateescape" if encoding == "utf-8" else "replace"
    with path.open("rb") as stream:
        stream.seek(offset)
        position = offset
        if offset == 0 and stream.read(3) == _BOM:  # the limit counts the line without it
            position = 3
        stream.seek(position)
        while raw := stream.readline(MAX_RECORD + 1):
            if len(raw) > MAX_RECORD:
                size, head = len(raw), raw[:_HEAD].decode(encoding, errors="replace")
                while not raw.endswith(b"\n") and (raw := stream.readline(_BLOCK)):
                    size += len(raw)
                position += size
                yield Line(number, None, size, position, head)
                number += 1
                continue
            if b"\r" not in raw:  # the usual line
                position += len(raw)
                yield Line(number, raw.decode(encoding, errors=errors), len(raw), position)
                number += 1
                continue
            for part in _LONE_CR.split(raw):
                if not part:
                    continue
                position += len(part)
                yield Line(number, part.decode(encoding, errors=errors), len(part), position)
                number += 1


class Record(NamedTuple):
    """A CSV record: its cells, or (``cells`` None) why it is not a row at all."""

    start: int
    """The line it starts on."""
    end: int
    """The line it ends on."""
    cells: list[str] | None
    problem: Reason | None = None
    """Why the record is rejected as a whole (a quote that swallows rows, too long, a quote
    never closed); set exactly when ``cells`` is None."""
    first: tuple[str, ...] = ()
    """A rejected record: its first line's cells, read alone (to name the student)."""
    after: int = 0
    """The byte offset after the record (where a piece may start)."""
    size: int = 0
    """Its bytes (no cell of a record of at most ``MAX_CELL`` bytes can be too long)."""


class _SwallowsError(Exception):
    """The open record reached a line that is a row of its own."""


class _TooLongError(Exception):
    """The open record passed ``MAX_RECORD`` bytes (or holds a line that did)."""


class _Feed:
    """Lines for ``csv.reader``, watching each record as it asks for them.

    ``csv.reader`` asks for another line only while a quoted value is open, so every line it
    asks for after a record's first is a continuation line: that is where the rules of the
    module docs are applied, by raising through the reader (which starts afresh at its next
    call).
    """

    def __init__(self, lines: Iterator[Line], full_row: Callable[[str], bool] | None) -> None:
        self.lines = lines
        self.full_row = full_row
        self.back: list[Line] = []
        self.taken: list[Line] = []
        self.size = 0
        self.open_at_end = False
        self.last_end = 0

    def __iter__(self) -> _Feed:
        return self

    def __next__(self) -> str:
        line = self.back.pop() if self.back else next(self.lines, None)
        if line is None:
            self.open_at_end = bool(self.taken)
            raise StopIteration
        if line.text is None:
            self.taken.append(line)
            self.size += line.size
            raise _TooLongError
        if self.taken:  # a continuation line
            if self.full_row is not None and self.full_row(line.text):
                self.back.append(line)
                raise _SwallowsError
            if self.size + line.size > MAX_RECORD:
                self.taken.append(line)
                self.size += line.size
                raise _TooLongError
        self.taken.append(line)
        self.size += line.size
        return line.text

    def take(self) -> tuple[list[Line], int]:
        """The lines of the record just read (and their bytes); the next record starts empty."""
        taken, size = self.taken, self.size
        self.taken, self.size = [], 0
        return taken, size


def csv_records(
    path: Path,
    *,
    offset: int = 0,
    line: int = 1,
    delimiter: str = ",",
    encoding: str = "utf-8",
    width: int | None = None,
) -> Iterator[Record]:
    """The non-blank CSV records of a file from a byte offset (which is on ``line``).

    Args:
        path: the file.
        offset: where to start (0, or the ``after`` of an earlier record).
        line: the line number at ``offset``.
        delimiter: the cell delimiter.
        encoding: the file's encoding (:func:`survey`).
        width: the header's number of cells: a continuation line that is a row of this width
            ends a record that swallows rows (None while reading the header).

    Yields:
        Each record, rows and rejected ones alike (see the module docs), in file order.

    Raises:
        SubmissionError: the file cannot be read.
    """
    full_row = None if width is None else _full_row(delimiter, width)
    feed = _Feed(physical_lines(path, offset=offset, number=line, encoding=encoding), full_row)
    reader = csv.reader(feed, delimiter=delimiter)
    _allow_long_fields()
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except OSError as exc:
            raise SubmissionError(path, exc.strerror or "cannot read") from exc
        except (_SwallowsError, _TooLongError, csv.Error) as exc:
            taken, size = feed.take()
            start, end = taken[0].number, taken[-1].number
            if isinstance(exc, _SwallowsError):
                problem = swallowed(start, end)
            elif isinstance(exc, _TooLongError):
                problem = record_too_long(start, end, size)
            else:  # pragma: no cover - csv.reader's own limits are above ours
                problem = Reason(f"cannot read as CSV: {exc}", "not CSV")
            yield Record(
                start=start,
                end=end,
                cells=None,
                problem=problem,
                first=_alone(taken[0].text or taken[0].head, delimiter),
                after=taken[-1].end,
            )
            continue
        taken, size = feed.take()
        start, end = taken[0].number, taken[-1].number
        if feed.open_at_end:
            yield Record(
                start=start,
                end=end,
                cells=None,
                problem=never_closed(start, end),
                first=_alone(taken[0].text, delimiter),
                after=taken[-1].end,
            )
            return
        if not blank(row):
            yield Record(start, end, row, None, (), taken[-1].end, size)


def _allow_long_fields() -> None:
    """Let ``csv`` hold a field as long as a record may be (its default, 128 KiB, raised an
    error that stopped the class); the rows' own rules reject long cells."""
    if csv.field_size_limit() < MAX_RECORD:
        csv.field_size_limit(MAX_RECORD)


def _full_row(delimiter: str, width: int) -> Callable[[str], bool]:
    def full_row(text: str) -> bool:
        try:
            cells = next(csv.reader([text], delimiter=delimiter, strict=True), [])
        except csv.Error:
            return False
        return len(cells) == width

    return full_row


def _alone(text: str | None, delimiter: str) -> tuple[str, ...]:
    """A line's cells read alone (a rejected record's first line: who it was)."""
    if text is None:
        return ()
    try:
        return tuple(next(csv.reader([text], delimiter=delimiter), []))
    except csv.Error:  # pragma: no cover - a line holds no line break but at its end
        return ()


@dataclass(frozen=True, kw_only=True)
class Head:
    """A CSV file's header and how the file is read."""

    line: int
    """The header's line."""
    cells: list[str]
    """The header's cells, stripped (a BOM included)."""
    offset: int
    """The byte offset after the header."""
    next_line: int
    """The line at ``offset``."""
    delimiter: str
    survey: Survey


def csv_head(path: Path, *, recognised: Callable[[Sequence[str]], bool]) -> Head:
    """A CSV file's survey, delimiter and header.

    Args:
        path: the file.
        recognised: whether header cells make a submissions header (tried with each of
            :data:`DELIMITERS`; the first that does is the file's).

    Raises:
        SubmissionError: the file cannot be read, is empty, or its header cannot be read.
    """
    found = survey(path)
    heads: list[Head] = []
    for delimiter in DELIMITERS:
        first = next(csv_records(path, delimiter=delimiter, encoding=found.encoding), None)
        if first is None:
            raise SubmissionError(path, "empty file: expected a header row")
        if first.cells is None:
            assert first.problem is not None
            raise SubmissionError(path, f"the header cannot be read: {first.problem}", first.start)
        cells = [c.strip() for c in first.cells]
        head = Head(
            line=first.start,
            cells=cells,
            offset=first.after,
            next_line=first.end + 1,
            delimiter=delimiter,
            survey=found,
        )
        if recognised(cells):
            return head
        heads.append(head)
    return heads[0]
