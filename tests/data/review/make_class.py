"""Write class.csv: 60 students answering stats.yaml as a real class types (run from the repo).

    .venv/bin/python tests/data/review/make_class.py

Each column's answers are drawn from a fixed pool (how many students typed each text), shuffled
with a fixed seed, so the class is the same on every run. The standard-error question varies:
each student's right answer is their own version's key (``grade --seed 7``).
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

from quizgym import load_bank
from quizgym.solver import compiled

HERE = Path(__file__).parent
SEED = 7
STUDENTS = [f"s{k:02d}" for k in range(1, 61)]
POOLS: dict[str, list[tuple[str, int]]] = {
    "tf-skew": [("true", 40), ("false", 10), ("ture", 5), ("T", 2), ("", 3)],
    "mc-centre": [
        ("the median", 30),
        ("the mean", 12),
        ("the medain", 6),
        ("the range", 5),
        ("A, B", 3),
        ("", 4),
    ],
    "mc-spread": [("A, B", 25), ("A", 10), ("AB", 6), ("A, C", 8), ("C", 5), ("", 6)],
    "num-sales": [("2400", 30), ("2,400", 12), ("2400.0", 3), ("1200", 8), ("24OO", 2), ("", 5)],
    "num-share": [("0.15", 30), ("15%", 10), ("30", 8), ("0.2", 4), ("15", 4), ("", 4)],
    "num-odds": [("1/6", 25), ("0.1667", 10), ("1:6", 9), ("1/5", 6), ("0.17", 4), ("", 6)],
    "num-se": [("KEY", 35), ("S/N", 12), ("3", 6), ("x", 2), ("", 5)],
    "why-n-minus-1": [
        ("we lose one degree of freedom", 9),
        ("Dividing by n would underestimate the variance: it is biased.", 8),
        ("because of the degrees of freedom", 7),
        ("to make it unbiased", 7),
        ("it has nothing to do with bias", 6),
        ("We lose a degree of freedom estimating the mean, and n would bias it low.", 6),
        ("n-1 is bigger", 5),
        ("no idea", 4),
        ("the sample mean uses up one piece of information", 4),
        ("", 4),
    ],
}


def main() -> None:
    book = compiled(load_bank(HERE / "stats.yaml"))
    se = book.bank.question("num-se")
    rng = random.Random(16)
    columns: dict[str, list[str]] = {}
    for slot, pool in POOLS.items():
        answers = [text for text, n in pool for _ in range(n)]
        assert len(answers) == len(STUDENTS), slot
        rng.shuffle(answers)
        columns[slot] = answers
    for row, student in enumerate(STUDENTS):
        params = book.variant(se, student=student, seed=SEED).params
        n, s = int(params["n"]), int(params["s"])
        text = columns["num-se"][row]
        if text == "KEY":
            columns["num-se"][row] = f"{s / n**0.5:g}"
        elif text == "S/N":
            columns["num-se"][row] = f"{s / n:g}"
    with (HERE / "class.csv").open("w", newline="", encoding="utf-8") as stream:
        out = csv.writer(stream)
        out.writerow(["student", *POOLS])
        for row, student in enumerate(STUDENTS):
            out.writerow([student, *(columns[slot][row] for slot in POOLS)])


if __name__ == "__main__":
    main()
