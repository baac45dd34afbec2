"""Long tables: one row per answer, ``student, question, answer`` (optional ``seed`` and roster
columns ``name``, ``email``, ``section``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from quizgym.grading.readers.text import Record
from quizgym.grading.readers.wide import slot_named
from quizgym.grading.rows import (
    ROSTER,
    clean_id,
    duplicate_answer,
    duplicate_student,
    id_problem,
    read_seed,
    row_problem,
    second_header,
    seed_conflict,
    strip_id,
    unknown_question,
)
from quizgym.grading.table import ClassAnswers

__all__ = ["read_long"]


def read_long(
    answers: ClassAnswers,
    source: str,
    names: list[str],
    rows: Iterable[Record],
    *,
    header_line: int = 1,
    drops: Mapping[int, str] | None = None,
) -> None:
    """Read long rows into ``answers``, rejecting each row that breaks a rule.

    A student's rows may be anywhere in the file; a second answer to the same slot, or another
    seed than the student's earlier rows gave, is rejected. A roster value (``name``…) is the
    first one a student's rows give. A student already in ``answers`` (read from an earlier
    file) is not read again: each of their rows here is rejected as a duplicate student.

    Args:
        answers: the class being read.
        source: the file's name, for rejections and origins.
        names: the header's cells, casefolded.
        rows: the data records.
        header_line: the header's line (a row that repeats it is rejected).
        drops: a chunked run's students read in an earlier file, by the line of their first row
            here (:class:`~quizgym.grading.pieces.Piece`): each of their rows is rejected with
            the reason given, as the class read whole rejects them.
    """
    col = {n: names.index(n) for n in ("student", "question", "answer")}
    seed_col = names.index("seed") if "seed" in names else None
    roster = [(names.index(n), n) for n in ROSTER if n in names]
    for _, name in roster:
        answers.mark_roster(name)
    width = len(names)
    seen: dict[tuple[str, str], int] = {}
    before = len(answers)  # the students read before this file: their rows here are duplicates
    refused: dict[str, str] = {}  # students of ``drops``, once their first row is met
    for record in rows:
        line = record.start
        row = record.cells if record.cells is not None else list(record.first)
        student = clean_id(row[col["student"]]) if col["student"] < len(row) else ""
        if record.cells is None:
            assert record.problem is not None
            answers.reject(source, line, student, record.problem)
            continue
        problem = row_problem(row, width, size=record.size)
        if problem is not None:
            answers.reject(source, line, student, problem)
            continue
        student = strip_id(row[col["student"]])
        if student.lstrip("\ufeff").casefold() == "student":
            answers.reject(source, line, "", second_header(header_line))
            continue
        problem = id_problem(student)
        if problem is not None:
            answers.reject(source, line, clean_id(student), problem)
            continue
        written, text = row[col["question"]].strip(), row[col["answer"]]
        question = slot_named(written, answers.slots)
        if question is None:
            answers.reject(source, line, student, unknown_question(written, answers.slots))
            continue
        seed = read_seed(row[seed_col]) if seed_col is not None else None
        if isinstance(seed, str):
            answers.reject(source, line, student, seed)
            continue
        if (student, question) in seen:
            first = seen[student, question]
            answers.reject(source, line, student, duplicate_answer(student, question, first))
            continue
        at = answers.row_of(student)
        if at is None and drops is not None and line in drops:
            refused[student] = drops[line]
        if student in refused:
            answers.reject(source, line, student, refused[student])
            continue
        if at is not None and (at < before or answers.students[at] != student):
            reason = duplicate_student(student, answers.origins[at], answers.students[at])
            answers.reject(source, line, student, reason)
            continue
        if at is None:
            at = answers.add_student(student, seed, (source, line))
        elif seed is not None and answers.seeds[at] not in (None, seed):
            earlier = answers.seeds[at]
            assert earlier is not None
            answers.reject(source, line, student, seed_conflict(seed, student, earlier))
            continue
        else:
            answers.records[at] += 1
            if seed is not None:
                answers.seeds[at] = seed
        for index, name in roster:
            column = answers.roster[name]
            if column[at] is None and row[index].strip():
                column[at] = row[index].strip()
        seen[student, question] = line
        answers.typed.add(question)
        answers.mark_present(question)[at] = text if text.strip() else None
