"""Read submission files into one columnar class: students × answer slots, plus rejected rows.

Formats (DESIGN.md "Submissions"), recognised by extension and header:

- wide CSV: ``student`` (optional ``seed``), then one column per slot (``id`` or ``id.part``);
- long CSV: ``student,question,answer`` (optional ``seed``);
- JSON Lines: ``{"student": ..., "seed": 7, "answers": {"id": "..."}}``;
- Canvas quiz "Student Analysis" CSV: ``name, id, …`` then ``"<n>: <question text>"`` and a points
  column per question; questions are matched to the bank by their text;
- Moodle quiz "Responses" CSV: identity columns, then ``Response N`` (and ``Question N``, whose
  text matches the bank; without it, slot N is the bank's N-th question).

Files are UTF-8 with or without a BOM. Nothing is dropped silently: a row that cannot be graded
becomes a :class:`Rejection` with its file, line and reason, and the rest is kept. A file that
cannot be read at all (missing, no header we recognise) raises :class:`SubmissionError`.
"""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np
import numpy.typing as npt

from quizgym.errors import SubmissionError
from quizgym.model import Bank, MultipleChoice, Numeric, SpotTheError

__all__ = [
    "ClassAnswers",
    "Coded",
    "Layout",
    "Rejection",
    "layout_of",
    "read_long",
    "read_submissions",
    "read_wide",
    "slot_ids",
    "undecodable",
]

_BAD_BYTES = re.compile("[\udc80-\udcff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_CANVAS_QUESTION = re.compile(r"^(\d+): ?(.*)$", re.DOTALL)
_MOODLE_RESPONSE = re.compile(r"^Response (\d+)$")
_LONG = frozenset({"student", "question", "answer"})


@dataclass(frozen=True)
class Rejection:
    """A row (or header cell) that could not be graded, and why."""

    source: str
    line: int
    student: str
    reason: str

    @property
    def is_column(self) -> bool:
        """A header cell (a column ignored), not a student's row."""
        return self.reason.endswith("; column ignored")


class Coded(Sequence[str | None]):
    """A column held as its distinct texts and one code per student.

    pyarrow's dictionary encoding reads a column of 100,000 answers this way at C speed; the
    grader then grades each distinct text once without ever building the list of 100,000 strings.
    It reads like the list it stands for.
    """

    __slots__ = ("codes", "texts")

    def __init__(self, texts: list[str | None], codes: npt.NDArray[np.int64]) -> None:
        self.texts = texts
        """Distinct texts (None for a blank cell). A slice keeps its column's texts, so some
        may be used by none of its rows."""
        self.codes = codes
        """Per student: index into ``texts``."""

    def __len__(self) -> int:
        return len(self.codes)

    @overload
    def __getitem__(self, index: int) -> str | None: ...

    @overload
    def __getitem__(self, index: slice) -> Coded: ...

    def __getitem__(self, index: int | slice) -> str | None | Coded:
        if isinstance(index, slice):
            return Coded(self.texts, self.codes[index])
        return self.texts[int(self.codes[index])]

    def __iter__(self) -> Iterator[str | None]:
        return map(self.texts.__getitem__, self.codes.tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, like the list it stands for


@dataclass
class ClassAnswers:
    """Every student's answers, one column per answered slot (None = not answered).

    Students appear in the order they were first read; ``answers[slot][k]`` is student ``k``'s
    raw text for that slot. Only slots that some file has a column (or an answer) for have a
    column: those are the slots graded.
    """

    slots: list[str]
    students: list[str] = field(default_factory=list)
    seeds: list[int | None] = field(default_factory=list)
    origins: list[tuple[str, int]] = field(default_factory=list)
    answers: dict[str, Sequence[str | None]] = field(default_factory=dict)
    rejected: list[Rejection] = field(default_factory=list)
    _row: dict[str, int] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.students)

    @property
    def present(self) -> set[str]:
        """The slots some file has a column (or an answer) for."""
        return set(self.answers)

    def column(self, slot: str) -> Sequence[str | None]:
        """The answers to a slot, one per student (all None for a slot nobody was asked)."""
        return self.answers.get(slot) or [None] * len(self.students)

    def mark_present(self, slot: str) -> list[str | None]:
        """Make a slot graded; return its column, as a list that can be changed."""
        column = self.answers.get(slot)
        if not isinstance(column, list):
            column = self.answers[slot] = (
                [None] * len(self.students) if column is None else list(column)
            )
        return column

    def add_student(self, student: str, seed: int | None, origin: tuple[str, int]) -> int:
        """Append a student with no answers yet; return their row."""
        row = len(self.students)
        self.students.append(student)
        self.seeds.append(seed)
        self.origins.append(origin)
        self._row[student] = row
        for slot in self.answers:
            self.mark_present(slot).append(None)
        return row

    def extend(
        self,
        students: list[str],
        seeds: list[int | None],
        origins: list[tuple[str, int]],
        cells: dict[str, Sequence[str | None]],
    ) -> None:
        """Append many students at once with their answers (slots not in ``cells``: None)."""
        before, added = len(self.students), len(students)
        for slot in {**self.answers, **cells}:
            new = cells.get(slot)
            if new is None:
                new = [None] * added
            if before:
                self.mark_present(slot).extend(new)
            else:  # the first rows: columns kept as read (a Coded column stays coded)
                self.answers[slot] = new
        self.students += students
        self.seeds += seeds
        self.origins += origins
        self._row.update(zip(students, range(before, before + added), strict=True))

    def row_of(self, student: str) -> int | None:
        """The row of a student already read, or None."""
        return self._row.get(student)

    def reject(self, source: str, line: int, student: str, reason: str) -> None:
        """Record a row that could not be graded."""
        self.rejected.append(Rejection(source, line, student, reason))

    def take(self, rows: Sequence[int]) -> ClassAnswers:
        """A new class holding only these rows (no rejections): a partition."""
        part = ClassAnswers(self.slots)
        if isinstance(rows, range) and rows.step == 1:  # a run of rows: slices copy at C speed
            run = slice(rows.start, rows.stop)
            part.students, part.seeds = self.students[run], self.seeds[run]
            part.origins = self.origins[run]
            part.answers = {s: col[run] for s, col in self.answers.items()}
        else:
            part.students = [self.students[r] for r in rows]
            part.seeds = [self.seeds[r] for r in rows]
            part.origins = [self.origins[r] for r in rows]
            part.answers = {s: [col[r] for r in rows] for s, col in self.answers.items()}
        part._row = {s: k for k, s in enumerate(part.students)}
        return part


def slot_ids(bank: Bank) -> list[str]:
    """Every answer slot of a bank: ``id`` for a question, ``id.part`` for each part."""
    return bank.slot_ids()


Layout = Literal["wide", "long", "canvas", "moodle"]


def layout_of(header: Sequence[str]) -> Layout | None:
    """How a table with this header is laid out, or None when it is no submissions table.

    Moodle's "Responses" export has ``Response N`` columns; Canvas's "Student Analysis" has ``id``
    and ``"<n>: <question text>"`` columns; a long table has exactly ``student, question,
    answer`` (and optionally ``seed``); any other table with a ``student`` column is wide.
    """
    header = [h.strip() for h in header]
    names = {h.lower() for h in header}
    if any(_MOODLE_RESPONSE.match(h) for h in header):
        return "moodle"
    if "id" in names and any(_CANVAS_QUESTION.match(h) for h in header):
        return "canvas"
    if _LONG <= names <= _LONG | {"seed"}:
        return "long"
    return "wide" if "student" in names else None


def read_submissions(bank: Bank, paths: Iterable[Path | str]) -> ClassAnswers:
    """Read submission files (several at once, any mix of formats) into one class.

    Args:
        bank: the bank the answers are for (its slots are the valid question columns).
        paths: the files.

    Returns:
        The class, with every row that could not be graded in ``rejected``.

    Raises:
        SubmissionError: a file is missing or in no format we recognise.
    """
    answers = ClassAnswers(slot_ids(bank))
    for path in paths:
        path = Path(path)
        text, clean = _decode(path)
        if path.suffix.lower() in {".jsonl", ".ndjson"}:
            _read_jsonl(answers, str(path), text)
            continue
        if clean and _read_wide_arrow(answers, str(path), text):
            continue
        rows = _csv_rows(text)
        header_line, header = next(rows, (1, []))
        header = [h.strip() for h in header]
        if not header or not any(header):
            raise SubmissionError(path, "empty file: expected a header row")
        kind = layout_of(header)
        if kind == "moodle":
            _read_moodle(bank, answers, str(path), header, rows)
        elif kind == "canvas":
            _read_canvas(bank, answers, str(path), header, rows)
        elif kind == "long":
            read_long(answers, str(path), [h.lower() for h in header], rows)
        elif kind == "wide":
            read_wide(answers, str(path), header_line, header, rows, bad_bytes=not clean)
        else:
            raise SubmissionError(
                path,
                "no 'student' column: expected a wide CSV (student, seed, question ids…), a long "
                "CSV (student,question,answer), JSON Lines, or a Canvas/Moodle export",
                header_line,
            )
    return answers


# --- decoding ---------------------------------------------------------------------------------


def _decode(path: Path) -> tuple[str, bool]:
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


def _csv_rows(text: str) -> Iterator[tuple[int, list[str]]]:
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


def undecodable(cells: Sequence[str]) -> bool:
    """Whether some cell holds bytes that were not UTF-8 (kept as lone surrogates)."""
    return _BAD_BYTES.search("".join(cells)) is not None


def _seed(text: str | None) -> int | None | str:
    """A seed, None when empty, or an error message."""
    if text is None or not str(text).strip():
        return None
    try:
        return int(str(text).strip())
    except ValueError:
        return f"seed {text!r} is not a whole number"


def _clean(student: str) -> str:
    return student.encode("utf-8", "surrogateescape").decode("utf-8", "replace").strip()


def _add(
    answers: ClassAnswers, source: str, line: int, student: str, seed: int | None
) -> int | None:
    """Add a student from a one-row-per-student format; reject a duplicate."""
    if not student:
        answers.reject(source, line, "", "no student id")
        return None
    first = answers.row_of(student)
    if first is not None:
        where = answers.origins[first]
        answers.reject(
            source, line, student, f"duplicate student {student} (first at {where[0]}:{where[1]})"
        )
        return None
    return answers.add_student(student, seed, (source, line))


# --- the formats ------------------------------------------------------------------------------


def read_wide(
    answers: ClassAnswers,
    source: str,
    header_line: int,
    header: list[str],
    rows: Iterator[tuple[int, list[str]]],
    *,
    bad_bytes: bool = True,
) -> None:
    student_col, seed_col, columns, ignored = _wide_header(answers, header)
    for reason in ignored:
        answers.reject(source, header_line, "", reason)
    width = len(header)
    listed = list(rows)
    if not bad_bytes and _read_clean_wide(
        answers, source, listed, width, student_col, seed_col, columns
    ):
        return
    rows = iter(listed)
    accepted: list[list[str]] = []
    students: list[str] = []
    seeds: list[int | None] = []
    origins: list[tuple[str, int]] = []
    first = answers._row
    base = len(answers)
    for line, row in rows:
        if len(row) != width or (bad_bytes and undecodable(row)):
            student = _clean(row[student_col]) if student_col < len(row) else ""
            if undecodable(row):
                reason = "undecodable bytes (the file is not UTF-8)"
            else:
                many = "too many" if len(row) > width else "too few"
                reason = f"{many} cells: {len(row)}, the header has {width}"
            answers.reject(source, line, student, reason)
            continue
        student = row[student_col].strip()
        seed = _seed(row[seed_col]) if seed_col is not None else None
        if isinstance(seed, str):
            answers.reject(source, line, student, seed)
            continue
        if not student:
            answers.reject(source, line, "", "no student id")
            continue
        if student in first:
            where = (
                origins[first[student] - base]
                if first[student] >= base
                else answers.origins[first[student]]
            )
            answers.reject(
                source,
                line,
                student,
                f"duplicate student {student} (first at {where[0]}:{where[1]})",
            )
            continue
        first[student] = base + len(students)
        students.append(student)
        seeds.append(seed)
        origins.append((source, line))
        accepted.append(row)
    cells = list(zip(*accepted, strict=True)) if accepted else [()] * width
    answers.extend(
        students,
        seeds,
        origins,
        {name: [c or None for c in cells[index]] for index, name in columns},
    )


def _wide_header(
    answers: ClassAnswers, header: list[str]
) -> tuple[int, int | None, list[tuple[int, str]], list[str]]:
    """(student column, seed column, (index, slot) of question columns, why columns are ignored).

    An unknown column is ignored, and so is a repeated one (the first of the same name is
    graded): each is reported on the header line, never dropped silently.
    """
    names = [h.lower() for h in header]
    student_col = names.index("student")
    seed_col = names.index("seed") if "seed" in names else None
    known = set(answers.slots)
    columns: list[tuple[int, str]] = []
    ignored: list[str] = []
    first: dict[str, int] = {}
    for index, name in enumerate(header):
        if index in (student_col, seed_col):
            continue
        if name in first:
            ignored.append(
                f"duplicate column {name!r} (column {index + 1}; the first is column "
                f"{first[name] + 1}); column ignored"
            )
        elif name in known:
            columns.append((index, name))
            first[name] = index
        else:
            hint = _column_hint(name, answers.slots)
            ignored.append(f"unknown question column {name!r}{hint}; column ignored")
            first[name] = index
    return student_col, seed_col, columns, ignored


def _read_wide_arrow(answers: ClassAnswers, source: str, text: str) -> bool:
    """The fast path with pyarrow for a clean wide CSV (one row per line, nothing to reject).

    The text must be valid UTF-8 (the caller knows from decoding it).

    Returns False, having changed nothing, whenever the file is anything else; the standard
    library path then reads it (and finds what to reject). A test holds the two paths equal.
    """
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:  # pragma: no cover - the parquet extra is not installed
        return False
    if "\r" in text and "\r" in text.replace("\r\n", ""):
        return False  # old Mac line endings (lone CR): the standard library path reads them
    first = text.split("\n", 1)[0].rstrip("\r")
    header = [h.strip() for h in next(csv.reader([first]), [])]
    if layout_of(header) != "wide" or len(set(header)) != len(header) or first.count('"') % 2:
        return False
    try:
        table = pacsv.read_csv(
            io.BytesIO(text.encode()),
            read_options=pacsv.ReadOptions(column_names=header, skip_rows=1),
            convert_options=pacsv.ConvertOptions(
                # Answer columns arrive dictionary-encoded (distinct texts + codes) from the
                # reader itself; student and seed stay plain strings.
                column_types={
                    h: pa.string()
                    if h.lower() in {"student", "seed"}
                    else pa.dictionary(pa.int32(), pa.string())
                    for h in header
                },
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, ValueError):
        return False
    table = table.unify_dictionaries()  # one dictionary per column across the reader's chunks
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if table.num_rows != lines - 1:  # a blank line or a value spanning lines: no line numbers
        return False
    student_col, seed_col, columns, ignored = _wide_header(answers, header)
    students = [s.strip() for s in table.column(student_col).to_pylist()]
    raw_seeds = None if seed_col is None else table.column(seed_col).to_pylist()
    seeds = _clean_rows(answers, students, raw_seeds)
    if seeds is None:
        return False
    for reason in ignored:
        answers.reject(source, 1, "", reason)
    answers.extend(
        students,
        seeds,
        list(zip(repeat(source), range(2, len(students) + 2))),
        {name: _coded(table.column(index)) for index, name in columns},
    )
    return True


def _coded(column: Any) -> Coded:
    """A dictionary-typed pyarrow column (one dictionary) as a :class:`Coded` column.

    An empty cell is None. The codes are read from the index buffers: ``to_numpy()`` would
    import pandas (0.4 s) when it is installed.
    """
    if not column.num_chunks:
        return Coded([], np.zeros(0, dtype=np.int64))
    texts: list[str | None] = [t or None for t in column.chunk(0).dictionary.to_pylist()]
    codes = []
    for chunk in column.chunks:
        indices = chunk.indices
        assert indices.null_count == 0
        width = indices.type.bit_width // 8
        buffer = indices.buffers()[1]
        codes.append(
            np.frombuffer(
                buffer, dtype=f"<i{width}", count=len(indices), offset=indices.offset * width
            )
        )
    return Coded(texts, np.concatenate(codes).astype(np.int64))


def _read_clean_wide(
    answers: ClassAnswers,
    source: str,
    rows: list[tuple[int, list[str]]],
    width: int,
    student_col: int,
    seed_col: int | None,
    columns: list[tuple[int, str]],
) -> bool:
    """The fast path for a file with nothing to reject: whole columns at once. False if not."""
    if any(len(row) != width for _, row in rows):
        return False
    students = [row[student_col].strip() for _, row in rows]
    raw_seeds = None if seed_col is None else [row[seed_col] for _, row in rows]
    seeds = _clean_rows(answers, students, raw_seeds)
    if seeds is None:
        return False
    cells = list(zip(*(row for _, row in rows), strict=True)) if rows else [()] * width
    answers.extend(
        students,
        seeds,
        [(source, line) for line, _ in rows],
        {name: [c or None for c in cells[index]] for index, name in columns},
    )
    return True


def _clean_rows(
    answers: ClassAnswers, students: list[str], raw_seeds: list[str] | None
) -> list[int | None] | None:
    """The seeds of a fast-path file, or None when some row needs the careful path.

    The fast paths take a file only when nothing in it will be rejected: every student present,
    new and named once, and every seed a whole number or blank.
    """
    distinct = dict.fromkeys(students)
    if len(distinct) != len(students) or "" in distinct:
        return None
    if not answers._row.keys().isdisjoint(distinct):
        return None
    if raw_seeds is None:
        return [None] * len(students)
    try:
        return [int(s) if s.strip() else None for s in raw_seeds]
    except ValueError:
        return None


def _column_hint(name: str, known: list[str]) -> str:
    parts = [k for k in known if k.startswith(name + ".")]
    if parts:
        return f" (it has parts: {', '.join(parts)})"
    return ""


def read_long(
    answers: ClassAnswers, source: str, names: list[str], rows: Iterator[tuple[int, list[str]]]
) -> None:
    col = {n: names.index(n) for n in ("student", "question", "answer")}
    seed_col = names.index("seed") if "seed" in names else None
    width = len(names)
    known = set(answers.slots)
    seen: dict[tuple[str, str], int] = {}
    for line, row in rows:
        student = _clean(row[col["student"]]) if col["student"] < len(row) else ""
        if undecodable(row):
            answers.reject(source, line, student, "undecodable bytes (the file is not UTF-8)")
            continue
        if len(row) != width:
            many = "too many" if len(row) > width else "too few"
            answers.reject(
                source, line, student, f"{many} cells: {len(row)}, the header has {width}"
            )
            continue
        question, text = row[col["question"]].strip(), row[col["answer"]]
        if not student:
            answers.reject(source, line, "", "no student id")
            continue
        if question not in known:
            answers.reject(
                source,
                line,
                student,
                f"unknown question {question!r}{_column_hint(question, answers.slots)}",
            )
            continue
        seed = _seed(row[seed_col]) if seed_col is not None else None
        if isinstance(seed, str):
            answers.reject(source, line, student, seed)
            continue
        if (student, question) in seen:
            answers.reject(
                source,
                line,
                student,
                f"duplicate answer of {student} to {question} "
                f"(first at line {seen[student, question]})",
            )
            continue
        at = answers.row_of(student)
        if at is None:
            at = answers.add_student(student, seed, (source, line))
        elif seed is not None and answers.seeds[at] not in (None, seed):
            answers.reject(
                source,
                line,
                student,
                f"seed {seed} differs from {student}'s seed {answers.seeds[at]}",
            )
            continue
        elif seed is not None:
            answers.seeds[at] = seed
        seen[student, question] = line
        answers.mark_present(question)[at] = text if text.strip() else None


def _read_jsonl(answers: ClassAnswers, source: str, text: str) -> None:
    known = set(answers.slots)
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        if _BAD_BYTES.search(raw):
            answers.reject(source, number, "", "undecodable bytes (the file is not UTF-8)")
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            answers.reject(source, number, "", f"not valid JSON: {exc.msg}")
            continue
        if not isinstance(record, dict) or not isinstance(record.get("answers", {}), dict):
            answers.reject(source, number, "", 'expected {"student": ..., "answers": {...}}')
            continue
        student = str(record.get("student") or "").strip()
        given = record.get("answers", {})
        cells = [student, *given, *(str(v) for v in given.values() if v is not None)]
        if any(_SURROGATE.search(cell) for cell in cells):
            # a JSON escape such as "\udcff" decodes to half a character: no text can hold it
            answers.reject(source, number, _clean(student), "an escape that is not a character")
            continue
        unknown = [k for k in given if k not in known]
        if unknown:
            answers.reject(
                source,
                number,
                student,
                f"unknown question {unknown[0]!r}{_column_hint(unknown[0], answers.slots)}",
            )
            continue
        seed = _seed(None if record.get("seed") is None else str(record["seed"]))
        if isinstance(seed, str):
            answers.reject(source, number, student, seed)
            continue
        at = _add(answers, source, number, student, seed)
        if at is None:
            continue
        for key, value in given.items():
            text_value = None if value is None else str(value)
            column = answers.mark_present(key)
            column[at] = text_value if text_value and text_value.strip() else None


# --- LMS exports ------------------------------------------------------------------------------


def _fold(text: str) -> str:
    plain = re.sub(r"<[^>]+>", " ", text)
    return " ".join(unicodedata.normalize("NFKC", plain).casefold().split())


def _question_by_text(bank: Bank, text: str) -> str | None:
    """The slot whose question text is ``text`` (LMS exports name questions by their text)."""
    wanted = _fold(text)
    if not wanted:
        return None
    for question in bank.questions:
        if isinstance(question, Numeric) and question.parts:
            continue  # one LMS question per part is not a layout we can recognise
        body = _fold(question.statement if isinstance(question, SpotTheError) else question.prompt)
        if body == wanted or (len(wanted) >= 20 and body.startswith(wanted)):
            return question.id
        # Moodle's question summary is the text followed by the choices
        if len(body) >= 12 and wanted.startswith(body):
            return question.id
        if (
            isinstance(question, SpotTheError)
            and _fold(question.prompt) in wanted
            and body in wanted
        ):
            return question.id
    return None


def _lms_answer(bank: Bank, slot: str, text: str) -> str | None:
    """An LMS answer cell as quizgym reads answers (Canvas joins multiple answers with ',')."""
    if not text.strip():
        return None
    question = bank.question(slot.split(".")[0])
    if isinstance(question, MultipleChoice) and question.multiple:
        pieces = [p.replace("\\,", ",").strip() for p in re.split(r"(?<!\\),", text)]
        texts = {_fold(c.text): i for i, c in enumerate(question.choices)}
        if not question.shuffle and all(_fold(p) in texts for p in pieces):
            return ",".join(str(texts[_fold(p)] + 1) for p in pieces)
    return text


def _read_canvas(
    bank: Bank,
    answers: ClassAnswers,
    source: str,
    header: list[str],
    rows: Iterator[tuple[int, list[str]]],
) -> None:
    names = [h.lower() for h in header]
    id_col = names.index("id")
    columns: list[tuple[int, str]] = []
    for index, name in enumerate(header):
        match = _CANVAS_QUESTION.match(name)
        if not match:
            continue
        slot = _question_by_text(bank, match.group(2))
        if slot is None:
            answers.reject(
                source, 1, "", f"Canvas question {name[:60]!r} matches no question of the bank"
            )
        else:
            columns.append((index, slot))
            answers.mark_present(slot)
    _read_lms_rows(bank, answers, source, rows, len(header), id_col, columns)


def _read_moodle(
    bank: Bank,
    answers: ClassAnswers,
    source: str,
    header: list[str],
    rows: Iterator[tuple[int, list[str]]],
) -> None:
    names = [h.lower() for h in header]
    id_col = next(
        (
            names.index(n)
            for n in ("id number", "idnumber", "email address", "username")
            if n in names
        ),
        None,
    )
    if id_col is None:
        raise SubmissionError(
            source, "Moodle responses export without an 'ID number' or 'Email address' column", 1
        )
    data = list(rows)
    questions = {
        int(m.group(1)): index
        for index, h in enumerate(header)
        if (m := re.match(r"^Question (\d+)$", h))
    }
    ordered = [q.id for q in bank.questions if not (isinstance(q, Numeric) and q.parts)]
    columns: list[tuple[int, str]] = []
    for index, name in enumerate(header):
        match = _MOODLE_RESPONSE.match(name)
        if not match:
            continue
        number = int(match.group(1))
        slot: str | None = None
        if number in questions:
            texts = [r[questions[number]] for _, r in data if len(r) > questions[number]]
            slot = next((s for t in texts if t.strip() and (s := _question_by_text(bank, t))), None)
        elif number <= len(ordered):
            slot = ordered[number - 1]
        if slot is None:
            answers.reject(source, 1, "", f"Moodle {name!r} matches no question of the bank")
        else:
            columns.append((index, slot))
            answers.mark_present(slot)
    _read_lms_rows(bank, answers, source, iter(data), len(header), id_col, columns)


def _read_lms_rows(
    bank: Bank,
    answers: ClassAnswers,
    source: str,
    rows: Iterator[tuple[int, list[str]]],
    width: int,
    id_col: int,
    columns: list[tuple[int, str]],
) -> None:
    for line, row in rows:
        student = _clean(row[id_col]) if id_col < len(row) else ""
        if undecodable(row):
            answers.reject(source, line, student, "undecodable bytes (the file is not UTF-8)")
            continue
        if row and row[0].strip().lower() in {"overall average", "    points possible"}:
            continue  # summary rows some exports append
        if len(row) > width:
            answers.reject(
                source, line, student, f"too many cells: {len(row)}, the header has {width}"
            )
            continue
        at = _add(answers, source, line, student, None)
        if at is None:
            continue
        for index, slot in columns:
            cell = row[index] if index < len(row) else ""
            answers.mark_present(slot)[at] = _lms_answer(bank, slot, cell)
