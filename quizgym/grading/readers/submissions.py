"""Reading submission files into one class: each file's format told by its extension and
header, its records counted apart (:mod:`quizgym.grading.census`), and the reader of its format
run (the package's docstring lists them).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from quizgym.errors import SubmissionError
from quizgym.grading.census import count_csv, count_jsonl, counted
from quizgym.grading.readers.jsonl import read_jsonl
from quizgym.grading.readers.layout import layout_of
from quizgym.grading.readers.lms import read_canvas, read_moodle
from quizgym.grading.readers.long import read_long
from quizgym.grading.readers.text import csv_head, csv_records, survey, utf8_copy, wide_encoding
from quizgym.grading.readers.whole import answer_columns, split_wholes
from quizgym.grading.readers.wide import abandon, read_wide, read_wide_arrow, start_wide_arrow
from quizgym.grading.table import ClassAnswers
from quizgym.issued import Issued
from quizgym.model import Bank

__all__ = ["read_submissions", "recognised", "slot_ids"]

NO_LAYOUT = (
    "no 'student' column: expected a wide CSV (student, seed, question ids…), a long CSV "
    "(student,question,answer), JSON Lines, or a Canvas/Moodle export (delimited by commas, "
    "semicolons or tabs)"
)
JSONL = frozenset({".jsonl", ".ndjson"})


def slot_ids(bank: Bank) -> list[str]:
    """Every answer slot of a bank: ``id`` for a question, ``id.part`` for each part."""
    return bank.slot_ids()


def recognised(header: Sequence[str]) -> bool:
    """Whether header cells make a submissions header (how a delimiter is chosen)."""
    return layout_of(header) is not None


def read_submissions(
    bank: Bank,
    paths: Iterable[Path | str],
    *,
    issued: Issued | None = None,
) -> ClassAnswers:
    """Read submission files (several at once, any mix of formats) into one class.

    Args:
        bank: the bank the answers are for (its slots are the valid question columns).
        paths: the files.
        issued: the issue manifest of an LMS export, to match the LMS's response columns to the
            exported items (and so to the version each student answered).

    Returns:
        The class, with every row that could not be graded in ``rejected``, each file's census
        (its records counted apart from its reader) and the notes on how files were read.

    Raises:
        SubmissionError: a file is missing or in no format we recognise.
    """
    answers = ClassAnswers(answer_columns(bank))
    for given in paths:
        source = str(given)
        if not Path(given).is_file():
            raise SubmissionError(
                given, "No such file or directory" if not Path(given).exists() else "not a file"
            )
        wide = wide_encoding(Path(given))
        if wide is None:
            _read_file(bank, answers, Path(given), source, issued=issued)
            continue
        with tempfile.TemporaryDirectory(prefix="quizgym-utf8-") as folder:
            copy = utf8_copy(Path(given), wide, Path(folder))
            answers.notes.append(f"{source}: read as {wide.upper()} (its byte-order mark)")
            _read_file(bank, answers, copy, source, issued=issued)
    split_wholes(bank, answers)
    return answers


def _read_file(
    bank: Bank, answers: ClassAnswers, path: Path, source: str, *, issued: Issued | None
) -> None:
    """Read one submissions file (``path``, named ``source`` in rejections) into ``answers``."""
    if path.suffix.lower() in JSONL:
        found = survey(path)
        if found.note:
            answers.notes.append(found.note)
        counted(answers.census, source, count_jsonl(path))
        read_jsonl(answers, source, path, encoding=found.encoding)
        return
    head = csv_head(path, recognised=recognised)
    if not head.cells or not any(head.cells):
        raise SubmissionError(source, "empty file: expected a header row")
    kind = layout_of(head.cells)
    if kind is None:
        raise SubmissionError(source, NO_LAYOUT, head.line)
    if head.survey.note:
        answers.notes.append(head.survey.note)
    # pyarrow reads a wide file, without the GIL, while its records are counted
    arrow = None
    try:
        arrow = start_wide_arrow(answers, path, head) if kind == "wide" else None
        census = count_csv(path, delimiter=head.delimiter)
        if arrow is not None and read_wide_arrow(answers, source, head, census, arrow):
            counted(answers.census, source, census)
            return
        counted(answers.census, source, census)
    finally:
        abandon(arrow)  # no read outlives its file (a read taken has ended already)
    rows = csv_records(
        path,
        offset=head.offset,
        line=head.next_line,
        delimiter=head.delimiter,
        encoding=head.survey.encoding,
        width=len(head.cells),
    )
    if kind == "moodle":
        read_moodle(bank, answers, source, head.cells, rows, issued=issued, header_line=head.line)
    elif kind == "canvas":
        read_canvas(bank, answers, source, head.cells, rows, issued=issued, header_line=head.line)
    elif kind == "long":
        names = [h.casefold() for h in head.cells]
        read_long(answers, source, names, rows, header_line=head.line)
    else:
        read_wide(answers, source, head.line, head.cells, rows, bad_bytes=head.survey.bad_bytes)
