"""Whole-process start-up of quizgym's commands, against ``python -c pass`` and text2qti.

Each command runs as a user runs it, in a fresh process, with the compiled-bank cache warmed by
one run before timing (``check`` and ``export`` are "warm": the bank's bytes and quizgym are
unchanged since):

- ``quizgym --help``, ``quizgym solve "ln 10"`` and ``solve 2.30`` (neither needs sympy nor
  mpmath: one logarithm and plain arithmetic are worked out exactly without them);
- ``quizgym check bert-mlm`` warm (and cold, the cache off, for comparison);
- ``quizgym practice`` until its first prompt is on the terminal (a pseudo-terminal, pexpect);
- ``quizgym export bert-mlm --to qti12`` warm (and cold), against text2qti's whole run on the
  same 70-question quiz in its own format (``benchmarks/data/bert-mlm.text2qti.txt``, written by
  ``benchmarks/text2qti_quiz.py``).

Runs are interleaved (one of each command per round) so that every command sees the same load
on a shared machine; each figure is the median of ``--runs`` rounds. Goals (issue 18): --help
≤ 5×, solve ≤ 8×, check warm ≤ 10×, practice ≤ 10× ``python -c pass``; export warm ≤ 2×
text2qti.

Processes start as an installed quizgym does, its bytecode compiled (``installed.py``).

Run: ``.venv/bin/python benchmarks/startup.py`` (text2qti: ``.venv/bin/pip install text2qti``;
without it the export comparison is left out).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from installed import installed_env

HERE = Path(__file__).resolve().parent
QUIZ = HERE / "data" / "bert-mlm.text2qti.txt"
BIN = Path(sys.executable).parent


def timed(command: list[str], *, cwd: Path, env: dict[str, str]) -> float:
    """Seconds one whole process takes."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr.decode()}")
    return elapsed


def first_prompt(*, cwd: Path, env: dict[str, str], linger: float = 0.0) -> float:
    """Seconds from starting ``quizgym practice`` until its first prompt is shown (then it is
    left there ``linger`` seconds, as a student reads, before it is killed)."""
    import pexpect

    start = time.perf_counter()
    child = pexpect.spawn(
        str(BIN / "quizgym"),
        ["practice", "--seed", "1"],
        cwd=str(cwd),
        env={**env, "TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "100"},
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 100),
    )
    try:
        child.expect(r" > ")
        taken = time.perf_counter() - start
        time.sleep(linger)
        return taken
    finally:
        child.close(force=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="rounds; the median counts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {
            **installed_env(),
            "QUIZGYM_CACHE_DIR": str(folder / "cache"),
            "QUIZGYM_DB": str(folder / "progress.sqlite3"),
        }
        env.pop("QUIZGYM_CACHE", None)
        cold = {**env, "QUIZGYM_CACHE": "off"}
        quizgym = str(BIN / "quizgym")
        export = [quizgym, "export", "bert-mlm", "--to", "qti12", "-o", "bert-mlm.zip"]
        work: dict[str, Callable[[], float]] = {
            "python -c pass": lambda: timed([sys.executable, "-c", "pass"], cwd=folder, env=env),
            "quizgym --help": lambda: timed([quizgym, "--help"], cwd=folder, env=env),
            'quizgym solve "ln 10"': lambda: timed(
                [quizgym, "solve", "ln 10"], cwd=folder, env=env
            ),
            "quizgym solve 2.30": lambda: timed([quizgym, "solve", "2.30"], cwd=folder, env=env),
            "quizgym check bert-mlm (warm)": lambda: timed(
                [quizgym, "check", "bert-mlm"], cwd=folder, env=env
            ),
            "quizgym check bert-mlm (cold)": lambda: timed(
                [quizgym, "check", "bert-mlm"], cwd=folder, env=cold
            ),
            "quizgym practice, first prompt": lambda: first_prompt(cwd=folder, env=env),
            "quizgym export --to qti12 (warm)": lambda: timed(export, cwd=folder, env=env),
            "quizgym export --to qti12 (cold)": lambda: timed(export, cwd=folder, env=cold),
        }
        text2qti = shutil.which("text2qti", path=str(BIN)) or shutil.which("text2qti")
        if text2qti is not None:
            shutil.copy(QUIZ, folder / QUIZ.name)
            work["text2qti, 70 questions"] = lambda: timed(
                [text2qti, QUIZ.name], cwd=folder, env=env
            )
        else:
            print("text2qti is not installed: pip install text2qti to compare exports")
        for run in work.values():  # warm the cache (and the OS's file cache) once
            run()
        # A drill before, read for a second at its first prompt (it keeps the bank's preview
        # meanwhile, which the first prompt is then shown from: quizgym.practice.preview).
        first_prompt(cwd=folder, env=env, linger=1.0)
        times: dict[str, list[float]] = {name: [] for name in work}
        for _ in range(args.runs):
            for name, run in work.items():
                times[name].append(run())
        median = {name: statistics.median(values) for name, values in times.items()}
        best = {name: min(values) for name, values in times.items()}
        base = median["python -c pass"]
        goals = {
            "quizgym --help": 5,
            'quizgym solve "ln 10"': 8,
            "quizgym solve 2.30": 8,
            "quizgym check bert-mlm (warm)": 10,
            "quizgym practice, first prompt": 10,
        }
        print(f"median of {args.runs} interleaved runs, whole processes (and the best run's ratio,")
        print("steadier on a machine shared with other work)")
        for name, value in median.items():
            ratio = f"{value / base:5.1f}x python -c pass"
            steady = f"best {best[name] / best['python -c pass']:5.1f}x"
            goal = f" (goal <= {goals[name]}x)" if name in goals else ""
            print(f"  {name:<34} {value * 1000:7.0f} ms  {ratio}  {steady}{goal}")
        if "text2qti, 70 questions" in median:
            ratio = median["quizgym export --to qti12 (warm)"] / median["text2qti, 70 questions"]
            print(f"export qti12 (warm) / text2qti: {ratio:.2f}x (goal <= 2x)")


if __name__ == "__main__":
    main()
