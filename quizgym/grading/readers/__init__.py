"""Submission readers: one per format, over one set of row rules (:mod:`quizgym.grading.rows`).

Formats (DESIGN.md "Submissions", and docs/grade.md for their exact columns), recognised by
extension and header (:func:`~quizgym.grading.readers.layout.layout_of`):

- wide CSV or Parquet (:mod:`.wide`): ``student`` (optional ``seed``), then one column per slot;
- long CSV or Parquet (:mod:`.long`): ``student,question,answer`` (optional ``seed``);
- JSON Lines (:mod:`.jsonl`): ``{"student": ..., "seed": 7, "answers": {"id": "..."}}``;
- Canvas's quiz "Student Analysis" and Moodle's quiz "Responses" CSV (:mod:`.lms`).

Files are UTF-8 with or without a BOM. Nothing is dropped silently: a row that cannot be graded
becomes a :class:`~quizgym.grading.table.Rejection` with its file, line and reason, and the rest
is kept. A file that cannot be read at all (missing, no header we recognise) raises
:class:`~quizgym.errors.SubmissionError`. A chunked run reads its pieces with the same readers
(:mod:`quizgym.grading.pieces`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from quizgym.errors import SubmissionError
from quizgym.grading.readers import wide
from quizgym.grading.readers.jsonl import read_jsonl
from quizgym.grading.readers.layout import Layout, layout_of
from quizgym.grading.readers.lms import read_canvas, read_moodle
from quizgym.grading.readers.long import read_long
from quizgym.grading.readers.text import csv_rows, decode
from quizgym.grading.readers.wide import read_wide
from quizgym.grading.table import ClassAnswers
from quizgym.issued import Issued
from quizgym.model import Bank

__all__ = ["Layout", "layout_of", "read_long", "read_submissions", "read_wide", "slot_ids"]

NO_LAYOUT = (
    "no 'student' column: expected a wide CSV (student, seed, question ids…), a long CSV "
    "(student,question,answer), JSON Lines, or a Canvas/Moodle export"
)


def slot_ids(bank: Bank) -> list[str]:
    """Every answer slot of a bank: ``id`` for a question, ``id.part`` for each part."""
    return bank.slot_ids()


def read_submissions(
    bank: Bank, paths: Iterable[Path | str], *, issued: Issued | None = None
) -> ClassAnswers:
    """Read submission files (several at once, any mix of formats) into one class.

    Args:
        bank: the bank the answers are for (its slots are the valid question columns).
        paths: the files.
        issued: the issue manifest of an LMS export, to match the LMS's response columns to the
            exported items (and so to the version each student answered).

    Returns:
        The class, with every row that could not be graded in ``rejected``.

    Raises:
        SubmissionError: a file is missing or in no format we recognise.
    """
    answers = ClassAnswers(bank.slot_ids())
    for path in paths:
        path = Path(path)
        text, clean = decode(path)
        if path.suffix.lower() in {".jsonl", ".ndjson"}:
            read_jsonl(answers, str(path), text)
            continue
        if clean and wide.read_wide_text(answers, str(path), text):
            continue
        rows = csv_rows(text)
        header_line, header = next(rows, (1, []))
        header = [h.strip() for h in header]
        if not header or not any(header):
            raise SubmissionError(path, "empty file: expected a header row")
        kind = layout_of(header)
        if kind == "moodle":
            read_moodle(bank, answers, str(path), header, rows, issued=issued)
        elif kind == "canvas":
            read_canvas(bank, answers, str(path), header, rows, issued=issued)
        elif kind == "long":
            read_long(answers, str(path), [h.lower() for h in header], rows)
        elif kind == "wide":
            read_wide(answers, str(path), header_line, header, rows, bad_bytes=not clean)
        else:
            raise SubmissionError(path, NO_LAYOUT, header_line)
    return answers
