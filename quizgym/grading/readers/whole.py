"""A matching question answered in one cell of a typed file (``1C 2A``, ``Sodium: Na; …``) goes
in, one answer per item slot comes out, as if the file had a column per item.

A wide file may have a column named by the question's id (a long file a row, a JSON Lines record
a key); :meth:`~quizgym.types.interactions.PairingInteraction.split` reads each distinct text once.
A text whose items cannot be told is given whole to every item, so each is graded unreadable;
an item the text does not name is blank, and an item's own column, where a file has both, wins.
"""

from __future__ import annotations

from collections.abc import Iterable

from quizgym.answers import UNSPLIT
from quizgym.grading.table import ClassAnswers
from quizgym.model import Bank, slot_id
from quizgym.types import pairing_of

__all__ = ["answer_columns", "item_slots", "split_wholes"]


def answer_columns(bank: Bank) -> list[str]:
    """The answer columns a typed file may have: every slot, then the id of every question a
    cell may answer whole (a matching question)."""
    return [*bank.slot_ids(), *(q.id for q in bank.questions if pairing_of(q) is not None)]


def item_slots(bank: Bank, names: Iterable[str]) -> set[str]:
    """Answer columns as the slots they fill (a matching question's id: each of its items)."""
    out: set[str] = set()
    for name in names:
        question = next((q for q in bank.questions if q.id == name), None)
        pairing = pairing_of(question) if question is not None else None
        if pairing is None:
            out.add(name)
        else:
            out.update(slot_id(name, pair.id) for pair in pairing.items)
    return out


def split_wholes(bank: Bank, answers: ClassAnswers) -> None:
    """Replace each whole-question column of ``answers`` by its items' answers, in place."""
    for question in bank.questions:
        pairing = pairing_of(question)
        if pairing is None or question.id not in answers.answers:
            continue
        column = answers.answers.pop(question.id)
        slots = [slot_id(question.id, pair.id) for pair in pairing.items]
        targets = {slot: answers.mark_present(slot) for slot in slots}
        if question.id in answers.typed:
            answers.typed.discard(question.id)
            answers.typed.update(slots)
        memo: dict[str, dict[str, str]] = {}
        for row, text in enumerate(column):
            if text is None or not text.strip():  # a blank cell: every item blank
                continue
            if text not in memo:
                found = pairing.split(text)
                memo[text] = (
                    dict.fromkeys(slots, UNSPLIT + text)  # unreadable on every item
                    if found is None
                    else {slot_id(question.id, item): typed for item, typed in found.items()}
                )
            for slot, typed in memo[text].items():
                if targets[slot][row] is None:
                    targets[slot][row] = typed
