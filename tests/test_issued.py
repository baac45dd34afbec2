"""Grade exactly what each student was given: issue manifests, never guessing, the safety net.

Each scenario is one a teacher meets, on a statistics bank (tests/data/issued/stats.yaml): one
photocopied sheet, a roster with a seed, LMS exports with and without variant pools, Canvas and
Moodle response exports, blank seed cells, a bank edited after issuing.
"""

from __future__ import annotations

import csv
import io
import json
import random
import re
import shutil
import zipfile
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from quizgym.cli import cli
from quizgym.grading import grade_submissions
from quizgym.issued import Issued, issue, issued_json_schema, read_issued
from quizgym.loader import load_bank, parse_bank
from quizgym.render import Student, render_worksheet
from quizgym.solver import compile_bank

STATS = Path(__file__).parent / "data" / "issued" / "stats.yaml"
REFUSED = (
    "Error: mc-spread, num-expected-heads, num-sd-mean differ per student (parameters or "
    "shuffled choices), and nothing says which version each student had: give --issued FILE "
    "(the issued.json render or export wrote), --seed N (as render --roster … --seed N), or "
    "--version default (one sheet for everyone)\n"
)


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def manifest(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def key(data: dict[str, Any], question: str, version: int, slot: int = 0) -> str:
    return str(data["versions"][question][version]["keys"][slot])


def write_csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as stream:
        csv.writer(stream).writerows(rows)
    return path


def grades(folder: Path) -> dict[str, dict[str, str]]:
    with (folder / "grades.csv").open(encoding="utf-8") as stream:
        return {row["student"]: row for row in csv.DictReader(stream)}


# --- one sheet for everyone -----------------------------------------------------------------------


@pytest.fixture
def photocopied(tmp_path: Path) -> tuple[Path, Path]:
    """One worksheet printed without a roster, and four students' answers to it."""
    result = run("render", str(STATS), "-o", str(tmp_path / "sheet"), "--date", "2026-12-01")
    assert result.exit_code == 0, result.output
    issued = tmp_path / "sheet" / "issued.json"
    data = manifest(issued)
    assert data["mode"] == "single" and data["students"] == []
    heads = key(data, "num-expected-heads", 0)
    se, twice = key(data, "num-sd-mean", 0, 0), key(data, "num-sd-mean", 0, 1)
    rows = [["student", "num-expected-heads", "num-sd-mean.se", "num-sd-mean.twice", "mc-spread"]]
    rows += [[f"s{k}", heads, se, twice, "A"] for k in range(1, 4)]
    rows += [["s4", "4", "3", "4", "B"]]  # wrong, and twice ≠ 2 × se: no error carried forward
    return issued, write_csv(tmp_path / "class.csv", rows)


def test_a_photocopied_sheet_without_a_word_is_refused(
    photocopied: tuple[Path, Path], tmp_path: Path
) -> None:
    _, answers = photocopied
    result = run("grade", str(STATS), str(answers), "-o", str(tmp_path / "g"))
    assert (result.exit_code, result.output) == (2, REFUSED)
    assert not (tmp_path / "g").exists()


@pytest.mark.parametrize("how", [["--issued", "MANIFEST"], ["--version", "default"]])
def test_a_photocopied_sheet_grades_right_as_issued_or_as_the_default(
    photocopied: tuple[Path, Path], tmp_path: Path, how: list[str]
) -> None:
    issued, answers = photocopied
    how = [str(issued) if a == "MANIFEST" else a for a in how]
    result = run("grade", str(STATS), str(answers), "-o", str(tmp_path / "g"), *how)
    assert result.exit_code == 0, result.output
    table = grades(tmp_path / "g")
    assert [table[f"s{k}"]["percent"] for k in range(1, 5)] == ["100", "100", "100", "0"]


def test_graded_per_student_a_photocopied_class_sets_off_the_safety_net(
    photocopied: tuple[Path, Path], tmp_path: Path
) -> None:
    _, answers = photocopied
    out = tmp_path / "g"
    result = run("grade", str(STATS), str(answers), "-o", str(out), "--version", "per-student")
    assert result.exit_code == 1
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert any(line.startswith("warning: num-expected-heads: 3 answers fit ") for line in warnings)
    assert "1 warning" in result.stdout or "warnings" in result.stdout
    report = (out / "report.html").read_text(encoding="utf-8")
    head = report.split("<h2>Test</h2>")[0]
    assert "Check these before you trust the grades" in head and "num-expected-heads" in head


# --- a roster with a seed ------------------------------------------------------------------------


@pytest.fixture
def roster(tmp_path: Path) -> tuple[Path, list[list[str]]]:
    """Six students' sheets drawn with seed 3, and each student's right answers to them."""
    (tmp_path / "roster.csv").write_text(
        "student,name\n" + "".join(f"s{k},Student {k}\n" for k in range(6)), encoding="utf-8"
    )
    result = run(
        "render", str(STATS), "--roster", str(tmp_path / "roster.csv"), "--seed", "3",
        "-o", str(tmp_path / "sheets"), "--date", "2026-12-01",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    issued = tmp_path / "sheets" / "issued.json"
    data = manifest(issued)
    assert data["mode"] == "per-student" and [s["seed"] for s in data["students"]] == [3] * 6
    rows = [["student", "seed", "num-expected-heads", "num-sd-mean.se", "num-sd-mean.twice"]]
    for student in data["students"]:
        v = student["versions"]
        rows.append(
            [
                student["id"],
                "",
                key(data, "num-expected-heads", v["num-expected-heads"]),
                key(data, "num-sd-mean", v["num-sd-mean"], 0),
                key(data, "num-sd-mean", v["num-sd-mean"], 1),
            ]
        )
    return issued, rows


@pytest.mark.parametrize("how", [["--seed", "3"], ["--issued", "MANIFEST"]])
def test_a_roster_grades_right_with_its_seed_or_its_manifest(
    roster: tuple[Path, list[list[str]]], tmp_path: Path, how: list[str]
) -> None:
    issued, rows = roster
    answers = write_csv(tmp_path / "class.csv", rows)
    how = [str(issued) if a == "MANIFEST" else a for a in how]
    result = run("grade", str(STATS), str(answers), "-o", str(tmp_path / "g"), *how)
    assert result.exit_code == 0, result.output
    assert {row["percent"] for row in grades(tmp_path / "g").values()} == {"100"}


@pytest.mark.parametrize("typed", ["{}", "{} + 0"])  # as a number, as an expression
def test_a_roster_graded_with_another_seed_sets_off_the_safety_net(
    roster: tuple[Path, list[list[str]]], tmp_path: Path, typed: str
) -> None:
    _, rows = roster
    rows = [rows[0], *([row[0], row[1], *map(typed.format, row[2:])] for row in rows[1:])]
    answers = write_csv(tmp_path / "class.csv", rows)
    result = run("grade", str(STATS), str(answers), "-o", str(tmp_path / "g"), "--seed", "4")
    assert result.exit_code == 1
    assert "answers fit other versions' keys" in result.stderr


def test_blank_seed_cells_among_seeded_rows_are_rejected(
    roster: tuple[Path, list[list[str]]], tmp_path: Path
) -> None:
    _, rows = roster
    for row in rows[1:4]:
        row[1] = "3"  # three rows carry the class seed; three leave it blank
    answers = write_csv(tmp_path / "class.csv", rows)
    result = run("grade", str(STATS), str(answers), "-o", str(tmp_path / "g"))
    assert result.exit_code == 1
    reason = "no seed, while other rows have one (give --seed N for the class seed)"
    assert result.stderr.splitlines() == [f"{answers}:{line}: {reason}" for line in (5, 6, 7)]
    assert sorted(grades(tmp_path / "g")) == ["s0", "s1", "s2"]
    # Given the class seed, the blank cells are that seed: nobody is rejected.
    again = run("grade", str(STATS), str(answers), "-o", str(tmp_path / "h"), "--seed", "3")
    assert again.exit_code == 0 and len(grades(tmp_path / "h")) == 6


def test_a_student_the_roster_does_not_list_is_rejected(
    roster: tuple[Path, list[list[str]]], tmp_path: Path
) -> None:
    issued, rows = roster
    rows.append(["s99", "", "1", "1", "1"])
    answers = write_csv(tmp_path / "class.csv", rows)
    result = run(
        "grade", str(STATS), str(answers), "-o", str(tmp_path / "g"), "--issued", str(issued)
    )
    assert result.exit_code == 1
    assert result.stderr == f"{answers}:8: not in the issue manifest's roster (6 students)\n"


def test_options_that_contradict_each_other_are_refused(
    roster: tuple[Path, list[list[str]]], tmp_path: Path
) -> None:
    issued, rows = roster
    answers = write_csv(tmp_path / "class.csv", rows)
    result = run(
        "grade", str(STATS), str(answers), "-o", str(tmp_path / "g"), "--issued", str(issued),
        "--seed", "3",
    )  # fmt: skip
    assert (result.exit_code, result.output) == (
        2,
        "Error: --issued and --seed: give one way the versions were handed out\n",
    )


# --- LMS exports and their response reports ----------------------------------------------------


def canvas_report(issued: dict[str, Any], picks: list[dict[str, int]]) -> str:
    """A Canvas "Student Analysis" CSV as Canvas writes it for an export with this manifest.

    One column pair per item any student was given (``"<id>: <text without tags>"``, points);
    ``picks[k]`` maps each slot to the item index student k drew; they answer its key.
    """
    items = issued["items"]
    header = ["name", "id", "sis_id", "section", "section_id", "submitted"]
    for k, item in enumerate(items):
        header += [f"{7000 + k}: {item['text'].replace(chr(10), '')}", "1.0"]
    header += ["n correct", "n incorrect", "score"]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    for s, chosen in enumerate(picks):
        row = [f"Student {s}", str(3000 + s), f"sis{s}", "A", "1", "2026-12-01 10:00:00 UTC"]
        row += [""] * (2 * len(items)) + ["0", "0", "0"]
        for k in chosen.values():
            item = items[k]
            keys = issued["versions"][item["question"]][item["version"]]["keys"]
            slot = 1 if item["part"] == "twice" else 0
            answer = {"tf-mean-median": "True", "mc-spread": "the interquartile range"}.get(
                item["question"], keys[slot]
            )
            row[6 + 2 * k], row[7 + 2 * k] = answer, "1"
        writer.writerow(row)
    return out.getvalue()


def pools_of(issued: dict[str, Any]) -> dict[str, list[int]]:
    slots: dict[str, list[int]] = {}
    for k, item in enumerate(issued["items"]):
        slot = item["question"] + (f".{item['part']}" if item["part"] else "")
        slots.setdefault(slot, []).append(k)
    return slots


@pytest.mark.parametrize("variants", ["0", "3"])
def test_a_canvas_report_of_a_qti_export_grades_every_item_as_issued(
    tmp_path: Path, variants: str
) -> None:
    out = tmp_path / "canvas.zip"
    result = run("export", str(STATS), "--to", "qti12", "--variants", variants, "--seed", "1",
                 "-o", str(out))  # fmt: skip
    assert result.exit_code == 0, result.output
    issued = manifest(Path(f"{out}.issued.json"))
    assert issued["mode"] == ("pools" if variants != "0" else "single")
    slots = pools_of(issued)
    # Each part of a pool is drawn on its own (Canvas draws one item per question group).
    rng = random.Random(5)
    picks = [{s: rng.choice(ks) for s, ks in slots.items()} for _ in range(12)]
    report = tmp_path / "analysis.csv"
    report.write_text(canvas_report(issued, picks), encoding="utf-8")
    graded = tmp_path / "g"
    result = run(
        "grade", str(STATS), str(report), "-o", str(graded), "--issued", f"{out}.issued.json"
    )
    assert result.exit_code == 0, result.output
    table = grades(graded)
    assert len(table) == 12 and {row["percent"] for row in table.values()} == {"100"}
    assert table["3000"]["max_score"] == "5"


def test_a_canvas_report_without_the_manifest_reports_what_it_cannot_match(
    tmp_path: Path,
) -> None:
    out = tmp_path / "canvas.zip"
    run("export", str(STATS), "--to", "qti12", "--variants", "3", "-o", str(out))
    issued = manifest(Path(f"{out}.issued.json"))
    picks = [{s: ks[0] for s, ks in pools_of(issued).items()} for _ in range(3)]
    report = tmp_path / "analysis.csv"
    report.write_text(canvas_report(issued, picks), encoding="utf-8")
    result = run("grade", str(STATS), str(report), "-o", str(tmp_path / "g"))
    assert result.exit_code == 1
    ignored = [line for line in result.stderr.splitlines() if "column ignored" in line]
    numeric = [k for k, i in enumerate(issued["items"]) if i["question"].startswith("num-")]
    assert len(ignored) == len(numeric)
    assert all("needs --issued" in line for line in ignored)
    # What is graded are the questions without per-student numbers, read by their own text.
    assert list(grades(tmp_path / "g")["3000"])[4:] == ["tf-mean-median", "mc-spread"]


def moodle_report(issued: dict[str, Any], *, with_text: bool) -> str:
    """A Moodle quiz "Responses" CSV for a Moodle XML export (one slot per question; the
    multi-part question is one cloze item, whose response sums up its parts)."""
    items = issued["items"]
    header = ["Surname", "First name", "ID number", "Email address", "State", "Grade/10.00"]
    for n, _ in enumerate(items, start=1):
        header += ([f"Question {n}"] if with_text else []) + [f"Response {n}"]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    choices = "; ".join(["the interquartile range", "the median", "the mode", "the mean"])
    for s in range(3):
        row = ["Student", str(s), f"m{s}", f"m{s}@example.org", "Finished", "10.00"]
        for item in items:
            keys = issued["versions"][item["question"]][item["version"]]["keys"]
            answer = {
                "tf-mean-median": "True",
                "mc-spread": "the interquartile range",
                "num-sd-mean": f"part 1: {keys[0]}; part 2: {keys[-1]}",
            }.get(item["question"], keys[0])
            text = item["text"] + (f": {choices}" if item["question"] == "mc-spread" else "")
            row += ([text] if with_text else []) + [answer]
        writer.writerow(row)
    return out.getvalue()


@pytest.mark.parametrize("with_text", [True, False])
def test_a_moodle_report_is_matched_by_text_or_by_the_manifest_order(
    tmp_path: Path, with_text: bool
) -> None:
    out = tmp_path / "quiz.xml"
    assert run("export", str(STATS), "--to", "moodle", "-o", str(out)).exit_code == 0
    issued_path = Path(f"{out}.issued.json")
    report = tmp_path / "responses.csv"
    report.write_text(moodle_report(manifest(issued_path), with_text=with_text), encoding="utf-8")
    result = run(
        "grade", str(STATS), str(report), "-o", str(tmp_path / "g"), "--issued", str(issued_path)
    )
    assert result.exit_code == 1  # the cloze item is reported, not guessed
    cloze = "num-sd-mean is one multi-part item in this export (cloze)"
    if not with_text:
        cloze = "is the multi-part question num-sd-mean (one cloze item)"
    assert cloze in result.stderr and "column ignored" in result.stderr
    table = grades(tmp_path / "g")
    assert {row["percent"] for row in table.values()} == {"100"}
    assert list(table["m0"])[4:] == ["tf-mean-median", "num-expected-heads", "mc-spread"]


def test_a_moodle_report_without_question_texts_and_without_a_manifest_is_refused(
    tmp_path: Path,
) -> None:
    out = tmp_path / "quiz.xml"
    run("export", str(STATS), "--to", "moodle", "-o", str(out))
    report = tmp_path / "responses.csv"
    issued = manifest(Path(f"{out}.issued.json"))
    report.write_text(moodle_report(issued, with_text=False), encoding="utf-8")
    result = run(
        "grade", str(STATS), str(report), "-o", str(tmp_path / "g"), "--version", "default"
    )
    assert result.exit_code == 2
    assert result.output == (
        f"Error: {report}:1: Moodle Responses export without 'Question N' columns: which question "
        "each response answers cannot be told; download the report with the question text "
        "shown, or grade with --issued FILE (the manifest of the export gives the order)\n"
    )


def test_a_moodle_pool_without_question_texts_is_reported_not_guessed(tmp_path: Path) -> None:
    out = tmp_path / "quiz.xml"
    run("export", str(STATS), "--to", "moodle", "--variants", "3", "-o", str(out))
    issued_path = Path(f"{out}.issued.json")
    issued = manifest(issued_path)
    first = {}
    for item in issued["items"]:
        first.setdefault(item["question"], item)
    single = {**issued, "items": list(first.values())}
    report = tmp_path / "responses.csv"
    report.write_text(moodle_report(single, with_text=False), encoding="utf-8")
    result = run(
        "grade", str(STATS), str(report), "-o", str(tmp_path / "g"), "--issued", str(issued_path)
    )
    assert result.exit_code == 1
    assert (
        f"{report}:1: Moodle 'Response 2' is the pool num-expected-heads: which version each "
        "student drew needs the 'Question N' texts; column ignored"
    ) in result.stderr


@pytest.mark.parametrize(
    ("fmt", "suffix"), [("qti12", ".zip"), ("qti21", ".zip"), ("gift", ".gift"), ("moodle", ".xml")]
)
def test_every_export_records_its_items_as_they_stand_in_the_file(
    tmp_path: Path, fmt: str, suffix: str
) -> None:
    out = tmp_path / f"quiz{suffix}"
    result = run("export", str(STATS), "--to", fmt, "--variants", "3", "-o", str(out))
    assert result.exit_code == 0, result.output
    issued = read_issued(Path(f"{out}.issued.json"))
    assert issued.issued_by == f"export {fmt}" and issued.mode == "pools"
    if suffix == ".zip":
        with zipfile.ZipFile(out) as archive:
            content = "".join(archive.read(n).decode() for n in archive.namelist())
    else:
        content = out.read_text(encoding="utf-8")
    book = compile_bank(load_bank(STATS))
    for item in issued.items:
        assert item.ident in content, item.ident
        numbers = re.findall(r"\d+(?:\.\d+)?", item.text)
        assert all(n in content for n in numbers), (item.ident, numbers)
        # The version the manifest names is the one whose numbers the item shows.
        variant = issued.version_of(item.question, item.version)
        assert variant.fill(book.bank.question(item.question).prompt) in item.text


# --- a bank edited after issuing ---------------------------------------------------------------


def test_a_manifest_of_an_edited_bank_is_refused_unless_its_questions_are_unchanged(
    photocopied: tuple[Path, Path], tmp_path: Path
) -> None:
    issued, answers = photocopied
    text = STATS.read_text(encoding="utf-8")
    unrelated = tmp_path / "unrelated.yaml"
    unrelated.write_text(
        text.replace("title: Introductory statistics", "title: Stats 101"), "utf-8"
    )
    result = run(
        "grade", str(unrelated), str(answers), "-o", str(tmp_path / "a"), "--issued", str(issued)
    )
    assert result.exit_code == 0, result.output
    report = (tmp_path / "a" / "report.html").read_text(encoding="utf-8")
    assert "the bank changed since it was issued, but no issued question did" in report
    edited = tmp_path / "edited.yaml"
    edited.write_text(text.replace("answer: n * p", "answer: n * p + 1"), encoding="utf-8")
    result = run(
        "grade", str(edited), str(answers), "-o", str(tmp_path / "b"), "--issued", str(issued)
    )
    assert (result.exit_code, result.output) == (
        2,
        "Error: --issued: 1 issued question changed since issuing (num-expected-heads); grades "
        "move for everyone who holds them (num-expected-heads: the right answer changes for "
        "issued versions: n=10, p=0.5 (everyone): 5 → 6): --accept-changes grades the issued "
        "versions against the edited keys ('quizgym check BANK --issued FILE' lists every "
        "change)\n",
    )
    result = run("grade", str(edited), str(answers), "-o", str(tmp_path / "c"), "--issued",
                 str(issued), "--accept-changes")  # fmt: skip
    assert result.exit_code == 0, result.output
    # the issued numbers are kept, the edited key applies (the old key earns nothing now)
    assert [row["num-expected-heads"] for row in grades(tmp_path / "c").values()] == ["0"] * 4
    report = (tmp_path / "c" / "report.html").read_text(encoding="utf-8")
    assert "graded against the bank as edited since it was issued (num-expected-heads)" in report


def test_check_issued_lists_what_an_edit_changes_for_students_who_hold_it(
    roster: tuple[Path, list[list[str]]], tmp_path: Path
) -> None:
    issued, _ = roster
    text = STATS.read_text(encoding="utf-8")
    edited = tmp_path / "stats.yaml"
    edited.write_text(
        text.replace("answer: n * p", "answer: n * p * 2").replace(
            "{choices: [2, 4, 8]}", "{choices: [2, 4, 9]}"
        ),
        encoding="utf-8",
    )
    result = run("check", str(edited), "--issued", str(issued))
    lines = result.output.splitlines()
    heads = next(line for line in lines if "num-expected-heads: the right answer changes" in line)
    assert heads.startswith(f"{edited}:9:5: warning: num-expected-heads: the right answer ")
    assert "n=10, p=0.5 (1 student): 5 → 10" in heads
    sd = [line for line in lines if "num-sd-mean" in line]
    assert any("a new render would give" in line for line in sd)
    assert any(
        "num-sd-mean: edited since it was issued: keys and scoring unchanged" in line for line in sd
    )
    assert lines[-2].endswith(
        ":1:1: warning: 2 issued questions changed since issuing (num-expected-heads, "
        "num-sd-mean); grades move for 6 students: --accept-changes grades the issued versions "
        "against the edited keys"
    )
    assert lines[-1].endswith(": 0 error(s), 4 warning(s)"), lines
    clean = run("check", str(STATS), "--issued", str(issued))
    assert clean.exit_code == 0 and clean.output.splitlines()[-1].endswith(": ok")


def test_check_issued_refuses_a_manifest_of_another_bank(
    photocopied: tuple[Path, Path], tmp_path: Path
) -> None:
    issued, _ = photocopied
    result = run("check", "bert-mlm", "--issued", str(issued))
    assert result.exit_code == 1
    assert "the manifest is of bank 'intro-stats', not 'bert-mlm'" in result.output


def test_the_manifest_format_has_a_json_schema() -> None:
    schema = json.loads(issued_json_schema())
    assert schema["$id"] == "urn:quizgym:issued-schema:1"
    assert {"bank", "bank_hash", "mode", "versions", "students", "items"} <= set(
        schema["properties"]
    )
    result = run("schema", "--issued")
    assert json.loads(result.output) == schema


def test_a_file_that_is_no_manifest_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "issued.json"
    bad.write_text('{"not": "ours"}', encoding="utf-8")
    answers = write_csv(tmp_path / "c.csv", [["student", "tf-mean-median"], ["s1", "true"]])
    result = run("grade", str(STATS), str(answers), "-o", str(tmp_path / "g"), "--issued", str(bad))
    assert (result.exit_code, result.output) == (
        2,
        f'Error: {bad}: not a quizgym issue manifest (no "format": "quizgym-issued/2")\n',
    )


# --- the safety net on simulated classes ---------------------------------------------------------


def simulated(book: Any, students: int, *, seed: int, facility: float) -> list[list[str]]:
    """A class as it types: right answers at varying precision, slips, blanks and nonsense."""
    rng = random.Random(seed)
    q = book.bank.question("num-expected-heads")
    slot = book.slot("num-expected-heads")
    mc = book.bank.question("mc-spread")
    rows = [["student", "num-expected-heads", "mc-spread"]]
    for k in range(students):
        sid = f"s{k:03d}"
        variant = book.variant(q, student=sid, seed=seed)
        right = book.key(slot, variant).number
        roll = rng.random()
        if roll < facility:
            heads = rng.choice([f"{right:g}", f"{right:.1f}", f"{right:.2f}"])
        elif roll < facility + 0.15:
            heads = f"{right * rng.choice([0.5, 2, 1.1]):g}"  # a slip of their own numbers
        elif roll < facility + 0.2:
            heads = ""
        else:
            heads = str(rng.randint(0, 60))
        order = book.variant(mc, student=sid, seed=seed).order
        letter = "ABCD"[order.index(0)] if rng.random() < facility else rng.choice("ABCD")
        rows.append([sid, heads, letter])
    return rows


@pytest.mark.parametrize("facility", [0.3, 0.6, 0.9])
def test_the_safety_net_is_silent_on_a_class_graded_right(tmp_path: Path, facility: float) -> None:
    book = compile_bank(load_bank(STATS))
    answers = write_csv(tmp_path / "c.csv", simulated(book, 64, seed=11, facility=facility))
    run_ = grade_submissions(book, [answers], out_dir=tmp_path / "g", seed=11)
    assert run_.warnings == []


@pytest.mark.parametrize("facility", [0.4, 0.6, 0.9])
def test_the_safety_net_fires_on_a_class_graded_against_the_wrong_versions(
    tmp_path: Path, facility: float
) -> None:
    book = compile_bank(load_bank(STATS))
    answers = write_csv(tmp_path / "c.csv", simulated(book, 64, seed=11, facility=facility))
    wrong = grade_submissions(book, [answers], out_dir=tmp_path / "g", seed=12)
    assert any(w.startswith("num-expected-heads: ") for w in wrong.warnings), wrong.warnings
    default = grade_submissions(book, [answers], out_dir=tmp_path / "h", version="default")
    assert any(w.startswith("num-expected-heads: ") for w in default.warnings), default.warnings


def test_the_safety_net_fires_on_shuffled_letters_read_in_the_wrong_order(tmp_path: Path) -> None:
    # A class that had one sheet with the choices in bank order, graded as shuffled per student.
    book = compile_bank(load_bank(STATS))
    rng = random.Random(3)
    rows = [["student", "mc-spread"]] + [
        [f"s{k:03d}", "A" if rng.random() < 0.7 else rng.choice("BCD")] for k in range(64)
    ]
    answers = write_csv(tmp_path / "c.csv", rows)
    run_ = grade_submissions(book, [answers], out_dir=tmp_path / "g", version="per-student")
    assert any(w.startswith("mc-spread: ") and "default version" in w for w in run_.warnings)
    right = grade_submissions(book, [answers], out_dir=tmp_path / "h", version="default")
    assert right.warnings == []


# --- the numbers are the same everywhere -------------------------------------------------------


@st.composite
def bank_and_roster(draw: st.DrawFn) -> tuple[str, list[tuple[str, int | None]], int | None]:
    values = draw(st.lists(st.integers(1, 60), min_size=2, max_size=4, unique=True))
    other = draw(st.lists(st.integers(2, 9), min_size=1, max_size=3, unique=True))
    text = (
        "bank: prop\ntitle: Property\nquestions:\n"
        "  - id: q\n    type: numeric\n    prompt: 'a = {a}, b = {b}: a times b?'\n"
        f"    params: {{a: {{choices: {values}}}, b: {{choices: {other}}}}}\n"
        "    answer: a * b\n"
        "  - id: m\n    type: multiple_choice\n    shuffle: true\n    prompt: Pick x.\n"
        "    choices: [{text: x, correct: true}, {text: y}, {text: z}]\n"
    )
    names = draw(st.lists(st.from_regex(r"s[0-9a-z]{1,5}", fullmatch=True), min_size=1,
                          max_size=8, unique=True))  # fmt: skip
    seeds = draw(st.lists(st.one_of(st.none(), st.integers(0, 99)), min_size=len(names),
                          max_size=len(names)))  # fmt: skip
    return text, list(zip(names, seeds, strict=True)), draw(st.one_of(st.none(), st.integers(0, 9)))


@settings(max_examples=25, deadline=None)
@given(case=bank_and_roster())
def test_the_manifest_the_sheet_and_the_grader_agree_for_every_student(
    case: tuple[str, list[tuple[str, int | None]], int | None], tmp_path_factory: Any
) -> None:
    text, roster, seed = case
    book = compile_bank(parse_bank(text))
    questions = list(book.bank.questions)
    made: Issued = issue(book, questions, issued_by="render", seed=seed, students=roster)
    rows = [["student", "q", "m"]]
    for sid, own in roster:
        record = made.student(sid)
        assert record is not None
        version = made.version_of("q", record.versions["q"])
        # the manifest's numbers are the sheet's
        sheet = render_worksheet(
            book, questions, fmt="md", student=Student(sid, "", own), seed=seed
        )
        a, b = version.params["a"], version.params["b"]
        assert f"a = {a}, b = {b}: a times b?" in sheet
        # and the drill's draw for that student and seed
        drawn = book.variant(questions[0], student=sid, seed=seed if own is None else own)
        assert drawn.signature == version.signature
        order = made.version_of("m", record.versions["m"]).order
        rows.append([sid, str(a * b), "ABC"[order.index(0)]])
    folder = tmp_path_factory.mktemp("prop")
    path = folder / "issued.json"
    path.write_text(made.model_dump_json(), encoding="utf-8")
    answers = write_csv(folder / "c.csv", rows)
    run_ = grade_submissions(book, [answers], out_dir=folder / "g", issued=path)
    assert run_.rejected == [] and run_.stats.test.mean == 2
    shutil.rmtree(folder)


def test_compare_shows_each_student_their_own_issued_key(
    roster: tuple[Path, list[list[str]]], tmp_path: Path
) -> None:
    """--compare after a key edit names the answer each student's own issued version expects,
    not one drawn again from their id."""
    issued, rows = roster
    answers = write_csv(tmp_path / "class.csv", rows)
    before = tmp_path / "before"
    assert (
        run("grade", str(STATS), str(answers), "-o", str(before), "--issued", str(issued)).exit_code
        == 0
    )
    edited = tmp_path / "stats.yaml"
    edited.write_text(
        STATS.read_text(encoding="utf-8").replace("answer: n * p", "answer: n * p + 1"),
        encoding="utf-8",
    )
    result = run(
        "grade", str(edited), str(answers), "-o", str(tmp_path / "after"), "--issued", str(issued),
        "--accept-changes", "--compare", str(before),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = manifest(issued)
    with (tmp_path / "after" / "changes.csv").open(encoding="utf-8") as stream:
        changes = {row["student"]: row for row in csv.DictReader(stream)}
    assert set(changes) == {s["id"] for s in data["students"]}
    for student in data["students"]:
        version = data["versions"]["num-expected-heads"][student["versions"]["num-expected-heads"]]
        n, p = (Fraction(x) for x in (version["params"]["n"], version["params"]["p"]))
        assert changes[student["id"]]["reason"].endswith(f"; expected {float(n * p + 1):g}")


def test_an_lms_report_of_rich_text_is_matched_by_its_text_without_a_manifest(
    tmp_path: Path,
) -> None:
    """Questions with formulas, emphasis and an image: an LMS shows the text of the HTML the
    export wrote (``\\(m\\)``, the alt text gone), and the report is matched without a manifest."""
    rich = Path(__file__).parent / "data" / "rich" / "rich.yaml"
    out = tmp_path / "quiz.xml"
    assert run("export", str(rich), "--to", "moodle", "-o", str(out)).exit_code == 0
    texts = {i["question"]: i["text"] for i in manifest(Path(f"{out}.issued.json"))["items"]}
    answers = {"tf-histogram": "False", "ste-variance": "the n", "free-outlier": "an outlier"}
    assert "\\(" in texts["ste-variance"]  # the formula as Moodle's filter reads it
    header = ["Surname", "First name", "ID number", "Email address", "State", "Grade/10.00"]
    row = ["Student", "0", "m0", "m0@example.org", "Finished", "3.00"]
    for n, slot in enumerate(answers, start=1):
        header += [f"Question {n}", f"Response {n}"]
        row += [texts[slot], answers[slot]]
    report = write_csv(tmp_path / "responses.csv", [header, row])
    result = run("grade", str(rich), str(report), "-o", str(tmp_path / "g"), "--version", "default")
    assert "ignored" not in result.output, result.output
    assert list(grades(tmp_path / "g")["m0"])[4:] == list(answers)


_CHOICES = ", ".join(str(a) for a in [*range(1, 71), *range(-1, -11, -1)])
UNDEFINED_FOR_SOME = f"""
bank: undefined-for-some
title: A key undefined for some versions
questions:
  - id: q
    type: numeric
    prompt: "What is ln {{a}}?"
    params: {{a: {{choices: [{_CHOICES}]}}}}
    answer: ln(a)
"""


@pytest.mark.parametrize("answer", ["", "0"])
def test_a_version_whose_key_cannot_be_worked_out_does_not_stop_the_safety_net(
    tmp_path: Path, answer: str
) -> None:
    # 80 versions (more than the net holds against one by one); ln(a) is undefined for a < 0.
    # The student who drew one is graded invalid with the reason, blank or not; the class is
    # graded and the net compares the others (it used to raise the key's error for the class).
    book = compile_bank(parse_bank(UNDEFINED_FOR_SOME, path=str(tmp_path / "u.yaml")))
    question, slot = book.bank.question("q"), book.slot("q")
    drawn = {f"s{k}": book.variant(question, student=f"s{k}", seed=1) for k in range(400)}
    good = [s for s, v in drawn.items() if v.params["a"] > 0][:30]
    bad = next(s for s, v in drawn.items() if v.params["a"] < 0)
    path = tmp_path / "class.csv"
    with path.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["student", "q"])
        writer.writerows([s, f"{book.key(slot, drawn[s]).number:.4f}"] for s in good)
        writer.writerow([bad, answer])
    run = grade_submissions(book, [path], out_dir=tmp_path / "out", seed=1)
    assert run.warnings == []
    text = (tmp_path / "out" / "responses.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 31
    assert sum(r["verdict"] == "correct" for r in rows) == 30
    (mine,) = [r for r in rows if r["student"] == bad]
    assert mine["verdict"] == "invalid"  # no key to hold it against, and the row says so
    assert "positive" in mine["feedback"], mine["feedback"]
