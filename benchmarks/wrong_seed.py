"""The per-student version check's cost and verdicts on a seeded class: its share of a run, the
honest students it flags and the seed typos it finds.

Writes a wide CSV of ``--students`` students (deterministic) answering the bundled bank's 14
numeric slots that vary per student (their versions drawn with the class seed 2026, as
``render --roster … --seed 2026`` draws them), with a ``seed`` column: facility drawn per student
between 10 and 90 %, wrong answers as a class gives them (the bank's known mistakes, a factor of
2 or 10, guesses, blanks), and one student in a hundred with a near miss of the seed in their
seed cell. Grades it with :func:`quizgym.grading.run.grade_submissions` in this process
``--runs`` times (the best counts) and prints the check's seconds against the run's, and how
many honest and typo students were flagged. Most students answer at least 3 slots wrong, so
nearly the whole class is held against the seed's 19 near misses: the check's worst case.

Run: ``.venv/bin/python benchmarks/wrong_seed.py --students 3000``.
"""

from __future__ import annotations

import argparse
import csv
import random
import tempfile
import time
from pathlib import Path
from typing import Any

SEED = 2026


def generate(path: Path, students: int, seed: int = 20260102) -> dict[str, int]:
    """Write the class; return the students whose seed cell holds a typo, and how many right
    answers it costs them (answers right for their sheet, and not for the typo's versions)."""
    from quizgym.grading.wrong_seed import near_misses
    from quizgym.loader import load_bank
    from quizgym.solver import compile_bank

    book = compile_bank(load_bank("bert-mlm"))
    slots = [s for s in book.slots if s.is_numeric and book.varies(s.question)]
    rng = random.Random(seed)
    ids = [f"s{k:05d}" for k in range(students)]
    drawn = {
        s.question.id: book.variants(s.question, students=ids, seeds=[SEED] * students)
        for s in slots
    }
    typos: dict[str, int] = {}
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["student", "seed", *(s.id for s in slots)])
        for k, student in enumerate(ids):
            cell = SEED
            if k % 100 == 42:
                cell = rng.choice(near_misses(SEED))
                typos[student] = 0
            skill = rng.uniform(0.1, 0.9)
            row = [student, str(cell)]
            for slot in slots:
                variants, codes = drawn[slot.question.id]
                variant = variants[codes[k]]
                key = book.key(slot, variant).number
                roll = rng.random()
                if roll < skill:
                    row.append(f"{key:.5g}")
                    if student in typos:
                        typed = book.variant(slot.question, student=student, seed=cell)
                        typos[student] += abs(book.key(slot, typed).number - key) > 1e-9 * key
                elif roll < skill + (1 - skill) * 0.3:
                    mistakes = [m.value for m in book.mistakes(slot, variant)]
                    row.append(f"{rng.choice(mistakes):.4g}" if mistakes else "")
                elif roll < skill + (1 - skill) * 0.6:
                    row.append(f"{key * rng.choice([0.1, 0.5, 2, 10]):.4g}")
                elif roll < skill + (1 - skill) * 0.9:
                    row.append(f"{rng.uniform(0, 3 * key):.3g}")
                else:
                    row.append("")
            writer.writerow(row)
    return typos


def timed_run(path: Path, out: Path) -> tuple[float, float, list[str]]:
    """(seconds of the run, seconds in the per-student check, the flagged lines)."""
    import quizgym.grading.pieces as pieces
    from quizgym.grading.run import grade_submissions

    spent = [0.0]
    saved = pieces.seed_evidence

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return saved(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - start

    pieces.seed_evidence = timed
    try:
        start = time.perf_counter()
        result = grade_submissions("bert-mlm", [path], out_dir=out)
        total = time.perf_counter() - start
    finally:
        pieces.seed_evidence = saved
    return total, spent[0], result.flags


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=3, help="timed runs; the best counts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = folder / "class.csv"
        typos = generate(data, args.students)
        runs = [timed_run(data, folder / f"run{k}") for k in range(args.runs)]
        total, spent, flags = min(runs)
        named = {line.split(":", 1)[0] for line in flags}
        costly = {s for s, cost in typos.items() if cost >= 3}
        print(f"class: {args.students} students × 14 varying numeric slots, seed {SEED}")
        print(
            f"per-student version check: {spent:.2f} s of a {total:.2f} s run in process "
            f"({100 * spent / total:.0f} %)"
        )
        print(
            f"flagged: {len(named & typos.keys())} of {len(typos)} seed typos "
            f"({len(named & costly)} of the {len(costly)} that cost at least 3 right answers), "
            f"{len(named - typos.keys())} of {args.students - len(typos)} honest students"
        )


if __name__ == "__main__":
    main()
