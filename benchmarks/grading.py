"""Batch grading speed: the vectorized grader against a per-response loop, and end to end.

Generates a class (deterministic seed) of ``--students`` students × 8 answer slots of the bundled
bank (true/false, choices, spot-the-error, a parametric numeric question with per-student
variants, a numeric part, free text), writes it as a wide CSV, and prints:

1. the vectorized path (read the file, grade every response, item statistics) in responses/s;
2. a per-response loop over the single-answer path (``grade_response``) on a sample, in
   responses/s, and the ratio (goal: ≥ 50×);
3. ``quizgym grade`` end to end in a fresh process (default outputs, start-up included) against
   pyarrow reading the same file and writing a long table of the same number of responses
   (goal: within 3×), both in this process (imports already done) and in a fresh process like
   quizgym's (interpreter start-up and imports included); and, for scale, the time pyarrow
   alone takes to write the ``responses.csv`` quizgym writes.

Each figure is the best of ``--runs`` (3) runs, every run with the engine's caches emptied.

Run: ``.venv/bin/python benchmarks/grading.py`` (add ``--students 10000`` for a quick run).

With ``--engine dask`` it instead writes ``--responses`` responses (default 10 million) as a
Parquet file and grades it twice with :func:`quizgym.grading.run.grade_submissions`, all outputs
written: the NumPy engine in chunks in this process (the baseline), then Dask on a local cluster
of ``--workers`` processes; it prints responses per second for both and their ratio.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

SLOTS = [
    "tf-bert-generates",
    "tf-mask-all-selected",
    "mc-which-causal",
    "mc-log-base",
    "ste-gpt-size",
    "num-mlm-two",
    "num-mask-fractions.mask_pct",
    "why-not-all-mask",
]


def generate(path: Path, students: int, seed: int = 20260101) -> None:
    """Write a wide CSV of plausible answers (right, rounded, known mistakes, typos, blanks)."""
    from quizgym.loader import load_bank
    from quizgym.solver import bank_slots, keys_of, variant_codes

    bank = load_bank("bert-mlm")
    rng = random.Random(seed)
    ids = [f"s{k:06d}" for k in range(students)]
    slot = {s.id: s for s in bank_slots(bank)}
    loss = slot["num-mlm-two"].question
    variants, codes = variant_codes(bank, loss, students=ids, seeds=[None] * students)
    per_variant = []
    for v in variants:
        key = keys_of(bank, loss, v)[0].number
        per_variant.append(
            [
                f"{key:.2f}",
                f"{key:.3f}",
                f"{key:.4f}",
                f"{key / 2.302585:.3f}",
                f"{key:.1f}",
                "ln 2",
            ]
        )
    pools = {
        "tf-bert-generates": ["false", "False", "F", "true", "no", "maybe", ""],
        "tf-mask-all-selected": ["false", "true", "f", "T", ""],
        "mc-which-causal": ["B", "b", "A", "C", "GPT", "2", "E", ""],
        "mc-log-base": ["A", "B", "C", "D", "a", ""],
        "ste-gpt-size": ["B", "A", "C", "b", ""],
        "num-mask-fractions.mask_pct": ["80", "0.8", "80%", "10", "8e1", "eighty", ""],
        "why-not-all-mask": [
            "because of the mismatch with fine-tuning",
            "the [MASK] token never appears at fine-tuning",
            "it would be too easy",
            "",
            "mismatch; ordinary tokens under-trained",
        ],
    }
    with path.open("w", encoding="utf-8") as out:
        out.write("student," + ",".join(SLOTS) + "\n")
        for k, student in enumerate(ids):
            row = [student]
            for s in SLOTS:
                pool = per_variant[codes[k]] if s == "num-mlm-two" else pools[s]
                row.append(rng.choice(pool))
            out.write(",".join(row) + "\n")


def cold() -> None:
    """Empty the reader's memo, so every timed run pays what a fresh ``quizgym grade`` pays.

    Every timed run loads its own bank, so its compiled form (keys, mistakes) is made afresh.
    """
    from quizgym.expr import read_answer

    read_answer.cache_clear()


def best_of(runs: int, work: Callable[[], tuple[float, int]]) -> tuple[float, int]:
    """The fastest of several cold runs: the machine is shared, so single runs swing widely."""
    results = []
    for _ in range(runs):
        cold()
        results.append(work())
    return min(results)


def vectorized(path: Path) -> tuple[float, int]:
    """Read, grade and analyse in this process; (seconds, responses)."""
    from quizgym.analysis import combine
    from quizgym.grading.batch import grade_partition, partitions
    from quizgym.grading.readers import read_submissions
    from quizgym.grading.sums import partial_sums
    from quizgym.loader import load_bank

    bank = load_bank("bert-mlm")
    start = time.perf_counter()
    answers = read_submissions(bank, [path])
    parts = [grade_partition(bank, p) for p in partitions(answers, size=25_000)]
    sums = partial_sums(parts[0])
    for part in parts[1:]:
        sums = sums.merge(partial_sums(part))
    combine(sums)
    return time.perf_counter() - start, len(answers) * len(parts[0].slots)


def variant_draws(path: Path) -> float:
    """Seconds the engine's per-student variant draws take for the parametric question."""
    from quizgym.grading.readers import read_submissions
    from quizgym.loader import load_bank
    from quizgym.solver import variant_codes

    bank = load_bank("bert-mlm")
    answers = read_submissions(bank, [path])
    start = time.perf_counter()
    variant_codes(
        bank, bank.question("num-mlm-two"), students=answers.students, seeds=answers.seeds
    )
    return time.perf_counter() - start


def loop(path: Path, sample: int) -> tuple[float, int]:
    """grade_response on each response of a sample of rows; (seconds, responses)."""
    import csv

    from quizgym.answers import grade_response
    from quizgym.loader import load_bank
    from quizgym.solver import bank_slots

    bank = load_bank("bert-mlm")
    slot = {s.id: s for s in bank_slots(bank)}
    with path.open(encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    rows = random.Random(1).sample(rows, min(len(rows), max(1, sample // len(SLOTS))))
    start = time.perf_counter()
    count = 0
    for row in rows:
        for s in SLOTS:
            answer = row[s] or None
            grade_response(
                bank, slot[s].question, answer, student=row["student"], part=slot[s].part
            )
            count += 1
    return time.perf_counter() - start, count


def pyarrow_baseline(path: Path, out: Path) -> tuple[float, int]:
    """pyarrow reads the wide file and writes a long (student, question, answer) table."""
    start = time.perf_counter()
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv

    table = pacsv.read_csv(
        path,
        convert_options=pacsv.ConvertOptions(
            strings_can_be_null=False, column_types={s: pa.string() for s in SLOTS}
        ),
    )
    n = table.num_rows
    student = pa.concat_arrays([table.column("student").combine_chunks()] * len(SLOTS))
    # The question column from its buffers: pa.array() would import pandas (0.4 s) when it is
    # installed, which would make the fresh-process baseline unfairly slow.
    codes = np.repeat(np.arange(len(SLOTS), dtype=np.int32), n)
    offsets = np.cumsum([0] + [len(s.encode()) for s in SLOTS], dtype=np.int32)
    names = pa.Array.from_buffers(
        pa.string(),
        len(SLOTS),
        [None, pa.py_buffer(offsets), pa.py_buffer("".join(SLOTS).encode())],
    )
    indices = pa.Array.from_buffers(pa.int32(), len(codes), [None, pa.py_buffer(codes)])
    question = pa.DictionaryArray.from_arrays(indices, names)
    answer = pa.concat_arrays([table.column(s).combine_chunks().cast(pa.string()) for s in SLOTS])
    long = pa.table({"student": student, "question": question, "answer": answer})
    pacsv.write_csv(long, out)
    return time.perf_counter() - start, long.num_rows


def responses_floor(graded: Path, out: Path) -> float:
    """Seconds pyarrow alone takes to write quizgym's ``responses.csv`` (read back, dictionary-
    encoded as quizgym writes it): the floor any writer of that file has to pay."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    source = graded / "responses.csv"
    header = source.open(encoding="utf-8").readline().strip().replace('"', "").split(",")
    table = pacsv.read_csv(
        source,
        convert_options=pacsv.ConvertOptions(column_types=dict.fromkeys(header, pa.string())),
    )
    table = pa.table([c.dictionary_encode() for c in table.columns], names=table.column_names)
    start = time.perf_counter()
    pacsv.write_csv(table, out, pacsv.WriteOptions(quoting_style="needed"))
    return time.perf_counter() - start


def pyarrow_fresh(path: Path, out: Path) -> float:
    """The pyarrow baseline in a fresh process, start-up and imports included, as quizgym's is."""
    start = time.perf_counter()
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from grading import pyarrow_baseline; "
        "from pathlib import Path; pyarrow_baseline(Path(sys.argv[2]), Path(sys.argv[3]))"
    )
    here = str(Path(__file__).parent)
    subprocess.run([sys.executable, "-c", code, here, str(path), str(out)], check=True)
    return time.perf_counter() - start


def end_to_end(path: Path, out: Path) -> float:
    """``quizgym grade`` in a fresh process, default outputs."""
    start = time.perf_counter()
    # The generated class was drawn per student without seeds (``variant_codes`` with no seed).
    command = [sys.executable, "-m", "quizgym", "grade", "bert-mlm", str(path), "-o", str(out)]
    command += ["--version", "per-student"]
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def scale(responses: int, workers: int, chunk_rows: int) -> None:
    """NumPy engine (chunked, this process) against Dask, on one Parquet file."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from quizgym.grading.run import grade_submissions

    students = max(1, responses // len(SLOTS))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        generate(folder / "class.csv", students)
        table = pacsv.read_csv(
            folder / "class.csv",
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(["student", *SLOTS], "string")
            ),
        )
        pq.write_table(table, folder / "class.parquet", row_group_size=chunk_rows)
        (folder / "class.csv").unlink()
        total = students * len(SLOTS)
        print(f"class: {students} students × {len(SLOTS)} slots = {total} responses (Parquet)")
        rates = {}
        for engine in ("numpy", "dask"):
            start = time.perf_counter()
            run = grade_submissions(
                "bert-mlm",
                [folder / "class.parquet"],
                out_dir=folder / engine,
                engine=engine,
                chunk_rows=chunk_rows,
                workers=workers,
                version="per-student",  # the class was drawn per student without seeds
            )
            seconds = time.perf_counter() - start
            assert run.responses == total, run.summary()
            rates[engine] = total / seconds
            print(f"{engine:>5} engine: {seconds:.1f} s, {rates[engine]:,.0f} responses/s")
        print(f"ratio dask ({workers} workers) / numpy: {rates['dask'] / rates['numpy']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=100_000)
    parser.add_argument("--loop-sample", type=int, default=16_000, help="responses in the loop")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each; the best counts")
    parser.add_argument("--engine", choices=["numpy", "dask"], default="numpy")
    parser.add_argument("--responses", type=int, default=10_000_000, help="with --engine dask")
    parser.add_argument("--workers", type=int, default=2, help="with --engine dask")
    parser.add_argument("--chunk-rows", type=int, default=100_000, help="with --engine dask")
    args = parser.parse_args()
    if args.engine == "dask":
        scale(args.responses, args.workers, args.chunk_rows)
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = folder / "class.csv"
        generate(data, args.students)
        responses = args.students * len(SLOTS)
        print(f"class: {args.students} students × {len(SLOTS)} slots = {responses} responses")
        v_time, v_count = best_of(args.runs, lambda: vectorized(data))
        l_time, l_count = best_of(args.runs, lambda: loop(data, args.loop_sample))
        v_rate, l_rate = v_count / v_time, l_count / l_time
        print(f"vectorized (read + grade + statistics): {v_time:.2f} s, {v_rate:,.0f} responses/s")
        print(
            f"  of which per-student variant draws (1 parametric slot): {variant_draws(data):.2f} s"
        )
        print(f"loop over grade_response ({l_count} responses): {l_rate:,.0f} responses/s")
        print(f"ratio vectorized / loop: {v_rate / l_rate:.1f}x (goal >= 50x)")
        b_time, b_count = best_of(args.runs, lambda: pyarrow_baseline(data, folder / "long.csv"))
        f_time = min(pyarrow_fresh(data, folder / "long.csv") for _ in range(args.runs))
        e_time = min(end_to_end(data, folder / "graded") for _ in range(args.runs))
        print(f"pyarrow read + write long table ({b_count} rows), in this process: {b_time:.2f} s")
        print(f"  the same in a fresh process (start-up and imports included): {f_time:.2f} s")
        print(
            f"quizgym grade end to end (start-up, default outputs): {e_time:.2f} s, "
            f"{responses / e_time:,.0f} responses/s"
        )
        print(f"ratio end to end / pyarrow in process: {e_time / b_time:.1f}x (goal <= 3x)")
        print(f"ratio end to end / pyarrow in a fresh process: {e_time / f_time:.1f}x")
        floor = min(responses_floor(folder / "graded", folder / "floor.csv") for _ in range(2))
        print(
            f"pyarrow alone writing quizgym's responses.csv: {floor:.2f} s "
            f"= {floor / b_time:.1f}x the in-process baseline"
        )


if __name__ == "__main__":
    main()
