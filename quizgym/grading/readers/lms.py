"""LMS response exports: Canvas's quiz "Student Analysis" and Moodle's quiz "Responses" CSV.

Canvas: ``name, id, …`` then ``"<n>: <question text>"`` and a points column per question;
Moodle: identity columns, then ``Response N`` (and ``Question N``, whose text matches the bank;
without it, slot N is the bank's N-th question). Both name questions by their text, which is
matched to the bank's.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from quizgym.errors import SubmissionError
from quizgym.grading.readers.layout import CANVAS_QUESTION, MOODLE_RESPONSE
from quizgym.grading.rows import UNDECODABLE, clean_id, row_problem, undecodable
from quizgym.grading.table import ClassAnswers
from quizgym.model import Bank, MultipleChoice, Numeric, SpotTheError

__all__ = ["read_canvas", "read_moodle"]


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


def read_canvas(
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
        match = CANVAS_QUESTION.match(name)
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


def read_moodle(
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
        match = MOODLE_RESPONSE.match(name)
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
        student = clean_id(row[id_col]) if id_col < len(row) else ""
        if undecodable(row):
            answers.reject(source, line, student, UNDECODABLE)
            continue
        if row and row[0].strip().lower() in {"overall average", "    points possible"}:
            continue  # summary rows some exports append
        problem = row_problem(row, width, fewer_ok=True)
        if problem is not None:
            answers.reject(source, line, student, problem)
            continue
        at = answers.admit(source, line, student, None)
        if at is None:
            continue
        for index, slot in columns:
            cell = row[index] if index < len(row) else ""
            answers.mark_present(slot)[at] = _lms_answer(bank, slot, cell)
