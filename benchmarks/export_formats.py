"""How long each export of the bundled bank takes, as a ratio of loading the bank.

Run: .venv/bin/python benchmarks/export_formats.py
The baseline (parsing and validating bert-mlm.yaml) is measured in the same process, so the
ratios compare across machines.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from quizgym.export import FORMATS, exporter
from quizgym.loader import load_bank


def best_of(run: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    baseline = best_of(lambda: load_bank("bert-mlm"))
    print(f"baseline load_bank('bert-mlm'): {baseline * 1000:.1f} ms")
    for variants in (0, 20):
        for name in FORMATS:
            if name == "blackboard" and variants:
                continue

            def run(name: str = name, variants: int = variants) -> object:
                # a fresh bank each time: the engine's per-bank caches start cold, as in the CLI
                return exporter(name, load_bank("bert-mlm"), variants=variants).to_bytes()

            seconds = best_of(run)
            label = f"{name} --variants {variants}" if variants else name
            print(f"{label:24} {seconds * 1000:8.1f} ms  {seconds / baseline:6.1f}x baseline")


if __name__ == "__main__":
    main()
