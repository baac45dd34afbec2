"""Submission readers: one per format, over one set of row rules (:mod:`quizgym.grading.rows`).

Formats (DESIGN.md "Submissions", and docs/grade.md for their exact columns), recognised by
extension and header (:func:`~quizgym.grading.readers.layout.layout_of`):

- wide CSV or Parquet (:mod:`.wide`; Parquet rows from :mod:`quizgym.grading.scale.parquet`):
  ``student`` (optional ``seed``), then one column per slot;
- long CSV or Parquet (:mod:`.long`): ``student,question,answer`` (optional ``seed``);
- JSON Lines (:mod:`.jsonl`): ``{"student": ..., "seed": 7, "answers": {"id": "..."}}``;
- Canvas's quiz "Student Analysis" and Moodle's quiz "Responses" CSV (:mod:`.lms`).

Files are UTF-8 with or without a BOM, or Windows-1252 (with a note); CSV cells are delimited
by commas, semicolons or tabs (:mod:`.text` says how both are told). Nothing is dropped
silently: a row that cannot be graded becomes a :class:`~quizgym.grading.table.Rejection` with
its file, line and reason, and the rest is kept. A file that cannot be read at all (missing,
no header we recognise) raises :class:`~quizgym.errors.SubmissionError`. A chunked run reads
its pieces with the same readers (:mod:`quizgym.grading.scale.plan`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from quizgym.lazy import names_from

if TYPE_CHECKING:
    from quizgym.grading.readers.layout import Layout, layout_of
    from quizgym.grading.readers.long import read_long
    from quizgym.grading.readers.submissions import read_submissions, recognised, slot_ids
    from quizgym.grading.readers.wide import read_wide

__all__ = [
    "Layout",
    "layout_of",
    "read_long",
    "read_submissions",
    "read_wide",
    "recognised",
    "slot_ids",
]


# Each name is loaded on first use: the text and layout readers need none of the others.
__getattr__ = names_from(
    __name__,
    {
        **dict.fromkeys(["Layout", "layout_of"], "layout"),
        "read_long": "long",
        **dict.fromkeys(["read_submissions", "recognised", "slot_ids"], "submissions"),
        "read_wide": "wide",
    },
)
