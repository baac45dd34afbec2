"""Submission files as text: decoding, and CSV rows numbered by the line they start on.

Two ways to read CSV rows, with the same line numbers and the same blank-row rule: a whole file
decoded at once (:func:`csv_rows`), and a byte range of a file streamed from an offset
(:func:`records`), which is how a piece of a chunked run reads its own rows.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path

from quizgym.errors import SubmissionError

__all__ = ["csv_head", "csv_rows", "decode", "records"]

_LONE_CR = re.compile(rb"(?<=\r)(?!\n)")


def decode(path: Path) -> tuple[str, bool]:
    """The text of a file, and whether it was all valid UTF-8."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SubmissionError(path, exc.strerror or "cannot read") from exc
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8"), True
    except UnicodeDecodeError:
        # Undecodable bytes stay in the text as lone surrogates, so the rows that hold them can
        # be rejected one by one while the rest of the file is graded.
        return data.decode("utf-8", errors="surrogateescape"), False


def csv_rows(text: str) -> Iterator[tuple[int, list[str]]]:
    """CSV rows with the line each starts on; blank lines are skipped."""
    reader = csv.reader(io.StringIO(text, newline=""))
    every = list(reader)
    if reader.line_num == len(every):  # no value spans lines: row k is on line k + 1
        return iter(
            [(k, row) for k, row in enumerate(every, 1) if len(row) > 1 or row and row[0].strip()]
        )
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[tuple[int, list[str]]] = []
    end = 0
    for row in reader:
        start, end = end + 1, reader.line_num
        if len(row) > 1 or row and row[0].strip():
            rows.append((start, row))
    return iter(rows)


def records(path: Path, offset: int, line: int) -> Iterator[tuple[int, list[str], int, int]]:
    """Non-blank CSV records from a byte offset (which is on ``line``).

    Yields:
        (line the record starts on, cells, byte offset after it, line it ends on).


    The file is read line by line in binary, so the offset after each record is exact and a
    piece can start there. Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``, and the blank-row
    rule is :func:`csv_rows`'s, so lines are numbered as there.

    Raises:
        SubmissionError: the file cannot be read as CSV.
    """
    with path.open("rb") as stream:
        stream.seek(offset)
        position = offset

        def lines() -> Iterator[str]:
            nonlocal position
            for raw in stream:
                if position == 0 and raw.startswith(b"\xef\xbb\xbf"):
                    position, raw = 3, raw[3:]
                for part in _LONE_CR.split(raw) if b"\r" in raw[:-2] else (raw,):
                    position += len(part)
                    yield part.decode("utf-8", errors="surrogateescape")

        reader = csv.reader(lines())
        end = line - 1
        try:
            for row in reader:
                start, end = end + 1, line - 1 + reader.line_num
                if row and (len(row) > 1 or row[0].strip()):
                    yield start, row, position, end
        except csv.Error as exc:
            raise SubmissionError(path, f"cannot read as CSV: {exc}", end + 1) from exc


def csv_head(path: Path) -> tuple[int, list[str], int, int]:
    try:
        return next(records(path, 0, 1), (1, [], 0, 1))
    except OSError as exc:
        raise SubmissionError(path, exc.strerror or "cannot read") from exc
