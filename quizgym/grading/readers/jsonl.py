"""JSON Lines: one object per line, ``{"student": "...", "seed": 7, "answers": {"id": "..."}}``.

A record may also give ``name``, ``email`` and ``section`` (carried into the gradebooks). Keys
are matched without regard to case. An answer is text, a number, true/false, or a list of them
(a multiple-answer question: ``["A", "C"]``). Lines end at ``\\n`` (a JSON string cannot hold a
raw line break, so no other character splits a record); a line is read no further than
:data:`~quizgym.grading.rows.MAX_RECORD` bytes. A record is rejected, and the rest read, for:
invalid JSON, nesting too deep, a key named twice in one object (which one counts would be up to
the parser), an unknown key, an id that is neither text nor a whole number, a seed that is not a
whole number, an answer of another type, an unknown question, a cell too long.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from quizgym.errors import SubmissionError
from quizgym.grading.readers.wide import slot_named
from quizgym.grading.rows import (
    MAX_RECORD,
    ROSTER,
    UNDECODABLE,
    Reason,
    bad_escape,
    cell_problem,
    clean_id,
    duplicate_key,
    invalid_json,
    list_answer,
    not_a_record,
    read_seed,
    record_too_long,
    strip_id,
    too_deep,
    undecodable,
    unknown_key,
    unknown_question,
    wrong_answer_type,
    wrong_field_type,
    wrong_id_type,
)
from quizgym.grading.table import ClassAnswers

__all__ = ["read_jsonl"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_STUDENT = re.compile(r'^\s*\{\s*"student"\s*:\s*"([^"\\]{1,200})"')
"""A line too long to read: the student it names first, when it does so plainly."""
_BOM = b"\xef\xbb\xbf"
_KEYS = frozenset({"student", "seed", "answers", *ROSTER})
_ASCII_SPACE = b" \t\r\n\x0b\x0c"


class _RejectedError(Exception):
    """A record that breaks a rule, with the reason."""

    def __init__(self, reason: Reason, student: str = "") -> None:
        super().__init__(str(reason))
        self.reason = reason
        self.student = student


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json``'s ``object_pairs_hook``: an object naming a key twice is rejected."""
    made: dict[str, Any] = {}
    for key, value in pairs:
        if key in made:
            raise _RejectedError(duplicate_key(key))
        made[key] = value
    return made


def _lines(path: Path, encoding: str) -> Iterator[tuple[int, str, int, bool]]:
    """(line number, text (a line too long: its student, if it names one first), bytes, too
    long) of each line that is not blank."""
    errors = "surrogateescape" if encoding == "utf-8" else "replace"
    try:
        with path.open("rb") as stream:
            number = 0
            if stream.read(3) != _BOM:  # the limit counts the line without it
                stream.seek(0)
            while raw := stream.readline(MAX_RECORD + 1):
                number += 1
                if len(raw) > MAX_RECORD:
                    size, head = len(raw), raw[:4096]
                    while not raw.endswith(b"\n") and (raw := stream.readline(1 << 20)):
                        size += len(raw)
                    found = _STUDENT.search(head.decode(encoding, errors="replace"))
                    yield number, found[1] if found else "", size, True
                elif raw.strip(_ASCII_SPACE):
                    yield number, raw.decode(encoding, errors=errors), len(raw), False
    except OSError as exc:
        raise SubmissionError(path, exc.strerror or "cannot read") from exc


def read_jsonl(answers: ClassAnswers, source: str, path: Path, *, encoding: str = "utf-8") -> None:
    """Read a JSON Lines file's records into ``answers``, rejecting each record that breaks a
    rule (blank lines are skipped).

    Args:
        answers: the class being read.
        source: the file's name, for rejections and origins.
        path: the file.
        encoding: its encoding (undecodable UTF-8 bytes are kept as lone surrogates, and their
            records rejected).

    Raises:
        SubmissionError: the file cannot be read.
    """
    for number, raw, size, too_long in _lines(path, encoding):
        if too_long:
            reason = record_too_long(number, number, size)
            answers.reject(source, number, clean_id(raw), reason)
            continue
        if undecodable([raw]):
            answers.reject(source, number, "", UNDECODABLE)
            continue
        try:
            record = _record(answers, raw)
        except _RejectedError as exc:
            answers.reject(source, number, exc.student, exc.reason)
            continue
        student, seed, given, roster = record
        at = answers.admit(source, number, student, seed)
        if at is None:
            continue
        answers.typed.update(given)
        for key, value in given.items():
            answers.mark_present(key)[at] = value if value and value.strip() else None
        for key, value in roster.items():
            answers.mark_roster(key)[at] = value


def _record(
    answers: ClassAnswers, raw: str
) -> tuple[str, int | None, dict[str, str | None], dict[str, str]]:
    """A line's (student, seed, answers by slot, roster fields), or :class:`_RejectedError`."""
    try:
        record = json.loads(raw, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise _RejectedError(invalid_json(exc.msg)) from exc
    except RecursionError as exc:
        raise _RejectedError(too_deep()) from exc
    except ValueError as exc:  # a number of more digits than int() converts (4,300)
        raise _RejectedError(invalid_json("a number too long to read")) from exc
    if not isinstance(record, dict):
        raise _RejectedError(not_a_record())
    fields: dict[str, Any] = {}
    for key, value in record.items():
        folded = key.casefold()
        if folded not in _KEYS:
            raise _RejectedError(unknown_key(key))
        if folded in fields:
            raise _RejectedError(duplicate_key(key))
        fields[folded] = value
    given = fields.get("answers", {})
    if not isinstance(given, dict):
        raise _RejectedError(not_a_record())
    raw_id = fields.get("student")
    if raw_id is None:
        student = ""
    elif isinstance(raw_id, str):
        student = strip_id(raw_id)
    elif isinstance(raw_id, int) and not isinstance(raw_id, bool):
        student = str(raw_id)
    else:
        raise _RejectedError(wrong_id_type(raw_id))
    try:  # the reasons below name the student
        answers_by_slot: dict[str, str | None] = {}
        for key, value in given.items():
            slot = slot_named(key, answers.slots)
            if slot is None:
                raise _RejectedError(unknown_question(key, answers.slots))
            if slot in answers_by_slot:
                raise _RejectedError(duplicate_key(key))
            answers_by_slot[slot] = _answer(slot, value)
        seed = _seed(fields.get("seed"))
        roster = {}
        for name in ROSTER:
            value = fields.get(name)
            if value is None:
                continue
            if not isinstance(value, str | int) or isinstance(value, bool):
                raise _RejectedError(wrong_field_type(name, value))
            if str(value).strip():
                roster[name] = str(value).strip()
        texts = [student, *given, *(t for t in answers_by_slot.values() if t), *roster.values()]
        if any(_SURROGATE.search(t) for t in texts):
            # a JSON escape such as "\udcff" decodes to half a character: no text can hold it
            raise _RejectedError(bad_escape())
        problem = cell_problem(texts)
        if problem is not None:
            raise _RejectedError(problem)
    except _RejectedError as exc:
        raise _RejectedError(exc.reason, clean_id(student)) from None
    return student, seed, answers_by_slot, roster


def _seed(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _RejectedError(wrong_field_type("seed", value))
    seed = read_seed(str(value))
    if isinstance(seed, Reason):
        raise _RejectedError(seed)
    return seed


def _answer(slot: str, value: object) -> str | None:
    """An answer as text (a list: see :func:`~quizgym.grading.rows.list_answer`)."""
    if value is None:
        return None
    if isinstance(value, list):
        return list_answer([t for item in value if (t := _scalar(slot, item, value)) is not None])
    return _scalar(slot, value, value)


def _scalar(slot: str, value: object, whole: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise _RejectedError(wrong_answer_type(slot, whole))
