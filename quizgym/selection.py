"""Which questions a command works on: the one filter behind ``--tag``, ``--type`` and ``--ids``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from quizgym.errors import QuizgymError
from quizgym.model import QUESTION_TYPES, Bank, QuestionBase


def matches(question: QuestionBase, *, tags: Sequence[str] = (), types: Sequence[str] = ()) -> bool:
    """Whether a question has any of the tags and any of the types (no filter: every question)."""
    kind = getattr(question, "type", "")
    return (not tags or bool(set(tags) & set(question.tags))) and (not types or kind in types)


def check_filters(
    banks: Iterable[Bank], *, tags: Sequence[str] = (), types: Sequence[str] = ()
) -> None:
    """Refuse filters that can select nothing: an unknown type, a tag no bank uses, no match.

    Raises:
        QuizgymError: the filters select nothing, saying why.
    """
    banks = list(banks)
    names = ", ".join(b.bank for b in banks)
    bad_types = [t for t in types if t not in QUESTION_TYPES]
    if bad_types:
        raise QuizgymError(
            f"unknown question type {', '.join(bad_types)} (types: {', '.join(QUESTION_TYPES)})"
        )
    known_tags = {t for b in banks for q in b.questions for t in q.tags}
    bad_tags = [t for t in tags if t not in known_tags]
    if bad_tags:
        raise QuizgymError(f"{names}: no question is tagged {', '.join(bad_tags)}")
    if not any(matches(q, tags=tags, types=types) for b in banks for q in b.questions):
        raise QuizgymError(f"{names}: no question matches the selection")
