"""The batch grader's verdicts, a column at a time, are the single-answer path's: on classes
of answers typed every way (plain numbers, units of every kind and as students write them,
labels, percentages, constants, non-answers, partial-credit mistakes, a part carried forward),
read as lists and as coded columns with an unused text, with and without seeds."""

from __future__ import annotations

import random

import numpy as np
import pytest
from grading_helpers import single_verdict

from quizgym.grading.batch import grade_partition
from quizgym.grading.table import ClassAnswers, Coded
from quizgym.loader import parse_bank
from quizgym.solver import compile_bank

BANK = """
bank: rev
title: rev
questions:
  - id: m1
    type: numeric
    prompt: "x {p}"
    params: {p: {choices: [0.5, 0.25, 0.1]}}
    answer: (-ln(p))
    tolerance: {sigfigs: 3}
    mistakes:
      - {answer: (-ln(p)) / ln(10), feedback: "log10.", tag: log-base}
      - {answer: (-ln(p)) / 2, feedback: "Half.", tag: halved, credit: 0.5}
      - {answer: (-ln(p)) * 2, feedback: "Double, fine.", tag: dbl, credit: 1}
      - {answer: (-ln(p)) * 3, feedback: "triple", credit: 0}
  - id: u1
    type: numeric
    prompt: speed
    answer: "10"
    units: m/s
    require_units: {penalty: 0.25}
    mistakes:
      - {answer: "5", feedback: "Half.", tag: halved, credit: 0.5}
  - id: u2
    type: numeric
    prompt: len
    answer: "2"
    units: m
    tolerance: {abs: 0.1}
    mistakes:
      - {answer: "4", feedback: "dbl", tag: d, credit: 0.5}
  - id: u4
    type: numeric
    prompt: speed, within a band
    answer: "10"
    units: m/s
    tolerance: {abs: 0.5}
  - id: u3
    type: numeric
    prompt: tok
    answer: "12"
    units: tokens
    mistakes:
      - {answer: "6", feedback: "half", tag: h, credit: 0.5}
  - id: pc
    type: numeric
    prompt: share
    answer: "0.15"
    mistakes:
      - {answer: "15", feedback: "percent as number", tag: pct, credit: 0.5}
  - id: s
    type: numeric
    prompt: Two losses and their sum.
    parts:
      - {id: first, prompt: a, answer: (-ln(0.5)), units: nats}
      - {id: second, prompt: b, answer: (-ln(0.25))}
      - id: total
        prompt: the sum
        answer: first + second
        tolerance: {abs: 0.01}
        units: nats
        mistakes: [{answer: "first", feedback: "only first", tag: f, credit: 0.5}]
"""

POOL: list[str | None] = [
    "0.693",
    "0.69",
    "1.39",
    "1.386",
    "0.301",
    "0.35",
    "0.347",
    "2.08",
    "0.3466",
    "0",
    "-0",
    "0.0",
    "10",
    "10 m/s",
    "5",
    "5 m/s",
    "36 km/h",
    "18 km/h",
    "10 m",
    "2",
    "2 m",
    "200 cm",
    "4",
    "4 m",
    "400 cm",
    "2 km",
    "12",
    "12 tokens",
    "6 tokens",
    "6",
    "12 Tokens",
    "0.15",
    "15",
    "15%",
    "15 %",
    "30%",
    "0.693 nats",
    "0.693 nat",
    "1 bits",
    "2.079 nats",
    "2.08 nats",
    "1.386 nats",
    "1.0 bits",
    "0.69 nats",
    "2.3 e",
    "nan",
    "inf",
    "1e400",
    None,
    "",
    " ",
    "= 2.08",
    "2,08",
    "2,080 m",
    "1.39 Nats",
    "1.39 NATS",
    "2 ms",
    "2 s",
    "5 kg",
    "0.693 foo",
    "0.693 bits",
    "3 bits",
    # units as students write them, non-answers, and what only a reviewer may read
    "10 ms^-1",
    "10 ms-1",
    "10 m.s^-1",
    "10 m s^-1",
    "10 m s-1",
    "10 m·s⁻¹",
    "10.2 ms⁻¹",
    "36 kmh-1",
    "10 ms",
    "2 m2",
    "idk",
    "?",
    "-",
    "n/a",
    "x = ?",
    "dont know",
    "O.5",
    "2,400",
]


@pytest.mark.parametrize("trial", range(12))
def test_the_batch_gives_every_answer_the_single_answer_path_s_verdict(trial: int) -> None:
    book = compile_bank(parse_bank(BANK, path="agree.yaml"))
    rng = random.Random(trial)
    n = 40
    answers = ClassAnswers(book.slot_ids())
    cells = {s: [rng.choice(POOL) for _ in range(n)] for s in book.slot_ids()}
    for k in range(n):
        answers.add_student(f"s{k}", k if trial % 2 else None, ("test", k))
    for slot in book.slot_ids():
        if trial % 3 == 0:  # as the pyarrow reader gives it: distinct texts, codes
            texts = list(dict.fromkeys(cells[slot]))
            codes = np.array([texts.index(t) for t in cells[slot]], dtype=np.int64)
            answers.answers[slot] = Coded([*texts, "a text no row uses"], codes)
        else:
            answers.mark_present(slot)[:] = cells[slot]
    graded = grade_partition(book, answers)
    for g in graded.slots:
        for row in range(n):
            assert g.verdict(row) == single_verdict(book, answers, g.slot, row), (
                g.slot.id,
                cells[g.slot.id][row],
            )
