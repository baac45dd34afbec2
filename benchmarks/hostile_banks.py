"""How long and how much memory does ``quizgym check`` take on hostile banks?

Runs ``quizgym check`` on every bank in ``tests/data/hostile/`` (alias bombs, recursive and deep
YAML, code tags, keys whose exact maths explodes, wide parameter ranges), each in its own
subprocess, and prints its outcome (exit code and the first finding), wall-clock time and peak
memory (the child's ``ru_maxrss``). Goal: at most 10 s and 1 GB each.

Each child runs under a memory cap (``--memory-gb``, default 4) and a time limit (``--timeout``,
default 120 s), so that measuring a version without the budgets does not take the machine down:
such a run shows as ``killed`` or ``out of memory``.

Run: ``.venv/bin/python benchmarks/hostile_banks.py`` (about 15 s). To measure another checkout
of quizgym with the same interpreter, put it first on the path:
``PYTHONPATH=path/to/other/checkout .venv/bin/python benchmarks/hostile_banks.py``.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HOSTILE = Path(__file__).resolve().parent.parent / "tests" / "data" / "hostile"
GOAL_SECONDS = 10.0
GOAL_MB = 1024.0


@dataclass(frozen=True, kw_only=True)
class Run:
    """One bank's check: how it ended, how long it took and its peak memory."""

    bank: str
    outcome: str
    seconds: float
    peak_mb: float

    @property
    def within_goal(self) -> bool:
        return self.seconds <= GOAL_SECONDS and self.peak_mb <= GOAL_MB


def _outcome(code: int, stderr: str, stdout: str) -> str:
    if code == -signal.SIGKILL:
        return "killed (time limit)"
    if "MemoryError" in stderr:
        return "out of memory"
    lines = [line for line in stderr.splitlines() if line.strip()]
    first = lines[0] if lines else (stdout.splitlines() or [""])[-1]
    if ": " in first and first.startswith(str(HOSTILE)):
        first = first[len(str(HOSTILE)) + 1 :]
    return f"exit {code}: {first[:110]}"


def check(bank: Path, *, timeout: float, memory_gb: float) -> Run:
    """Run ``quizgym check BANK`` in a child process and measure it."""
    cap = int(memory_gb * 2**30)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    start = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-m", "quizgym", "check", str(bank)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limit,
        cwd=HOSTILE,  # not the checkout: "-m" puts the working folder first on the path
    )
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        stdout, stderr = child.communicate()
    seconds = time.monotonic() - start
    # RUSAGE_CHILDREN's ru_maxrss is the largest of the reaped children: main() measures each
    # bank from a fresh process, whose one child is this check.
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Run(
        bank=bank.name,
        outcome=_outcome(child.returncode, stderr, stdout),
        seconds=seconds,
        peak_mb=usage.ru_maxrss / 1024,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per bank")
    parser.add_argument("--memory-gb", type=float, default=4.0, help="memory cap per bank")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: measure one bank
    args = parser.parse_args()
    if args.one:
        run = check(Path(args.one).resolve(), timeout=args.timeout, memory_gb=args.memory_gb)
        print(f"{run.bank}\t{run.outcome}\t{run.seconds:.2f}\t{run.peak_mb:.0f}")
        return
    import quizgym

    print(f"quizgym from {Path(quizgym.__file__).parent.parent}")
    print(f"{'bank':34} {'seconds':>8} {'peak MB':>8}  goal  outcome")
    all_within = True
    for bank in sorted(HOSTILE.glob("*.yaml")):
        # A fresh measuring process per bank, so that ru_maxrss of its children is this bank's.
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--one",
                str(bank),
                "--timeout",
                str(args.timeout),
                "--memory-gb",
                str(args.memory_gb),
            ],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ},
        ).stdout.strip()
        name, outcome, seconds, peak = out.split("\t")
        run = Run(bank=name, outcome=outcome, seconds=float(seconds), peak_mb=float(peak))
        all_within = all_within and run.within_goal
        mark = "ok" if run.within_goal else "OVER"
        print(f"{run.bank:34} {run.seconds:8.2f} {run.peak_mb:8.0f}  {mark:4}  {run.outcome}")
    print("every bank within 10 s and 1 GB" if all_within else "some banks exceed 10 s or 1 GB")


if __name__ == "__main__":
    main()
