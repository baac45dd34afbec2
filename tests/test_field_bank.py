"""A bank from another field (statistics and mechanics, no domain pack) goes through every
command: check, render, export, drill and grade, with the verdicts a teacher expects; and no
machine-learning text or behaviour reaches it, though its keys contain ln."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizgym.answers import Status, grade_response
from quizgym.cli import cli
from quizgym.export import FORMATS
from quizgym.loader import load_bank, parse_bank
from quizgym.model import Bank
from quizgym.render.documents import render_key, render_worksheet
from quizgym.solver import compile_bank, variant_of

FIELD = Path(__file__).parent / "data" / "field" / "stats-mechanics.yaml"
ML_TEXT = ("natural log", "Natural logarithms", "nats", "probability is at most 1", "log base")


@pytest.fixture(scope="module")
def field() -> Bank:
    return load_bank(FIELD)


def test_check_passes_and_reports_the_draws_that_survive() -> None:
    result = CliRunner().invoke(cli, ["check", str(FIELD)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"{FIELD}: sample-variance: where: 172 of 200 draws meet the conditions"
    assert lines[1].startswith(f"{FIELD}: stats-mechanics, 11 questions, ")
    assert lines[1].endswith(" variants checked: ok")


def test_every_draw_meets_the_constraint_and_derived_values_follow(field: Bank) -> None:
    question = field.question("sample-variance")
    book = compile_bank(field)
    for k in range(300):
        variant = book.variant(question, student=f"s{k}", seed=k)
        n, sx, sxx = (variant.params[name] for name in ("n", "sx", "sxx"))
        assert sxx > sx**2 / n  # never a negative variance
        assert variant.derived["df"] == n - 1
        assert f"With {n - 1} degrees of freedom" in variant.fill(question.prompt)
        assert book.key(book.slots_of(question)[0], variant).number > 0


def test_the_worksheet_shows_the_banks_note_units_once_and_no_ml_note(field: Bank) -> None:
    html = render_worksheet(field, field.questions, fmt="html")
    md = render_worksheet(field, field.questions, fmt="md")
    for text in (html, md):
        assert "Take g = 9.81 m/s² unless stated." in text
        assert not any(fragment in text for fragment in ML_TEXT)
    assert html.count('<span class="units">m/s</span>') == 3  # after each box, once
    key = render_key(field, field.questions, fmt="md")
    assert "**normal\\_cdf(1)** ≈ 0.8413447" in key  # the exact form reads as the grammar does
    assert "Also correct: **84.13447**" in key
    assert "Divide by n − 1 = 4 (the degrees of freedom)" in key  # a derived value, filled
    assert "ln(2)/3" in key and "ln 2/3" not in key
    assert "Natural logarithms" not in key


def test_keys_of_another_field_get_no_derived_ml_mistakes(field: Bank) -> None:
    book = compile_bank(field)
    (slot,) = book.slots_of("doubling-time")  # ln(2)/3: a biology growth rate
    variant = book.variant(slot.question)
    assert book.key(slot, variant).text == "ln(2)/3"
    assert book.mistakes(slot, variant) == ()
    wrong = grade_response(field, slot.question, "-0.231")
    assert (wrong.status, wrong.feedback, wrong.tag) == (Status.INCORRECT, "", None)
    bits = grade_response(field, slot.question, "0.3333")  # ln(2)/3 / ln(2): "in bits"
    assert bits.feedback == ""


def test_the_ml_pack_is_the_only_way_to_its_functions() -> None:
    text = FIELD.read_text(encoding="utf-8").replace("answer: ln(2)/3", "answer: mlm_loss(0.5) / 3")
    # Refused, and the author is told which pack to add (a student's answer is not).
    fix = r"`mlm_loss` is in the pack `machine-learning`: add `packs: \[machine-learning\]`"
    with pytest.raises(Exception, match=fix):
        compile_bank(parse_bank(text, path="field.yaml"))


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "anki"])
def test_it_exports_to_every_format(fmt: str, tmp_path: Path) -> None:
    out = tmp_path / f"field-{fmt}"
    pools = [] if fmt == "blackboard" else ["--variants", "3"]  # Blackboard has no pools
    result = CliRunner().invoke(cli, ["export", str(FIELD), "--to", fmt, "-o", str(out), *pools])
    assert result.exit_code == 0, result.output
    data = out.read_bytes()
    assert data
    if fmt in {"gift", "moodle", "blackboard"}:
        text = data.decode("utf-8")
        assert "How fast is it going? (in m/s)" in text
        assert not any(fragment in text for fragment in ML_TEXT)


def test_export_check_scores_the_bank_as_quizgym_does_but_for_required_units(
    tmp_path: Path,
) -> None:
    result = CliRunner().invoke(
        cli, ["export", str(FIELD), "--to", "moodle", "-o", str(tmp_path / "f.xml"), "--check"]
    )
    lines = result.output.splitlines()
    assert "speed-units: accepts 9.989999999 to 10.010000001" in lines
    assert (
        "normal-below: accepts 0.840503400322 to 0.842186091815, 84.0503401312 to 84.2186090825"
        in lines
    )
    # An LMS takes the number alone: a unit required by quizgym is not in the file, and the
    # check says so rather than letting the scores differ silently.
    differs = [k for k, line in enumerate(lines) if "DIFFERS" in line]
    assert [lines[k - 1].split(":")[0] for k in differs] == ["speed-required-units"]
    assert "5 (the key in full): 100%, quizgym 50%" in lines[differs[0]]
    assert result.exit_code == 1


def test_the_drill_grades_units_and_shows_them_at_the_prompt(tmp_path: Path) -> None:
    env = {"QUIZGYM_NOW": "2026-01-05T10:00:00+00:00", "QUIZGYM_DB": str(tmp_path / "p.db")}
    result = CliRunner().invoke(
        cli,
        ["practice", str(FIELD), "--seed", "1", "--tag", "units"],
        input="36 km/h\n\n5\n\nq\n",
        env={**env, "COLUMNS": "100"},
    )
    assert result.exit_code == 0, result.output
    assert "Your answer in m/s > " in result.output
    field = load_bank(FIELD)
    question = field.question("speed-units")
    from quizgym.practice.drill import review_seed

    variant = variant_of(field, question, seed=review_seed(1, "stats-mechanics", question.id, 0))
    speed = variant.params["d"] / variant.params["t"]
    verdict = "✓ Correct" if speed == 10 else "✗"
    assert verdict in result.output
    assert "km/h = " in result.output  # how the unit was read


def test_a_class_is_graded_with_the_expected_verdicts(field: Bank, tmp_path: Path) -> None:
    book = compile_bank(field)
    slots = [s.id for s in book.slots]
    answers = {
        "speed-units": "36 km/h",
        "speed-required-units": "5",
        "growth-percent": "15%",
        "projectile-range": "35.3 m",
        "incline-force": "9.81 N",
        "coin-binomial": "0.117",
        "normal-below": "84.1",
        "sample-variance": "",
        "doubling-time": "ln(2)/3",
        "kinematics-chain.v": "12",
        "kinematics-chain.dist": "30",
        "thousands": "12,345.6",
    }
    path = tmp_path / "class.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", *slots])
        writer.writerow(["default", *(answers[s] for s in slots)])
    result = CliRunner().invoke(
        cli, ["grade", str(FIELD), str(path), "-o", str(tmp_path / "g"), "--version", "default"]
    )
    assert result.exit_code == 0, result.output
    with (tmp_path / "g" / "responses.csv").open(encoding="utf-8") as handle:
        rows = {r["question"]: r for r in csv.DictReader(handle)}
    # The student "default" has no seed: the default variant of every question.
    expected = {
        "speed-units": ("correct", "36 km/h = 10 m/s"),
        "speed-required-units": ("partial", "5"),
        "growth-percent": ("correct", "15%"),
        "projectile-range": ("correct", "35.3 m"),
        "incline-force": ("correct", "9.81 N"),
        "coin-binomial": ("correct", "0.117"),
        "normal-below": ("correct", "84.1"),
        "sample-variance": ("blank", ""),
        "doubling-time": ("correct", "ln(2)/3 ≈ 0.2310491"),
        "kinematics-chain.v": ("incorrect", "12"),
        "kinematics-chain.dist": ("correct", "30"),  # error carried forward from v = 12
        "thousands": ("correct", "12,345.6 read as 12345.6"),
    }
    for slot, (verdict, read_as) in expected.items():
        assert (rows[slot]["verdict"], rows[slot]["read_as"]) == (verdict, read_as), slot
    assert "error carried forward" in rows["kinematics-chain.dist"]["feedback"]
    with (tmp_path / "g" / "grades.csv").open(encoding="utf-8") as handle:
        (grades,) = list(csv.DictReader(handle))
    assert float(grades["score"]) == 9.5  # 10 right, a half for the missing unit, v wrong


PACKS = Path(__file__).parent / "data" / "packs"


def test_a_pack_is_a_file_beside_the_bank() -> None:
    bank = load_bank(PACKS / "uses-physics.yaml")
    book = compile_bank(bank)
    assert book.instructions == "Take g = 9.81 m/s² and c = 299 792 458 m/s."
    energy = bank.question("energy")
    assert grade_response(bank, energy, "9 J").status is Status.CORRECT
    slip = grade_response(bank, energy, "18")
    assert (slip.tag, slip.feedback) == ("missing-half", "E = m v² / 2: the half is missing.")
    assert grade_response(bank, bank.question("weight"), "98.1 N").status is Status.CORRECT
    assert "Take g = 9.81" in render_worksheet(bank, bank.questions, fmt="md")


def test_a_missing_or_broken_pack_is_a_located_finding(tmp_path: Path) -> None:
    text = (PACKS / "uses-physics.yaml").read_text(encoding="utf-8")
    missing = tmp_path / "b.yaml"
    missing.write_text(text.replace("physics.yaml", "finance.yaml"), encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(missing)])
    assert result.exit_code == 1
    assert (
        f"{missing}:3:9: packs[0]: no pack 'finance.yaml': neither a bundled pack" in result.output
    )
    broken = tmp_path / "physics.yaml"
    broken.write_text("pack: physics\ntitle: P\nconstant: {g: 9.81}\n", encoding="utf-8")
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(tmp_path / "c.yaml")])
    assert result.exit_code == 1
    assert (
        "physics.yaml:3:1: constant: unknown field 'constant'; did you mean 'constants'?"
        in result.output
    )


def test_an_unknown_field_is_never_suggested_as_itself(tmp_path: Path) -> None:
    # 'value' is a field of other parts of the format, not of a mistake: the hint must not
    # suggest the very word that was refused.
    bank = tmp_path / "m.yaml"
    bank.write_text(
        "bank: m\ntitle: M\nquestions:\n  - id: q\n    type: numeric\n    prompt: p\n"
        "    answer: '2'\n    mistakes:\n      - {value: '3', feedback: f}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["check", str(bank)])
    assert result.exit_code == 1
    assert "unknown field 'value'" in result.output
    assert "did you mean 'value'" not in result.output
    # Hints come from the fields where the word was written: 'values' is close to 'value',
    # which a mistake does not have either; 'tags' is close to a mistake's own 'tag'.
    bank.write_text(
        "bank: m\ntitle: M\nquestions:\n  - id: q\n    type: numeric\n    prompt: p\n"
        "    answer: '2'\n    mistakes:\n"
        "      - {values: '3', tags: x, answer: '3', feedback: f}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["check", str(bank)])
    assert "mistakes[0].values: unknown field 'values'\n" in result.output
    assert "mistakes[0].tags: unknown field 'tags'; did you mean 'tag'?" in result.output


def test_a_carried_forward_part_is_reviewed_and_decided_with_the_students_own_answers(
    field: Bank, tmp_path: Path
) -> None:
    # The distance is judged from each student's own speed: the same "0.03 km" is wrong after
    # the right v and right after a wrong one (error carried forward). Their review rows are
    # apart (a row whose students were graded otherwise than it says would mislead the
    # teacher), and a decision on one row scores only the students who gave both answers.
    from quizgym.grading.run import grade_submissions

    book = compile_bank(field)
    question = field.question("kinematics-chain")
    variant = book.variant(question)  # everyone had the default version
    v = book.key(book.slots_of(question)[0], variant).number
    wrong = v + 2
    typed = f"{wrong * 5 / 2000:g} km"  # t = 5 s: right from the wrong v, typed in km
    chain = "kinematics-chain"
    rows = [("missed", f"{v:g} m/s", typed), ("carried", f"{wrong:g} m/s", typed)]
    submissions = tmp_path / "class.csv"
    with submissions.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["student", f"{chain}.v", f"{chain}.dist"])
        writer.writerows(rows)
    first = tmp_path / "first"
    grade_submissions(field, [submissions], out_dir=first, version="default")
    review = list(csv.DictReader(io.StringIO((first / "review.csv").read_text("utf-8"))))
    label = f"{variant.label}; with v: "
    same = {r["version"]: r for r in review if r["answer"] == typed}
    assert {k: (r["students"], r["verdict"]) for k, r in same.items()} == {
        label + rows[0][1]: ("missed", "incorrect"),
        label + rows[1][1]: ("carried", "correct"),
    }
    decided = same[label + rows[0][1]]
    decided["score"] = "0.5"
    edited = tmp_path / "review.csv"
    with edited.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(review[0]))
        writer.writeheader()
        writer.writerow(decided)
    second = tmp_path / "second"
    grade_submissions(field, [submissions], out_dir=second, version="default", review=edited)
    scores = {
        r["student"]: r["score"]
        for r in csv.DictReader(io.StringIO((second / "responses.csv").read_text("utf-8")))
        if r["question"] == f"{chain}.dist"
    }
    assert scores == {"missed": "0.5", "carried": "1"}
