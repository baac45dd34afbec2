"""The compiled-bank cache: what a warm command reads back is what a cold one works out.

Real files in a folder of the test's own, real subprocesses for concurrent writers. The rest of
the suite runs with the cache off (conftest.py); every test here switches it on.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
import sympy
from click.testing import CliRunner

from quizgym.accept import accepted_runs
from quizgym.cli import cli
from quizgym.export.plan import plan
from quizgym.loader import load_bank
from quizgym.model import Numeric
from quizgym.solver import CompiledBank, Variant, compile_bank
from quizgym.solver import cache as store
from quizgym.solver import keys as keys_module

ROOT = Path(__file__).resolve().parent.parent
BANKS = [
    ROOT / "banks" / "bert-mlm.yaml",
    ROOT / "tests" / "data" / "special-chars.yaml",
    ROOT / "tests" / "data" / "export" / "physics-stats.yaml",
    ROOT / "tests" / "data" / "grade" / "quiz.yaml",
]
SMALL = ROOT / "tests" / "data" / "grade" / "quiz.yaml"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The cache switched on, in a folder of this test's own."""
    here = tmp_path / "cache"
    monkeypatch.delenv("QUIZGYM_CACHE", raising=False)
    monkeypatch.setenv("QUIZGYM_CACHE_DIR", str(here))
    yield here


def _env(folder: Path) -> dict[str, str]:
    env = {**os.environ, "QUIZGYM_CACHE_DIR": str(folder)}
    env.pop("QUIZGYM_CACHE", None)
    return env


def _worked(book: CompiledBank) -> CompiledBank:
    """A compiled bank that has worked out keys, mistakes and memos for several variants."""
    for question in book.bank.questions:
        if isinstance(question, Numeric) and book.slots_of(question):
            for seed in (None, 1, 2, 3):
                variant = book.variant(question, student=None if seed is None else "s", seed=seed)
                for slot in book.slots_of(question):
                    book.mistakes(slot, variant)
    plan(book, variants=3)
    return book


def _all_right(book: CompiledBank) -> None:
    """Every value a compiled bank holds is what a fresh compilation works out."""
    fresh = compile_bank(load_bank(book.bank.path))
    for (qid, signature), keys in book._keys.items():
        variant = Variant(question=qid, params=dict(signature))
        for x, y in zip(keys, fresh.keys(qid, variant), strict=True):
            assert (x.value._mpf_, x.text, x.shown) == (y.value._mpf_, y.text, y.shown)
    for (slot, signature), mistakes in book._mistakes.items():
        variant = Variant(question=book.slot(slot).question.id, params=dict(signature))
        assert mistakes == fresh.mistakes(fresh.slot(slot), variant)
    for (namespace, key), value in book._memo.items():
        if namespace == "accepted_runs":
            target, tolerance, grid = key
            assert value == accepted_runs(target=target, tolerance=tolerance, grid=grid)
        else:
            assert namespace in {"bank_hash", "question_hash"}


def _same_tables(a: CompiledBank, b: CompiledBank) -> None:
    assert a._keys.keys() == b._keys.keys()
    for k, keys in a._keys.items():
        for x, y in zip(keys, b._keys[k], strict=True):
            assert (x.value._mpf_, x.text, x.shown) == (y.value._mpf_, y.text, y.shown)
    assert a._mistakes == b._mistakes
    assert a._memo == b._memo


@pytest.mark.parametrize("path", BANKS, ids=lambda p: p.stem)
def test_every_table_round_trips_exactly(path: Path) -> None:
    book = _worked(compile_bank(load_bank(path)))
    tables = book.tables()
    parts = {name: store.encode(table) for name, table in tables.items()}
    parts["bank"] = store.encode(book.bank)
    back = {name: store.decode(json.loads(json.dumps(data))) for name, data in parts.items()}
    again = compile_bank(back.pop("bank"))
    again.restore(back)
    _same_tables(book, again)
    assert again.bank.model_dump() == book.bank.model_dump()
    assert [type(q) for q in again.bank.questions] == [type(q) for q in book.bank.questions]


def test_every_attribute_of_a_compiled_bank_is_stored_or_made_from_the_bank() -> None:
    # A new table of worked-out values must be named in CompiledBank.STORED (and so reach the
    # cache); a new attribute the constructor derives from the bank goes in MADE. An attribute
    # in neither fails here, so nothing worked out is silently left out of the cache.
    made = {
        "bank",
        "table",
        "rules",
        "packs",
        "budget",
        "solving_seconds",
        "out_of_budget",
        "slots",
        "findings",
        "_by_id",
        "_by_question",
        "_draws",
        "cache_key",
        "cached",
        "_saved_sizes",
    }
    book = _worked(compile_bank(load_bank(BANKS[0])))
    assert set(vars(book)) == made | set(CompiledBank.STORED)


@pytest.mark.parametrize(
    "value",
    [object(), sympy.log(10), Path("x"), lambda: 1, {"a": object()}],
    ids=["object", "sympy", "path", "function", "nested"],
)
def test_a_value_of_another_type_fails_loudly(value: object) -> None:
    with pytest.raises(TypeError, match="cannot store|only quizgym"):
        store.encode(value)


def test_the_codec_keeps_every_type_it_takes() -> None:
    with mpmath.workdps(30):
        third = mpmath.mpf(1) / 3
    values = [
        None,
        True,
        3,
        -2.5,
        float("inf"),
        "ünï",
        (1, (2, "x")),
        [1, [2]],
        {(1, "a"): frozenset({"p", "q"})},
        Fraction(-7, 3),
        Decimal("0.000100"),
        third,
    ]
    back = store.decode(json.loads(json.dumps(store.encode(values))))
    assert back[:-1] == values[:-1]
    assert back[-1]._mpf_ == third._mpf_  # every bit, at any working precision


def _export(args: list[str], cwd: Path) -> bytes:
    run = CliRunner().invoke(cli, ["export", *args, "-o", str(cwd / "out.xml")])
    assert run.exit_code == 0, run.output
    return (cwd / "out.xml").read_bytes()


def _refuse_to_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, working out a key fails the test (a warm command reads its keys back)."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a warm command solved a key")

    monkeypatch.setattr(keys_module, "exact_key", refuse)
    monkeypatch.setattr(sys.modules["quizgym.solver.compiled"], "exact_key", refuse)


def test_a_warm_export_writes_the_same_bytes_without_solving(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bank = str(BANKS[2])
    cold = _export([bank, "--to", "moodle", "--variants", "3"], tmp_path)
    assert list(folder.glob("*.json")), "the cold run keeps what it worked out"
    _refuse_to_solve(monkeypatch)
    warm = _export([bank, "--to", "moodle", "--variants", "3"], tmp_path)
    assert warm == cold


def test_a_warm_check_prints_what_the_cold_one_printed(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A finding that needs a key worked out (the total's stated value against its key): the warm
    # check replays it from the kept report, solving nothing.
    bad = tmp_path / "bank.yaml"
    text = SMALL.read_text(encoding="utf-8")
    assert text.count("first + second,") == 1
    bad.write_text(text.replace("first + second,", "first + second, value: 9,"), encoding="utf-8")
    runs = []
    for path, warm in ((SMALL, False), (SMALL, True), (bad, False), (bad, True)):
        with monkeypatch.context() as patch:
            if warm:
                _refuse_to_solve(patch)
            runs.append(CliRunner().invoke(cli, ["check", str(path)]))
        if path == SMALL and not warm:
            assert list(folder.glob("*.json")), "the cold check keeps what it worked out"
    assert runs[0].output == runs[1].output and runs[0].exit_code == runs[1].exit_code == 0
    assert runs[2].output == runs[3].output and runs[2].exit_code == runs[3].exit_code == 1
    assert runs[2].output == (
        f"{bad}:48:62: num-sum.total: value 9 disagrees with the key 3 ln 2 ≈ 2.0794 under the "
        "question's tolerance\n"
        f"{bad}: grade-quiz, 7 questions, 201 variants checked: 1 error(s), 0 warning(s)\n"
    )


def test_an_edited_bank_is_worked_out_again(folder: Path, tmp_path: Path) -> None:
    bank = tmp_path / "bank.yaml"
    bank.write_text(SMALL.read_text(encoding="utf-8"), encoding="utf-8")
    before = store.open_bank(bank)
    _worked(before)
    store.save(before)
    text = bank.read_text(encoding="utf-8")
    assert "answer: first + second" in text
    bank.write_text(text.replace("answer: first + second", "answer: first * second"), "utf-8")
    after = store.open_bank(bank)
    assert not after.cached and not after._keys  # another key: nothing read back
    question = next(q for q in after.bank.questions if isinstance(q, Numeric) and q.parts)
    fresh = compile_bank(load_bank(bank))
    variant = fresh.variant(question)
    assert after.keys(question, variant) == fresh.keys(question, variant)


def test_other_code_is_another_key(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = SMALL.read_bytes()
    first = store.bank_key(raw)
    monkeypatch.setattr(store, "_CODE_STAMP", ["quizgym as edited"])
    assert store.bank_key(raw) != first


def _kept(folder: Path) -> Path:
    book = _worked(store.open_bank(SMALL))
    written = store.save(book)
    assert written is not None and written.parent == folder
    return written


@pytest.mark.parametrize(
    "damage",
    ["truncated", "flipped byte", "garbage", "empty", "other key", "old format", "bad table"],
)
def test_a_damaged_file_is_never_trusted_and_is_replaced(folder: Path, damage: str) -> None:
    path = _kept(folder)
    raw = path.read_bytes()
    head, _, body = raw.partition(b"\n")
    magic, key, digest = head.decode().split(" ")
    if damage == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "flipped byte":
        middle = len(raw) // 2
        path.write_bytes(raw[:middle] + bytes([raw[middle] ^ 1]) + raw[middle + 1 :])
    elif damage == "garbage":
        path.write_bytes(os.urandom(4096))
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "other key":
        path.write_bytes(f"{magic} {'0' * 64} {digest}\n".encode() + body)
    elif damage == "old format":
        path.write_bytes(f"quizgym-compiled/0 {key} {digest}\n".encode() + body)
    else:  # a valid file (digest and all) whose table does not decode
        parts = json.loads(body)
        parts["_keys"] = {"dict": [[{"tuple": ["q", 1]}, {"dataclass": "os:system", "fields": {}}]]}
        body = json.dumps(parts).encode()
        path.write_bytes(
            f"{magic} {key} {store.hashlib.sha256(body).hexdigest()}\n".encode() + body
        )
    if damage != "bad table":
        assert store.read(key) is None
    book = store.open_bank(SMALL)
    fresh = _worked(compile_bank(load_bank(SMALL)))
    _same_tables(_worked(book), fresh)  # worked out again, and right
    store.save(book)
    assert store.read(key) is not None  # replaced by a whole file


def test_switched_off_nothing_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUIZGYM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("QUIZGYM_CACHE", "off")
    book = _worked(store.open_bank(SMALL))
    assert store.save(book) is None
    assert not (tmp_path / "cache").exists()


def test_an_unwritable_folder_is_no_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.delenv("QUIZGYM_CACHE", raising=False)
    monkeypatch.setenv("QUIZGYM_CACHE_DIR", str(blocker / "cache"))
    book = _worked(store.open_bank(SMALL))
    assert store.save(book) is None  # the command goes on without a cache


WRITER = textwrap.dedent(
    """
    import sys
    from quizgym.export.plan import plan
    from quizgym.solver import cache
    for round in range(int(sys.argv[2])):
        book = cache.open_bank(sys.argv[1])
        plan(book, variants=1 + (round + int(sys.argv[3])) % 4)
        book._saved_sizes = (-1, -1, -1)  # write every round, whatever was read back
        cache.save(book)
    """
)
READER = textwrap.dedent(
    """
    import pathlib, sys
    from quizgym.solver import cache
    key = cache.bank_key(open(sys.argv[1], "rb").read())
    path, stop = cache._path(cache.cache_dir(), key), pathlib.Path(sys.argv[2])
    whole = torn = 0
    while not (stop.exists() and whole):  # at least one whole read, however late it starts
        try:
            path.read_bytes()
        except FileNotFoundError:
            continue
        stored = cache.read(key)
        if stored is None:
            torn += 1  # the file is there but does not verify: half written, or mixed
        else:
            stored.part("_keys"), stored.part("bank")
            whole += 1
    print(whole, torn)
    """
)


def test_concurrent_writers_and_readers_never_see_half_a_file(folder: Path) -> None:
    env = _env(folder)
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(SMALL), "6", str(k)], env=env)
        for k in range(4)
    ]
    stop = folder.parent / "stop"
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", READER, str(SMALL), str(stop)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for process in writers:
        assert process.wait(timeout=300) == 0
    stop.touch()
    for process in readers:
        out, _ = process.communicate(timeout=300)
        assert process.returncode == 0
        whole, torn = map(int, out.split())
        assert torn == 0, f"a reader found {torn} files that did not verify"
        assert whole > 0, "the readers ran alongside the writers"
    assert not list(folder.glob(".writing-*")), "no temporary file is left behind"
    files = list(folder.glob("*.json"))
    assert len(files) == 1
    book = store.open_bank(SMALL)
    assert book.cached and book._keys and book._memo
    _all_right(book)


def test_concurrent_commands_write_the_same_bytes(folder: Path, tmp_path: Path) -> None:
    quizgym = shutil.which("quizgym", path=str(Path(sys.executable).parent))
    assert quizgym is not None
    outs = [tmp_path / f"out{k}.zip" for k in range(4)]
    processes = [
        subprocess.Popen(
            [quizgym, "export", str(BANKS[2]), "--to", "qti12", "-o", str(out)],
            env=_env(folder),
            stdout=subprocess.DEVNULL,
        )
        for out in outs
    ]
    assert [p.wait(timeout=300) for p in processes] == [0] * len(outs)
    again = tmp_path / "again.zip"
    subprocess.run(
        [quizgym, "export", str(BANKS[2]), "--to", "qti12", "-o", str(again)],
        env=_env(folder),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    assert {out.read_bytes() for out in [*outs, again]} == {again.read_bytes()}


def _report(bank: Path, answers: Path, out: Path, *, folder: Path | None = None) -> str:
    """The report of a grade in this process, or (given the cache folder) in a process of its
    own, as a teacher's next run is."""
    args = ["grade", str(bank), str(answers), "-o", str(out), "--version", "default"]
    if folder is None:
        result = CliRunner().invoke(cli, args)
        assert result.exit_code in (0, 1), result.output
    else:
        done = subprocess.run(
            [sys.executable, "-m", "quizgym", *args], env=_env(folder), capture_output=True
        )
        assert done.returncode in (0, 1), done.stderr
    return (out / "report.html").read_text(encoding="utf-8")


def _timeless(report: str) -> str:
    return "\n".join(line for line in report.splitlines() if " s<" not in line)


def test_a_warm_grade_shows_the_questions_the_cold_one_showed(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = tmp_path / "class.csv"
    answers.write_text("student,tf-bert-generates\ns1,true\ns2,false\n", encoding="utf-8")
    cold = _report(BANKS[0], answers, tmp_path / "cold")
    assert list(folder.glob("*.json")), "the cold run keeps what it worked out"
    # The warm run reads the questions' texts from the cache: it parses no Markdown.
    monkeypatch.setattr("quizgym.render.report._question_texts", _never)
    warm = _report(BANKS[0], answers, tmp_path / "warm")
    assert _timeless(warm) == _timeless(cold)
    assert "<math" in cold  # the bank's texts hold formulas


def test_an_image_changed_after_a_grade_shows_in_the_next_report(
    folder: Path, tmp_path: Path
) -> None:
    # An image is read from its file, which the compiled bank's key does not cover: a report of
    # a bank that shows one always reads it again.
    bank = tmp_path / "bank.yaml"
    shutil.copytree(ROOT / "tests" / "data" / "rich" / "figures", tmp_path / "figures")
    bank.write_text((ROOT / "tests" / "data" / "rich" / "rich.yaml").read_text("utf-8"), "utf-8")
    answers = tmp_path / "class.csv"
    answers.write_text("student\ns1\n", encoding="utf-8")
    image = tmp_path / "figures" / "histogram.png"
    before = _report(bank, answers, tmp_path / "before", folder=folder)
    assert list(folder.glob("*.json")), "the first run keeps what it worked out"
    image.write_bytes(image.read_bytes() + b"\0changed")
    after = _report(bank, answers, tmp_path / "after", folder=folder)
    shown = "data:image/png;base64,{}"
    assert shown.format(base64.b64encode(image.read_bytes()).decode()) in after
    assert shown.format(base64.b64encode(image.read_bytes()).decode()) not in before


def _never(*args: object) -> object:
    raise AssertionError("the questions' texts were worked out again")
