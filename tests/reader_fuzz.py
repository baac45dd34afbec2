"""Fuzzing the submission readers: inputs, and the property every input must keep.

For any file (random bytes, or a valid CSV, JSON Lines or Parquet file mutated), reading it must
either refuse the whole file in one line (:class:`~quizgym.errors.SubmissionError`) or account
for every record: the census (records counted apart from the readers) equals the records of the
students graded, plus the rows rejected, plus an LMS's summary rows. And the two ways a run reads
a file, whole in memory (with pyarrow's fast path) and in pieces from byte offsets, must read the
same students, answers and rejections.

``tests/test_reader_fuzz.py`` runs this for a few seconds; ``benchmarks/fuzz_readers.py`` for as
long as it is asked.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from quizgym.errors import SubmissionError
from quizgym.grading.pieces import Plan, plan_loaded, read_piece
from quizgym.grading.readers import read_submissions
from quizgym.grading.scale.plan import plan_run
from quizgym.grading.variants import Variants
from quizgym.model import Bank

SLOTS = ["tf-bert", "mc-causal", "mc-multi", "num-sum.first", "why-mask"]
HEADERS = [
    ["student", *SLOTS],
    ["student", "seed", *SLOTS],
    ["Student", "NAME", "tf-bert", "unknown"],
    ["student", "question", "answer"],
    ["student", "question", "answer", "seed"],
]
TEXTS = st.sampled_from(
    [
        "", " ", "true", "F", "A", "b", "A, B", "1,2", "ln 2", "0.69", "2,400", "²", "①",
        'say "hi"', '"', '""', "a\nb", "a\r\nb", "x\ry", "\t", ";", ",", "\x00", "\x1b[2J",
        "\ufeff", "\u202e", "é", "💥", "student", "Student", "s1", "s2", "7", "-3", "1" * 30,
    ]
) | st.text(max_size=12)  # fmt: skip
IDS = st.sampled_from(
    ["s1", "s2", "s3", "s1 ", "", "student", "\ufeffs4", "s\x005", "é6"]
) | st.text(max_size=6)
DELIMITERS = st.sampled_from([",", ";", "\t"])
MUTATIONS = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=10_000),
        st.sampled_from(["insert", "delete", "duplicate-line", "truncate"]),
        st.sampled_from(
            [b'"', b",", b";", b"\n", b"\r", b"\r\n", b"\xff", b"\xe9", b"\xef\xbb\xbf"]
        ),
    ),
    max_size=4,
)


def mutate(data: bytes, mutations: list[tuple[int, str, bytes]]) -> bytes:
    """Apply byte-level mutations (positions wrap around the data)."""
    for position, kind, piece in mutations:
        at = position % (len(data) + 1)
        if kind == "insert":
            data = data[:at] + piece + data[at:]
        elif kind == "delete":
            data = data[:at] + data[at + 1 :]
        elif kind == "truncate":
            data = data[:at]
        else:
            lines = data.split(b"\n")
            k = position % len(lines)
            data = b"\n".join([*lines[: k + 1], lines[k], *lines[k + 1 :]])
    return data


@st.composite
def csv_files(draw: st.DrawFn) -> tuple[str, bytes]:
    """A CSV file of submissions (wide or long, any delimiter), maybe mutated or cp1252."""
    header = draw(st.sampled_from(HEADERS))
    delimiter = draw(DELIMITERS)
    rows = draw(st.lists(st.lists(TEXTS, min_size=0, max_size=len(header) + 1), max_size=8))
    out = io.StringIO(newline="")
    writer = csv.writer(
        out, delimiter=delimiter, lineterminator=draw(st.sampled_from(["\n", "\r\n", "\r"]))
    )
    writer.writerow(header)
    for row in rows:
        cells = [draw(IDS), *row[1:]] if row else row
        if "question" in header and len(cells) > 1:
            cells[1] = draw(st.sampled_from([*SLOTS, "TF-BERT", "nope", ""]))
        writer.writerow(cells)
    text = out.getvalue()
    if draw(st.booleans()):
        text = "\ufeff" + text
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "cp1252"]))
    data = text.encode(encoding, errors="replace") if encoding == "cp1252" else text.encode()
    return ".csv", mutate(data, draw(MUTATIONS))


@st.composite
def jsonl_files(draw: st.DrawFn) -> tuple[str, bytes]:
    """A JSON Lines file, maybe mutated."""
    values = st.recursive(
        TEXTS | st.integers(-5, 10**25) | st.booleans() | st.none() | st.floats(allow_nan=False),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXTS, inner, max_size=2),
        max_leaves=6,
    )
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        record: dict[str, Any] = {"student": draw(IDS | st.integers(0, 99) | values)}
        if draw(st.booleans()):
            record["seed"] = draw(st.integers(-9, 10**22) | TEXTS)
        answers = {draw(st.sampled_from([*SLOTS, "Why-Mask", "nope"])): draw(values)}
        record[draw(st.sampled_from(["answers", "Answers", "anwsers"]))] = answers
        lines.append(json.dumps(record, ensure_ascii=draw(st.booleans())))
    data = "\n".join(lines).encode()
    return ".jsonl", mutate(data, draw(MUTATIONS))


@st.composite
def parquet_files(draw: st.DrawFn) -> tuple[str, bytes]:
    """A Parquet file with columns of several Arrow types (text, bytes, lists, structs)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = draw(st.integers(0, 6))
    columns: dict[str, Any] = {"student": pa.array([draw(IDS) for _ in range(n)])}
    for name in draw(st.lists(st.sampled_from([*SLOTS, "seed", "nope"]), unique=True, max_size=4)):
        kind = draw(st.sampled_from(["text", "binary", "list", "struct", "int"]))
        if kind == "text":
            columns[name] = pa.array([draw(TEXTS | st.none()) for _ in range(n)])
        elif kind == "binary":
            columns[name] = pa.array(
                [draw(st.binary(max_size=6) | st.none()) for _ in range(n)], type=pa.binary()
            )
        elif kind == "list":
            columns[name] = pa.array(
                [draw(st.lists(TEXTS, max_size=3) | st.none()) for _ in range(n)],
                type=pa.list_(pa.string()),
            )
        elif kind == "struct":
            columns[name] = pa.array(
                [{"x": draw(st.integers(0, 9))} for _ in range(n)],
                type=pa.struct([("x", pa.int8())]),
            )
        else:
            columns[name] = pa.array([draw(st.integers(-(2**40), 2**40)) for _ in range(n)])
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink, row_group_size=max(1, draw(st.integers(1, 4))))
    return ".parquet", sink.getvalue()


ANY_BYTES = st.tuples(
    st.sampled_from([".csv", ".jsonl"]),
    st.binary(max_size=300).map(lambda b: b"student,tf-bert\n" + b),
) | st.tuples(st.sampled_from([".csv", ".jsonl"]), st.binary(max_size=300))


ALL = Variants(rule="default")
"""A rule for variants that rejects no row (the readers' rejections only)."""


def _account(
    plan: Plan, bank: Bank
) -> tuple[list[tuple[str, int]], list[tuple[int, str]], dict[str, Any]]:
    """Read every piece of a plan; check the census; return (students with origins, rejections,
    answers by slot)."""
    students: list[tuple[str, int]] = []
    rejected: list[tuple[int, str]] = []
    answers: dict[str, list[str | None]] = {}
    counted: dict[str, int] = {}
    for piece in plan.pieces:
        part = read_piece(bank, piece, present=plan.present, variants=ALL, roster=plan.roster)
        students += [(s, o[1]) for s, o in zip(part.students, part.origins, strict=True)]
        for (source, _), count in zip(part.origins, part.records, strict=True):
            counted[source] = counted.get(source, 0) + count
        for r in part.rejected:
            counted[r.source] = counted.get(r.source, 0) + r.records
            rejected.append((r.line, str(r.reason)))
        for slot in plan.present:
            answers.setdefault(slot, []).extend(part.column(slot))
    for source, census in plan.census.items():
        expected = counted.get(source, 0) + plan.skipped.get(source, 0)
        assert census.records == expected, (source, census, counted, plan.skipped)
    return students, sorted(rejected), answers


def check_file(bank: Bank, folder: Path, suffix: str, data: bytes, *, chunk_rows: int = 2) -> None:
    """The property of the module docs, for one file."""
    path = folder / f"fuzz{suffix}"
    path.write_bytes(data)
    try:
        whole = read_submissions(bank, [path]) if suffix != ".parquet" else None
    except SubmissionError:
        whole = None
        refused_whole = True
    else:
        refused_whole = False
    try:
        streamed = plan_run(bank, [path], chunk_rows=chunk_rows)
    except SubmissionError as exc:
        # A long file read in pieces must list each student's rows together (documented).
        together = "are not together" in str(exc)
        assert refused_whole or together or suffix == ".parquet", "refused in pieces, read whole"
        return
    assert not refused_whole, "read in pieces, refused whole"
    pieces = _account(streamed, bank)
    if whole is not None:
        assert _account(plan_loaded(whole, [path], chunk_rows=chunk_rows), bank) == pieces
