"""A bank edited after its sheets were issued, and manifests that were tampered with.

Each student's key depends on more than the question: the bank's constants, its functions, a pack
file, its defaults. Every edit that moves a key or how a slot is scored must be listed and refused
until the teacher accepts it; a reorder of a question's choices must never move a student's
letter; a manifest that was altered by hand is refused with the line it was altered on. The bank
is a small physics lab bank of its own, with a local pack.
"""

from __future__ import annotations

import csv
import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quizgym.cli import cli

BANK = """\
bank: lab-physics
title: Lab physics
packs: [lab.yaml]
constants:
  g: 10
functions:
  "fall(t)": "g * t^2 / 2"
defaults:
  tolerance: {rel: 0.01}
questions:
  - id: fall-distance
    type: numeric
    prompt: "A stone falls from rest for {t} s. How far does it fall, in metres?"
    params: {t: {choices: [1, 2, 3, 4]}}
    answer: fall(t)
  - id: weight
    type: numeric
    prompt: "What does a {m} kg mass weigh, in newtons?"
    params: {m: {choices: [2, 5, 7]}}
    answer: m * g
    mistakes:
      - {answer: m, feedback: That is its mass., credit: 0.5}
  - id: energy
    type: numeric
    prompt: A 2 kg ball moves at 3 m/s. What is its kinetic energy, in joules?
    answer: kinetic(2, 3)
  - id: tf-heavier
    type: true_false
    prompt: In a vacuum, a heavier stone falls faster than a lighter one.
    answer: false
  - id: mc-force
    type: multiple_choice
    prompt: Which is the SI unit of force?
    choices:
      - {text: the newton, correct: true}
      - {text: the joule}
      - {text: the watt}
      - {text: the pascal}
  - id: mc-vector
    type: multiple_choice
    prompt: Which of these is a vector?
    shuffle: true
    choices:
      - {text: velocity, correct: true}
      - {text: speed}
      - {text: mass}
      - {text: energy}
"""

PACK = """\
pack: lab
title: Lab formulas
functions:
  "kinetic(m, v)": "m * v^2 / 2"
"""

STUDENTS = 8
COLUMNS = ["fall-distance", "weight", "energy", "tf-heavier", "mc-force", "mc-vector"]


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def write_bank(folder: Path, bank: str = BANK, pack: str = PACK) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "lab.yaml").write_text(pack, encoding="utf-8")
    path = folder / "physics.yaml"
    path.write_text(bank, encoding="utf-8")
    return path


def letter_of(version: dict[str, Any], text: str) -> str:
    return "ABCD"[version["shown"].index(text)]


def answers_for(data: dict[str, Any]) -> list[list[str]]:
    """A class that answers from the sheets: mostly right, some slips, a mistake or two."""
    rows = [["student", *COLUMNS]]
    for k, student in enumerate(data["students"]):
        v = student["versions"]

        def version(q: str, v: dict[str, int] = v) -> dict[str, Any]:
            return dict(data["versions"][q][v[q]])

        fall = version("fall-distance")["keys"][0]
        weight = version("weight")["keys"][0]
        mass = version("weight")["params"]["m"]
        rows.append(
            [
                student["id"],
                fall if k % 4 else "3",
                weight if k % 3 else mass,  # the mistake (half credit) for some
                "9" if k == 5 else version("energy")["keys"][0],
                "false" if k % 5 else "true",
                letter_of(version("mc-force"), "the newton" if k % 2 else "the joule"),
                letter_of(version("mc-vector"), "velocity" if k != 3 else "speed"),
            ]
        )
    return rows


def write_csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as stream:
        csv.writer(stream).writerows(rows)
    return path


def grades(folder: Path) -> dict[str, dict[str, str]]:
    with (folder / "grades.csv").open(encoding="utf-8") as stream:
        return {row["student"]: row for row in csv.DictReader(stream)}


def issue_class(folder: Path) -> tuple[Path, Path, Path]:
    """The bank, its sheets rendered for a roster with a seed, and the class's answers."""
    bank = write_bank(folder / "bank")
    roster = folder / "roster.csv"
    roster.write_text(
        "student,name\n" + "".join(f"u{k:02},Student {k}\n" for k in range(STUDENTS)), "utf-8"
    )
    result = run(
        "render", str(bank), "--roster", str(roster), "--seed", "11",
        "-o", str(folder / "sheets"), "--date", "2026-12-01",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    issued = folder / "sheets" / "issued.json"
    data = json.loads(issued.read_text(encoding="utf-8"))
    answers = write_csv(folder / "class.csv", answers_for(data))
    return bank, issued, answers


@pytest.fixture(scope="module")
def issued_class() -> Iterator[tuple[Path, Path, Path, dict[str, dict[str, str]]]]:
    """Issued once for the module; each test edits copies. The grades as issued come with it."""
    folder = Path(tempfile.mkdtemp(prefix="quizgym-edits-"))
    try:
        bank, issued, answers = issue_class(folder)
        result = run("grade", str(bank), str(answers), "-o", str(folder / "g"), "--issued",
                     str(issued))  # fmt: skip
        assert result.exit_code == 0, result.output
        yield bank, issued, answers, grades(folder / "g")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def edited(tmp_path: Path, change: Callable[[str], str], pack: Callable[[str], str] = str) -> Path:
    bank = change(BANK)
    new_pack = pack(PACK)
    assert (bank, new_pack) != (BANK, PACK), "the edit changed nothing"
    return write_bank(tmp_path / "edited", bank, new_pack)


def grade(bank: Path, answers: Path, issued: Path, out: Path, *more: str) -> Any:
    return run("grade", str(bank), str(answers), "-o", str(out), "--issued", str(issued), *more)


# --- edits that move keys without touching the question -----------------------------------------

MOVING = {
    "a constant": (lambda b: b.replace("g: 10", "g: 9.81"), str, "weight"),
    "a function": (lambda b: b.replace('"g * t^2 / 2"', '"g * t^2"'), str, "fall-distance"),
    "a pack file": (str, lambda p: p.replace("m * v^2 / 2", "m * v^2"), "energy"),
    "the default tolerance": (
        lambda b: b.replace("tolerance: {rel: 0.01}", "tolerance: {rel: 0.5}"),
        str,
        "fall-distance",
    ),
    "the default points": (
        lambda b: b.replace("defaults:\n", "defaults:\n  points: 2\n"),
        str,
        "tf-heavier",
    ),
    "a mistake's credit": (lambda b: b.replace("credit: 0.5", "credit: 0.25"), str, "weight"),
}


@pytest.mark.parametrize("what", list(MOVING))
def test_an_edit_outside_the_question_that_moves_a_grade_is_listed_and_refused(
    issued_class: tuple[Path, Path, Path, dict[str, dict[str, str]]], tmp_path: Path, what: str
) -> None:
    _, issued, answers, _ = issued_class
    change, pack, question = MOVING[what]
    bank = edited(tmp_path, change, pack)
    result = grade(bank, answers, issued, tmp_path / "g")
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert line.startswith("Error: --issued: ") and "\n" not in line
    assert question in line and "grades move for" in line and "--accept-changes" in line
    assert not (tmp_path / "g" / "grades.csv").exists()
    check = run("check", str(bank), "--issued", str(issued))
    listed = [row for row in check.output.splitlines() if f"warning: {question}: " in row]
    assert listed, check.output
    if what not in ("the default points", "a mistake's credit"):  # in the question itself
        assert "the question itself is unchanged" in listed[0]
    accepted = grade(bank, answers, issued, tmp_path / "a", "--accept-changes")
    assert accepted.exit_code in (0, 1), accepted.output
    report = (tmp_path / "a" / "report.html").read_text(encoding="utf-8")
    assert "graded against the bank as edited since it was issued" in report


def test_the_constant_fixed_after_issuing_names_the_keys_that_move(
    issued_class: tuple[Path, Path, Path, dict[str, dict[str, str]]], tmp_path: Path
) -> None:
    _, issued, _, _ = issued_class
    bank = edited(tmp_path, lambda b: b.replace("g: 10", "g: 9.81"))
    check = run("check", str(bank), "--issued", str(issued))
    weight = next(r for r in check.output.splitlines() if "warning: weight: " in r)
    assert "the right answer changes for issued versions: m=" in weight
    assert " → 19.62" in weight or " → 49.05" in weight or " → 68.67" in weight
    fall = next(r for r in check.output.splitlines() if "warning: fall-distance: " in r)
    assert "(the question itself is unchanged: a constant, function, pack or default" in fall


def test_a_tolerance_edit_is_named_before_and_after(
    issued_class: tuple[Path, Path, Path, dict[str, dict[str, str]]], tmp_path: Path
) -> None:
    _, issued, _, _ = issued_class
    bank = edited(tmp_path, lambda b: b.replace("{rel: 0.01}", "{rel: 0.5}"))
    check = run("check", str(bank), "--issued", str(issued))
    fall = next(r for r in check.output.splitlines() if "warning: fall-distance: " in r)
    assert "the scoring changes for issued versions" in fall
    assert "tolerance rel 0.01 abs 0 → tolerance rel 0.5 abs 0" in fall


# --- edits that move no grade -------------------------------------------------------------------


def swap(text: str, a: str, b: str) -> str:
    marker = "\0"
    return text.replace(a, marker).replace(b, a).replace(marker, b)


SAFE = {
    "the unshuffled choices reordered": lambda b: swap(
        b, "- {text: the newton, correct: true}", "- {text: the pascal}"
    ),
    "the shuffled choices reordered": lambda b: swap(
        b, "- {text: velocity, correct: true}", "- {text: energy}"
    ),
    "a prompt reworded": lambda b: b.replace("Which of these is a vector?", "Which is a vector?"),
    "a choice's typo fixed": lambda b: b.replace("{text: the watt}", "{text: the Watt}"),
    "a constant no issued key uses": lambda b: b.replace("g: 10", "g: 10\n  c: 3"),
}


@pytest.mark.parametrize("what", list(SAFE))
def test_an_edit_that_moves_no_grade_is_safe_to_accept_and_grades_as_issued(
    issued_class: tuple[Path, Path, Path, dict[str, dict[str, str]]], tmp_path: Path, what: str
) -> None:
    _, issued, answers, before = issued_class
    bank = edited(tmp_path, SAFE[what])
    result = grade(bank, answers, issued, tmp_path / "g")
    if what == "a constant no issued key uses":
        assert result.exit_code in (0, 1), result.output  # no issued question changed
        assert grades(tmp_path / "g") == before
        return
    assert result.exit_code == 2, result.output
    assert "keys and scoring unchanged for all 8 students: safe to grade with --accept-changes" in (
        result.output
    )
    accepted = grade(bank, answers, issued, tmp_path / "a", "--accept-changes")
    assert accepted.exit_code in (0, 1), accepted.output
    assert grades(tmp_path / "a") == before  # every letter still names the choice it named
    if "reordered" in what:
        check = run("check", str(bank), "--issued", str(issued))
        assert "its choices were reordered" in check.output
    if what == "a choice's typo fixed":
        check = run("check", str(bank), "--issued", str(issued))
        assert "the choice 'the watt' now reads 'the Watt'" in check.output


def test_choices_that_cannot_be_matched_to_what_students_saw_are_refused_even_when_accepted(
    issued_class: tuple[Path, Path, Path, dict[str, dict[str, str]]], tmp_path: Path
) -> None:
    _, issued, answers, _ = issued_class
    bank = edited(
        tmp_path,
        lambda b: b.replace("{text: speed}", "{text: a speed}").replace(
            "{text: mass}", "{text: a mass}"
        ),
    )
    result = grade(bank, answers, issued, tmp_path / "g", "--accept-changes")
    assert result.exit_code == 2
    assert "mc-vector: cannot be graded as issued: the choices 'speed', 'mass' are no longer" in (
        result.output
    )
    fewer = edited(tmp_path / "2", lambda b: b.replace("      - {text: the pascal}\n", ""))
    result = grade(fewer, answers, issued, tmp_path / "g2", "--accept-changes")
    assert result.exit_code == 2
    assert "4 choices were shown, the bank now has 3" in result.output


def test_a_right_choice_moved_is_a_grade_that_moves(
    issued_class: tuple[Path, Path, Path, dict[str, dict[str, str]]], tmp_path: Path
) -> None:
    _, issued, answers, before = issued_class
    bank = edited(
        tmp_path,
        lambda b: b.replace("{text: the newton, correct: true}", "{text: the newton}").replace(
            "{text: the joule}", "{text: the joule, correct: true}"
        ),
    )
    result = grade(bank, answers, issued, tmp_path / "g")
    assert result.exit_code == 2
    assert "mc-force: the right answer changes for issued versions" in result.output
    assert "the newton → the joule" in result.output
    accepted = grade(bank, answers, issued, tmp_path / "a", "--accept-changes")
    assert accepted.exit_code in (0, 1)
    after = grades(tmp_path / "a")
    assert {s: r["mc-force"] for s, r in after.items()} != {
        s: r["mc-force"] for s, r in before.items()
    }


# --- manifests altered by hand ------------------------------------------------------------------


def forge(issued: Path, tmp_path: Path, change: Callable[[dict[str, Any]], Any]) -> Path:
    data = json.loads(issued.read_text(encoding="utf-8"))
    replaced = change(data)
    out = tmp_path / "issued.json"
    if isinstance(replaced, str):
        out.write_text(replaced, encoding="utf-8")
    else:
        out.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return out


def set_in(data: dict[str, Any], path: list[Any], value: Any) -> None:
    node: Any = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


FORGED: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "a version index of -1": (
        lambda d: set_in(d, ["students", 2, "versions", "weight"], -1),
        "students.2.versions.weight: Input should be greater than or equal to 0",
    ),
    "a version index past the end": (
        lambda d: set_in(d, ["students", 2, "versions", "weight"], 40),
        "students.2.versions.weight: version 40, but weight has",
    ),
    "a student listed twice": (
        lambda d: d["students"].append(dict(d["students"][0])),
        f"students.{STUDENTS}: the student 'u00' is listed twice",
    ),
    "a parameter that is no number": (
        lambda d: set_in(d, ["versions", "weight", 0, "params", "m"], "five"),
        "versions.weight.0.params: parameter m: 'five' is not an exact number",
    ),
    "an order that is no order": (
        lambda d: set_in(d, ["versions", "mc-vector", 0, "order"], [0, 0, 1, 2]),
        "versions.mc-vector.0.order: order [0, 0, 1, 2] is not an order of 4",
    ),
    "a seed of 5,000 digits": (
        lambda d: json.dumps(d).replace('"seed": 11', '"seed": ' + "9" * 5000, 1),
        "not a quizgym issue manifest (Exceeds the limit",
    ),
    "a seed of 30 digits": (
        lambda d: set_in(d, ["students", 1, "seed"], 10**30),
        "students.1.seed: Input should be less than 100000000000000000000",
    ),
    "nesting 100,000 deep": (
        lambda d: '{"format": "quizgym-issued/2", "bank": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "not a quizgym issue manifest (nested too deeply)",
    ),
    "a question handed out without versions": (
        lambda d: d["versions"].pop("energy"),
        "questions: energy has no versions",
    ),
}


@pytest.mark.parametrize("what", list(FORGED))
def test_an_altered_manifest_is_refused_with_where_and_what(
    issued_class: tuple[Path, Path, Path, dict[str, dict[str, str]]], tmp_path: Path, what: str
) -> None:
    bank, issued, answers, _ = issued_class
    change, message = FORGED[what]
    forged = forge(issued, tmp_path, change)
    result = grade(bank, answers, forged, tmp_path / "g")
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert "\n" not in line and "bug" not in line and "Traceback" not in line, line
    assert line.startswith(f"Error: {forged}"), line
    assert message in line, line
    if what not in ("a seed of 5,000 digits", "nesting 100,000 deep"):
        assert line.startswith(f"Error: {forged}:") and line.split(":")[2].strip().isdigit(), line


def test_the_line_named_is_the_line_that_was_altered(
    issued_class: tuple[Path, Path, Path, dict[str, dict[str, str]]], tmp_path: Path
) -> None:
    bank, issued, answers, _ = issued_class
    forged = forge(issued, tmp_path, lambda d: set_in(d, ["students", 2, "versions", "weight"], -1))
    result = grade(bank, answers, forged, tmp_path / "g")
    line_no = int(result.output.split(":")[2])
    text = forged.read_text(encoding="utf-8").splitlines()[line_no - 1]
    assert '"weight": -1' in text


def test_a_parameter_value_the_unedited_bank_never_allows_is_refused(
    issued_class: tuple[Path, Path, Path, dict[str, dict[str, str]]], tmp_path: Path
) -> None:
    bank, issued, answers, _ = issued_class
    forged = forge(issued, tmp_path, lambda d: set_in(d, ["versions", "weight", 0, "params"],
                                                       {"m": "6"}))  # fmt: skip
    result = grade(bank, answers, forged, tmp_path / "g", "--accept-changes")
    assert result.exit_code == 2
    assert "weight: cannot be graded as issued: m = 6 is not a value m can take in the bank" in (
        result.output
    )


def test_a_forged_key_is_a_key_that_moved(
    issued_class: tuple[Path, Path, Path, dict[str, dict[str, str]]], tmp_path: Path
) -> None:
    bank, issued, answers, _ = issued_class
    forged = forge(issued, tmp_path, lambda d: set_in(d, ["versions", "energy", 0, "keys"], ["1"]))
    result = grade(bank, answers, forged, tmp_path / "g")
    assert result.exit_code == 2
    assert "energy: the right answer changes for issued versions: default (8 students): 1 → 9" in (
        result.output
    )


def test_a_manifest_of_the_first_format_is_read_and_says_what_it_cannot_see(
    issued_class: tuple[Path, Path, Path, dict[str, dict[str, str]]], tmp_path: Path
) -> None:
    bank, issued, answers, before = issued_class

    def older(d: dict[str, Any]) -> None:
        d["format"] = "quizgym-issued/1"
        for table in d["versions"].values():
            for version in table:
                del version["shown"], version["rules"]

    legacy = forge(issued, tmp_path, older)
    result = grade(bank, answers, legacy, tmp_path / "g")
    assert result.exit_code in (0, 1) and grades(tmp_path / "g") == before
    reordered = edited(tmp_path, SAFE["the shuffled choices reordered"])
    result = grade(reordered, answers, legacy, tmp_path / "r", "--accept-changes")
    assert result.exit_code == 2
    assert "mc-vector: cannot be graded as issued: the manifest does not record the choices'" in (
        result.output
    )


# --- generated edits: no silent score change ----------------------------------------------------

EDITS: dict[str, Callable[[str, int], str]] = {
    "g": lambda b, k: b.replace("g: 10", f"g: {[10, 9.81, 9.8, 10.0][k % 4]}"),
    "fall": lambda b, k: b.replace(
        '"g * t^2 / 2"', ['"g * t^2 / 2"', '"t^2 * g / 2"', '"g * t^2"', '"g*t*t/2"'][k % 4]
    ),  # fmt: skip
    "tolerance": lambda b, k: b.replace(
        "{rel: 0.01}", f"{{rel: {[0.01, 0.02, 0.5, 0.001][k % 4]}}}"
    ),
    "points": lambda b, k: b.replace("defaults:\n", f"defaults:\n  points: {1 + k % 3}\n"),
    "credit": lambda b, k: b.replace("credit: 0.5", f"credit: {[0.5, 0.25, 0.75, 0][k % 4]}"),
    "reorder force": lambda b, k: swap(
        b,
        "- {text: the newton, correct: true}",
        ["- {text: the joule}", "- {text: the watt}", "- {text: the pascal}"][k % 3],  # fmt: skip
    ),
    "reorder vector": lambda b, k: swap(
        b, "- {text: velocity, correct: true}", ["- {text: speed}", "- {text: mass}"][k % 2]
    ),
    "right choice": lambda b, k: (
        b
        if k % 2
        else b.replace("{text: mass}", "{text: mass, correct: true}").replace(
            "multiple_choice\n    prompt: Which of these is a vector?",
            "multiple_choice\n    multiple: true\n    prompt: Which of these is a vector?",
        )
    ),
    "true or false": lambda b, k: b.replace("answer: false", f"answer: {['false', 'true'][k % 2]}"),
    "wording": lambda b, k: b.replace("How far does it fall", ["How far", "What distance"][k % 2]),
    "weight key": lambda b, k: b.replace(
        "answer: m * g", ["answer: m * g", "answer: g * m", "answer: m * g + 1"][k % 3]
    ),  # fmt: skip
}


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.dictionaries(st.sampled_from(sorted(EDITS)), st.integers(0, 11), min_size=1, max_size=3))
def test_no_edit_after_issuing_changes_a_score_silently(
    issued_class: tuple[Path, Path, Path, dict[str, dict[str, str]]], edits: dict[str, int]
) -> None:
    _, issued, answers, before = issued_class
    text = BANK
    for name, k in sorted(edits.items()):
        text = EDITS[name](text, k)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        bank = write_bank(work / "bank", text)
        plain = grade(bank, answers, issued, work / "plain")
        assert plain.exit_code in (0, 1, 2), plain.output
        accepted = grade(bank, answers, issued, work / "accepted", "--accept-changes")
        assert accepted.exit_code in (0, 1, 2), accepted.output
        if plain.exit_code != 2:  # not refused: then nobody's score may differ from as issued
            assert grades(work / "plain") == before, (edits, plain.output)
        if accepted.exit_code != 2 and grades(work / "accepted") != before:
            # a grade moved: the run without --accept-changes said so and refused
            assert plain.exit_code == 2 and "grades move for" in plain.output, (edits, plain.output)
        if plain.exit_code == 2 and "safe to grade" in plain.output:
            assert accepted.exit_code != 2 and grades(work / "accepted") == before, edits


def paths_of(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield (*prefix, k)
            yield from paths_of(v, (*prefix, k))
    elif isinstance(node, list):
        for k, v in enumerate(node[:3]):
            yield (*prefix, k)
            yield from paths_of(v, (*prefix, k))


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**25), 10**25)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.data())
def test_a_manifest_altered_anywhere_is_graded_as_issued_or_refused_in_one_line(
    issued_class: tuple[Path, Path, Path, dict[str, dict[str, str]]], data: st.DataObject
) -> None:
    bank, issued, answers, before = issued_class
    manifest = json.loads(issued.read_text(encoding="utf-8"))
    where = data.draw(st.sampled_from(sorted(paths_of(manifest), key=repr)))
    value = data.draw(JSON_VALUES)
    set_in(manifest, list(where), value)
    with tempfile.TemporaryDirectory() as folder:
        forged = Path(folder) / "issued.json"
        forged.write_text(json.dumps(manifest), encoding="utf-8")
        result = grade(bank, answers, forged, Path(folder) / "g")
        assert result.exit_code in (0, 1, 2), (where, value, result.output)
        if result.exit_code == 2:
            line = result.output.strip()
            assert "\n" not in line and "bug" not in line, (where, value, line)
        elif where[0] not in ("students", "seed"):  # a student's version is the manifest's word
            assert grades(Path(folder) / "g") == before, (where, value)


# --- a matching question's pairs are pinned too --------------------------------------------------

MATCHING = """\
bank: lab-units
title: Units
questions:
  - id: match-units
    type: matching
    prompt: Pair each quantity with its SI unit.
    shuffle: true
    pairs:
      - {id: force, item: force, answer: the newton}
      - {id: energy, item: energy, answer: the joule}
      - {id: power, item: power, answer: the watt}
    distractors: [the pascal]
"""


def test_a_matching_question_pins_its_pairs_and_the_order_of_its_answers(tmp_path: Path) -> None:
    bank = tmp_path / "units.yaml"
    bank.write_text(MATCHING, encoding="utf-8")
    roster = tmp_path / "roster.csv"
    roster.write_text("student\n" + "".join(f"v{k}\n" for k in range(6)), encoding="utf-8")
    result = run("render", str(bank), "--roster", str(roster), "--seed", "5", "-o",
                 str(tmp_path / "sheets"), "--date", "")  # fmt: skip
    assert result.exit_code == 0, result.output
    issued = tmp_path / "sheets" / "issued.json"
    data = json.loads(issued.read_text(encoding="utf-8"))
    version = data["versions"]["match-units"][0]
    assert version["keys"] == ["the newton", "the joule", "the watt"]
    assert sorted(version["shown"]) == ["the joule", "the newton", "the pascal", "the watt"]
    rows = [["student", "match-units.force", "match-units.energy", "match-units.power"]]
    for s in data["students"]:
        shown = data["versions"]["match-units"][s["versions"]["match-units"]]["shown"]
        rows.append([s["id"], *("ABCD"[shown.index(t)] for t in ("the newton", "the joule",
                                                                  "the watt"))])  # fmt: skip
    answers = write_csv(tmp_path / "class.csv", rows)
    # the answers reordered in the bank: safe, and every letter keeps its answer
    reordered = tmp_path / "reordered.yaml"
    reordered.write_text(
        swap(
            MATCHING,
            "- {id: force, item: force, answer: the newton}",
            "- {id: power, item: power, answer: the watt}",
        ),
        encoding="utf-8",
    )
    refused = grade(reordered, answers, issued, tmp_path / "r")
    assert refused.exit_code == 2 and "safe to grade with --accept-changes" in refused.output
    accepted = grade(reordered, answers, issued, tmp_path / "a", "--accept-changes")
    assert accepted.exit_code == 0, accepted.output
    assert {r["percent"] for r in grades(tmp_path / "a").values()} == {"100"}
    # a pair changed: a key that moved
    moved = tmp_path / "moved.yaml"
    moved.write_text(MATCHING.replace("answer: the watt}", "answer: the pascal}").replace(
        "distractors: [the pascal]", "distractors: [the watt]"), encoding="utf-8")  # fmt: skip
    result = grade(moved, answers, issued, tmp_path / "m")
    assert result.exit_code == 2
    assert "the right answer changes for issued versions" in result.output
    assert "the watt → " in result.output
