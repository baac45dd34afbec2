"""What each speed path of a grading run saves: CPU seconds of ``grade_submissions`` in this
process on the benchmark's class, with one path switched off at a time.

The paths are pyarrow's read of a wide CSV (``arrow-read``: without it the careful reader reads
every row), plain decimals read a column at a time (``decimals``: without it each distinct text
is read by ``expr.read_answer``) and pyarrow's CSV writer (``arrow-write``: without it the
standard library writes the same bytes). Each figure is the best of ``--runs`` runs of CPU time
(``time.process_time``: steadier than wall time on a shared machine), every path measured in a
process of its own, rounds interleaved.

Run: ``.venv/bin/python benchmarks/grading_paths.py --students 3000``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PATHS = ("none", "arrow-read", "decimals", "arrow-write")


def switch_off(path: str) -> None:
    """Replace one speed path with the path it stands in for."""
    import quizgym.grading.batch as batch
    import quizgym.grading.outputs as outputs
    import quizgym.grading.readers.submissions as submissions
    import quizgym.grading.wrong_version as wrong_version

    if path == "arrow-read":
        submissions.start_wide_arrow = lambda *args, **kwargs: None
    elif path == "decimals":
        batch.read_plain_column = wrong_version.read_plain_column = lambda texts: None
    elif path == "arrow-write":

        def plain_writer(target, header, columns):  # type: ignore[no-untyped-def]
            header = [outputs.defuse(h) for h in header]
            cells = [
                (
                    [outputs.defuse(w) if w[:1] in outputs.FORMULA_START else w for w in words],
                    codes.resolved() if isinstance(codes, outputs.Through) else codes,
                )
                for words, codes in columns
            ]
            return lambda: outputs._write_plain(target, header, cells)

        outputs.table_writer = plain_writer


def measure(path: str, data: Path, runs: int) -> float:
    """CPU seconds of the best of ``runs`` runs with ``path`` switched off (in this process)."""
    from quizgym.grading.run import grade_submissions
    from quizgym.solver.cache import open_bank

    switch_off(path)
    book = open_bank("bert-mlm")
    best = float("inf")
    with tempfile.TemporaryDirectory() as out:
        for _ in range(runs):
            start = time.process_time()
            grade_submissions(book, [data], out_dir=Path(out), version="per-student")
            best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=5, help="runs per process; the best counts")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of processes")
    parser.add_argument("--measure", nargs=2, metavar=("PATH", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(measure(args.measure[0], Path(args.measure[1]), args.runs))
        return
    from grading import generate

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "class.csv"
        generate(data, args.students)
        best = dict.fromkeys(PATHS, float("inf"))
        for _ in range(args.rounds):
            for path in PATHS:
                command = [sys.executable, __file__, "--runs", str(args.runs)]
                done = subprocess.run(
                    [*command, "--measure", path, str(data)],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                best[path] = min(best[path], float(done.stdout.split()[-1]))
        print(f"class: {args.students} students; CPU seconds of grade_submissions, best of runs")
        for path in PATHS:
            off = "the run as it is" if path == "none" else f"without {path}"
            print(f"  {off:<24} {best[path]:.3f} s ({best[path] / best['none']:.2f}x)")


if __name__ == "__main__":
    main()
