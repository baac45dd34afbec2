"""Time 500 per-student worksheets of the bundled bank (goal: under 10 s).

Prints the time for 500 students (every one with their own variants and choice order, written
to disk by ``render_files`` exactly as ``quizgym render --roster`` does) and its ratio to a
baseline measured in this process: the same template rendered 500 times for one student, so
the ratio is the cost of drawing every student's own numbers and keys.

With ``--pdf N`` it also lays out N per-student PDFs (``render --format pdf``, on every core)
and prints the total against one PDF's time × N / cores (goal: within 1.3×; one PDF is the
median of three, laid out in this process after a warm-up).

Run: .venv/bin/python benchmarks/render.py [--students N] [--pdf N]
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import tempfile
import time
from pathlib import Path

from quizgym.loader import load_bank
from quizgym.render import Student, html_to_pdf, render_files, render_worksheet, select_questions
from quizgym.render.documents import cores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--students", type=int, default=500)
    parser.add_argument("--pdf", type=int, default=30, help="also time N PDF worksheets")
    args = parser.parse_args()
    bank = load_bank("bert-mlm")
    questions = select_questions(bank)
    render_worksheet(bank, questions, student=Student("warm-up"), seed=1)  # templates, caches

    start = time.perf_counter()
    for _ in range(args.students):
        render_worksheet(bank, questions, student=Student("s000"), seed=1, date="2026-01-05")
    baseline = time.perf_counter() - start

    with tempfile.TemporaryDirectory() as tmp:
        roster = Path(tmp) / "class.csv"
        with roster.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["student"])
            writer.writerows([f"s{n:04d}"] for n in range(1, args.students + 1))
        start = time.perf_counter()
        result = render_files(
            bank, out_dir=Path(tmp) / "html", roster=roster, seed=1, key=True, date="2026-01-05"
        )
        elapsed = time.perf_counter() - start
        size = sum(p.stat().st_size for p in result.files)
        pdf_time = single = 0.0
        if args.pdf:
            page = render_worksheet(bank, questions, student=Student("p0"), seed=1)
            html_to_pdf(page)  # WeasyPrint's fonts and styles, once
            alone = []
            for _ in range(3):
                start = time.perf_counter()
                html_to_pdf(page)
                alone.append(time.perf_counter() - start)
            single = statistics.median(alone)
            few = Path(tmp) / "few.csv"
            few.write_text("student\n" + "".join(f"p{n}\n" for n in range(args.pdf)), "utf-8")
            start = time.perf_counter()
            render_files(bank, out_dir=Path(tmp) / "pdf", roster=few, seed=1, formats=["pdf"])
            pdf_time = time.perf_counter() - start

    n = args.students
    print(f"bank: {bank.bank}, {len(questions)} questions per worksheet")
    print(f"baseline, one student's worksheet x{n}:        {baseline:6.2f} s")
    print(
        f"{n} per-student worksheets + class key (HTML): {elapsed:6.2f} s"
        f"  ({elapsed / n * 1000:.1f} ms each, {size / 1e6:.1f} MB written)"
    )
    print(f"ratio to baseline: {elapsed / baseline:.2f}x   goal < 10 s: {elapsed < 10}")
    if args.pdf:
        ideal = single * args.pdf / cores()
        print(f"one PDF worksheet (70 questions), laid out alone: {single:.2f} s")
        print(
            f"{args.pdf} per-student PDFs on {cores()} cores: {pdf_time:.2f} s = "
            f"{pdf_time / ideal:.2f}x one PDF x {args.pdf} / cores (goal <= 1.3x); "
            f"load average {os.getloadavg()[0]:.1f}"
        )


if __name__ == "__main__":
    main()
