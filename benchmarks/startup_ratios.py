"""Source trees of quizgym in, each quick command's start-up over ``python -c pass`` out.

The commands are ``python -m quizgym --help``, ``quizgym solve "8 ln 2"`` and a warm ``quizgym
check banks/bert-mlm.yaml`` (its compiled-bank cache filled by one run before, in a folder of
its own for each tree). Each round runs every command once for every tree, interleaved, so that
all see the same load on a shared machine; each figure is the median of ``--runs`` rounds. Each
tree's bytecode is compiled first and processes run without ``PYTHONDONTWRITEBYTECODE``, as an
installed quizgym starts (see ``installed.py``).

Run: ``.venv/bin/python benchmarks/startup_ratios.py [TREE ...]`` (default: this checkout). To
compare two states of the code, export one with ``git archive REV | tar -x -C DIR`` and pass
both folders.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BANK = "banks/bert-mlm.yaml"
COMMANDS: dict[str, list[str]] = {
    "python -c pass": ["-c", "pass"],
    "--help": ["-m", "quizgym", "--help"],
    "solve '8 ln 2'": ["-m", "quizgym", "solve", "8 ln 2"],
    "check (warm)": ["-m", "quizgym", "check", BANK],
}
GOALS = {"--help": 5.0, "solve '8 ln 2'": 8.0, "check (warm)": 10.0}
"""The start-up goals, as multiples of ``python -c pass``."""


def environment(tree: Path, cache: Path) -> dict[str, str]:
    """The environment for one tree's processes: its code first on the path, its own cache."""
    compileall.compile_dir(str(tree / "quizgym"), quiet=1)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("QUIZGYM_CACHE", None)
    env["PYTHONPATH"] = str(tree)
    env["QUIZGYM_CACHE_DIR"] = str(cache)
    return env


def timed(args: list[str], *, cwd: Path, env: dict[str, str]) -> float:
    """Seconds one whole process takes."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed in {cwd}:\n{done.stderr.decode()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="*", type=Path, default=[HERE.parent])
    parser.add_argument("--runs", type=int, default=20, help="rounds; the median counts")
    options = parser.parse_args()
    trees = [tree.resolve() for tree in options.trees]
    with tempfile.TemporaryDirectory() as scratch:
        envs = {tree: environment(tree, Path(scratch) / str(i)) for i, tree in enumerate(trees)}
        for tree, env in envs.items():  # fill each tree's cache: the check is warm
            timed(COMMANDS["check (warm)"], cwd=tree, env=env)
        seconds: dict[tuple[Path, str], list[float]] = {
            (tree, name): [] for tree in trees for name in COMMANDS
        }
        for _ in range(options.runs):
            for name, args in COMMANDS.items():
                for tree, env in envs.items():
                    seconds[tree, name].append(timed(args, cwd=tree, env=env))
    for tree in trees:
        floor = statistics.median(seconds[tree, "python -c pass"])
        print(f"{tree} (median of {options.runs} runs)")
        for name in COMMANDS:
            median = statistics.median(seconds[tree, name])
            goal = f"  (goal ≤ {GOALS[name]:g}×)" if name in GOALS else ""
            print(f"  {name:16} {median * 1000:7.1f} ms  {median / floor:5.2f}×{goal}")


if __name__ == "__main__":
    main()
