"""Long tables: one row per answer, ``student, question, answer`` (optional ``seed``)."""

from __future__ import annotations

from collections.abc import Iterator

from quizgym.grading.rows import (
    NO_STUDENT,
    clean_id,
    duplicate_answer,
    read_seed,
    row_problem,
    seed_conflict,
    unknown_question,
)
from quizgym.grading.table import ClassAnswers

__all__ = ["read_long"]


def read_long(
    answers: ClassAnswers, source: str, names: list[str], rows: Iterator[tuple[int, list[str]]]
) -> None:
    """Read long rows into ``answers``, rejecting each row that breaks a rule.

    A student's rows may be anywhere in the file; a second answer to the same slot, or another
    seed than the student's earlier rows gave, is rejected.

    Args:
        answers: the class being read.
        source: the file's name, for rejections and origins.
        names: the header's cells, lowercased.
        rows: (line, cells) of each data row.
    """
    col = {n: names.index(n) for n in ("student", "question", "answer")}
    seed_col = names.index("seed") if "seed" in names else None
    width = len(names)
    known = set(answers.slots)
    seen: dict[tuple[str, str], int] = {}
    for line, row in rows:
        student = clean_id(row[col["student"]]) if col["student"] < len(row) else ""
        problem = row_problem(row, width)
        if problem is not None:
            answers.reject(source, line, student, problem)
            continue
        question, text = row[col["question"]].strip(), row[col["answer"]]
        if not student:
            answers.reject(source, line, "", NO_STUDENT)
            continue
        if question not in known:
            answers.reject(source, line, student, unknown_question(question, answers.slots))
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
        if at is None:
            at = answers.add_student(student, seed, (source, line))
        elif seed is not None and answers.seeds[at] not in (None, seed):
            earlier = answers.seeds[at]
            assert earlier is not None
            answers.reject(source, line, student, seed_conflict(seed, student, earlier))
            continue
        elif seed is not None:
            answers.seeds[at] = seed
        seen[student, question] = line
        answers.typed.add(question)
        answers.mark_present(question)[at] = text if text.strip() else None
