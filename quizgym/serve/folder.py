"""The data folder's files: the quiz chosen from a bank and its ``issued.json``, the sign-in
links of ``links.csv``, and the export of attempts as JSON Lines for ``quizgym grade``."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

from quizgym.errors import QuizgymError
from quizgym.issued import Issued, issue, read_issued, write_issued
from quizgym.selection import matches
from quizgym.serve.db import Database
from quizgym.serve.engine import FEEDBACK, Feedback, Quiz, question_ids
from quizgym.serve.keys import Identity, Secret
from quizgym.solver import CompiledBank

__all__ = ["make_quiz", "write_export", "write_issued_for", "write_links"]


def make_quiz(
    book: CompiledBank, *, tags: Sequence[str], ids: Sequence[str], opens: datetime | None,
    closes: datetime | None, attempts: int | None, feedback: Feedback,
) -> Quiz | None:  # fmt: skip
    """The quiz of a bank's questions by tag or id (None: neither given).

    Raises:
        QuizgymError: an unknown id, no question with the tags, a bad window or cap.
    """
    if not tags and not ids:
        return None
    bank = book.bank
    if ids:
        unknown = [q for q in ids if q not in question_ids(book)]
        if unknown:
            raise QuizgymError(f"{bank.bank} has no question {', '.join(unknown)} (--quiz-ids)")
        chosen = list(dict.fromkeys(ids))
    else:
        chosen = [q.id for q in bank.questions if matches(q, tags=tags, types=())]
        if not chosen:
            raise QuizgymError(f"{bank.bank} has no question tagged {', '.join(tags)} (--quiz-tag)")
    if opens is not None and closes is not None and closes <= opens:
        raise QuizgymError("the quiz closes before it opens (--closes is not after --opens)")
    if attempts is not None and attempts < 1:
        raise QuizgymError("--attempts must be at least 1")
    if feedback not in FEEDBACK:
        raise QuizgymError(f"--feedback must be one of {', '.join(FEEDBACK)}")
    return Quiz(
        bank=bank.bank, questions=tuple(chosen), opens=opens, closes=closes, attempts=attempts,
        feedback=feedback,
    )  # fmt: skip


def write_issued_for(
    book: CompiledBank, quiz: Quiz, students: Sequence[str], secret: Secret, folder: Path
) -> Issued:
    """Issue one version of each quiz question per student (seeds from the secret), and
    write it as the folder's ``issued.json``. A manifest written before must agree with this
    one for every student it lists: a restart never changes what a student was given.

    Raises:
        QuizgymError: the bank or the quiz changed since ``issued.json`` was written.
    """
    roster = [(sid, secret.seed("quiz", book.bank.bank, sid)) for sid in students]
    made = issue(book, [book.bank.question(q) for q in quiz.questions], issued_by="serve",
                 students=roster)  # fmt: skip
    path = folder / "issued.json"
    if path.exists():
        before = read_issued(path)
        if before.bank != made.bank or before.questions != made.questions:
            raise QuizgymError(
                f"{path}: issued for another quiz ({before.bank}: {', '.join(before.questions)});"
                " move it aside (with the database) to start a new one"
            )
        changed = before.changed(book.bank)
        if changed:
            raise QuizgymError(
                f"{path}: the bank changed since the quiz was issued ({', '.join(changed)});"
                " restore the bank, or move the data folder aside to start afresh"
            )
        for old in before.students:
            new = made.student(old.id)
            if new is None:
                continue  # a student left the roster: their versions stay on record
            was = {q: before.versions[q][i] for q, i in old.versions.items()}
            now = {q: made.versions[q][i] for q, i in new.versions.items()}
            if was != now:
                raise QuizgymError(
                    f"{path}: student {old.id} would get other versions than were issued (a new"
                    " secret?); restore the data folder's secret"
                )
    write_issued(path, made)
    return made


def write_links(
    secret: Secret, students: Sequence[str], *, url: str, folder: Path, days: int, now: datetime
) -> tuple[str, dict[str, str]]:
    """Write ``links.csv`` (``student,url``, mode 0600) and return the teacher's link and
    each student's.

    Raises:
        QuizgymError: the file cannot be written.
    """
    if days < 1:
        raise QuizgymError("--link-days must be at least 1")
    expires = now + timedelta(days=days)
    base = url.rstrip("/")
    links = {
        sid: f"{base}/in/{secret.link_token(Identity(sid), expires=expires)}" for sid in students
    }
    teacher = f"{base}/in/{secret.link_token(Identity('teacher', teacher=True), expires=expires)}"
    path = folder / "links.csv"
    partial = folder / "links.csv.partial"
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as stream:
            writer = csv.writer(stream, lineterminator="\n")
            writer.writerow(["student", "url"])
            writer.writerows(links.items())
        partial.replace(path)
    except OSError as exc:
        raise QuizgymError(f"{path}: cannot write the links: {exc.strerror}") from exc
    return teacher, links


def write_export(db: Database, output: Path) -> int:
    """Write each quiz student's last answer to each slot as one JSON Lines record; the count
    of records.

    Raises:
        QuizgymError: the file cannot be written.
    """
    with db.transaction("read the attempts") as tx:
        rows = tx.rows(
            "SELECT student, slot, response FROM attempt WHERE mode = 'quiz' ORDER BY id"
        )
    last: dict[str, dict[str, str | None]] = {}
    for student, slot, response in rows:
        last.setdefault(student, {})[slot] = response  # a later attempt replaces an earlier one
    try:
        with output.open("w", encoding="utf-8", newline="\n") as stream:
            for student, answers in last.items():
                record = {"student": student, "answers": answers}
                stream.write(json.dumps(record, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise QuizgymError(f"{output}: cannot write: {exc.strerror}") from exc
    return len(last)


PRACTICE_FIELDS = (
    "student", "bank", "question", "slot", "answer", "seed", "verdict", "score", "max_score",
    "scheduled", "rating", "submission", "answered_at", "engine",
)  # fmt: skip
"""The keys of each record of a practice export, in order."""


def write_practice(db: Database, output: Path) -> int:
    """Write every practice answer, one JSON Lines record per slot answered (the keys of
    :data:`PRACTICE_FIELDS`: ``seed`` draws the variant it answered, ``bank.variant(question,
    seed=…)``; ``submission`` groups the parts answered together); the count of records.

    Raises:
        QuizgymError: the file cannot be written.
    """
    with db.transaction("read the practice answers", write=False) as tx:
        rows = tx.rows(
            "SELECT a.student, a.bank_id, a.item_id, a.slot, a.response, a.seed, a.verdict,"
            " a.score, a.max_score, s.scheduled, s.rating, a.submission_id, a.answered_at,"
            " a.engine FROM attempt a JOIN submission s ON s.id = a.submission_id"
            " WHERE a.mode = 'practice' ORDER BY a.id"
        )
    try:
        with output.open("w", encoding="utf-8", newline="\n") as stream:
            for row in rows:
                record = dict(zip(PRACTICE_FIELDS, row, strict=True))
                record["scheduled"] = bool(record["scheduled"])
                stream.write(json.dumps(record, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise QuizgymError(f"{output}: cannot write: {exc.strerror}") from exc
    return len(rows)
