"""What does grouping free-text answers by similarity cost, per 1,000 answers?

Makes a class's answers to "why does the sample variance divide by n − 1?" from phrase pieces
(paraphrases, denials, filler, a typo now and then; seeded, so every run grades the same text)
and times ``group_answers`` with each method, the word caches emptied first (every answer read
and stemmed afresh), at 1,000 and 5,000 distinct answers; the grouping compares every answer
with the earlier ones, so its cost grows with the square of the number of distinct answers.
Loading the WordLlama model is timed apart: a process pays it once. For scale, the rubric's
suggestion for the same answers (``grade_response`` on a two-criterion rubric) is timed too.

Run: ``.venv/bin/python benchmarks/similar.py`` (half a minute; the wordllama rows need
``pip install "quizgym[similar]"``).
"""

from __future__ import annotations

import importlib.util
import random
import statistics
import time
from collections.abc import Callable

from quizgym import similar
from quizgym.answers import grade_response
from quizgym.loader import parse_bank
from quizgym.similar import METHODS, group_answers
from quizgym.words import read_words, stem

BANK = parse_bank(
    """
bank: bench
title: Bench
questions:
  - id: why-n-minus-1
    type: free_text
    prompt: Why divide by n - 1?
    model_answer: We lose a degree of freedom, and dividing by n would bias the estimate.
    rubric:
      - criterion: Estimating the mean uses up a degree of freedom
        any_of: [lose a degree of freedom, n - 1 degrees of freedom]
        synonyms: {lose: [lost, use up, used up, spend]}
      - criterion: Dividing by n would bias the estimate
        any_of: [bias, unbiased, underestimate]
""",
    path="bench.yaml",
)
OPENINGS = ["", "Because ", "I think ", "Basically ", "so that ", "It is because "]
CLAIMS = [
    "we lose {one} degree of freedom",
    "estimating the {mean} loses {one} degree of freedom",
    "{one} degree of freedom is used up by the {mean}",
    "the {mean} uses up {one} degree of freedom",
    "we do not lose {one} degree of freedom",
    "it makes the variance estimate unbiased",
    "dividing by n would underestimate the variance",
    "it has nothing to do with bias",
    "n is too small otherwise",
    "the sample is not the population",
    "I don't know",
]
FILLERS = ["", " and the estimate is better", ", which matters for small samples", " in general"]


def _answers(n: int, rng: random.Random) -> list[str]:
    """``n`` distinct answers."""
    seen: dict[str, None] = {}
    while len(seen) < n:
        text = rng.choice(OPENINGS) + rng.choice(CLAIMS).format(
            one=rng.choice(["one", "a", "1"]), mean=rng.choice(["mean", "sample mean", "average"])
        )
        text += (
            rng.choice(FILLERS)
            + rng.choice([".", "", "!"])
            + f" ({len(seen)})" * (rng.random() < 0.7)
        )
        if rng.random() < 0.1:  # a typo: two letters swapped
            i = rng.randrange(len(text) - 1)
            text = text[:i] + text[i + 1] + text[i] + text[i + 2 :]
        seen.setdefault(text, None)
    return list(seen)


def _cold() -> None:
    read_words.cache_clear()
    stem.cache_clear()


def _time(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        _cold()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    rng = random.Random(16)
    methods = [m for m in METHODS if m == "stems" or importlib.util.find_spec("wordllama")]
    if "wordllama" in methods:
        start = time.perf_counter()
        similar._wordllama()
        print(f"wordllama: loading the model once per process: {time.perf_counter() - start:.2f} s")
    else:
        print('wordllama: not installed (pip install "quizgym[similar]"); its rows are left out')
    question = BANK.question("why-n-minus-1")
    for n in (1000, 5000):
        texts = _answers(n, rng)
        print(f"\n{n} distinct answers, median of 3 runs, caches cold:")
        for method in methods:
            seconds = _time(lambda: group_answers(texts, method=method), 3)  # noqa: B023
            groups = len(group_answers(texts, method=method))
            print(
                f"  group_answers(method={method!r}): {seconds:6.2f} s,"
                f" {1000 * seconds / n * 1000:7.1f} ms per 1,000 answers ({groups} groups)"
            )
        seconds = _time(lambda: [grade_response(BANK, question, t) for t in texts], 3)  # noqa: B023
        print(
            f"  the rubric's suggestion (grade_response): {seconds:6.2f} s,"
            f" {1000 * seconds / n * 1000:7.1f} ms per 1,000 answers"
        )


if __name__ == "__main__":
    main()
