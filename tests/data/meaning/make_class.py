"""Write class.csv: 64 students answering kinematics.yaml as students type (run from the repo).

    .venv/bin/python tests/data/meaning/make_class.py

Each column's answers are drawn from a fixed pool (how many students typed each text), shuffled
with a fixed seed, so the class is the same on every run. The last two students answered
nothing at all.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

HERE = Path(__file__).parent
STUDENTS = [f"u{k:03d}" for k in range(1, 65)]
SILENT = 2
"""The last students answered nothing."""
POOLS: dict[str, list[tuple[str, int]]] = {
    "tf-skew": [("true", 38), ("false", 12), ("ture", 3), ("flase", 2), ("idk", 3), ("", 4)],
    "ma-spread": [
        ("A, B, C", 30),
        ("A, C", 8),
        ("B, C", 8),
        ("ABC", 3),
        ("abc", 2),
        ("AC", 2),
        ("D", 4),
        ("?", 3),
        ("", 2),
    ],
    "num-speed": [
        ("5 m/s", 22),
        ("5", 8),
        ("5 ms^-1", 3),
        ("5 ms-1", 2),
        ("5 m.s^-1", 2),
        ("5 m s^-1", 2),
        ("5 m·s⁻¹", 1),
        ("20 m/s", 6),
        ("5 ms", 2),
        ("-", 4),
        ("", 10),
    ],
    "num-accel": [
        ("2.4 m/s^2", 20),
        ("2.4", 14),
        ("2,4", 5),
        ("2,400", 3),
        ("2.4 ms-2", 2),
        ("0.42", 6),
        ("n/a", 2),
        ("", 10),
    ],
    "num-echo": [("0.25 s", 30), ("0.25", 10), ("250 ms", 3), ("4", 8), ("x = ?", 2), ("", 9)],
    "num-heads": [("0.5", 36), ("1/2", 12), ("O.5", 2), (".5", 4), ("dont know", 2), ("", 6)],
    "num-six": [
        ("0.167", 24),
        ("1/6", 14),
        ("1:6", 2),
        ("0.17", 6),
        ("0.2", 6),
        ("?", 1),
        ("-", 1),
        ("", 8),
    ],
    "why-sd": [
        ("It is the square root of the variance.", 20),
        ("because the variance is squared and we take the square root", 14),
        ("it measures spread", 12),
        ("idk", 2),
        ("", 14),
    ],
}


def main() -> None:
    rng = random.Random(31)
    answering = STUDENTS[: len(STUDENTS) - SILENT]
    columns: dict[str, list[str]] = {}
    for slot, pool in POOLS.items():
        answers = [text for text, n in pool for _ in range(n)]
        assert len(answers) == len(answering), (slot, len(answers))
        rng.shuffle(answers)
        columns[slot] = answers + [""] * SILENT
    with (HERE / "class.csv").open("w", newline="", encoding="utf-8") as stream:
        out = csv.writer(stream)
        out.writerow(["student", *POOLS])
        for row, student in enumerate(STUDENTS):
            out.writerow([student, *(columns[slot][row] for slot in POOLS)])


if __name__ == "__main__":
    main()
