"""Units of numeric answers: accepted, converted, missing, required, incompatible, percent,
information units and labels, each with what the student is told and why a person may look."""

# ruff: noqa: E501  (the tables read best one case a line)

from __future__ import annotations

from pathlib import Path

import pytest
from grading_helpers import single_verdict

from quizgym.answers import Status, grade_response
from quizgym.expr import Reading, read_answer
from quizgym.grading.batch import grade_partition
from quizgym.grading.readers import slot_ids
from quizgym.grading.table import ClassAnswers
from quizgym.loader import load_bank, parse_bank
from quizgym.model import Bank
from quizgym.solver import bank_slots, compile_bank
from quizgym.units import convert, unit_problem

FIELD = Path(__file__).parent / "data" / "field" / "stats-mechanics.yaml"


@pytest.fixture(scope="module")
def field() -> Bank:
    return load_bank(FIELD)


# (question, answer, status, score, read_as, feedback fragment, doubt)
CASES = [
    # accepted: the question's own unit, however it is written
    ("speed-units", "10 m/s", Status.CORRECT, 1.0, "10 m/s", "", ""),
    ("speed-units", "10 m s^-1", Status.CORRECT, 1.0, "10 m s^-1", "", ""),
    ("speed-units", "10 m·s⁻¹", Status.CORRECT, 1.0, "10 m*s^-1", "", ""),
    ("speed-units", "10m/s", Status.CORRECT, 1.0, "10 m/s", "", ""),
    ("speed-units", "v = 10 m/s", Status.CORRECT, 1.0, "10 m/s", "", ""),
    # as students write metres per second: run together, with a dot, a power without ^
    ("speed-units", "10 ms^-1", Status.CORRECT, 1.0, "10 ms^-1 = 10 m/s", "", ""),
    ("speed-units", "10 ms-1", Status.CORRECT, 1.0, "10 ms^-1 = 10 m/s", "", ""),
    ("speed-units", "10 ms⁻¹", Status.CORRECT, 1.0, "10 ms^-1 = 10 m/s", "", ""),
    ("speed-units", "10 m.s^-1", Status.CORRECT, 1.0, "10 m*s^-1", "", ""),
    ("speed-units", "10 m s-1", Status.CORRECT, 1.0, "10 m s^-1", "", ""),
    ("speed-units", "9 ms^-1", Status.INCORRECT, 0.0, "9 ms^-1 = 9 m/s", "", ""),
    ("speed-units", "36 kmh-1", Status.CORRECT, 1.0, "36 kmh^-1 = 10 m/s", "", "typed in km*h^-1, converted"),
    # converted: a compatible unit, graded in the question's
    ("speed-units", "36 km/h", Status.CORRECT, 1.0, "36 km/h = 10 m/s", "", "typed in km/h, converted"),
    ("speed-units", "0.01 km/s", Status.CORRECT, 1.0, "0.01 km/s = 10 m/s", "", "typed in km/s, converted"),
    ("speed-units", "35 km/h", Status.INCORRECT, 0.0, "35 km/h = 9.722222 m/s", "", "typed in km/h, converted"),
    ("projectile-range", "0.0353 km", Status.CORRECT, 1.0, "0.0353 km = 35.3 m", "", "typed in km, converted"),
    # missing: accepted by default, in the question's unit
    ("speed-units", "10", Status.CORRECT, 1.0, "10", "", ""),
    # required: a stated penalty, with feedback
    ("speed-required-units", "5", Status.PARTIAL, 0.5, "5", "Give the unit: the answer is in m/s (without one: 50% of the points lost).", "no unit given"),
    ("speed-required-units", "5 m/s", Status.CORRECT, 1.0, "5 m/s", "", ""),
    # both doubts, when thousands separators were read too
    ("speed-required-units", "5,000,000 mm/s", Status.INCORRECT, 0.0, "5,000,000 read as 5000000 mm/s = 5000 m/s", "", "read 5,000,000 with thousands separators; typed in mm/s, converted"),
    ("speed-required-units", "1,000,005", Status.INCORRECT, 0.0, "1,000,005 read as 1000005", "", "read 1,000,005 with thousands separators; no unit given"),
    ("speed-required-units", "18 km/h", Status.CORRECT, 1.0, "18 km/h = 5 m/s", "", "typed in km/h, converted"),
    # incompatible: wrong, naming the expected unit
    ("projectile-range", "35.3 ms", Status.INCORRECT, 0.0, "35.3 ms", "ms cannot be converted to m", "incompatible unit: ms for m"),  # milliseconds, not metres
    ("speed-units", "10 ms", Status.INCORRECT, 0.0, "10 ms", "ms cannot be converted to m/s", "incompatible unit: ms for m/s"),
    ("speed-units", "10 ms^-2", Status.INCORRECT, 0.0, "10 ms^-2", "ms^-2 cannot be converted to m/s", "incompatible unit: ms^-2 for m/s"),
    ("speed-units", "10 kg", Status.INCORRECT, 0.0, "10 kg", "kg cannot be converted to m/s: the answer is in m/s.", "incompatible unit: kg for m/s"),
    ("speed-units", "10 m/s²", Status.INCORRECT, 0.0, "10 m/s^2", "the answer is in m/s", "incompatible unit: m/s^2 for m/s"),
    # not a unit at all: the answer cannot be read (no attempt used)
    ("speed-units", "10 zorks", Status.INVALID, 0.0, "", "Unknown name 'zorks'", ""),
    # percent: 15.3% and 15.3 are the same percentage; the fraction is a mistake of the bank
    ("growth-percent", "15%", Status.CORRECT, 1.0, "15%", "", ""),
    ("growth-percent", "15 %", Status.CORRECT, 1.0, "15%", "", ""),
    ("growth-percent", "15 percent", Status.CORRECT, 1.0, "15 percent", "", ""),
    ("growth-percent", "15", Status.CORRECT, 1.0, "15", "", ""),
    ("growth-percent", "0.15", Status.INCORRECT, 0.0, "0.15", "That is the fraction", ""),
    # a percentage where the answer is a plain number (a probability): read as the fraction
    ("coin-binomial", "11.72%", Status.CORRECT, 1.0, "11.72% = 0.1172", "", "read % as a fraction"),
    ("coin-binomial", "11.72 m", Status.INCORRECT, 0.0, "11.72 m", "This answer is a plain number, without a unit such as m.", "incompatible unit: m for no unit (a plain number)"),
    # error carried forward reads an earlier part in its own unit
    ("kinematics-chain", "10 m/s", Status.CORRECT, 1.0, "10 m/s", "", ""),
]  # fmt: skip


@pytest.mark.parametrize(
    ("qid", "text", "status", "score", "read_as", "feedback", "doubt"),
    CASES,
    ids=[f"{c[0]}:{c[1]}" for c in CASES],
)
def test_unit_cases(
    field: Bank,
    qid: str,
    text: str,
    status: Status,
    score: float,
    read_as: str,
    feedback: str,
    doubt: str,
) -> None:
    question = field.question(qid)
    part = "v" if qid == "kinematics-chain" else None
    verdict = grade_response(field, question, text, part=part)
    assert (verdict.status, verdict.score) == (status, score)
    assert verdict.read_as == read_as
    assert feedback in verdict.feedback
    assert verdict.doubt == doubt


def test_an_earlier_part_in_another_unit_is_carried_forward_in_its_own(field: Bank) -> None:
    question = field.question("kinematics-chain")
    # a = 2, t = 5 by default: v = 10 m/s. A student who gave v = 43.2 km/h (12 m/s) and then
    # 12·5/2 = 30 m is consistent with their own v.
    verdict = grade_response(field, question, "30", part="dist", earlier={"v": "43.2 km/h"})
    assert verdict.status is Status.CORRECT
    assert "error carried forward" in verdict.feedback


INFORMATION = """
bank: info
title: Information units
questions:
  - id: entropy
    type: numeric
    prompt: What is the entropy of a fair 8-sided die?
    answer: ln(8)
    units: nats
  - id: entropy-bits
    type: numeric
    prompt: And in bits?
    answer: 3
    units: bits
"""


@pytest.mark.parametrize(
    ("qid", "text", "status", "read_as", "doubt"),
    [
        ("entropy", "2.079 nats", Status.CORRECT, "2.079 nats", ""),
        ("entropy", "2.079", Status.CORRECT, "2.079", ""),
        ("entropy", "3 bits", Status.CORRECT, "3 bits = 2.079442 nats", "typed in bits, converted"),
        ("entropy", "3 bit", Status.CORRECT, "3 bit = 2.079442 nats", "typed in bit, converted"),
        (
            "entropy",
            "0.9031 bans",
            Status.CORRECT,
            "0.9031 bans = 2.079465 nats",
            "typed in bans, converted",
        ),
        ("entropy", "3", Status.INCORRECT, "3", ""),
        ("entropy", "3 %", Status.INCORRECT, "3%", "incompatible unit: % for nats"),
        (
            "entropy-bits",
            "2.079 nats",
            Status.CORRECT,
            "2.079 nats = 2.999363 bits",
            "typed in nats, converted",
        ),
        (
            "entropy-bits",
            "3 bytes",
            Status.INCORRECT,
            "3 bytes = 24 bits",
            "typed in bytes, converted",
        ),
    ],
)
def test_information_units_convert_into_each_other(
    qid: str, text: str, status: Status, read_as: str, doubt: str
) -> None:
    bank = parse_bank(INFORMATION, path="info.yaml")
    verdict = grade_response(bank, bank.question(qid), text)
    assert (verdict.status, verdict.read_as, verdict.doubt) == (status, read_as, doubt)


def test_a_bert_answer_in_bits_is_recognised_as_a_unit_slip() -> None:
    bank = load_bank("bert-mlm")
    question = bank.question("num-mlm-two")  # ln 10 nats, 3.3219 bits
    typed = grade_response(bank, question, "3.32 bits")
    assert typed.status is Status.CORRECT
    assert (typed.read_as, typed.doubt) == ("3.32 bits = 2.301249 nats", "typed in bits, converted")
    bare = grade_response(bank, question, "3.32")  # the same number without its unit
    assert bare.status is Status.INCORRECT
    assert bare.tag == "log-base" and "bits" in bare.feedback


def test_label_units_are_matched_as_written() -> None:
    bank = load_bank("bert-mlm")
    question = bank.question("num-mask-counts")  # units: tokens
    for text in ("6 tokens", "6 token", "6 Tokens", "6"):
        verdict = grade_response(bank, question, text, part="selected")
        assert verdict.status is Status.CORRECT, text
    wrong = grade_response(bank, question, "6 kg", part="selected")
    assert (wrong.status, wrong.doubt) == (Status.INCORRECT, "incompatible unit: kg for tokens")
    odd = grade_response(bank, question, "6 widgets", part="selected")
    assert odd.status is Status.INVALID and "Unknown name 'widgets'" in odd.feedback


def test_tolerance_bands_apply_in_the_questions_unit() -> None:
    bank = parse_bank(
        "bank: b\ntitle: B\nquestions:\n"
        "  - {id: v, type: numeric, prompt: Speed?, answer: 10, units: m/s, tolerance: {abs: 0.5}}\n"
        "  - {id: w, type: numeric, prompt: Speed?, answer: 10, units: m/s, tolerance: {sigfigs: 3}}\n",
        path="b.yaml",
    )
    band = bank.question("v")
    assert grade_response(bank, band, "37.8 km/h").status is Status.CORRECT  # 10.5 m/s
    assert grade_response(bank, band, "37.9 km/h").status is Status.INCORRECT  # 10.53 m/s
    figures = bank.question("w")
    assert grade_response(bank, figures, "36.0 km/h").status is Status.CORRECT
    assert grade_response(bank, figures, "36.2 km/h").status is Status.INCORRECT


@pytest.mark.parametrize(
    ("typed", "expected", "kind"),
    [
        ("m/s", "m/s", "same"),
        ("meter/second", "m/s", "same"),
        ("km/h", "m/s", "converted"),
        ("degC", "K", "converted"),
        ("deg", "rad", "converted"),
        ("bits", "nats", "converted"),
        ("bits", "%", "incompatible"),  # Pint's bit is dimensionless, but not a ratio
        ("rad", None, "incompatible"),
        ("%", None, "converted"),
        ("kg", "tokens", "incompatible"),
        ("token", "tokens", "same"),
        ("Tokens", "tokens", "same"),
        ("zorkmid", "m/s", "unknown"),
        # a text that is a unit is judged as that unit, never matched loosely to the key's
        ("ms", "m", "incompatible"),  # milliseconds, not metres
        ("Ms", "m", "incompatible"),
        ("mPa", "MPa", "converted"),  # 10^-9 of it
        ("s", "S", "incompatible"),  # seconds, not siemens
    ],
)
def test_convert(typed: str, expected: str | None, kind: str) -> None:
    assert convert(typed, expected).kind == kind


def test_units_that_look_like_a_unit_but_are_none_are_named() -> None:
    assert unit_problem("m/s") == unit_problem("tokens") == ""
    assert "not a unit the units library knows" in unit_problem("m/sec2x")


def test_a_reading_keeps_its_unit_apart_and_how_the_whole_failed() -> None:
    reading = read_answer("2 ln 2 nats")
    assert isinstance(reading, Reading)
    assert (reading.unit, reading.read_as) == ("nats", "2*ln(2) ≈ 1.386294 nats")
    assert reading.fallback is not None and "Unknown name 'nats'" in reading.fallback.message
    assert isinstance(read_answer("5 pi rad"), Reading)
    assert read_answer("5 pi rad").unit == "rad"  # type: ignore[union-attr]


UNIT_POOL = [
    "10", "10 m/s", "36 km/h", "35 km/h", "10 kg", "10 zorks", "0.1", "5", "5 m/s", "18 km/h",
    "15%", "15", "0.15", "15 percent", "0.0353 km", "35.3", "12,345.6", "12 345.6 ha",
    "11.72%", "0.1172", "11.72 m", "", None,
]  # fmt: skip


def test_the_batch_grader_agrees_on_every_unit_case(field: Bank) -> None:
    book = compile_bank(field)
    answers = ClassAnswers(slot_ids(field))
    slots = [s.id for s in bank_slots(field)]
    for slot in slots:
        answers.mark_present(slot)
    for k in range(3 * len(UNIT_POOL)):
        row = answers.add_student(f"s{k}", k % 4, ("test", 0))
        for j, slot in enumerate(slots):
            answers.mark_present(slot)[row] = UNIT_POOL[(k + 3 * j) % len(UNIT_POOL)]
    graded = grade_partition(book, answers)
    for g in graded.slots:
        slot = g.slot
        for row in range(len(answers)):
            single = single_verdict(book, answers, slot, row)
            assert g.verdict(row) == single, (slot.id, answers.answers[slot.id][row])


def test_the_units_library_is_loaded_only_when_a_unit_is_judged() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from quizgym.loader import load_bank\n"
        "from quizgym.answers import grade_response\n"
        "bank = load_bank('bert-mlm')\n"
        "grade_response(bank, bank.question('num-mlm-two'), 'ln 10')\n"
        "print('pint' in sys.modules)\n"
        "grade_response(bank, bank.question('num-mlm-two'), '3.32 bits')\n"
        "print('pint' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "True"]


KEPT = (
    "import sys\n"
    "from quizgym.units import convert, is_unit, keep_judged\n"
    "print(convert('km/h', 'm/s').scale, convert('kg', 'm/s').kind, is_unit('tokens'),"
    " 'pint' in sys.modules)\n"
    "keep_judged()  # as a command does when it keeps its compiled bank\n"
)
JUDGED = ["0.2777777777777778", "incompatible", "False"]


def _judge(cache: Path) -> list[str]:
    """Judge three units in a fresh process keeping its findings in ``cache``; what it said,
    and whether it imported Pint."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "QUIZGYM_CACHE": "on", "QUIZGYM_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", KEPT], capture_output=True, text=True, check=True, env=env
    )
    return done.stdout.split()


def test_units_once_judged_are_kept_and_pint_is_not_imported_again(tmp_path: Path) -> None:
    assert _judge(tmp_path) == [*JUDGED, "True"]
    assert _judge(tmp_path) == [*JUDGED, "False"]  # from units.json, without Pint


def test_a_library_caller_s_process_keeps_nothing(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    code = "from quizgym.units import convert\nconvert('km/h', 'm/s')\n"
    env = {**os.environ, "QUIZGYM_CACHE": "on", "QUIZGYM_CACHE_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert not (tmp_path / "units.json").exists()


def test_a_damaged_or_foreign_units_file_is_never_trusted(tmp_path: Path) -> None:
    import hashlib
    import json

    _judge(tmp_path)
    kept = tmp_path / "units.json"
    good = json.loads(kept.read_text(encoding="utf-8"))
    key = json.dumps(["convert", "km/h", "m/s"])

    def with_entry(value: object, *, stamp: str = good["stamp"], digest: bool = True) -> None:
        entries = {**good["entries"], key: value}
        text = json.dumps(entries, sort_keys=True).encode()
        sha = hashlib.sha256(text).hexdigest() if digest else good["digest"]
        kept.write_text(
            json.dumps({"stamp": stamp, "digest": sha, "entries": entries}), encoding="utf-8"
        )

    # Made by another quizgym or Pint: its entries (here a wrong scale) are not used.
    with_entry(["converted", 9.0, 0.0], stamp="another")
    assert _judge(tmp_path) == [*JUDGED, "True"]
    # Damaged: an entry changed after its digest was made.
    with_entry(["converted", 9.0, 0.0], digest=False)
    assert _judge(tmp_path) == [*JUDGED, "True"]
    # Entries no conversion Pint gives are judged again, not trusted: the wrong shape, a scale
    # that is not finite, a conversion to the same unit that would scale.
    for entry in (["converted", "9", None], ["converted", float("nan"), 0.0], ["same", 5.0, 0.0]):
        with_entry(entry)
        assert _judge(tmp_path)[0] == JUDGED[0], entry
    # A damaged file is replaced by a good one.
    kept.write_text('{"stamp": ', encoding="utf-8")
    assert _judge(tmp_path) == [*JUDGED, "True"]
    assert json.loads(kept.read_text(encoding="utf-8"))["stamp"] == good["stamp"]
    assert _judge(tmp_path) == [*JUDGED, "False"]


TEMPERATURE = """
bank: temperature
title: Temperature
questions:
  - id: room
    type: numeric
    prompt: "What is the room's temperature, in degC?"
    answer: "20"
    units: degC
    tolerance: {rel: 0.01}
"""


@pytest.mark.parametrize(
    ("typed", "status"),
    [
        ("20 degC", Status.CORRECT),
        ("20.1", Status.CORRECT),
        ("68 degF", Status.CORRECT),  # 20 degC
        ("293.15 K", Status.CORRECT),  # 20 degC
        # 1 % of 20 degC is 0.2 degC: a share of 293 K (or of 68 degF) would be another band
        ("293.5 K", Status.INCORRECT),  # 20.35 degC
        ("68.5 degF", Status.INCORRECT),  # 20.28 degC
    ],
)
def test_a_unit_with_another_zero_is_compared_in_the_questions_unit(
    typed: str, status: Status
) -> None:
    bank = compile_bank(parse_bank(TEMPERATURE, path="temperature.yaml"))
    question = bank.bank.question("room")
    assert grade_response(bank, question, typed).status is status
    answers = ClassAnswers(["room"])
    answers.mark_present("room")
    row = answers.add_student("s1", None, ("test", 1))
    answers.mark_present("room")[row] = typed
    assert grade_partition(bank, answers).slots[0].verdict(row).status is status  # the batch too
