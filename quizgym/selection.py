"""Which questions a command works on: the one filter behind ``--tag``, ``--type`` and ``--ids``."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence

from quizgym.errors import QuizgymError
from quizgym.model import QUESTION_TYPES, AnyQuestion, Bank, QuestionBase


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


def select_questions(
    bank: Bank,
    *,
    tags: Sequence[str] = (),
    types: Sequence[str] = (),
    ids: Sequence[str] = (),
    count: int | None = None,
    seed: int | None = None,
) -> list[AnyQuestion]:
    """Choose the questions of a worksheet.

    Args:
        bank: the bank.
        tags: keep questions with any of these tags (all when empty).
        types: keep questions of any of these types (all when empty).
        ids: keep exactly these questions, in this order (bank order when empty).
        count: then keep this many, drawn by a shuffle seeded with ``seed`` (all when None).
        seed: seeds the shuffle (and, elsewhere, the variants); None shuffles as seed 0.

    Returns:
        The questions, in worksheet order.

    Raises:
        QuizgymError: an unknown id, tag or type, an empty selection, or a count larger than it.
    """
    known_ids = {q.id for q in bank.questions}
    unknown = [i for i in ids if i not in known_ids]
    if unknown:
        raise QuizgymError(f"{bank.bank}: no question with id {', '.join(unknown)}")
    check_filters([bank], tags=tags, types=types)
    chosen = [bank.question(i) for i in dict.fromkeys(ids)] if ids else list(bank.questions)
    chosen = [q for q in chosen if matches(q, tags=tags, types=types)]
    if not chosen:
        raise QuizgymError(f"{bank.bank}: no question matches the selection")
    if count is not None:
        if not 1 <= count <= len(chosen):
            raise QuizgymError(
                f"--count {count}: the selection has {len(chosen)} question"
                f"{'s' if len(chosen) != 1 else ''}"
            )
        digest = hashlib.sha256(f"{bank.bank}\x1fselect\x1f{seed or 0}".encode()).digest()
        random.Random(int.from_bytes(digest[:8], "big")).shuffle(chosen)  # noqa: S311
        chosen = chosen[:count]
    return chosen
