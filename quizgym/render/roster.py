"""A roster file in, the students who get a worksheet, each with a seed, out."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from quizgym.errors import QuizgymError
from quizgym.names import file_stem


class RosterError(QuizgymError):
    """A roster file cannot be used; names every bad row at once."""


@dataclass(frozen=True)
class Student:
    """One student of a roster."""

    id: str
    name: str = ""
    seed: int | None = None
    """The student's own seed (a ``seed`` column); None uses the class seed."""


def read_roster(path: Path) -> list[Student]:
    """Read a roster CSV: a ``student`` column, optional ``name`` and ``seed`` (header cells in
    any case); others ignored.

    Raises:
        RosterError: the file cannot be read, or rows are bad (every bad row is listed).
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise RosterError(f"{path}: cannot read: {reason}") from exc
    reader = csv.DictReader(io.StringIO(text, newline=""))
    written = [f.strip() for f in reader.fieldnames or []]
    fields = [f.casefold() for f in written]  # Student, SEED: header case does not matter
    if "student" not in fields:
        raise RosterError(
            f"{path}:1: a roster needs a 'student' column (found: {written or 'none'})"
        )
    reader.fieldnames = fields
    problems: list[str] = []
    students: list[Student] = []
    seen: dict[str, int] = {}
    stems: dict[str, str] = {}
    for row in reader:
        line = reader.line_num
        sid = (row.get("student") or "").strip()
        raw_seed = (row.get("seed") or "").strip()
        if not sid:
            problems.append(f"{path}:{line}: empty student id")
            continue
        if sid in seen:
            problems.append(f"{path}:{line}: student {sid!r} appears twice (also line {seen[sid]})")
            continue
        if file_stem(sid) in stems:
            other = stems[file_stem(sid)]
            problems.append(f"{path}:{line}: student {sid!r} and {other!r} share a file name")
            continue
        if raw_seed and not re.fullmatch(r"[+-]?[0-9]{1,20}", raw_seed):
            # ASCII digits, as grading reads a seed cell (int() refuses 5,000 of them)
            shown = raw_seed if len(raw_seed) <= 40 else raw_seed[:39] + "…"
            long = re.fullmatch(r"[+-]?[0-9]+", raw_seed)
            why = "has more than 20 digits" if long else "is not a whole number"
            problems.append(f"{path}:{line}: seed {shown!r} {why}")
            continue
        seen[sid] = line
        stems[file_stem(sid)] = sid
        name = (row.get("name") or "").strip()
        students.append(Student(sid, name, int(raw_seed) if raw_seed else None))
    if problems:
        raise RosterError("\n".join(problems))
    if not students:
        raise RosterError(f"{path}: the roster has no students")
    return students
