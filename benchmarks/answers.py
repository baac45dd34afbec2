"""How long does reading and comparing one student answer take?

Prints the median time per answer (read_answer + compare against a key) for plain decimals and
for expressions, with the memo cache cold (every answer parsed and evaluated) and warm (answers
repeat, as they do across a class), each as a ratio against Python's own ``float()`` of the same
decimal strings, timed the same way in the same process. Goal: warm well under 1 ms.

Then the same for the whole single-answer path, ``grade_response`` (mistakes included).

Run: ``.venv/bin/python benchmarks/answers.py`` (a few seconds).
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Callable

from quizgym.accept import engine_accepts
from quizgym.expr import read_answer
from quizgym.grading import grade_response
from quizgym.loader import load_bank

N = 2000
KEY = math.log(10)


def _decimals(rng: random.Random) -> list[str]:
    texts = {f"{rng.uniform(0.01, 100):.{rng.randint(1, 5)}f}" for _ in range(3 * N)}
    return sorted(texts)[:N]


def _expressions(rng: random.Random) -> list[str]:
    shapes: list[Callable[[], str]] = [
        lambda: f"{rng.randint(1, 99)} ln {rng.randint(2, 999)}",
        lambda: f"-ln(0.{rng.randint(1, 99):02d}) - ln(0.{rng.randint(1, 99):02d})",
        lambda: f"log({rng.randint(2, 99)})+log({rng.randint(2, 99)})",
        lambda: f"{rng.randint(1, 99)}/{rng.randint(1, 99)}",
        lambda: f"sqrt({rng.randint(2, 999)}) * e^{rng.randint(1, 9)}",
    ]
    texts = {rng.choice(shapes)() for _ in range(3 * N)}
    return sorted(texts)[:N]


def _grade(text: str) -> bool:
    """What the engine does with one answer: read it, compare it with the key."""
    return engine_accepts(text, target=KEY, tolerance="auto")


def _median_ns(work: Callable[[str], object], texts: list[str]) -> float:
    """Median wall time of ``work(text)`` over the texts, each call timed on its own."""
    times = []
    clock = time.perf_counter_ns
    for text in texts:
        start = clock()
        work(text)
        times.append(clock() - start)
    return statistics.median(times)


def main() -> None:
    rng = random.Random(20260821)
    corpora = {"decimals": _decimals(rng), "expressions": _expressions(rng)}
    baseline = _median_ns(float, corpora["decimals"])  # Python's float() of the same decimals
    rows = []
    for name, texts in corpora.items():
        read_answer.cache_clear()
        cold = _median_ns(_grade, texts)
        warm = _median_ns(_grade, texts)  # every text is now in the memo cache
        rows.append((name, cold, warm))

    print(f"parse + compare, median per answer, {N} distinct answers per row")
    print(f"baseline: Python float() of the same decimal strings = {baseline / 1000:.2f} µs\n")
    print(
        f"{'':12} {'cold':>10} {'warm':>10} {'cold/float':>11} {'warm/float':>11} {'cold/warm':>10}"
    )
    for name, cold, warm in rows:
        print(
            f"{name:12} {cold / 1000:>8.1f}µs {warm / 1000:>8.2f}µs {cold / baseline:>10.0f}x "
            f"{warm / baseline:>10.1f}x {cold / warm:>9.0f}x"
        )
    # The whole single-answer path: read, compare with the key, then the bank's and the derived
    # mistakes, building the Verdict a student sees.
    bank = load_bank("bert-mlm")
    question = bank.question("num-mlm-two")

    def _verdict(text: str) -> object:
        return grade_response(bank, question, text)

    print("\nfull verdict (grade_response on num-mlm-two, mistakes included):")
    for name, texts in corpora.items():
        read_answer.cache_clear()
        cold = _median_ns(_verdict, texts)
        warm = _median_ns(_verdict, texts)
        rows.append((f"{name} verdict", cold, warm))
        print(
            f"{name:12} {cold / 1000:>8.1f}µs {warm / 1000:>8.2f}µs  ({cold / warm:.0f}x cold/warm)"
        )
    worst_warm = max(warm for _, _, warm in rows) / 1e6
    verdict = "met" if worst_warm < 0.25 else "NOT met"
    print(f"\ngoal 'warm well under 1 ms' (< 0.25 ms): {verdict} ({worst_warm * 1000:.2f} µs)")


if __name__ == "__main__":
    main()
