"""The submission readers fuzzed for a few seconds (``benchmarks/fuzz_readers.py`` runs longer):
no exception but a one-line refusal of the whole file, every record accounted for, and the
in-memory and chunked readers reading alike (see ``reader_fuzz.py``)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from conftest import require_module
from hypothesis import HealthCheck, given, settings
from reader_fuzz import ANY_BYTES, check_file, csv_files, jsonl_files, parquet_files

from quizgym.loader import load_bank
from quizgym.model import Bank

QUIZ = Path(__file__).parent / "data" / "grade" / "quiz.yaml"
FUZZ = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


@pytest.fixture(scope="module")
def quiz() -> Bank:
    return load_bank(QUIZ)


def _check(quiz: Bank, case: tuple[str, bytes]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        check_file(quiz, Path(folder), *case)


@FUZZ
@given(case=csv_files())
def test_mutated_csv_files(quiz: Bank, case: tuple[str, bytes]) -> None:
    _check(quiz, case)


@FUZZ
@given(case=jsonl_files())
def test_mutated_json_lines_files(quiz: Bank, case: tuple[str, bytes]) -> None:
    _check(quiz, case)


@FUZZ
@given(case=ANY_BYTES)
def test_random_bytes(quiz: Bank, case: tuple[str, bytes]) -> None:
    _check(quiz, case)


@settings(FUZZ, max_examples=40)
@given(case=parquet_files())
def test_parquet_files_of_every_column_type(quiz: Bank, case: tuple[str, bytes]) -> None:
    require_module("pyarrow")
    _check(quiz, case)


@settings(FUZZ, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=csv_files() | jsonl_files())
def test_records_too_long_with_a_small_limit(
    quiz: Bank, monkeypatch: pytest.MonkeyPatch, case: tuple[str, bytes]
) -> None:
    # MAX_RECORD at 40 bytes (it is 16 MiB): records and lines too long become common.
    from quizgym.grading import census
    from quizgym.grading.readers import jsonl, text

    for module in (census, jsonl, text):
        monkeypatch.setattr(module, "MAX_RECORD", 40)
    _check(quiz, case)
