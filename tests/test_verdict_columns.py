"""The batch grader keeps a slot's distinct verdicts as columns (quizgym.grading.verdicts): every
verdict read back from them is the very verdict the single-answer path would give, a teacher's
decision replaces one in place, and the review queue and statistics read the machine's own."""

from __future__ import annotations

import numpy as np

from quizgym.answers import Status, Verdict
from quizgym.grading.decisions import Decision, apply
from quizgym.grading.verdicts import Verdicts

A = Verdict(question="q", status=Status.CORRECT, score=2.0, max_score=2.0, read_as="2.30")
B = Verdict(
    question="q",
    status=Status.PARTIAL,
    score=1.0,
    max_score=2.0,
    read_as="2.3 nat",
    feedback="Close: ln, not log10.",
    tag="log-base",
    expected="ln 10 ≈ 2.3026",
    value=2.3,
    doubt="typed in nat, converted",
)
C = Verdict(question="q", status=Status.INVALID, score=0.0, max_score=2.0, feedback="Unreadable")
D = Verdict(question="q", status=Status.BLANK, score=0.0, max_score=2.0, value=0.0)


def test_verdicts_read_back_from_columns_equal_the_originals() -> None:
    table = Verdicts.of([A, B, C, D])
    fresh = Verdicts(**{k: v for k, v in vars(table).items() if k != "_made"})
    assert list(fresh) == [A, B, C, D]
    assert fresh[3].value == 0.0 and fresh[2].value is None  # 0.0 is a value, None is none
    assert fresh[1] is fresh[1]  # made once, then kept
    assert fresh.statuses() == [Status.CORRECT, Status.PARTIAL, Status.INVALID, Status.BLANK]
    assert fresh[1:3] == [B, C]


def test_scattered_parts_fill_their_positions() -> None:
    first, second = Verdicts.of([A, C]), Verdicts.of([B, D])
    whole = Verdicts.scattered(4, [(np.array([0, 2]), first), (np.array([3, 1]), second)])
    assert list(whole) == [A, D, C, B]
    assert whole.score.tolist() == [2.0, 0.0, 0.0, 1.0]


def test_a_decision_replaces_a_verdict_and_the_machine_one_is_kept() -> None:
    table = Verdicts.of([A, B, C])
    decided = apply(
        C,
        Decision(score=2.0, comment="Right, written as a fraction.", line=2, slot="q", answer="?"),
    )
    table[2] = decided
    assert table[2] == decided and table.status[2] == table.status[0]  # correct now
    assert table.decided == [2]
    machine = table.machines()
    assert list(machine) == [A, B, C]  # the statistics count what the machine said
    # the review queue: B has a doubt, C was unreadable before the teacher decided it
    assert table.uncertain().tolist() == [False, True, True]
