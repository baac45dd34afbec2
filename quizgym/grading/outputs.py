"""The files ``quizgym grade`` writes (DESIGN.md's table), and the CSVs gradebooks import.

Every table is written column by column: each column is a small dictionary of distinct strings
and an array of codes into it (a class of 100,000 students has few distinct verdicts, scores and
feedback texts). With pyarrow installed (the ``parquet`` extra) the codes go straight into
Arrow dictionary arrays and pyarrow's CSV writer; without it the standard library writes the
same bytes. Every field is quoted, so both writers agree byte for byte.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from quizgym.analysis import Statistics
from quizgym.arrays import arrow_call, arrow_strings, distinct
from quizgym.errors import QuizgymError
from quizgym.grading.batch import GradedPartition, GradedSlot, factorize
from quizgym.grading.cells import FORMULA_START, defuse, fmt
from quizgym.grading.table import Coded, Rejection
from quizgym.grading.verdicts import STATUSES
from quizgym.model import Bank
from quizgym.names import claim_name, file_stem
from quizgym.terminal import escape_controls

__all__ = [
    "GRADEBOOKS",
    "Column",
    "Table",
    "tables",
    "fmt",
    "grades_writer",
    "responses_writer",
    "write_feedback",
    "write_gradebook",
    "write_items",
    "write_rejected",
    "write_rows",
    "write_table",
]

Integer = TypeVar("Integer", bound=np.signedinteger[Any])


@dataclass(frozen=True, eq=False)
class Through:
    """A column's codes through a second level: row r's code is ``inner[outer[r]]``.

    Most columns of ``responses.csv``, and ``grades.csv``'s slot columns, are coded by verdict
    (``outer``: each response's verdict) and then by text (``inner``: each verdict's text); the
    writer's thread resolves the two (:func:`table_writer`), not the thread that grades.
    """

    inner: npt.NDArray[np.signedinteger[Any]]
    outer: npt.NDArray[np.signedinteger[Any]]

    def resolved(self) -> npt.NDArray[np.int32]:
        """One code per row (NumPy's gather, which does not hold the GIL)."""
        return np.take(self.inner.astype(np.int32), self.outer)


Column = tuple[Sequence[str], npt.NDArray[np.signedinteger[Any]] | Through]
"""A column as (distinct strings, one code per row, or codes through a second level)."""

GRADEBOOKS = ("canvas", "moodle")


def _numbers(
    values: npt.NDArray[np.float64], digits: int = 4
) -> tuple[list[str], npt.NDArray[np.int64]]:
    unique, inverse = distinct(values)
    return [fmt(float(v), digits) for v in unique], inverse


def _strings(values: Sequence[str]) -> Column:
    return factorize(values)


def write_table(path: Path, header: Sequence[str], columns: Sequence[Column]) -> None:
    """Write a CSV whose columns are dictionaries of strings and codes (every field quoted)."""
    table_writer(path, header, columns)()


Write = Callable[[], None]
"""A table's write, once everything it needs Python for is done."""


def table_writer(path: Path, header: Sequence[str], columns: Sequence[Column]) -> Write:
    """:func:`write_table` in two steps: the Python work now (the cells defused, each column's
    texts made a pyarrow array), the write itself returned: the codes resolved and pyarrow's
    write, neither of which holds the GIL."""
    header = [defuse(h) for h in header]  # a bank's title heads a gradebook column
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:  # pragma: no cover - exercised by forcing the fallback in a test
        starts = FORMULA_START  # most cells cannot be formulas: test the first character inline
        plain = [
            (
                [defuse(w) if w[:1] in starts else w for w in words],
                codes.resolved() if isinstance(codes, Through) else codes,
            )
            for words, codes in columns
        ]
        return lambda: _write_plain(path, header, plain)
    dictionaries = [_defused(pa, words) for words, _ in columns]
    head = (",".join(_quote(h) for h in header) + "\n").encode()

    def write() -> None:
        # A column coded through a second level is resolved here, in the writer's thread
        # (NumPy's gather does not hold the GIL), so that pyarrow writes from the texts' own
        # dictionary: resolving it through the verdicts' texts made pyarrow's write slower.
        arrays = [
            pa.DictionaryArray.from_arrays(
                _arrow_codes(pa, codes.resolved() if isinstance(codes, Through) else codes), texts
            )
            for texts, (_, codes) in zip(dictionaries, columns, strict=True)
        ]
        table = pa.table(arrays, names=[f"c{i}" for i in range(len(arrays))])
        # pyarrow's own file, not a Python one: writing to a Python file takes the GIL for
        # every block, and a thread writing while another computes took twice as long.
        with pa.OSFile(os.fsencode(path), "wb") as stream:  # any name the system allows
            stream.write(head)
            options = pacsv.WriteOptions(
                include_header=False, quoting_style="needed", batch_size=CSV_BATCH_ROWS
            )
            pacsv.write_csv(table, stream, options)

    return write


_STARTS = np.array(sorted(ord(c) for c in FORMULA_START), dtype=np.uint8)


def _defused(pa: Any, words: Sequence[str]) -> Any:
    """The strings of ``words`` as a pyarrow string array, each :func:`defuse`-d.

    Only a text whose first byte could start a formula is looked at (the characters are ASCII:
    the first byte of any other character is none of them), found in the array's bytes at once.
    """
    strings = arrow_strings(pa, words)
    offsets_buffer, data_buffer = strings.buffers()[1:]
    width = np.int64 if strings.type == pa.large_string() else np.int32
    offsets: npt.NDArray[np.int64] = np.frombuffer(offsets_buffer, dtype=width)[
        : len(words) + 1
    ].astype(np.int64)
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else None
    if data is None or not len(data):
        return strings
    starts, ends = offsets[:-1], offsets[1:]
    filled = np.flatnonzero(ends > starts)
    first = data[starts[filled]]
    maybe = filled[np.isin(first, _STARTS)]
    changed, texts = [], []
    for k in maybe.tolist():
        text = defuse(words[k])
        if text != words[k]:
            changed.append(k)
            texts.append(text)
    if not changed:
        return strings
    # The defused texts after the others, each taken in its text's place: no copy of the
    # others made again (a column's readings are some 100,000 texts, a few thousand defused).
    extra = arrow_strings(pa, texts)
    if extra.type != strings.type:  # pragma: no cover - past 2 GiB of text, the two kinds differ
        fixed = list(words)
        for k, text in zip(changed, texts, strict=True):
            fixed[k] = text
        return arrow_strings(pa, fixed)
    order = np.arange(len(words), dtype=np.int64)
    order[changed] = np.arange(len(words), len(words) + len(changed))
    return arrow_call("take", pa.concat_arrays([strings, extra]), _arrow_codes(pa, order))


# Arrays are built from their buffers: ``pa.array`` would import pandas (0.4 s) when it is
# installed, only to check whether its argument is a pandas object.


def _arrow_codes(pa: Any, codes: npt.NDArray[np.signedinteger[Any]]) -> Any:
    data = np.ascontiguousarray(codes, dtype=np.int32)
    return pa.Array.from_buffers(pa.int32(), len(data), [None, pa.py_buffer(data)])


CSV_BATCH_ROWS = 8_192
"""Rows pyarrow formats at a time: with its default (1,024), ``responses.csv`` of 200,000
students took 0.42 s to write, with 8,192 0.27 s (the same bytes; 16,384 was no faster and
took 30 MB more in a chunked run). ``benchmarks/grading.py``'s floors write with it too."""


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _write_plain(
    path: Path,
    header: Sequence[str],
    columns: Sequence[tuple[Sequence[str], npt.NDArray[np.signedinteger[Any]]]],
) -> None:
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(header)
        rows = len(columns[0][1]) if columns else 0
        for r in range(rows):
            writer.writerow([words[codes[r]] for words, codes in columns])


# --- the tables ---------------------------------------------------------------------------------


def grades_writer(path: Path, parts: Sequence[GradedPartition]) -> Write:
    """``grades.csv`` (student, score, max_score, percent, then one score column per slot), its
    Python work done; returns the write (:func:`table_writer`)."""
    slots = [g.slot for g in parts[0].slots] if parts else []
    students = (  # distinct: no factorizing
        parts[0].answers.students
        if len(parts) == 1
        else [s for p in parts for s in p.answers.students]
    )
    if len(parts) == 1:  # a class read whole: its matrix as it is (vstack would copy it)
        scores = parts[0].scores
    else:
        scores = np.vstack([p.scores for p in parts]) if parts else np.zeros((0, 0))
    maximum = float(sum(s.points for s in slots))
    total = scores.sum(axis=1) if scores.size else np.zeros(len(students))
    percent = 100 * total / maximum if maximum else np.zeros_like(total)
    columns: list[Column] = [
        (students, np.arange(len(students), dtype=np.int64)),
        _numbers(total),
        ([fmt(maximum)], np.zeros(len(students), dtype=np.int64)),
        _numbers(percent, 2),
    ]
    columns += [_slot_scores([p.slots[j] for p in parts]) for j in range(len(slots))]
    header = ["student", "score", "max_score", "percent", *[s.id for s in slots]]
    return table_writer(path, header, columns)


def _slot_scores(graded: Sequence[GradedSlot]) -> Column:
    """A slot's column of scores in ``grades.csv``, through each piece's distinct verdicts."""
    words: list[str] = []
    inner: list[npt.NDArray[np.int64]] = []
    outer: list[npt.NDArray[np.int64]] = []
    verdicts = 0
    for piece in graded:
        table, inverse = _numbers(piece.verdicts.score)
        inner.append(len(words) + inverse)
        outer.append(verdicts + piece.codes)
        words += table
        verdicts += len(inverse)
    return words, Through(_joined(inner), _joined(outer))


RESPONSE_HEADER = (
    "student",
    "question",
    "answer",
    "verdict",
    "score",
    "max_score",
    "read_as",
    "feedback",
    "tag",
    "scored_by",
)


STATUS_TEXTS = [s.value for s in STATUSES]
SCORED_BY = ["machine", "rubric", "teacher"]
"""What ``scored_by`` says (:attr:`~quizgym.answers.Verdict.scored_by`), in the order of its
codes."""


def responses_writer(path: Path, parts: Sequence[GradedPartition]) -> Write:
    """``responses.csv`` (one row per student and slot, student by student), its Python work
    done; returns the write (:func:`table_writer`).

    ``scored_by`` says who set the score: ``machine``, ``rubric`` (free text: the rubric's
    suggestion, awaiting a teacher's review) or ``teacher`` (``grade --review``).
    """
    codes: list[list[npt.NDArray[np.int32]]] = [[] for _ in RESPONSE_HEADER]
    # Each column's dictionary is its slots' distinct texts one after another: a text in two
    # slots is in it twice, which the writer does not mind, and nothing is looked up to merge.
    words: list[list[str]] = [[] for _ in RESPONSE_HEADER]
    placed: dict[tuple[int, int], tuple[Sequence[str | None], int]] = {}
    students: list[str] = []  # distinct across the class: codes are row numbers

    def add(field: int, table: Sequence[str | None]) -> int:
        """Where ``table`` starts in the field's dictionary (a table seen before: where it
        was put, such as a coded column's texts, shared by its chunks)."""
        known = placed.get((field, id(table)))
        if known is not None and known[0] is table:
            return known[1]
        start = len(words[field])
        words[field] += ["" if t is None else t for t in table]
        placed[field, id(table)] = (table, start)
        return start

    # Each response's verdict among the slots' verdicts one after another (the parts' one
    # after another); each field's code of every verdict, in the same order.
    verdicts_at: list[npt.NDArray[np.int32]] = []
    of_verdicts: list[list[npt.NDArray[np.int64]]] = [[] for _ in RESPONSE_HEADER]
    first = 0
    for part in parts:
        n, p = len(part.answers), len(part.slots)
        verdict_at = np.zeros((n, p), dtype=np.int32)
        text_codes = np.zeros((n, p), dtype=np.int32)
        for j, graded in enumerate(part.slots):
            v = graded.verdicts
            verdict_at[:, j] = first + graded.codes
            first += len(v)
            column = part.answers.column(graded.slot.id)
            texts, typed = (
                (column.texts, column.codes) if isinstance(column, Coded) else factorize(column)
            )
            text_codes[:, j] = add(2, texts) + typed
            scored_by = np.where(
                v.needs_review, SCORED_BY.index("rubric"), SCORED_BY.index("machine")
            )
            scored_by[v.decided] = SCORED_BY.index("teacher")
            by_verdict: dict[str, tuple[Sequence[str | None], npt.NDArray[np.int64]]] = {
                "question": ([graded.slot.id], np.zeros(len(v), dtype=np.int64)),
                "verdict": (STATUS_TEXTS, v.status),
                "score": _numbers(v.score),
                "max_score": _numbers(v.max_score),
                "read_as": (v.read_as, np.arange(len(v))),  # nearly one per verdict: as they are
                "feedback": factorize(v.feedback),
                "tag": factorize(v.tag),  # None and "" both write an empty cell
                "scored_by": (SCORED_BY, scored_by),
            }
            for name, (table, inverse) in by_verdict.items():
                field = RESPONSE_HEADER.index(name)
                of_verdicts[field].append(add(field, table) + inverse)
        verdicts_at.append(verdict_at.reshape(-1))
        # student: distinct across the class, codes are row numbers; answer: coded by text
        codes[0].append(np.repeat(np.arange(len(students), len(students) + n, dtype=np.int32), p))
        codes[2].append(text_codes.reshape(-1))
        students += part.answers.students
    at = _joined(verdicts_at)
    columns: list[Column] = [
        (students, _joined(codes[0])),
        *(
            (
                words[f],
                _joined(codes[f])
                if f == 2
                else Through(
                    _joined(of_verdicts[f]) if of_verdicts[f] else np.zeros(0, np.int64), at
                ),
            )
            for f in range(1, len(RESPONSE_HEADER))
        ),
    ]
    return table_writer(path, RESPONSE_HEADER, columns)


def _joined(arrays: Sequence[npt.NDArray[Integer]]) -> npt.NDArray[Integer]:
    """The arrays one after another (one array is not copied)."""
    if len(arrays) == 1:
        return arrays[0]
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int32)


ITEM_HEADER = (
    "question",
    "type",
    "n",
    "blank",
    "unreadable",
    "unreadable_cause",
    "max_score",
    "facility",
    "sd",
    "discrimination",
    "efficiency",
    "pbis",
    "random_guess",
    "intended_weight",
    "effective_weight",
    "flags",
    "variant_split",
    "variant_facility_low",
    "variant_facility_high",
    "variant_p",
)


def write_items(path: Path, stats: Statistics) -> None:
    """``items.csv``: one row per slot with Moodle's statistics (in %) and the point-biserial;
    of a varying slot, the split whose groups differ most surely, its hardest and easiest
    group's facility and its Holm-adjusted p (:mod:`quizgym.fairness`)."""
    rows = [
        [
            i.question,
            i.type,
            str(i.n),
            str(i.blank),
            str(i.unreadable),
            i.cause,
            fmt(i.max_score),
            fmt(i.facility, 2),
            fmt(i.sd, 2),
            fmt(i.discrimination, 2),
            fmt(i.efficiency, 2),
            fmt(i.pbis, 4),
            fmt(i.random_guess, 2),
            fmt(i.intended_weight, 2),
            fmt(i.effective_weight, 2),
            "; ".join(i.flags),
            i.variant_split,
            fmt(i.variant_low, 2),
            fmt(i.variant_high, 2),
            _p(i.variant_p),
        ]
        for i in stats.items
    ]
    write_rows(path, ITEM_HEADER, rows)


def _p(value: float | None) -> str:
    """A p-value with 3 significant digits ('' when there is none)."""
    return "" if value is None else f"{value:.3g}"


def write_rejected(path: Path, rejected: Sequence[Rejection]) -> None:
    """``rejected.csv``: source, line, student, reason (a header only when nothing was rejected)."""
    rows = [[r.source, str(r.line), r.student, r.reason] for r in rejected]
    write_rows(path, ("source", "line", "student", "reason"), rows)


def write_rows(path: Path, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    columns = [_strings([row[c] for row in rows]) for c in range(len(header))]
    write_table(path, header, columns)


# --- feedback and gradebooks ---------------------------------------------------------------------


def check_gradebook(gradebook: str | None) -> None:
    """Raises QuizgymError for a gradebook format quizgym cannot write."""
    if gradebook is not None and gradebook not in GRADEBOOKS:
        raise QuizgymError(f"unknown gradebook {gradebook!r}; choose from {', '.join(GRADEBOOKS)}")


def feedback_name(student: str) -> str:
    """A file name for a student's feedback that cannot escape the folder.

    The same stem as the student's worksheet from ``quizgym render`` (:func:`file_stem`), so a
    teacher finds ``s_01.md`` beside ``worksheet-s_01.html``.
    """
    return f"{file_stem(student) or 'student'}.md"


def write_feedback(folder: Path, bank: Bank, parts: Sequence[GradedPartition]) -> int:
    """One Markdown file per student: each answer, how it was read, the verdict and feedback.

    Returns:
        The number of files written.
    """
    folder.mkdir(parents=True, exist_ok=True)
    used: set[str] = set()
    count = 0
    for part in parts:
        scores = part.scores
        maximum = float(part.max_scores.sum())
        for row, student in enumerate(part.answers.students):
            name = claim_name(feedback_name(student), used)
            total = float(scores[row].sum()) if scores.size else 0.0
            lines = [
                f"# {_md(bank.title)}: feedback for {_md(student)}",
                "",
                f"Score: **{fmt(total)} / {fmt(maximum)}**",
                "",
            ]
            for graded in part.slots:
                v = graded.verdict(row)
                answer = part.answers.column(graded.slot.id)[row]
                lines += [
                    f"## {_md(graded.slot.id)}: {v.status.value} "
                    f"({fmt(v.score)} / {fmt(v.max_score)})",
                    "",
                    f"- Your answer: {_md(answer) if answer else '(no answer)'}",
                ]
                if v.read_as:
                    lines.append(f"- Read as: {_md(v.read_as)}")
                if v.feedback:
                    lines.append(f"- Feedback: {_md(v.feedback)}")
                if v.status.value != "correct" and v.expected:
                    lines.append(f"- Expected: {_md(v.expected)}")
                if v.needs_review:
                    lines.append("- A teacher will review this score.")
                lines.append("")
            (folder / name).write_text("\n".join(lines), encoding="utf-8")
            count += 1
    return count


def _md(text: str) -> str:
    """Text that prints literally in Markdown and is inert in a terminal or a browser: control
    and bidi characters spelled out, emphasis, code, links and raw HTML escaped."""
    from quizgym.render.markup import escape_markdown  # here: the render stack loads Jinja

    return escape_markdown(escape_controls(" ".join(text.split())))


def write_gradebook(path: Path, bank: Bank, parts: Sequence[GradedPartition], *, lms: str) -> None:
    """The CSV an LMS imports into its gradebook (one column: the quiz's total points).

    Canvas: ``Student, ID, SIS User ID, SIS Login ID, Section, <quiz>`` and a ``    Points
    Possible`` row; a numeric student id is taken as Canvas's user ``ID``, any other as the
    ``SIS User ID``; ``Student`` and ``Section`` are the submissions' ``name`` and ``section``
    where they have them. Moodle: ``ID number, <quiz>``, to map "ID number" → useridnumber on
    import, and ``Email address`` (→ email) after the id when the submissions have emails.
    """
    students = [s for p in parts for s in p.answers.students]
    roster = {
        name: [v for p in parts for v in p.answers.roster.get(name) or [None] * len(p.answers)]
        for name in ("name", "email", "section")
        if parts and name in parts[0].answers.roster
    }
    names = roster.get("name") or [None] * len(students)
    sections = roster.get("section") or [None] * len(students)
    totals = np.concatenate([p.scores.sum(axis=1) for p in parts]) if parts else np.zeros(0)
    maximum = float(parts[0].max_scores.sum()) if parts else 0.0
    title = bank.title
    rows: list[list[str]]
    if lms == "canvas":
        header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", title]
        rows = [["    Points Possible", "", "", "", "", fmt(maximum, 2)]]
        for student, total, name, section in zip(students, totals, names, sections, strict=True):
            numeric = student.isascii() and student.isdigit()  # not "²": a Canvas user id
            rows.append(
                [
                    name or student,
                    student if numeric else "",
                    "" if numeric else student,
                    "",
                    section or "",
                    fmt(float(total), 2),
                ]
            )
    elif lms == "moodle":
        emails = roster.get("email")
        header = ["ID number", *(["Email address"] if emails is not None else []), title]
        rows = [
            [s, *([e or ""] if emails is not None else []), fmt(float(t), 2)]
            for s, t, e in zip(students, totals, emails or [None] * len(students), strict=True)
        ]
    else:
        check_gradebook(lms)
    write_rows(path, header, rows)


# --- the per-student tables of a run -------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """A file with rows per student: written whole by a run in memory, or one part file per piece
    that the run then joins under one header (so both give the same bytes)."""

    name: str
    prepare: Callable[[Path, Bank, Sequence[GradedPartition]], Write]
    """Do the Python work of writing the table to a path; return the write itself."""

    def write(self, path: Path, bank: Bank, parts: Sequence[GradedPartition]) -> None:
        self.prepare(path, bank, parts)()


def tables(*, gradebook: str | None = None) -> list[Table]:
    """Every per-student table a run writes, in order (a new one is added here, and only here).

    The largest comes first: a run in memory prepares it first, then writes it in a second
    thread while it goes on with the others and the class-wide outputs.
    """
    out = [
        Table("responses.csv", lambda path, _bank, parts: responses_writer(path, parts)),
        Table("grades.csv", lambda path, _bank, parts: grades_writer(path, parts)),
    ]
    if gradebook is not None:
        check_gradebook(gradebook)
        lms = gradebook
        out.append(
            Table(
                f"gradebook-{lms}.csv",
                lambda path, bank, parts: lambda: write_gradebook(path, bank, parts, lms=lms),
            )
        )
    return out
