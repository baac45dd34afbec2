"""The single-answer reference the batch grader's tests compare it with."""

from __future__ import annotations

from quizgym.answers import Verdict, grade_response
from quizgym.grading.table import ClassAnswers
from quizgym.model import Bank
from quizgym.solver import CompiledBank, Slot


def single_verdict(
    bank: Bank | CompiledBank, answers: ClassAnswers, slot: Slot, row: int
) -> Verdict:
    """What the single-answer path gives one student's answer to one slot of a class.

    :func:`grade_response` with the student's id and seed, and, for a part, the student's own
    answers to the question's earlier parts (error carried forward): every earlier part, in the
    question's order, that the student answered (as ``grade_responses`` passes them).
    """
    earlier = None
    if slot.part is not None:
        parts = slot.question.part_ids()
        earlier = {}
        for pid in parts[: parts.index(slot.part)]:
            column = answers.answers.get(f"{slot.question.id}.{pid}")  # absent: not answered
            text = None if column is None else column[row]
            if text is not None:
                earlier[pid] = text
    return grade_response(
        bank,
        slot.question,
        answers.answers[slot.id][row],
        student=answers.students[row],
        seed=answers.seeds[row],
        part=slot.part,
        earlier=earlier,
    )
