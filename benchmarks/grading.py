"""Batch grading speed on a class that types like a class: vectorized, loop, and end to end.

Generates a class (deterministic seed) of ``--students`` students × 8 answer slots of the bundled
bank (true/false, choices, spot-the-error, a parametric numeric question with per-student
variants, a numeric part, free text) as a class types them: numbers at 2–6 decimals, decimal
commas, units, near misses, the bank's known mistakes, expressions, blanks and unreadable text
(tens of thousands of distinct texts per numeric slot at 200,000 students), choice letters in
either case, numbers and the choices' texts. It writes a wide CSV and prints the distinct texts
per slot, then:

1. the vectorized path (read the file, grade every response, item statistics) in responses/s;
2. a per-response loop over the single-answer path (``grade_response``) on a sample, in
   responses/s, and the ratio (goal: ≥ 50×);
3. ``quizgym grade`` end to end in a fresh process (default outputs, start-up included) against
   two pyarrow floors, each in a fresh process too: reading the same file and writing a long
   table of the same number of responses (goal: within 3×), and reading the same file and
   writing exactly the ``grades.csv`` and ``responses.csv`` quizgym wrote, from columns prepared
   beforehand (goal: within 2.5×; the benchmark checks the bytes are the same);
4. the review queue's share of a run (building and writing ``review.csv``).

Fresh processes start as an installed quizgym does, its bytecode compiled (``installed.py``).
Each figure is the best of ``--runs`` (3) runs, every run with the engine's caches emptied; the
fresh-process runs are interleaved so that each side sees the same load on a shared machine.

Run: ``.venv/bin/python benchmarks/grading.py --students 200000`` (``--students 20000`` for a
quick run).

With ``--engine dask`` it instead writes ``--responses`` responses (default 10 million) as a
Parquet file and grades it twice with :func:`quizgym.grading.run.grade_submissions`, all outputs
written: the NumPy engine in chunks in this process (the baseline), then Dask on a local cluster
of ``--workers`` processes; it prints responses per second for both and their ratio.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from installed import installed_env

FRESH = installed_env()
"""Every fresh process starts as an installed quizgym does (its bytecode compiled)."""

BATCH_ROWS = 8_192
"""Rows pyarrow formats at a time in the floors, as quizgym writes (``outputs.CSV_BATCH_ROWS``):
the floors are pyarrow at its fastest, not at its default (1,024 rows, 1.5× slower here)."""

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


def _typed(rng: random.Random, value: float) -> str:
    """A number as a student types it: 2–6 decimals (sometimes no more digits than the
    number needs), now and then with a decimal comma, a unit, a leading ``=`` or spaces."""
    roll = rng.random()
    short = roll < 0.06  # as many digits as the number needs, up to three
    text = f"{value:.{rng.randint(1, 3)}g}" if short else f"{value:.{rng.randint(2, 6)}f}"
    roll = rng.random()
    if roll < 0.05:
        text = text.replace(".", ",")  # a decimal comma (unambiguous: no thousands here)
    elif roll < 0.10:
        text += rng.choice([" nats", " nat", "nats"])
    elif roll < 0.12:
        text = f"= {text}"
    elif roll < 0.15:
        text = f" {text} "
    return text


def _numeric(rng: random.Random, key: float, mistakes: list[float], exprs: list[str]) -> str:
    """One answer to a numeric slot: right, near misses, known mistakes, expressions, blanks."""
    roll = rng.random()
    if roll < 0.30:
        return _typed(rng, key)  # right, at a precision of the student's choosing
    if roll < 0.50:
        return _typed(rng, key * (1 + rng.gauss(0, 0.02)))  # a near miss (or within tolerance)
    if roll < 0.62:
        return _typed(rng, rng.choice(mistakes))  # a known mistake
    if roll < 0.70:
        return rng.choice(exprs)  # typed as an expression
    if roll < 0.77:
        return ""
    if roll < 0.82:
        return rng.choice(["idk", "?", "2.3.0", "ln", "a lot", "1/0", "--2", "2.30.1"])
    return _typed(rng, rng.uniform(0, 10))  # a wild guess


def _choice(rng: random.Random, texts: list[str], right: int) -> str:
    """One answer to a choice question: a letter (either case), a number, a choice's text, a
    blank or something else."""
    roll = rng.random()
    pick = right if rng.random() < 0.55 else rng.randrange(len(texts))
    letter = "ABCDEFGH"[pick]
    if roll < 0.60:
        return letter
    if roll < 0.70:
        return letter.lower()
    if roll < 0.74:
        return f" {letter}"
    if roll < 0.80:
        return str(pick + 1)
    if roll < 0.88:
        return texts[pick] if rng.random() < 0.8 else texts[pick].lower()
    if roll < 0.94:
        return ""
    return rng.choice(["E", "AB", "none", "?", "b)", "(c)"])


_TRUE_FALSE = ["false", "False", "FALSE", "F", "f", "no", "No", "0", "true", "True", "T", "yes"]
_WHY = [
    "because of the mismatch with fine-tuning",
    "the [MASK] token never appears at fine-tuning",
    "it would be too easy",
    "mismatch; ordinary tokens under-trained",
    "the model would only learn about [MASK] tokens",
    "downstream text has no mask",
    "real tokens would be undertrained",
]


def generate(path: Path, students: int, seed: int = 20260101) -> dict[str, int]:
    """Write a wide CSV of answers as a class types them; return the distinct texts per slot.

    Numeric answers come at varying precision (2–6 decimals, decimal commas, units, spaces),
    with near misses, the bank's known mistakes, expressions, blanks and unreadable text, so a
    numeric slot of 200,000 students has tens of thousands of distinct texts; choice answers
    are letters in either case, numbers, the choices' texts, blanks and strays (a few dozen
    distinct texts); free text is drawn from a few phrasings.
    """
    from quizgym.loader import load_bank
    from quizgym.solver import compile_bank

    bank = load_bank("bert-mlm")
    book = compile_bank(bank)
    rng = random.Random(seed)
    ids = [f"s{k:06d}" for k in range(students)]
    loss = book.slot("num-mlm-two")
    variants, codes = book.variants(loss.question, students=ids, seeds=[None] * students)
    numeric: dict[str, list[tuple[float, list[float], list[str]]]] = {}
    numeric["num-mlm-two"] = [
        (
            book.key(loss, v).number,
            [m.value for m in book.mistakes(loss, v)],
            [
                book.key(loss, v).text,
                "-ln({p1}) - ln({p2})".format(**{k: str(float(x)) for k, x in v.params.items()}),
                "ln(1/{p1}) + ln(1/{p2})".format(**{k: str(float(x)) for k, x in v.params.items()}),
            ],
        )
        for v in variants
    ]
    pct = book.slot("num-mask-fractions.mask_pct")
    default = book.variant(pct.question)
    numeric[pct.id] = [
        (
            book.key(pct, default).number,
            [m.value for m in book.mistakes(pct, default)],
            ["100*0.15*0.8", "15*0.8", "0.8*15", "12%"],
        )
    ]
    choices = {}
    for s in ("mc-which-causal", "mc-log-base", "ste-gpt-size"):
        question = book.slot(s).question
        texts = [c.text for c in question.choices]
        choices[s] = (texts, next(i for i, c in enumerate(question.choices) if c.correct))
    distinct: dict[str, set[str]] = {s: set() for s in SLOTS}
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["student", *SLOTS])
        for k, student in enumerate(ids):
            row = [student]
            for s in SLOTS:
                if s in numeric:
                    table = numeric[s]
                    key, mistakes, exprs = table[codes[k] if len(table) > 1 else 0]
                    text = _numeric(rng, key, mistakes, exprs)
                elif s in choices:
                    text = _choice(rng, *choices[s])
                elif s.startswith("tf-"):
                    text = rng.choice(_TRUE_FALSE) if rng.random() > 0.05 else ""
                else:
                    text = rng.choice(_WHY) if rng.random() > 0.1 else ""
                distinct[s].add(text)
                row.append(text)
            writer.writerow(row)
    return {s: len(texts) for s, texts in distinct.items()}


def cold() -> None:
    """Empty the reader's memos (readings, unit words, conversions), so every timed run reads
    its answers as a fresh ``quizgym grade`` does.

    Every timed run loads its own bank, so its compiled form (keys, mistakes) is made afresh.
    The units library's registry, built once by the first run, stays (a process builds it once;
    across processes the kept units stand for it).
    """
    from quizgym.expr import read_answer
    from quizgym.grading.decimals import reads_as_unit
    from quizgym.units import convert

    read_answer.cache_clear()
    reads_as_unit.cache_clear()
    convert.cache_clear()


def best_of(runs: int, work: Callable[[], tuple[float, int]]) -> tuple[float, int]:
    """The fastest of several cold runs: the machine is shared, so single runs swing widely."""
    results = []
    for _ in range(runs):
        cold()
        results.append(work())
    return min(results)


def vectorized(path: Path) -> tuple[float, int]:
    """Read, grade and analyse in this process, as ``quizgym grade`` does a class it reads
    whole (one piece); (seconds, responses)."""
    from quizgym.analysis import combine
    from quizgym.grading.batch import grade_partition
    from quizgym.grading.readers import read_submissions
    from quizgym.grading.sums import partial_sums
    from quizgym.loader import load_bank

    bank = load_bank("bert-mlm")
    start = time.perf_counter()
    answers = read_submissions(bank, [path])
    graded = grade_partition(bank, answers)
    combine(partial_sums(graded))
    return time.perf_counter() - start, len(answers) * len(graded.slots)


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
    pacsv.write_csv(long, out, pacsv.WriteOptions(batch_size=BATCH_ROWS))
    return time.perf_counter() - start, long.num_rows


def pyarrow_fresh(path: Path, out: Path) -> float:
    """The pyarrow baseline in a fresh process, start-up and imports included, as quizgym's is."""
    start = time.perf_counter()
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from grading import pyarrow_baseline; "
        "from pathlib import Path; pyarrow_baseline(Path(sys.argv[2]), Path(sys.argv[3]))"
    )
    here = str(Path(__file__).parent)
    subprocess.run([sys.executable, "-c", code, here, str(path), str(out)], check=True, env=FRESH)
    return time.perf_counter() - start


def end_to_end(path: Path, out: Path) -> float:
    """``quizgym grade`` in a fresh process, default outputs."""
    start = time.perf_counter()
    # The generated class was drawn per student without seeds (``variant_codes`` with no seed).
    command = [sys.executable, "-m", "quizgym", "grade", "bert-mlm", str(path), "-o", str(out)]
    command += ["--version", "per-student"]  # each student's own variant, drawn without a seed
    done = subprocess.run(command, capture_output=True, env=FRESH)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):  # 1: some rows are rejected, as in a class
        raise SystemExit(f"quizgym grade failed:\n{done.stderr.decode()}")
    return elapsed


SAME_BYTES = ("grades.csv", "responses.csv")


def prepare_columns(graded: Path, prepared: Path) -> None:
    """Read quizgym's ``grades.csv`` and ``responses.csv`` back as dictionary-encoded columns and
    keep them in Arrow IPC files: what the same-bytes floor writes out (outside its timing)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.ipc as ipc

    prepared.mkdir(exist_ok=True)
    for name in SAME_BYTES:
        source = graded / name
        header = next(csv.reader(source.open(encoding="utf-8")))
        table = pacsv.read_csv(
            source,
            read_options=pacsv.ReadOptions(column_names=header, skip_rows=1),
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(header, pa.string()), strings_can_be_null=False
            ),
        )
        table = pa.table([c.dictionary_encode() for c in table.columns], names=header)
        with ipc.new_file(prepared / f"{name}.arrow", table.schema) as writer:
            writer.write_table(table)


def same_bytes_floor(path: Path, prepared: Path, out: Path) -> None:
    """pyarrow reads the class file as quizgym does (every column a string) and writes
    ``grades.csv`` and ``responses.csv`` from the prepared columns, with quizgym's header line
    and quoting: exactly the bytes quizgym writes, with none of the grading."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.ipc as ipc

    header = path.open(encoding="utf-8").readline().rstrip("\n").split(",")
    pacsv.read_csv(
        path,
        convert_options=pacsv.ConvertOptions(
            column_types=dict.fromkeys(header, pa.string()), strings_can_be_null=True
        ),
    )
    out.mkdir(exist_ok=True)
    for name in SAME_BYTES:
        with pa.memory_map(str(prepared / f"{name}.arrow")) as source:
            table = ipc.open_file(source).read_all()
        with (out / name).open("wb") as stream:
            line = ",".join('"' + h.replace('"', '""') + '"' for h in table.column_names)
            stream.write((line + "\n").encode())
            options = pacsv.WriteOptions(
                include_header=False, quoting_style="needed", batch_size=BATCH_ROWS
            )
            pacsv.write_csv(table, stream, options)


def same_bytes_fresh(path: Path, prepared: Path, out: Path) -> float:
    """The same-bytes floor in a fresh process (start-up and imports included)."""
    start = time.perf_counter()
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from grading import same_bytes_floor; "
        "from pathlib import Path; same_bytes_floor(*map(Path, sys.argv[2:]))"
    )
    here = str(Path(__file__).parent)
    subprocess.run(
        [sys.executable, "-c", code, here, str(path), str(prepared), str(out)],
        check=True,
        env=FRESH,
    )
    return time.perf_counter() - start


PEAK = (
    "import atexit, resource, sys\n"
    "def peak():\n"
    "    # VmHWM is this program's own peak: ru_maxrss keeps the peak of the process that\n"
    "    # started it (Linux does not reset it on exec), here the benchmark holding the class\n"
    "    try:\n"
    "        for line in open('/proc/self/status'):\n"
    "            if line.startswith('VmHWM:'):\n"
    "                return int(line.split()[1])\n"
    "    except OSError:\n"
    "        pass\n"
    "    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "atexit.register(lambda: print('PEAK', peak(), file=sys.stderr))\n"
    "sys.argv = ['quizgym', *sys.argv[1:]]\n"
    "from quizgym.cli import main\n"
    "main()\n"
)


def chunked_peak(path: Path, out: Path, chunk_rows: int) -> int:
    """Peak memory (MB) of ``quizgym grade --chunk-rows`` in a fresh process."""
    command = [sys.executable, "-c", PEAK, "grade", "bert-mlm", str(path), "-o", str(out)]
    command += ["--version", "per-student", "--chunk-rows", str(chunk_rows)]
    done = subprocess.run(command, capture_output=True, text=True, env=FRESH)
    line = next(x for x in done.stderr.splitlines() if x.startswith("PEAK"))
    return int(line.split()[1]) // 1024  # in KiB


def review_cost(path: Path, out: Path) -> tuple[float, float, int]:
    """``grade_submissions`` in this process, timing the review queue's share of it.

    Returns:
        (seconds of the whole run, seconds in building and writing ``review.csv``, its rows).
    """
    import quizgym.grading.pieces as pieces
    import quizgym.grading.run as run
    from quizgym.grading.run import grade_submissions

    spent = [0.0]

    def timed(function: Callable[..., object]) -> Callable[..., object]:
        def wrapper(*args: object, **kwargs: object) -> object:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - start

        return wrapper

    saved = pieces.review_of, run.write_review
    pieces.review_of, run.write_review = timed(saved[0]), timed(saved[1])  # type: ignore[assignment]
    try:
        start = time.perf_counter()
        result = grade_submissions("bert-mlm", [path], out_dir=out, version="per-student")
        total = time.perf_counter() - start
    finally:
        pieces.review_of, run.write_review = saved
    return total, spent[0], result.review.rows


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
    parser.add_argument(
        "--memory",
        action="store_true",
        help="also the peak memory of grade --chunk-rows 20000 on a quarter and the whole class",
    )
    args = parser.parse_args()
    if args.engine == "dask":
        scale(args.responses, args.workers, args.chunk_rows)
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # The run's own cache folder (compiled bank, kept units), warm after the first run, as
        # on a teacher's machine after their first grading of the bank.
        FRESH["QUIZGYM_CACHE_DIR"] = os.environ["QUIZGYM_CACHE_DIR"] = str(folder / "cache")
        data = folder / "class.csv"
        distinct = generate(data, args.students)
        responses = args.students * len(SLOTS)
        print(f"class: {args.students} students × {len(SLOTS)} slots = {responses} responses")
        print("distinct answer texts per slot:")
        for slot, count in distinct.items():
            print(f"  {slot:<30} {count:>7,}")
        v_time, v_count = best_of(args.runs, lambda: vectorized(data))
        l_time, l_count = best_of(args.runs, lambda: loop(data, args.loop_sample))
        v_rate, l_rate = v_count / v_time, l_count / l_time
        print(f"vectorized (read + grade + statistics): {v_time:.2f} s, {v_rate:,.0f} responses/s")
        print(
            f"  of which per-student variant draws (1 parametric slot): {variant_draws(data):.2f} s"
        )
        print(f"loop over grade_response ({l_count} responses): {l_rate:,.0f} responses/s")
        print(f"ratio vectorized / loop: {v_rate / l_rate:.1f}x (goal >= 50x)")
        graded = folder / "graded"
        b_time, b_count = best_of(args.runs, lambda: pyarrow_baseline(data, folder / "long.csv"))
        e_time = end_to_end(data, graded)  # also writes what the same-bytes floor reproduces
        prepare_columns(graded, folder / "prepared")
        # Fresh processes, interleaved: the machine is shared, so each side sees the same load.
        fresh, floors, ends = [], [], [e_time]
        for _ in range(args.runs):
            fresh.append(pyarrow_fresh(data, folder / "long.csv"))
            floors.append(same_bytes_fresh(data, folder / "prepared", folder / "floor"))
            ends.append(end_to_end(data, graded))
        f_time, s_time, e_time = min(fresh), min(floors), min(ends)
        for name in SAME_BYTES:
            if (folder / "floor" / name).read_bytes() != (graded / name).read_bytes():
                raise SystemExit(f"the same-bytes floor's {name} differs from quizgym's")
        print(f"pyarrow read + write long table ({b_count} rows), in this process: {b_time:.2f} s")
        print(f"  the same in a fresh process (start-up and imports included): {f_time:.2f} s")
        print(
            f"pyarrow read + write quizgym's grades.csv and responses.csv (same bytes, checked), "
            f"fresh process: {s_time:.2f} s"
        )
        print(
            f"quizgym grade end to end (start-up, default outputs): {e_time:.2f} s, "
            f"{responses / e_time:,.0f} responses/s"
        )
        print(f"ratio end to end / long-table floor in process: {e_time / b_time:.1f}x")
        print(f"ratio end to end / long-table floor, fresh process: {e_time / f_time:.2f}x "
              "(goal <= 3x)")  # fmt: skip
        print(f"ratio end to end / same-bytes floor, fresh process: {e_time / s_time:.2f}x "
              "(goal <= 2.5x)")  # fmt: skip
        total, spent, rows = review_cost(data, folder / "review-run")
        print(
            f"review queue (review_of + review.csv, {rows:,} rows): {spent:.2f} s "
            f"of {total:.2f} s in process ({100 * spent / total:.0f} %)"
        )
        if args.memory:
            quarter = folder / "quarter.csv"
            with data.open(encoding="utf-8") as source, quarter.open("w", encoding="utf-8") as out:
                for k, line in enumerate(source):
                    if k > args.students // 4:
                        break
                    out.write(line)
            small = chunked_peak(quarter, folder / "chunked-quarter", 20_000)
            whole = chunked_peak(data, folder / "chunked-whole", 20_000)
            print(
                f"peak memory, grade --chunk-rows 20000: {small} MB for {args.students // 4:,} "
                f"students, {whole} MB for {args.students:,} (flat: {whole / small:.2f}x)"
            )


if __name__ == "__main__":
    main()
