"""How many records a submissions file holds, counted without its reader.

A grading run checks at its end that every record of its input was graded or rejected
(:func:`quizgym.grading.run.grade_submissions`): students in = graded + rejected. The count
must not come from the readers themselves, or a reader that loses rows would agree with
itself. So it is made here, on the file's bytes, by a scanner of its own that implements the
rules :mod:`quizgym.grading.readers.text` states (CSV quoting, the quote that swallows rows,
the record too long, the quote never closed) and nothing else: no ``csv`` module, no pyarrow,
no decoding (``"``, the delimiters and line endings are the same bytes in UTF-8 and cp1252).
Runs of lines that are each one whole record are counted a block at a time, by one regular
expression (:func:`_records`) and byte counts; the other lines are read one at a time
(``tests/test_census.py`` holds the two ways to the same count on random CSV-ish bytes).
JSON Lines records are its non-blank lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from quizgym.errors import SubmissionError
from quizgym.grading.rows import MAX_RECORD

__all__ = ["Census", "count_csv", "count_jsonl", "counted"]

_QUOTE = ord('"')
_WHITESPACE = b" \t\r\n\x0b\x0c"
_LONE_CR = re.compile(rb"(?<=\r)(?!\n)")
_LONE_CR_AT = re.compile(rb"\r(?!\n)")
_BOM = b"\xef\xbb\xbf"
_BLOCK = 1 << 20


@dataclass(frozen=True, kw_only=True)
class Census:
    """What a file holds, by this module's count."""

    records: int
    """Records after the header (rejected ones included, blank lines not)."""
    multiline: bool = False
    """Some record spans more than one line."""
    blank: int = 0
    """Blank lines (or blank records) skipped."""
    broken: int = 0
    """Records the CSV rules reject whole (a quote that swallows rows or is never closed, a
    record too long): a file with none is one pyarrow may read."""

    @property
    def simple(self) -> bool:
        """One record a line, none blank or broken: a file pyarrow may read as we do."""
        return not (self.multiline or self.blank or self.broken)

    def __add__(self, other: Census) -> Census:
        """Both counts (a file given twice is read twice)."""
        return Census(
            records=self.records + other.records,
            multiline=self.multiline or other.multiline,
            blank=self.blank + other.blank,
            broken=self.broken + other.broken,
        )


def counted(census: dict[str, Census], source: str, found: Census) -> Census:
    """Add a file's count to a run's (a file given twice counts twice); return its count."""
    census[source] = census[source] + found if source in census else found
    return found


def _scan(line: bytes, inside: bool, delimiter: int) -> tuple[bool, int, bool, bool]:
    """Read one line (without its ending) by CSV's quoting rules.

    Args:
        line: the line.
        inside: whether a quoted value is open at its start.
        delimiter: the delimiter's byte.

    Returns:
        (a quoted value is open at its end, delimiters outside quotes, some character other
        than whitespace was read as a value, the line is well-formed CSV: nothing after a
        closing quote but a delimiter).
    """
    n, i = len(line), 0
    delimiters, content, strict = 0, False, True
    state = "quoted" if inside else "start"
    while i < n:
        if state == "start":
            if line[i] == _QUOTE:
                state, i = "quoted", i + 1
                continue
            j = line.find(delimiter, i)
            stop = n if j < 0 else j
            content = content or bool(line[i:stop].strip(_WHITESPACE))
            if j < 0:
                state, i = "field", n
                break
            delimiters, i = delimiters + 1, j + 1
        elif state == "quoted":
            j = line.find(_QUOTE, i)
            if j < 0:
                content = content or bool(line[i:].strip(_WHITESPACE))
                break
            content = content or bool(line[i:j].strip(_WHITESPACE))
            if j + 1 < n and line[j + 1] == _QUOTE:  # "" is a quote in a quoted value
                content, i = True, j + 2
                continue
            state, i = "closed", j + 1
        else:  # after a closing quote: up to the delimiter, characters are kept as they are
            j = line.find(delimiter, i)
            stop = n if j < 0 else j
            if stop > i:
                strict = False
                content = content or bool(line[i:stop].strip(_WHITESPACE))
            if j < 0:
                break
            state, delimiters, i = "start", delimiters + 1, j + 1
    return state == "quoted", delimiters, content, strict and state != "quoted"


class _CsvCount:
    """The count of one CSV file, fed line by line (or many whole records at once)."""

    def __init__(self, delimiter: str, *, bulk: bool = True) -> None:
        self.mark = ord(delimiter)
        self.width: int | None = None  # the header's cells, once it is read
        self.records = self.blank = self.broken = 0
        self.multiline = False
        # the open record: a quoted value is open; its bytes, lines, delimiters, content
        self.open = False
        self.size = self.lines = self.delimiters = 0
        self.content = self.empty = False
        # a line of blanks and tabs (not the delimiter) only, with its ending: a blank line
        space = re.escape(bytes(c for c in b" \t\x0b\x0c" if c != self.mark))
        self.blank_first = re.compile(rb"[" + space + rb"]*\r?\n")
        self.blank_after = re.compile(rb"\n(?=[" + space + rb"]*\r?\n)")
        # runs of whole records, a block at a time (none for a delimiter that is a quote, ends
        # lines or is not one byte in UTF-8: every line is then read alone)
        plain = bulk and delimiter not in '"\r\n' and self.mark < 0x80
        self.run = _records(self.mark) if plain else None

    def close(self, rejected: bool) -> None:
        self.open = False
        if rejected:
            self.records += self.width is not None
            self.broken += 1
            return
        cells = 0 if self.empty and self.lines == 1 else self.delimiters + 1
        if cells == 0 or (cells == 1 and not self.content):
            self.blank += 1
        elif self.width is None:
            self.width = cells
        else:
            self.records += 1
            self.multiline = self.multiline or self.lines > 1

    def line(self, line: bytes, length: int, too_long: bool) -> None:
        """One line (without its ending), its bytes (with it), and whether it is too long."""
        if too_long:  # the open record and this line, or this line: one record
            self.close(rejected=True)
            return
        if self.open:
            if self.width is not None and _full_row(line, self.mark, self.width):
                self.close(rejected=True)  # the open record swallowed this row: it starts anew
            elif self.size + length > MAX_RECORD:
                self.close(rejected=True)
                return
        if not self.open:
            self.size, self.lines, self.delimiters = 0, 0, 0
            self.content, self.empty = False, not line
            if _QUOTE not in line:  # the usual line: a whole record, no quote to follow
                self.lines, self.size = 1, length
                self.delimiters = line.count(self.mark)
                self.content = bool(self.delimiters) or bool(line.strip(_WHITESPACE))
                self.close(rejected=False)
                return
        self.size, self.lines = self.size + length, self.lines + 1
        still, found, has, _ = _scan(line, self.open, self.mark)
        self.delimiters += found
        self.content = self.content or has
        self.open = True
        if not still:
            self.close(rejected=False)

    def raw(self, raw: bytes) -> None:
        """One ``\n``-ended run of bytes (lone ``\r`` inside end lines too)."""
        if len(raw) > MAX_RECORD:
            self.line(b"", len(raw), True)
            return
        for part in _LONE_CR.split(raw) if b"\r" in raw else (raw,):
            if part:
                self.line(part.rstrip(b"\r\n"), len(part), False)

    def lines_of(self, data: bytes, end: int) -> None:
        """Whole lines (``data[:end]`` ends with a line feed): runs of lines that are each one
        whole record by :func:`_records` (every quoted value closed on its line), outside any
        record, are counted at once; any other line is read alone."""
        at = 0
        # the next lone carriage return (a line end): a run stops at the line that holds it
        cr = end if data.find(b"\r", 0, end) < 0 else -1
        while at < end:
            if self.run is not None and not self.open and self.width is not None:
                if cr < at:
                    found = _LONE_CR_AT.search(data, at, end)
                    cr = end if found is None else found.start()
                limit = min(cr, at + MAX_RECORD)  # so no line of the run is too long
                # up to the first quote, the run is found at memchr's speed, not the pattern's
                taken = data.find(b'"', at, limit)
                if taken < 0:
                    taken = limit
                elif matched := self.run.match(data, taken, limit):
                    taken = matched.end()
                stop = data.rfind(b"\n", at, taken) + 1
                if stop > at:
                    lines = data.count(b"\n", at, stop)
                    blank = len(self.blank_after.findall(data, at, stop))
                    blank += self.blank_first.match(data, at, stop) is not None
                    self.records += lines - blank
                    self.blank += blank
                    at = stop
                    continue
            after = data.find(b"\n", at, end) + 1 or end
            self.raw(data[at:after])
            at = after


def count_csv(path: Path, *, delimiter: str = ",") -> Census:
    """Count a CSV file's records after its header (see the module docs).

    Raises:
        SubmissionError: the file cannot be read.
    """
    return _count_csv(path, delimiter=delimiter, bulk=True)


def _count_csv(path: Path, *, delimiter: str, bulk: bool) -> Census:
    """:func:`count_csv`, runs of whole records counted at once (``bulk``) or every line read
    alone (what the tests hold the runs to)."""
    count = _CsvCount(delimiter, bulk=bulk)
    try:
        with path.open("rb") as stream:
            pending, first = b"", True
            while block := stream.read(_BLOCK):
                if first and block.startswith(_BOM):
                    block = block[3:]
                first = False
                data = pending + block if pending else block
                cut = data.rfind(b"\n") + 1
                count.lines_of(data, cut)
                pending = data[cut:]
                if len(pending) > MAX_RECORD:  # a line too long: skip to its end, not kept
                    size, pending = len(pending), b""
                    while block := stream.read(_BLOCK):
                        end = block.find(b"\n") + 1
                        if end:
                            size, pending = size + end, block[end:]
                            break
                        size += len(block)
                    count.line(b"", size, True)
            cut = pending.rfind(b"\n") + 1
            count.lines_of(pending, cut)
            if pending[cut:]:
                count.raw(pending[cut:])
        if count.open:
            count.close(rejected=True)  # a quote never closed
    except OSError as exc:
        raise SubmissionError(path, exc.strerror or "cannot read") from exc
    return Census(
        records=count.records, multiline=count.multiline, blank=count.blank, broken=count.broken
    )


def _records(delimiter: int) -> re.Pattern[bytes]:
    """A run of lines that are each one whole record, matched from a line's start or a quote.

    A quote at the start of a line or after a delimiter opens a quoted value: the pattern
    takes it only when the value is closed on the same line (``""`` inside is a quote). Any
    other quote follows a byte of its own cell, unquoted or after a closing quote, and is kept
    as it is (``a"b``, ``"a"b``), as :func:`_scan` keeps it. The pattern and :func:`_scan` thus
    see the same quoted values, and every line of a run ends with none open: one record, or a
    blank line. A line of blanks without a quote is
    counted blank by the caller; a lone quoted value of blanks (``""``, ``" "``, blanks after
    it), the one other blank line, stops the run. The run must hold no lone carriage return
    (the caller stops it before one): ``\r`` is then only ever followed by ``\n``.

    Args:
        delimiter: the delimiter's byte (not a quote, a carriage return or a line feed).

    Returns:
        The pattern: its match ends at the first quote that opens a value not closed on its
        line (or a quoted blank line), or where it was told to stop.
    """
    mark = re.escape(bytes([delimiter]))
    inside = rb"[ \t\x0b\x0c]"  # blanks, within quotes (the delimiter too)
    after = rb"[" + re.escape(bytes(c for c in b" \t\x0b\x0c" if c != delimiter)) + rb"]"
    blank = rb'"' + inside + rb'*+"' + after + rb"*+\r?\n"
    opens = rb"(?:(?<=[" + mark + rb"])|(?<![^\n])(?!" + blank + rb"))"
    value = rb'"[^"\n]*+(?:""[^"\n]*+)*+"'
    kept = rb"(?<=[^" + mark + rb'\n])"'
    # possessive throughout: nothing is ever given back, so a match is linear in its bytes
    return re.compile(rb'[^"]*+(?:(?:' + opens + value + rb"|" + kept + rb')[^"]*+)*+')


def _full_row(line: bytes, delimiter: int, width: int) -> bool:
    """Whether a line, read alone, is a well-formed row of ``width`` cells."""
    if not line:
        return False  # no cells
    still, delimiters, _, strict = _scan(line, False, delimiter)
    return not still and strict and delimiters + 1 == width


def count_jsonl(path: Path) -> Census:
    """Count a JSON Lines file's records: its lines (split at ``\n``) that are not blank
    (ASCII whitespace); a line longer than ``MAX_RECORD`` bytes is one record whatever it holds.

    Raises:
        SubmissionError: the file cannot be read.
    """
    records = blank = 0

    def line(text: bytes, size: int) -> None:
        nonlocal records, blank
        if size > MAX_RECORD or text.strip(_WHITESPACE):
            records += 1
        else:
            blank += 1

    try:
        with path.open("rb") as stream:
            pending, first = b"", True
            while block := stream.read(_BLOCK):
                if first and block.startswith(_BOM):
                    block = block[3:]
                first = False
                *whole, pending = (pending + block).split(b"\n")
                for text in whole:
                    line(text, len(text) + 1)
                if len(pending) > MAX_RECORD:  # skip to the end of the line, not kept
                    while (block := stream.read(_BLOCK)) and b"\n" not in block:
                        pass
                    line(b"", MAX_RECORD + 1)
                    pending = block[block.find(b"\n") + 1 :] if block else b""
                    first = False
            *whole, last = pending.split(b"\n")  # what followed a line too long, at the end
            for text in whole:
                line(text, len(text) + 1)
            if last:
                line(last, len(last))
    except OSError as exc:
        raise SubmissionError(path, exc.strerror or "cannot read") from exc
    return Census(records=records, blank=blank)
