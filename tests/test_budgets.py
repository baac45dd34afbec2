"""Budgets count work, not the clock: a check and a grade under a CPU hog match a quiet run, and
nothing that ran out of a budget is kept in the compiled-bank cache."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from quizgym import check
from quizgym.answers import grade_response
from quizgym.loader import parse_bank
from quizgym.solver import compile_bank

compiled = importlib.import_module("quizgym.solver.compiled")

BANK = """\
bank: loaded
title: A bank checked on a busy machine
packs: [machine-learning]
questions:
  - id: loss
    type: numeric
    prompt: The loss of two masked tokens predicted at 0.2 and 0.5?
    answer: "mlm_loss(0.2, 0.5) + asin(0.3) - asin(0.3)"
    value: 2.5026
  - id: angle
    type: numeric
    prompt: Compute it.
    answer: "asin(0.3) + 2^(1/6)*ln(7)/ln(3)"
"""
"""Two keys sympy takes some tens of milliseconds of work over; the first one's stated value is
wrong (``ln 10 ≈ 2.3026``), which only a key that was worked out can tell."""

_RUN = r"""
import importlib, json, os, subprocess, sys, time
from pathlib import Path

import sympy.core.cache

from quizgym import check
from quizgym.answers import grade_response
from quizgym.loader import load_bank
from quizgym.solver import Budget, compile_bank

compiled = importlib.import_module("quizgym.solver.compiled")

bank_path, hog_cpu = Path(sys.argv[1]), int(sys.argv[2])


def keys_work() -> float:
    sympy.core.cache.clear_cache()
    book = compile_bank(load_bank(bank_path))
    start = time.thread_time()
    for slot in book.slots:
        book.key(slot, book.variant(slot.question))
    return time.thread_time() - start


def run() -> list[object]:
    sympy.core.cache.clear_cache()
    report = check.check_bank(bank_path)
    book = compile_bank(load_bank(bank_path))
    verdicts = [
        grade_response(book, question, answer).status.value
        for question in book.bank.questions
        for answer in ("2.3026", "2.2928", "3")
    ]
    return [[str(f) for f in report.findings], verdicts]


keys_work()  # imports and first-use set-up, outside what is measured
# Each key may take three times the work all of them take on this machine now.
budget = 3 * max(keys_work(), 0.005)
check.CHECK_KEY_SECONDS = budget
compiled.Budget = lambda: Budget(key_seconds=budget)  # every bank compiled from now on
quiet = run()
# Seven busy processes on one core, and this one moved there: it gets an eighth of the core,
# so its keys take eight times longer by the clock than the work they do.
hog = "import os\nos.sched_setaffinity(0, {%d})\nwhile True:\n    pass\n" % hog_cpu
hogs = [subprocess.Popen([sys.executable, "-c", hog]) for _ in range(7)]
try:
    os.sched_setaffinity(0, {hog_cpu})
    start = time.monotonic()
    busy = run()
    wall = time.monotonic() - start
finally:
    for process in hogs:
        process.kill()
        process.wait()
print(json.dumps({"quiet": quiet, "busy": busy, "budget": budget, "wall": wall}))
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs Linux CPU affinity")
def test_a_check_and_a_grade_under_a_cpu_hog_match_a_quiet_run(tmp_path: Path) -> None:
    bank = tmp_path / "loaded.yaml"
    bank.write_text(BANK)
    cpu = min(os.sched_getaffinity(0))
    env = {**os.environ, "QUIZGYM_CACHE": "off"}
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(bank), str(cpu)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    print(f"budget {result['budget']:.3f} s of work; the busy run took {result['wall']:.1f} s")
    assert result["busy"] == result["quiet"]
    findings, verdicts = result["quiet"]
    assert len(findings) == 1
    assert "loss: value 2.5026 disagrees with the key ln 10 ≈ 2.3026" in findings[0]
    assert verdicts == ["correct", "incorrect", "incorrect", "incorrect", "correct", "incorrect"]


def _sleepy_keys(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Each exact key waits ``seconds`` before its work, as a process the system set aside for
    others does: the clock runs on, the work does not grow."""
    real = compiled.exact_key

    def waits_then_works(*args: object, **kwargs: object) -> object:
        time.sleep(seconds)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(compiled, "exact_key", waits_then_works)


def test_time_the_process_waits_is_not_charged_to_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "loaded.yaml"
    path.write_text(BANK)
    quiet = [str(f) for f in check.check_bank(path).findings]
    monkeypatch.setattr(check, "CHECK_KEY_SECONDS", 0.2)
    _sleepy_keys(monkeypatch, 0.3)
    assert [str(f) for f in check.check_bank(path).findings] == quiet
    book = compile_bank(parse_bank(BANK, path=str(path)), budget=compiled.Budget(key_seconds=0.2))
    question = book.bank.questions[0]
    assert grade_response(book, question, "2.3026").status.value == "correct"


def test_a_check_that_ran_out_of_its_budget_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZGYM_CACHE", "on")
    monkeypatch.setenv("QUIZGYM_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "loaded.yaml"
    path.write_text(BANK)
    with monkeypatch.context() as starved:
        starved.setattr(check, "CHECK_KEY_SECONDS", 0.0)
        refused = [str(f) for f in check.check_bank(path).findings]
    assert any("took longer than its budget" in finding for finding in refused)
    # The next run, with the work it needs, works the keys out again and finds the real error.
    again = [str(f) for f in check.check_bank(path).findings]
    assert again == [
        f"{path}:9:5: loss: value 2.5026 disagrees with the key ln 10 ≈ 2.3026 "
        "under the question's tolerance"
    ]
    cached = check.check_bank(path)  # now kept: read back as it was found
    assert [str(f) for f in cached.findings] == again
    assert list((tmp_path / "cache").glob("*.json"))


def test_keys_that_ran_out_of_their_budget_are_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quizgym.solver import KeyRefusedError
    from quizgym.solver.cache import bank_key, read, save

    monkeypatch.setenv("QUIZGYM_CACHE", "on")
    monkeypatch.setenv("QUIZGYM_CACHE_DIR", str(tmp_path / "cache"))
    raw = BANK.encode()
    book = compile_bank(parse_bank(BANK, path="b.yaml"), budget=compiled.Budget(key_seconds=0.0))
    book.cache_key = bank_key(raw)
    with pytest.raises(KeyRefusedError):
        book.key(book.slots[1], book.variant("angle"))
    assert save(book) is None
    assert read(bank_key(raw)) is None
