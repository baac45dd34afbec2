"""Cloze questions answered in Canvas's and Moodle's quiz response reports: each report, written
as the LMS writes it from quizgym's own export, maps back onto the blanks' slots and grades as the
wide CSV of the same answers does, with and without the export's issue manifest; a cell that
cannot be split among its blanks is unreadable on every blank."""

from __future__ import annotations

import csv
import html
import io
import json
import random
import re
import zipfile
from pathlib import Path

import pytest
from lxml import etree

from quizgym.export import export_bank
from quizgym.grading.run import grade_submissions
from quizgym.loader import load_bank
from quizgym.model import Cloze, MultipleChoice

STATS = """
bank: stats-cloze
title: Sampling
questions:
  - id: interval
    type: cloze
    prompt: >-
      A 95 % interval reaches about {{z}} standard errors either side of the mean; two means
      are compared with the {{test}}, and a result past the cut-off is called {{word}}.
    blanks:
      z: {answer: 1.96, tolerance: {abs: 0.01}}
      test: {choices: ["t test", "chi-squared test", "sign test, paired"], answer: "t test"}
      word: {accept: [significant, "significant, at 5 %"]}
  - id: spread
    type: cloze
    prompt: "A median is {{median}} to outliers, while a mean is {{mean}}."
    blanks:
      median: {choices: [robust, sensitive], answer: robust}
      mean: {choices: ["pulled, by outliers", unmoved], answer: "pulled, by outliers"}
  - id: skew
    type: cloze
    prompt: "In a right-skewed sample the mean lies {{mean}} the median, the mode {{mode}} it."
    blanks:
      mean: {choices: [above, below], answer: above}
      mode: {choices: [above, below], answer: below}
  - id: spss
    type: multiple_choice
    prompt: Which value is the sample's middle one?
    choices:
      - {text: the median, correct: true}
      - {text: the mode}
"""

ANSWERS = {
    "interval.z": ["1.96", "2", "1,96", "1.645", "two", None],
    "interval.test": ["t test", "chi-squared test", "sign test, paired", None],
    "interval.word": ["significant", "Significant", "significant, at 5 %", "signifcant", None],
    "spread.median": ["robust", "sensitive", None],
    "spread.mean": ["pulled, by outliers", "unmoved", None],
}


@pytest.fixture
def stats(tmp_path: Path) -> Path:
    path = tmp_path / "stats.yaml"
    path.write_text(STATS, encoding="utf-8")
    return path


def _class(size: int = 40) -> list[dict[str, str | None]]:
    """Each student's answer to every slot (None: unanswered), drawn at random; the two blanks
    of ``skew``, which share their options, are answered together or not at all (a dropdowns
    report cannot say which one a lone answer was for)."""
    rng = random.Random(2029)
    out = []
    for n in range(size):
        row: dict[str, str | None] = {"student": str(7000 + n)}
        for slot, picks in ANSWERS.items():
            row[slot] = rng.choice(picks)
        both = rng.random() < 0.8
        row["skew.mean"] = rng.choice(["above", "below"]) if both else None
        row["skew.mode"] = rng.choice(["above", "below"]) if both else None
        row["spss"] = rng.choice(["the median", "the mode"])
        out.append(row)
    return out


def _wide(rows: list[dict[str, str | None]], path: Path) -> Path:
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({k: v or "" for k, v in row.items()} for row in rows)
    return path


def _html_to_text(text: str) -> str:
    """Canvas's ``html_to_text`` / Moodle's ``html_to_text`` on these texts: tags gone,
    entities read, spaces squeezed, the ends stripped."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


def _qti_items(bank: Path, tmp: Path) -> list[tuple[str, str, str, list[str]]]:
    """Each item of the Canvas export: (ident, question type, question text, blank ids in the
    order Canvas lists its answers, one ``response_lid`` after another)."""
    exported = export_bank(bank, to="qti12", output=tmp / "canvas-export.zip")
    with zipfile.ZipFile(exported.path) as archive:
        name = next(n for n in archive.namelist() if n.count("/") == 1 and "meta" not in n)
        root = etree.fromstring(archive.read(name))
    out = []
    for item in root.iter("{*}item"):
        kind = next(
            f.findtext("{*}fieldentry")
            for f in item.iter("{*}qtimetadatafield")
            if f.findtext("{*}fieldlabel") == "question_type"
        )
        text = item.find("{*}presentation/{*}material/{*}mattext")
        assert text is not None and text.text
        blanks = [
            lid.get("ident", "").removeprefix("response_") for lid in item.iter("{*}response_lid")
        ]
        out.append((item.get("ident", ""), kind, text.text, blanks))
    return out


def _canvas_cell(kind: str, question: Cloze | None, row: dict[str, str | None], qid: str) -> str:
    """Canvas's ``to_csv`` cell (Quizzes::QuizStatistics::StudentAnalysis): a fill-in question
    writes ``answer_for_<blank>`` of every blank (``""`` unanswered; nothing at all when no blank
    is), a dropdowns question the text of each chosen answer only (an unchosen blank is
    dropped); ``,`` written ``\\,``, joined by ``,``; then ``html_to_text``."""
    if question is None:
        return row[qid] or ""
    typed = [row[f"{qid}.{name}"] for name in question.order]
    if kind == "fill_in_multiple_blanks_question":
        if not any(t and t.strip() for t in typed):
            return ""
        pieces = [(t or "").replace(",", "\\,") for t in typed]
    else:
        assert kind == "multiple_dropdowns_question"
        pieces = [t.replace(",", "\\,") for t in typed if t is not None]
    return _html_to_text(",".join(pieces))


def canvas_report(bank_path: Path, rows: list[dict[str, str | None]], tmp: Path) -> str:
    """A Canvas "Student Analysis" CSV of the export: ``"<id>: <text>"``, tags stripped, and a
    points column per item."""
    bank = load_bank(bank_path)
    items = _qti_items(bank_path, tmp)
    header = ["name", "id", "sis_id", "section", "section_id", "section_sis_id", "submitted"]
    for k, (_, _, text, _) in enumerate(items):
        header += [f"{900 + k}: {re.sub(r'<[^>]+>', '', text)}", "1.0"]
    header += ["n correct", "n incorrect", "score"]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    for row in rows:
        cells = [f"Student {row['student']}", str(row["student"]), "", "A", "1", "", "2026-12-02"]
        for ident, kind, _, blanks in items:
            question = bank.question(ident)
            cloze = question if isinstance(question, Cloze) else None
            if cloze is not None:
                assert blanks == cloze.order  # Canvas lists the blanks in the text's order
            cells += [_canvas_cell(kind, cloze, row, ident), "0.5"]
        writer.writerow([*cells, "0", "0", "0"])
    return out.getvalue()


_SUBQUESTION = re.compile(r"\{\d+:([A-Z_]+):((?:[^}\\]|\\.)*)\}")


def _moodle_summary(questiontext: str) -> str:
    """qtype_multianswer's ``get_question_summary``: the text with each MULTICHOICE blank as
    ``{option; option}`` (the options in the order shown) and any other as ``_____``."""

    def shown(match: re.Match[str]) -> str:
        if match[1] != "MULTICHOICE":
            return "_____"
        options = re.split(r"(?<!\\)~", match[2])
        texts = [re.sub(r"^(=|%-?\d+%)", "", re.split(r"(?<!\\)#", o)[0]) for o in options]
        return "{" + "; ".join(re.sub(r"\\(.)", r"\1", t) for t in texts) + "}"

    return _html_to_text(_SUBQUESTION.sub(shown, questiontext))


def _moodle_cell(question: Cloze, row: dict[str, str | None]) -> str:
    """qtype_multianswer's ``summarise_response``: ``part i: <the subquestion's summary>`` for
    every blank, numbered in the text's order, joined by ``; `` (an unanswered part empty); a
    question not answered at all has no summary, which the report shows as ``-``."""
    typed = [row[f"{question.id}.{name}"] for name in question.order]
    if all(t is None for t in typed):
        return "-"
    return "; ".join(f"part {i}: {t or ''}" for i, t in enumerate(typed, start=1))


def moodle_report(
    bank_path: Path, rows: list[dict[str, str | None]], tmp: Path, *, with_text: bool = True
) -> str:
    """A Moodle quiz "Responses" CSV of the Moodle XML export (the ``Question N`` columns when
    downloaded with the question text)."""
    bank = load_bank(bank_path)
    exported = export_bank(bank_path, to="moodle", output=tmp / "moodle-export.xml")
    root = etree.parse(str(exported.path)).getroot()
    texts = {
        q.findtext("name/text"): q.findtext("questiontext/text") or ""
        for q in root.iter("question")
        if q.get("type") != "category"
    }
    header = ["Surname", "First name", "ID number", "State", "Grade/10.00"]
    for n in range(1, len(bank.questions) + 1):
        header += ([f"Question {n}"] if with_text else []) + [f"Response {n}"]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    for row in rows:
        cells = ["Student", str(row["student"]), str(row["student"]), "Finished", "5.00"]
        for question in bank.questions:
            if isinstance(question, Cloze):
                text = _moodle_summary(texts[question.id])
                response = _moodle_cell(question, row)
            else:
                assert isinstance(question, MultipleChoice)
                choices = "; ".join(c.text for c in question.choices)
                text, response = f"{question.prompt}: {choices}", row[question.id] or "-"
            cells += ([text] if with_text else []) + [response]
        writer.writerow(cells)
    writer.writerow(["Overall average", "", "", "", "5.00"] + [""] * (len(header) - 5))
    return out.getvalue()


def graded(
    bank: Path, report: Path, out: Path, **how: object
) -> dict[tuple[str, str], tuple[str, str, str]]:
    """(student, slot) → (verdict, score, read as) of ``quizgym grade``."""
    run = grade_submissions(bank, [report], out_dir=out, **how)  # type: ignore[arg-type]
    assert [r for r in run.rejected if not r.is_column] == []
    assert [r for r in run.rejected if r.is_column] == []  # every column is one of the bank's
    with (out / "responses.csv").open(encoding="utf-8") as stream:
        return {
            (r["student"], r["question"]): (r["verdict"], r["score"], r["read_as"])
            for r in csv.DictReader(stream)
        }


def test_canvas_and_moodle_reports_grade_each_blank_as_the_wide_csv_does(
    stats: Path, tmp_path: Path
) -> None:
    rows = _class()
    wide = graded(stats, _wide(rows, tmp_path / "wide.csv"), tmp_path / "w")
    assert len(wide) == 40 * 8
    verdicts = {v for (_, slot), (v, _, _) in wide.items() if "." in slot}
    assert {"correct", "incorrect", "blank", "invalid"} <= verdicts
    canvas = tmp_path / "canvas.csv"
    canvas.write_text(canvas_report(stats, rows, tmp_path), encoding="utf-8")
    text = canvas.read_text(encoding="utf-8")
    assert "1\\,96" in text and "sign test\\, paired" in text
    assert graded(stats, canvas, tmp_path / "c") == wide
    moodle = tmp_path / "moodle.csv"
    moodle.write_text(moodle_report(stats, rows, tmp_path), encoding="utf-8")
    assert "part 2: ; part 3:" in moodle.read_text(encoding="utf-8")  # an unanswered part
    assert graded(stats, moodle, tmp_path / "m") == wide


@pytest.mark.parametrize(("fmt", "suffix"), [("qti12", ".zip"), ("moodle", ".xml")])
def test_with_the_export_manifest_each_blank_is_found_by_identity(
    stats: Path, tmp_path: Path, fmt: str, suffix: str
) -> None:
    rows = _class(25)
    wide = graded(stats, _wide(rows, tmp_path / "wide.csv"), tmp_path / "w")
    exported = export_bank(stats, to=fmt, output=tmp_path / f"stats{suffix}")
    assert exported.issued is not None
    items = json.loads(exported.issued.read_text(encoding="utf-8"))["items"]
    # a cloze is one item, never one of its blanks (even one with a single number blank)
    assert [(i["question"], i["part"]) for i in items] == [
        ("interval", None),
        ("spread", None),
        ("skew", None),
        ("spss", None),
    ]
    report = tmp_path / "report.csv"
    if fmt == "qti12":
        report.write_text(canvas_report(stats, rows, tmp_path), encoding="utf-8")
    else:  # Moodle's default download has no question texts: the manifest gives the order
        report.write_text(moodle_report(stats, rows, tmp_path, with_text=False), encoding="utf-8")
    assert graded(stats, report, tmp_path / "g", issued=exported.issued) == wide


def _replaced(report: str, column: str, cells: list[str]) -> list[list[str]]:
    lines = list(csv.reader(io.StringIO(report)))
    at = lines[0].index(column) if column in lines[0] else -1
    if at < 0:  # a Canvas column: by its id
        at = next(k for k, h in enumerate(lines[0]) if h.startswith(column))
    body = lines[1 : 1 + len(cells)]
    for row, cell in zip(body, cells, strict=True):
        row[at] = cell
    return [lines[0], *body]


def _write(path: Path, lines: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as stream:
        csv.writer(stream).writerows(lines)
    return path


def test_a_cell_that_cannot_be_split_is_unreadable_on_every_blank_never_guessed(
    stats: Path, tmp_path: Path
) -> None:
    rows = _class(4)
    moodle = moodle_report(stats, rows, tmp_path)
    broken = [
        "part 1: 1.96; part 2: t test",  # a part missing
        "part 1: 1.96; part 2: t test; part 3: no; part 3: significant",  # two ways to split
        "1.96, t test, significant",  # not parts at all
        "part 2: t test; part 1: 1.96; part 3: significant",  # out of order
    ]
    found = graded(
        stats, _write(tmp_path / "m.csv", _replaced(moodle, "Response 1", broken)), tmp_path / "g"
    )
    for student in ("7000", "7001", "7002", "7003"):
        assert {found[(student, f"interval.{b}")][0] for b in ("z", "test", "word")} == {
            "invalid"
        }, student
        assert found[(student, "spss")][0] in {"correct", "incorrect"}  # the rest is graded
    canvas = canvas_report(stats, rows, tmp_path)
    cells = [
        ("900", "1.96,t test"),  # a fill-in cell with a blank too few
        ("900", "1.96,t test,significant,extra"),  # and one too many
        ("902", "above"),  # one of two dropdowns that share their options: which one?
        ("901", "robust,unmoved,sensitive"),  # more choices than blanks
    ]
    lines = list(csv.reader(io.StringIO(canvas)))
    for k, (column, cell) in enumerate(cells):
        at = next(j for j, h in enumerate(lines[0]) if h.startswith(f"{column}: "))
        lines[1 + k][at] = cell
    found = graded(stats, _write(tmp_path / "c.csv", lines[:5]), tmp_path / "h")
    unreadable = {
        "7000": ("interval", ("z", "test", "word")),
        "7001": ("interval", ("z", "test", "word")),
        "7002": ("skew", ("mean", "mode")),
        "7003": ("spread", ("median", "mean")),
    }
    for student, (qid, blanks) in unreadable.items():
        assert {found[(student, f"{qid}.{b}")][0] for b in blanks} == {"invalid"}, student
    # a dropdown answered alone whose text only one blank offers is that blank's
    lines = list(csv.reader(io.StringIO(canvas)))
    at = next(j for j, h in enumerate(lines[0]) if h.startswith("901: "))
    lines[1][at] = "pulled\\, by outliers"
    found = graded(stats, _write(tmp_path / "d.csv", lines[:2]), tmp_path / "i")
    assert found[("7000", "spread.median")][0] == "blank"
    assert found[("7000", "spread.mean")][:2] == ("correct", "1")
