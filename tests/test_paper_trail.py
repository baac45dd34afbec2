"""What is on paper stays trustworthy: a folder's issued.json is never silently replaced, a
parameter the prompt shows but no key uses is named, and a key that rests on a measured
constant is shown as a decimal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from quizgym.cli import cli
from quizgym.loader import parse_bank
from quizgym.solver import compile_bank

BANK = """\
bank: chem-lab
title: Chemistry lab
constants:
  gas_r: 8.314
questions:
  - id: moles
    type: numeric
    prompt: "How many moles are in {m} g of a gas of molar mass {mm} g/mol?"
    params: {m: {choices: [10, 20, 30, 40]}, mm: {choices: [2, 4, 16, 32]}}
    answer: m / mm
  - id: acid
    type: multiple_choice
    shuffle: true
    prompt: Which of these is an acid?
    choices:
      - {text: HCl, correct: true}
      - {text: NaOH}
      - {text: NaCl}
"""


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def roster(path: Path, ids: list[str]) -> Path:
    path.write_text("student,name\n" + "".join(f"{i},{i.upper()}\n" for i in ids), "utf-8")
    return path


def students(folder: Path) -> list[str]:
    data = json.loads((folder / "issued.json").read_text(encoding="utf-8"))
    return [s["id"] for s in data["students"]]


def test_a_second_roster_never_silently_replaces_the_first_ones_manifest(tmp_path: Path) -> None:
    bank = tmp_path / "chem.yaml"
    bank.write_text(BANK, encoding="utf-8")
    out = tmp_path / "sheets"
    first = roster(tmp_path / "a.csv", ["ana", "ben", "cleo"])
    args = ["render", str(bank), "-o", str(out), "--seed", "4", "--date", "2026-12-01"]
    assert run(*args, "--roster", str(first)).exit_code == 0
    before = (out / "issued.json").read_text(encoding="utf-8")
    # the same roster again (a reprint) is fine; a roster without the first students is not
    assert run(*args, "--roster", str(first)).exit_code == 0
    late = roster(tmp_path / "b.csv", ["dan", "eve"])
    result = run(*args, "--roster", str(late))
    assert result.exit_code != 0
    assert result.output.strip() == (
        f"Error: {out / 'issued.json'}: records 3 students this roster does not list (ana, ben, "
        "cleo): render into another folder, or keep them and add this roster with --add"
    )
    assert (out / "issued.json").read_text(encoding="utf-8") == before
    assert not (out / "worksheet-dan.html").exists()  # nothing was written
    # --add keeps the first three and adds the late two, who grade as issued
    assert run(*args, "--roster", str(late), "--add").exit_code == 0
    assert students(out) == ["ana", "ben", "cleo", "dan", "eve"]
    # another seed would change what ana already holds: refused, even with --add
    other = [a if a != "4" else "5" for a in args]
    result = run(*other, "--roster", str(first), "--add")
    assert result.exit_code != 0
    assert "ana already holds a sheet whose moles is m=" in result.output
    assert "render with the seed they had (4)" in result.output
    # a sheet without a roster would replace the students' manifest
    result = run(*args)
    assert "records 5 students' sheets; a sheet without a roster would replace it" in (
        result.output
    )


def test_added_students_are_graded_against_their_own_sheets(tmp_path: Path) -> None:
    bank = tmp_path / "chem.yaml"
    bank.write_text(BANK, encoding="utf-8")
    out = tmp_path / "sheets"
    args = ["render", str(bank), "-o", str(out), "--seed", "4", "--date", "2026-12-01"]
    assert run(*args, "--roster", str(roster(tmp_path / "a.csv", ["ana", "ben"]))).exit_code == 0
    added = run(*args, "--roster", str(roster(tmp_path / "b.csv", ["cleo", "dan"])), "--add")
    assert added.exit_code == 0
    data = json.loads((out / "issued.json").read_text(encoding="utf-8"))
    rows = ["student,moles,acid"]
    for s in data["students"]:
        moles = data["versions"]["moles"][s["versions"]["moles"]]
        acid = data["versions"]["acid"][s["versions"]["acid"]]
        rows.append(f"{s['id']},{moles['keys'][0]},{'ABC'[acid['shown'].index('HCl')]}")
    answers = tmp_path / "class.csv"
    answers.write_text("\n".join(rows) + "\n", encoding="utf-8")
    result = run("grade", str(bank), str(answers), "-o", str(tmp_path / "g"), "--issued",
                 str(out / "issued.json"))  # fmt: skip
    assert result.exit_code == 0, result.output
    grades = (tmp_path / "g" / "grades.csv").read_text(encoding="utf-8").splitlines()
    assert all(line.split(",")[3] == '"100"' for line in grades[1:]), grades


def test_a_parameter_the_prompt_shows_but_no_key_uses_is_named(tmp_path: Path) -> None:
    bank = tmp_path / "chem.yaml"
    bank.write_text(BANK.replace("answer: m / mm", "answer: m / 16"), encoding="utf-8")
    result = run("check", str(bank))
    assert (
        f"{bank}:9:46: warning: moles: the prompt shows {{mm}}, but no key uses mm: students would "
        "compute with a number the key ignores"
    ) in result.output
    used_through_derived = BANK.replace("answer: m / mm", "derived: {n: m / mm}\n    answer: n")
    bank.write_text(used_through_derived, encoding="utf-8")
    assert "no key uses" not in run("check", str(bank)).output


def test_a_key_that_rests_on_a_measured_constant_is_shown_as_a_decimal() -> None:
    bank = parse_bank(
        BANK
        + """\
  - id: volume
    type: numeric
    prompt: What volume does 1 mol of gas take at 300 K and 100 kPa, in litres?
    answer: gas_r * 300 / 100
  - id: pressure
    type: numeric
    prompt: At what pressure (kPa) does 1 mol take 7 L at 290 K?
    answer: gas_r * 290 / 7
  - id: ratio
    type: numeric
    prompt: One seventh as a number?
    answer: 1 / 7
""",
        path="chem.yaml",
    )
    book = compile_bank(bank)
    shown = {q: book.keys(q, book.variant(book.bank.question(q)))[0].shown for q in
             ("volume", "pressure", "ratio")}  # fmt: skip
    assert shown == {"volume": "24.942", "pressure": "344.44", "ratio": "1/7 ≈ 0.14286"}


def test_the_class_key_gives_each_group_its_range_and_groups_a_shuffle_by_letter(
    tmp_path: Path,
) -> None:
    bank = tmp_path / "chem.yaml"
    bank.write_text(
        BANK.replace(
            "    answer: m / mm\n",
            "    answer: m / mm\n    mistakes:\n      - {answer: mm / m, feedback: Upside down.}\n",
        ),
        encoding="utf-8",
    )
    ids = [f"s{k:02}" for k in range(12)]
    out = tmp_path / "out"
    listed = roster(tmp_path / "r.csv", ids)
    result = run("render", str(bank), "--roster", str(listed), "--seed", "2", "--key",
                 "--format", "md", "-o", str(out), "--date", "")  # fmt: skip
    assert result.exit_code == 0, result.output
    key = (out / "key.md").read_text(encoding="utf-8")
    data = json.loads((out / "issued.json").read_text(encoding="utf-8"))
    moles, acid = key.split("### 2.")
    groups = [line for line in moles.splitlines() if line.startswith("- **s")]
    assert groups and all("(accepted " in g and "known wrong **" in g for g in groups)
    letters = [line for line in acid.splitlines() if line.startswith("- **s")]
    assert len(letters) == len({line.split(": **")[1][0] for line in letters}) <= 3
    for line in letters:  # every student on a line has that line's letter as the right one
        letter = line.split(": **")[1][0]
        named = line.split("**")[1].split(", ")
        for s in data["students"]:
            if s["id"] in named:
                shown = data["versions"]["acid"][s["versions"]["acid"]]["shown"]
                assert "ABC"[shown.index("HCl")] == letter
