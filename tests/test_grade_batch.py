"""The batch grader gives the single-answer path's verdict on every response."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from conftest import require_module
from grading_helpers import single_verdict
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quizgym.grading.batch import grade_partition, partitions
from quizgym.grading.readers import read_submissions, slot_ids
from quizgym.grading.table import ClassAnswers, Coded
from quizgym.loader import load_bank
from quizgym.model import Bank
from quizgym.solver import bank_slots, variant_codes, variant_of
from quizgym.solver.variants import student_key, student_keys

QUIZ = Path(__file__).parent / "data" / "grade" / "quiz.yaml"

# Answers students plausibly type, right and wrong, for every kind of slot (and some garbage).
POOL = [
    "true", "False", "f", "yes", "maybe",
    "A", "b", "C", "d", "1", "3", "GPT", "BERT", "A, B", "1,2", "a c",
    "0.693", "0.6931", "ln 2", "2 ln 2", "1.386", "1.39", "1.4", "0.301", "0.3466", "0.35",
    "2.0794", "2.08", "2.07", "2.3026", "ln 10", "0.5", "1/0", "zz", "1e999", "-0.693", "2,08",
    "fine-tuning mismatch", "no idea",
    "", "   ",
]  # fmt: skip


def _class(bank: Bank, rows: list[tuple[str, int | None, list[str | None]]]) -> ClassAnswers:
    answers = ClassAnswers(slot_ids(bank))
    slots = [s.id for s in bank_slots(bank)]
    for slot in slots:
        answers.mark_present(slot)
    for student, seed, cells in rows:
        row = answers.add_student(student, seed, ("test", 0))
        for slot, cell in zip(slots, cells, strict=True):
            answers.mark_present(slot)[row] = cell
    return answers


def _mismatches(bank: Bank, answers: ClassAnswers) -> list[tuple[str, int]]:
    """(slot, row) of every response the batch grader grades unlike the single-answer path."""
    graded = grade_partition(bank, answers)
    return [
        (g.slot.id, row)
        for g in graded.slots
        for row in range(len(answers))
        if g.verdict(row) != single_verdict(bank, answers, g.slot, row)
    ]


@pytest.fixture(scope="module")
def quiz() -> Bank:
    return load_bank(QUIZ)


student_ids = st.text(alphabet="abcs0123456789", min_size=1, max_size=6)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_batch_verdict_equals_single_answer_verdict(quiz: Bank, data: st.DataObject) -> None:
    width = len(bank_slots(quiz))
    ids = data.draw(st.lists(student_ids, min_size=1, max_size=12, unique=True))
    rows = [
        (
            sid,
            data.draw(st.none() | st.integers(0, 5)),
            data.draw(st.lists(st.none() | st.sampled_from(POOL), min_size=width, max_size=width)),
        )
        for sid in ids
    ]
    answers = _class(quiz, rows)
    graded = grade_partition(quiz, answers)
    assert [g.slot.id for g in graded.slots] == [s.id for s in bank_slots(quiz)]
    for slot in graded.slots:
        for row in range(len(answers)):
            assert slot.verdict(row) == single_verdict(quiz, answers, slot.slot, row), (
                slot.slot.id,
                row,
            )


def test_bundled_bank_every_slot_matches_on_a_class() -> None:
    bank = load_bank("bert-mlm")
    slots = bank_slots(bank)
    rows = [
        (f"s{k:03d}", None, [POOL[(k * 7 + j * 3) % len(POOL)] for j in range(len(slots))])
        for k in range(40)
    ]
    assert _mismatches(bank, _class(bank, rows)) == []


def test_variant_codes_draw_the_variants_of_variant_of(quiz: Bank) -> None:
    # Some rows have no student: with no seed either, they get the default variant.
    students: list[str | None] = [f"s{k}" if k % 7 else None for k in range(300)]
    seeds = [None if k % 3 else k for k in range(300)]
    assert any(s is None and d is None for s, d in zip(students, seeds, strict=True))
    for qid in ("num-loss", "mc-causal", "tf-bert"):
        question = quiz.question(qid)
        variants, codes = variant_codes(quiz, question, students=students, seeds=seeds)
        for student, seed, code in zip(students, seeds, codes, strict=True):
            assert variants[code] == variant_of(quiz, question, student=student, seed=seed)
    shuffled, _ = variant_codes(quiz, quiz.question("mc-causal"), students=students, seeds=seeds)
    assert len(shuffled) == 6  # every order of three choices occurs in a class of 300


def test_a_class_s_keys_are_each_student_s_key() -> None:
    students = ["s1", None, "", "Zoë", "a\x1fb", "s1"]
    seeds = [None, None, 7, 0, -3, 2**40]
    keys = student_keys("bank-a", students, seeds).tolist()
    assert keys == [student_key("bank-a", s, d) for s, d in zip(students, seeds, strict=True)]
    assert len(set(keys)) == len(keys)  # the bank, the student and the seed all count


def test_letters_refer_to_the_order_each_student_saw(quiz: Bank) -> None:
    question = quiz.question("mc-causal")
    students = [f"s{k}" for k in range(40)]
    rows = []
    for sid in students:
        order = variant_of(quiz, question, student=sid).order
        letter = "ABC"[order.index(0)]  # where GPT (bank choice 0) was shown to this student
        rows.append((sid, None, [None, letter, None, None, None, None, None, None, None]))
    graded = grade_partition(quiz, _class(quiz, rows))
    causal = next(g for g in graded.slots if g.slot.id == "mc-causal")
    assert {causal.verdict(r).status.value for r in range(len(students))} == {"correct"}
    assert len({r[2][1] for r in rows}) > 1  # the letters differ between students


def test_partitions_grade_like_the_whole_class(quiz: Bank) -> None:
    width = len(bank_slots(quiz))
    rows = [
        (f"s{k}", None, [POOL[(k * 5 + j) % len(POOL)] for j in range(width)]) for k in range(50)
    ]
    answers = _class(quiz, rows)
    whole = grade_partition(quiz, answers)
    chunks = [grade_partition(quiz, part) for part in partitions(answers, size=7)]
    assert len(chunks) == 8
    offset = 0
    for chunk in chunks:
        for j, g in enumerate(chunk.slots):
            for row in range(len(chunk.answers)):
                assert g.verdict(row) == whole.slots[j].verdict(offset + row)
        offset += len(chunk.answers)


@given(st.lists(st.integers(min_value=0, max_value=50), max_size=200))
def test_group_is_numpy_unique(values: list[int]) -> None:
    from quizgym.arrays import group

    key = np.asarray(values, dtype=np.int64)
    unique, first, inverse = group(key)
    if values:
        expected = np.unique(key, return_index=True, return_inverse=True)
        for got, want in zip((unique, first, inverse), expected, strict=True):
            assert np.array_equal(got, want.reshape(-1))
    else:
        assert len(unique) == len(first) == len(inverse) == 0


def test_variant_codes_of_an_empty_class() -> None:
    bank = load_bank("bert-mlm")
    for qid in ("num-mlm-two", "mc-which-causal"):
        variants, codes = variant_codes(bank, bank.question(qid), students=[], seeds=[])
        assert len(codes) == 0


def test_columns_read_dictionary_encoded_grade_like_lists(tmp_path: Path) -> None:
    # A clean wide CSV is read by pyarrow into coded columns (distinct texts + codes); graded in
    # partitions (slices of those columns), every verdict is still the single-answer path's.
    require_module("pyarrow")
    bank = load_bank("bert-mlm")
    slots = [s.id for s in bank_slots(bank)]
    path = tmp_path / "class.csv"
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["student", *slots])
        for k in range(60):
            cells = [POOL[(k * 5 + j * 3) % len(POOL)] for j in range(len(slots))]
            writer.writerow([f"s{k:03d}", *[c or "" for c in cells]])
    answers = read_submissions(bank, [path])
    assert isinstance(answers.answers[slots[0]], Coded)
    for part in partitions(answers, size=25):
        assert _mismatches(bank, part) == []


def test_coded_columns_with_many_unused_texts_do_not_mix_answers(quiz: Bank) -> None:
    # A slice of a dictionary-encoded column keeps the whole file's texts; with error carried
    # forward the grouping key multiplies their counts (2^21 × 2^22 × 2^22 here), which must not
    # wrap around and make two different answers share a verdict.
    answers = ClassAnswers(slot_ids(quiz))
    total: list[str | None] = [None] * 2**21
    total[1], total[1 + 2**20] = "2.08", "999"
    first: list[str | None] = [None] * 2**22
    second: list[str | None] = [None] * 2**22
    first[0], second[0] = "0.693", "1.386"
    answers.extend(
        ["A", "B"],
        [None, None],
        [("f", 2), ("f", 3)],
        {
            "num-sum.first": Coded(first, np.array([0, 0])),
            "num-sum.second": Coded(second, np.array([0, 0])),
            "num-sum.total": Coded(total, np.array([1, 1 + 2**20])),
        },
    )
    assert _mismatches(quiz, answers) == []


def test_a_run_puts_the_collector_back_even_when_it_fails(tmp_path: Path) -> None:
    import gc

    from quizgym.errors import SubmissionError
    from quizgym.grading.run import grade_submissions

    before = gc.get_threshold()
    with pytest.raises(SubmissionError):
        grade_submissions("bert-mlm", [tmp_path / "missing.csv"], out_dir=tmp_path / "out")
    assert gc.get_threshold() == before
