"""Every number stated in the seed documents comes out of the solver, from the bank's keys.

Each row: the question (and part), the number exactly as the seed prints it, and the exact form
the seed derives where it gives one. Typing the seed's number must earn full credit, and the key
must read as the seed's exact form.
"""

from __future__ import annotations

import pytest

from quizgym.grading import Status, grade_response
from quizgym.loader import load_bank
from quizgym.model import Numeric
from quizgym.solver import keys_of, slots, variant_of

BANK = load_bank("bert-mlm")

# (question id, part id, number as printed in the seed, exact form or None)
SEED_NUMBERS = [
    ("num-mask-fractions", "mask_pct", "12", "12"),  # 0.15 × 0.80 = 12%
    ("num-mask-fractions", "random_pct", "1.5", None),  # 0.15 × 0.10 = 1.5%
    ("num-mask-fractions", "unchanged_pct", "1.5", None),
    ("num-mask-counts", "selected", "6", "6"),  # 0.15 × 40 = 6
    ("num-mask-counts", "masked", "4.8", None),  # 0.80 × 6 = 4.8
    ("num-mask-counts", "random", "0.6", None),
    ("num-mask-counts", "unchanged", "0.6", None),
    ("num-mlm-per-term", "term_low", "1.6094", "ln 5"),  # −log(0.2) = log 5
    ("num-mlm-per-term", "term_high", "0.6931", "ln 2"),  # −log(0.5) = log 2
    ("num-mlm-two", None, "2.3026", "ln 10"),
    ("num-uniform-baseline", None, "10.309", "ln 30000"),
    ("num-two-sentences", "sentence1", "4.1589", "6 ln 2"),
    ("num-two-sentences", "sentence2", "1.3863", "2 ln 2"),
    ("num-two-sentences", "total", "5.5452", "8 ln 2"),
    ("num-mlm-nsp-total", "nsp", "0.10536", None),
    ("num-mlm-nsp-total", "mlm", "1.65026", None),
    ("num-mlm-nsp-total", "total", "1.75562", None),
    ("num-nsp-ratio", "loss_x", "0.10536", None),
    ("num-nsp-ratio", "loss_y", "0.01005", None),
    ("num-nsp-ratio", "ratio", "10.48", None),
    ("edge-zero-masked-loss", None, "0", "0"),  # the empty sum is 0
]


@pytest.mark.parametrize(("qid", "part", "number", "exact"), SEED_NUMBERS)
def test_seed_number_comes_out_of_the_key(
    qid: str, part: str | None, number: str, exact: str | None
) -> None:
    question = BANK.question(qid)
    assert isinstance(question, Numeric)
    index = [pid for pid, _ in slots(question)].index(part)
    key = keys_of(BANK, question, variant_of(BANK, question))[index]
    if exact is not None:
        assert key.text == exact
    verdict = grade_response(BANK, question, number, part=part)
    assert verdict.status is Status.CORRECT, (verdict.read_as, str(key))


def test_every_stated_value_in_the_bank_is_covered_here() -> None:
    stated = {
        (q.id, pid)
        for q in BANK.questions
        if isinstance(q, Numeric)
        for pid, slot in slots(q)
        if slot.value is not None
    }
    assert stated == {(qid, part) for qid, part, _, _ in SEED_NUMBERS}


def test_the_mlm_key_reads_as_the_seed_derives_it() -> None:
    question = BANK.question("num-mlm-two")
    assert isinstance(question, Numeric)
    (key,) = keys_of(BANK, question, variant_of(BANK, question))
    assert str(key) == "ln 10 ≈ 2.3026"
