"""JSON Lines: one object per line, ``{"student": "...", "seed": 7, "answers": {"id": "..."}}``."""

from __future__ import annotations

import json
import re

from quizgym.grading.rows import UNDECODABLE, clean_id, read_seed, undecodable, unknown_question
from quizgym.grading.table import ClassAnswers

__all__ = ["read_jsonl"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def read_jsonl(answers: ClassAnswers, source: str, text: str) -> None:
    """Read a JSON Lines file's records into ``answers``, rejecting each record that breaks a
    rule (blank lines are skipped).

    Args:
        answers: the class being read.
        source: the file's name, for rejections and origins.
        text: the file's text (undecodable bytes kept as lone surrogates).
    """
    known = set(answers.slots)
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        if undecodable([raw]):
            answers.reject(source, number, "", UNDECODABLE)
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
            answers.reject(source, number, clean_id(student), "an escape that is not a character")
            continue
        unknown = [k for k in given if k not in known]
        if unknown:
            answers.reject(source, number, student, unknown_question(unknown[0], answers.slots))
            continue
        seed = read_seed(None if record.get("seed") is None else str(record["seed"]))
        if isinstance(seed, str):
            answers.reject(source, number, student, seed)
            continue
        at = answers.admit(source, number, student, seed)
        if at is None:
            continue
        answers.typed.update(given)
        for key, value in given.items():
            text_value = None if value is None else str(value)
            column = answers.mark_present(key)
            column[at] = text_value if text_value and text_value.strip() else None
