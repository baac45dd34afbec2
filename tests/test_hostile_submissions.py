"""Hostile submissions: no answer and no row stops the class, loses a student or an answer.

Each case of issue #17 that concerns the submission side is reproduced here (it failed before its
fix): an answer the engine fails on becomes an ``invalid`` verdict with a reason and the class
goes on; a row that cannot be read becomes a rejected row with a reason and the rows after it are
graded; and at the end of every run, the students (records) in the input, counted independently
of the parsers, equal those graded plus those rejected.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from quizgym.answers import Status, grade_response
from quizgym.cli import cli
from quizgym.grading import batch
from quizgym.grading.run import grade_submissions
from quizgym.loader import load_bank
from quizgym.model import Bank

QUIZ = Path(__file__).parent / "data" / "grade" / "quiz.yaml"
SLOTS = [
    "tf-bert", "mc-causal", "mc-multi", "ste-size", "num-loss",
    "num-sum.first", "num-sum.second", "num-sum.total", "why-mask",
]  # fmt: skip
ANSWERS = ["false", "A", "A, B", "A", "ln 2", "0.6931", "1.386", "2.079", "a mismatch"]
BOOM = "💥"
"""The answer the tests make the engine fail on."""


@pytest.fixture(scope="module")
def quiz() -> Bank:
    return load_bank(QUIZ)


def grade(paths: list[Path], out: Path, **options: Any) -> Any:
    return grade_submissions(QUIZ, paths, out_dir=out, version="per-student", **options)


def responses(out: Path) -> dict[tuple[str, str], dict[str, str]]:
    with (out / "responses.csv").open(encoding="utf-8", newline="") as stream:
        return {(r["student"], r["question"]): r for r in csv.DictReader(stream)}


def write_class(path: Path, rows: list[list[str]], header: list[str] | None = None) -> Path:
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(header or ["student", *SLOTS])
        writer.writerows(rows)
    return path


# --- one answer never stops the class -------------------------------------------------------


@pytest.mark.parametrize("typed", ["²", "①", "₁", "٣", "ı", "1" * 5000])
def test_a_digit_int_refuses_is_an_unreadable_choice(quiz: Bank, typed: str) -> None:
    # str.isdigit() is true for "²" and int() refused it: grade exited 2, the drill crashed.
    for question in ("mc-causal", "mc-multi", "ste-size"):
        verdict = grade_response(quiz, quiz.question(question), typed, seed=1)
        assert verdict.status is Status.INVALID
        assert "is not one of the choices" in verdict.feedback


def test_a_superscript_for_a_choice_grades_the_class(tmp_path: Path) -> None:
    data = write_class(tmp_path / "c.csv", [["s1", *ANSWERS], ["s2", "true", "²", *ANSWERS[2:]]])
    result = CliRunner().invoke(
        cli, ["grade", str(QUIZ), str(data), "-o", str(tmp_path / "g"), "--version", "per-student"]
    )
    assert result.exit_code == 0, result.output
    assert "graded 2 students" in result.output
    assert responses(tmp_path / "g")["s2", "mc-causal"]["verdict"] == "invalid"


def _raising(real: Callable[..., Any], position: int = 2) -> Callable[..., Any]:
    """``real``, failing when its argument at ``position`` is :data:`BOOM`."""

    def fake(*args: Any, **kwargs: Any) -> Any:
        if len(args) > position and args[position] == BOOM:
            raise RuntimeError("injected failure")
        return real(*args, **kwargs)

    return fake


@pytest.mark.parametrize("chunk_rows", [None, 1], ids=["in-memory", "chunked"])
@pytest.mark.parametrize("slot", SLOTS)
def test_an_answer_the_engine_fails_on_is_invalid_and_the_class_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slot: str, chunk_rows: int | None
) -> None:
    index = SLOTS.index(slot)
    rows = [[f"s{k}", *ANSWERS] for k in range(4)]
    rows[2][1 + index] = BOOM
    data = write_class(tmp_path / "c.csv", rows)
    clean = grade([data], tmp_path / "clean", chunk_rows=chunk_rows)
    before = responses(tmp_path / "clean")
    # Every place the grader reads or grades one answer fails on BOOM: the engine itself, the
    # choice and true/false readers, the numeric reader and the numeric verdict.
    monkeypatch.setattr(batch, "grade_response", _raising(batch.grade_response))
    monkeypatch.setattr(batch, "read_choices", _raising(batch.read_choices, 0))
    monkeypatch.setattr(batch, "read_bool", _raising(batch.read_bool, 0))
    monkeypatch.setattr(batch, "read_answer", _raising(batch.read_answer, 0))
    run = grade([data], tmp_path / "hit", chunk_rows=chunk_rows)
    after = responses(tmp_path / "hit")
    assert run.students == clean.students == 4
    assert not run.rejected
    failed = after["s2", slot]
    assert failed["verdict"] == "invalid"
    assert failed["score"] == "0"
    assert "could not be graded (RuntimeError: injected failure)" in failed["feedback"]
    # Nothing else moved (the failed answer was BOOM in both runs: unreadable either way).
    assert {k: v for k, v in after.items() if k != ("s2", slot)} == {
        k: v for k, v in before.items() if k != ("s2", slot)
    }


@pytest.mark.parametrize("chunk_rows", [None, 1], ids=["in-memory", "chunked"])
def test_a_failure_of_the_numeric_array_path_grades_each_answer_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk_rows: int | None
) -> None:
    rows = [[f"s{k}", *ANSWERS] for k in range(3)]
    data = write_class(tmp_path / "c.csv", rows)
    grade([data], tmp_path / "clean", chunk_rows=chunk_rows)

    def broken(**_: Any) -> Any:
        raise MemoryError("no room for the array")

    monkeypatch.setattr(batch, "compare_array", broken)
    grade([data], tmp_path / "hit", chunk_rows=chunk_rows)
    assert responses(tmp_path / "hit") == responses(tmp_path / "clean")
