"""The adversary's third round (issue #33, points 9, 10, 12 and 13): each case on a small bank.

Each test reproduces one attack that broke main (a stalled or lost class, a broken file on disk,
a file read from outside the bank, an unexpected error) and asserts what a user now sees: the
row rejected with a reason, the bank refused with file:line, the file whole or absent.
"""

from __future__ import annotations

import base64
import csv
import http.server
import io
import json
import struct
import sys
import threading
import warnings
import xml.etree.ElementTree as ET
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import require_module

from quizgym.answers import match_rubric
from quizgym.cli import cli
from quizgym.model import RubricCriterion

BANK = """\
bank: small
title: Small
questions:
  - id: tf
    type: true_false
    prompt: The sky is blue.
    answer: true
  - id: why
    type: free_text
    prompt: Why?
    model_answer: A mismatch.
    rubric:
      - {criterion: mismatch, any_of: [mismatch, never appears], points: 1}
  - id: num
    type: numeric
    prompt: Two plus two.
    answer: 2 + 2
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run(*args: str | Path) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args])


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


# --- 10: one student stalls or stops the class ----------------------------------------------


def calls(work: Callable[[], object]) -> int:
    """How many Python calls (generator steps included) ``work`` makes: a count of steps."""
    count = 0

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal count
        if event == "call":
            count += 1

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return count


def test_the_rubric_matcher_is_linear_in_the_length_of_an_answer() -> None:
    # _quotes compared every occurrence with every other: 120 KB of "mismatch" took a minute.
    rubric = [RubricCriterion(criterion="mismatch", any_of=["mismatch"], points=1)]
    match_rubric(rubric, "mismatch")  # the rubric compiled once, outside the count
    small = calls(lambda: match_rubric(rubric, "mismatch " * 400))
    large = calls(lambda: match_rubric(rubric, "mismatch " * 1600))
    assert large < 5 * small  # four times the words: about four times the steps, not sixteen


def test_a_long_answer_repeating_a_rubric_word_is_quoted_once(tmp_path: Path) -> None:
    bank = write(tmp_path / "bank.yaml", BANK)
    text = "mismatch " * 13_000  # 117 KB, under the 128 KiB a cell may hold
    lines = [json.dumps({"student": s, "answers": {"why": text}}) for s in ("a", "b")]
    data = write(tmp_path / "class.jsonl", "\n".join(lines) + "\n")
    result = run("grade", bank, data, "-o", tmp_path / "g")
    assert result.exit_code == 0, result.output
    graded = {r["student"]: r for r in rows(tmp_path / "g" / "responses.csv")}
    assert graded["a"]["verdict"] == graded["b"]["verdict"] == "correct"
    assert graded["a"]["feedback"].startswith("Mentions: mismatch (“mismatch”). ")


def test_a_json_id_with_a_lone_surrogate_is_rejected_and_the_others_graded(
    tmp_path: Path,
) -> None:
    # clean_id could not encode "\ud800" to show it: exit 2 and nobody graded.
    bank = write(tmp_path / "bank.yaml", BANK)
    data = write(
        tmp_path / "class.jsonl",
        '{"student": "x\\ud800", "answers": {"tf": "true"}}\n'
        '{"student": "ok", "answers": {"tf": "true"}}\n',
    )
    result = run("grade", bank, data, "-o", tmp_path / "g")
    assert result.exit_code == 1, result.output
    assert "graded 1 student" in result.output
    assert [r["student"] for r in rows(tmp_path / "g" / "grades.csv")] == ["ok"]
    [rejected] = rows(tmp_path / "g" / "rejected.csv")
    assert (rejected["line"], rejected["student"]) == ("1", "x\\ud800")
    assert rejected["reason"] == "an escape that is not a character"


# --- 12: control characters in bank text ----------------------------------------------------

CONTROLS = r"""bank: controls
title: Controls
questions:
  - id: tf
    type: true_false
    prompt: "The sky\fis \x1b[31mblue."
    answer: true
  - id: mc
    type: multiple_choice
    prompt: Pick one.
    choices:
      - {text: "Right\x0b one", correct: true}
      - {text: Wrong, feedback: "Not\x1b this."}
  - id: num
    type: numeric
    prompt: "What is $\\frac{1}{2}\x0c$ of four?"
    answer: 2
"""


def xml_documents(path: Path) -> list[bytes]:
    """The XML documents of an export: the file, or each ``.xml`` member of its zip."""
    if not zipfile.is_zipfile(path):
        return [path.read_bytes()]
    with zipfile.ZipFile(path) as archive:
        return [archive.read(n) for n in archive.namelist() if n.endswith(".xml")]


def test_check_reports_each_control_character_at_its_line(tmp_path: Path) -> None:
    bank = write(tmp_path / "bank.yaml", CONTROLS)
    result = run("check", bank)
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if "control character" in line]
    assert lines == [
        f"{bank}:6:14: tf: prompt: a control character, U+000C FORM FEED, at character 8 (and 1 "
        "more): XML exports cannot hold it and it drives terminals; remove it",
        f"{bank}:12:17: mc: choices.0.text: a control character, U+000B VERTICAL TAB, at "
        "character 6: XML exports cannot hold it and it drives terminals; remove it",
        f"{bank}:13:34: mc: choices.1.feedback: a control character, U+001B ESCAPE, at "
        "character 4: XML exports cannot hold it and it drives terminals; remove it",
        f"{bank}:16:14: num: prompt: a control character, U+000C FORM FEED, at character 21: "
        "XML exports cannot hold it and it drives terminals; remove it",
    ]


@pytest.mark.parametrize("fmt", ["moodle", "qti12", "qti21"])
def test_an_xml_export_of_text_with_control_characters_is_well_formed(
    tmp_path: Path, fmt: str
) -> None:
    # The writers wrote the form feed and the escape as they were: no LMS reads such a file,
    # and the export's own read-back ended in "unexpected ParseError", the file left on disk.
    bank = write(tmp_path / "bank.yaml", CONTROLS)
    out = tmp_path / f"out-{fmt}"
    result = run("export", bank, "--to", fmt, "-o", out)
    assert result.exit_code == 0, result.output
    documents = xml_documents(out)
    assert documents
    for document in documents:
        ET.fromstring(document)  # noqa: S314 (our own file)
        assert b"\x1b" not in document
        assert b"\x0c" not in document
    assert any(b"The sky is [31mblue." in d for d in documents)


def test_an_export_that_fails_leaves_the_earlier_file_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quizgym.export import export_bank, scoring

    bank = write(tmp_path / "bank.yaml", BANK)
    out = tmp_path / "quiz.xml"
    out.write_bytes(b"the earlier export")

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("read back failed")

    monkeypatch.setattr(scoring, "check_export", broken)
    with pytest.raises(RuntimeError):
        export_bank(bank, to="moodle", output=out, check=True)
    assert out.read_bytes() == b"the earlier export"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bank.yaml", "quiz.xml"]


# --- 13: a damaged earlier folder, two runs into one folder ----------------------------------


def graded_class(tmp_path: Path, students: int = 30) -> tuple[Path, Path]:
    bank = write(tmp_path / "bank.yaml", BANK)
    lines = ["student,tf,num", *(f"s{i},true,4" for i in range(students))]
    return bank, write(tmp_path / "class.csv", "\n".join(lines) + "\n")


def truncate_grades(folder: Path) -> None:
    path = folder / "grades.csv"
    path.write_text("".join(path.read_text(encoding="utf-8").splitlines(True)[:11]), "utf-8")


def cut_responses(folder: Path) -> None:
    path = folder / "responses.csv"
    path.write_bytes(path.read_bytes()[:700])


def damage_record(folder: Path) -> None:
    (folder / "run.json").write_text("[1, 2]\n", encoding="utf-8")


def ragged_grades(folder: Path) -> None:
    path = folder / "grades.csv"
    lines = path.read_text(encoding="utf-8").splitlines(True)
    lines[3] = '"s2","1"\n'
    path.write_text("".join(lines), encoding="utf-8")


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (
            truncate_grades,
            "grades.csv holds 10 rows, and run.json says the run wrote 30 students: the folder "
            "was changed since; grade it again",
        ),
        (cut_responses, "responses.csv:12: damaged (unexpected end of data); grade it again"),
        (damage_record, "run.json is not a quizgym run record (quizgym-run/1)"),
        (ragged_grades, "grades.csv:4: a row of 2 cells under a header of 6 (the file is "
         "damaged); grade it again"),
    ],
    ids=["truncated", "cut", "record", "ragged"],
)  # fmt: skip
def test_compare_refuses_a_damaged_earlier_folder(
    tmp_path: Path, damage: Callable[[Path], None], message: str
) -> None:
    # A truncated grades.csv listed 20 students as "not in this run"; a cut row ended in an
    # AttributeError; the damage is now found before anything is graded.
    bank, data = graded_class(tmp_path)
    assert run("grade", bank, data, "-o", tmp_path / "old").exit_code == 0
    damage(tmp_path / "old")
    result = run("grade", bank, data, "-o", tmp_path / "new", "--compare", tmp_path / "old")
    assert (result.exit_code, result.output) == (
        2,
        f"Error: --compare {tmp_path / 'old'}: {message}\n",
    )
    assert not (tmp_path / "new").exists()


def test_a_second_grade_into_the_same_folder_is_refused_while_the_first_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The second run removed the first one's staging folder: it died with pyarrow's "Failed to
    # open local file". Now the second is refused, and the first finishes whole.
    from quizgym.grading import run as grading_run

    bank, data = graded_class(tmp_path)
    out = tmp_path / "g"
    second: list[Any] = []
    real = grading_run.assemble

    def assemble_and_start_another(*args: Any, **kwargs: Any) -> Any:
        if not second:  # the first run, half-way: a second run into its folder starts
            second.append(run("grade", bank, data, "-o", out))
        return real(*args, **kwargs)

    monkeypatch.setattr(grading_run, "assemble", assemble_and_start_another)
    first = run("grade", bank, data, "-o", out)
    assert first.exit_code == 0, first.output
    [refused] = second
    assert refused.exit_code == 2
    assert refused.output.startswith(f"Error: {out}: another quizgym grade is writing there")
    assert refused.output.endswith("; wait for it to finish or choose another -o folder\n")
    assert len(refused.output.splitlines()) == 1
    assert len(rows(out / "grades.csv")) == 30
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []
    again = run("grade", bank, data, "-o", out)  # the lock went with the first run
    assert again.exit_code == 0, again.output


# --- 13: a key check refuses; ids that print alike -------------------------------------------


@pytest.mark.parametrize(
    ("key", "why"),
    [("1/0", "Division by zero"), ("ln(0)", "ln needs a positive number, but got 0")],
)
def test_a_key_that_cannot_be_evaluated_refuses_the_run(tmp_path: Path, key: str, why: str) -> None:
    # check refused the key, and grade exited 0 with every answer "could not be graded".
    bank = write(tmp_path / "bank.yaml", BANK.replace("answer: 2 + 2", f"answer: {key}"))
    data = write(tmp_path / "class.csv", "student,tf,num\ns1,true,4\ns2,true,5\n")
    result = run("grade", bank, data, "-o", tmp_path / "g")
    assert (result.exit_code, result.output) == (
        1,
        f"{bank}:17:5: num: the key cannot be evaluated: {why}; nothing graded\n",
    )
    assert not (tmp_path / "g").exists()


ALIKE = "student,tf,num\nJos\u00e9,true,4\nJose\u0301,false,4\ns1,true,4\n\uff53\uff11,false,3\n"


@pytest.mark.parametrize("chunk", [[], ["--chunk-rows", "1"]], ids=["in-memory", "chunked"])
@pytest.mark.parametrize("name", ["class.csv", "class.jsonl"])
def test_ids_that_print_alike_are_one_student_and_the_second_row_is_refused(
    tmp_path: Path, chunk: list[str], name: str
) -> None:
    # NFC and NFD "José", "s1" and a full-width "ｓ１" were four students without a word.
    bank = write(tmp_path / "bank.yaml", BANK)
    records = [line.split(",") for line in ALIKE.splitlines()[1:]]
    if name == "class.csv":
        text = ALIKE
    else:
        text = "".join(
            json.dumps({"student": s, "answers": {"tf": tf, "num": num}}) + "\n"
            for s, tf, num in records
        )
    data = write(tmp_path / name, text)
    result = run("grade", bank, data, "-o", tmp_path / "g", *chunk)
    assert result.exit_code == 1, result.output
    assert [r["student"] for r in rows(tmp_path / "g" / "grades.csv")] == ["José", "s1"]
    offset = 1 if name == "class.csv" else 0  # a CSV's header is its line 1
    reasons = [(r["line"], r["reason"]) for r in rows(tmp_path / "g" / "rejected.csv")]
    assert reasons == [
        (str(2 + offset), f"duplicate student José (first at {data}:{1 + offset})"),
        (
            str(4 + offset),
            f"student ｓ１ looks like s1 (first at {data}:{3 + offset}): ids that print alike "
            "(full-width letters, ligatures) are one student; write it one way",
        ),
    ]


def test_a_long_file_does_not_merge_ids_that_print_alike(tmp_path: Path) -> None:
    bank = write(tmp_path / "bank.yaml", BANK)
    data = write(tmp_path / "long.csv", "student,question,answer\ns1,tf,true\n\uff53\uff11,num,3\n")
    result = run("grade", bank, data, "-o", tmp_path / "g")
    assert result.exit_code == 1, result.output
    assert [r["student"] for r in rows(tmp_path / "g" / "responses.csv")] == ["s1"]
    [rejected] = rows(tmp_path / "g" / "rejected.csv")
    assert rejected["reason"].startswith(f"student ｓ１ looks like s1 (first at {data}:2)")


# --- 9: a bank's images reach only inside the bank ------------------------------------------


def png(width: int, height: int, rows: int | None = None) -> bytes:
    """A grey PNG declaring ``width`` × ``height`` (of ``rows`` rows of data, all when None)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    pixels = zlib.compress((b"\x00" + b"\x80" * width) * (height if rows is None else rows), 9)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def image_bank(folder: Path, src: str) -> Path:
    return write(
        folder / "bank.yaml",
        "bank: pictures\ntitle: Pictures\nquestions:\n  - id: tf\n    type: true_false\n"
        f'    prompt: "Look: ![a chart]({src})"\n    answer: true\n',
    )


def check_line(result: Any) -> str:
    return next(line for line in result.output.splitlines() if "image" in line)


def test_an_svg_that_refers_outside_itself_is_refused(tmp_path: Path) -> None:
    # WeasyPrint followed the SVG's own <image href>: a request from the teacher's machine, or a
    # file from outside the bank's folder printed in every student's PDF.
    for n, target in enumerate(["http://127.0.0.1:9/x.png", "file:///etc/hostname"]):
        folder = tmp_path / str(n)
        svg = (
            '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
            f'<image href="{target}" width="10" height="10"/></svg>'
        )
        write(folder / "figures" / "a.svg", svg)
        bank = image_bank(folder, "figures/a.svg")
        for command in (["check"], ["render", "-o", str(folder / "out"), "--format", "html"]):
            result = run(*command, bank)
            assert result.exit_code == 1, result.output
            assert check_line(result) == (
                f"{bank}:6:20: tf: prompt: image figures/a.svg refers to {target}; an SVG "
                "quizgym ships holds everything it shows (embed the picture, or draw it in the "
                "SVG)"
            )
        assert not (folder / "out").exists()


def test_a_file_named_as_an_image_must_be_that_image(tmp_path: Path) -> None:
    # A link inside the bank's folder shipped any file as an "image" (here the bank itself).
    (tmp_path / "figures").mkdir()
    bank = image_bank(tmp_path, "figures/x.png")
    (tmp_path / "figures" / "x.png").symlink_to(bank)
    result = run("check", bank)
    assert result.exit_code == 1
    assert check_line(result) == (
        f"{bank}:6:20: tf: prompt: image figures/x.png is not a PNG image (its bytes are of "
        "another kind of file)"
    )
    for fmt in ("moodle", "qti12"):
        exported = run("export", bank, "--to", fmt, "-o", tmp_path / f"out-{fmt}")
        assert exported.exit_code == 1
        assert not (tmp_path / f"out-{fmt}").exists()


def test_a_png_bomb_is_refused_by_its_declared_size(tmp_path: Path) -> None:
    # 0.65 MB that decodes to gigapixels cost 1.6 GB and 15 s per PDF.
    write(tmp_path / "figures" / "x.png", "")
    (tmp_path / "figures" / "x.png").write_bytes(png(40_000, 40_000, rows=4))
    bank = image_bank(tmp_path, "figures/x.png")
    result = run("render", bank, "-o", tmp_path / "out", "--format", "pdf")
    assert result.exit_code == 1
    assert check_line(result) == (
        f"{bank}:6:20: tf: prompt: image figures/x.png declares 40,000 × 40,000 pixels; "
        "quizgym ships images of at most 50 megapixels (scale it down)"
    )
    small = tmp_path / "figures" / "x.png"
    small.write_bytes(png(4, 4))
    assert run("check", bank).exit_code == 0


def test_a_pdf_fetches_nothing_the_document_does_not_hold(tmp_path: Path) -> None:
    # The fetcher behind render --format pdf: even an SVG that slipped past check (a bank built
    # in code) cannot make WeasyPrint read a file or make a request.
    require_module("weasyprint")
    from quizgym.render.documents import html_to_pdf

    requests: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
            requests.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    outside = tmp_path / "outside.png"
    outside.write_bytes(png(4, 4))
    with http.server.HTTPServer(("127.0.0.1", 0), Handler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        address = f"http://127.0.0.1:{server.server_address[1]}/x.png"
        svg = (
            '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
            f'<image href="{address}" width="10" height="10"/></svg>'
        )
        inline = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
        html = f'<p>x</p><img src="{inline}"><img src="{outside.as_uri()}"><img src="{address}">'
        pdf = html_to_pdf(html)
        server.shutdown()
    pypdf = require_module("pypdf")
    assert requests == []
    assert len(pypdf.PdfReader(io.BytesIO(pdf)).pages[0].images) == 0


# --- 12: formulas an output cannot draw in bounded time ---------------------------------------


def nested(depth: int) -> str:
    tex = "x"
    for _ in range(depth):
        tex = "\\frac{" + tex + "}{2}"
    return tex


def formula_bank(folder: Path, prompts: list[str]) -> Path:
    lines = ["bank: formulas", "title: Formulas", "questions:"]
    for k, prompt in enumerate(prompts):
        lines += [f"  - id: q{k}", "    type: true_false", f"    prompt: '{prompt}'"]
        lines += ["    answer: true"]
    return write(folder / "bank.yaml", "\n".join(lines) + "\n")


def test_a_formula_nested_too_deep_is_refused_and_never_drawn(tmp_path: Path) -> None:
    # 16 nested fractions passed check (braces up to 24 deep) and took over a minute per PDF
    # page: ziamath's time doubles with each level.
    with warnings.catch_warnings():  # ziamath's own deprecated importlib call
        warnings.simplefilter("ignore", DeprecationWarning)
        require_module("ziamath")
    from quizgym.richtext.tex import tex_to_svg

    bank = formula_bank(tmp_path, [f"Is ${nested(6)}$ small?", f"Is ${nested(7)}$ small?"])
    result = run("check", bank)
    assert result.exit_code == 1
    [line] = [x for x in result.output.splitlines() if "more than 6 deep" in x]
    assert line.startswith(f"{bank}:10:")
    assert line.endswith(
        f"q1: prompt: ${nested(7)}$: a formula nested more than 6 deep (fractions, roots, powers "
        "or brackets inside each other) takes too long to draw; split it, or name a part"
    )
    assert tex_to_svg(nested(6)) is not None
    assert tex_to_svg(nested(7)) is None  # printed as its text, in bounded time
    assert tex_to_svg("\\left(" * 7 + "x" + "\\right)" * 7) is None


def test_a_bank_of_too_many_formulas_is_refused(tmp_path: Path) -> None:
    # 1,500 formulas took 13-20 s a PDF.
    prompts = [f"Is ${k} + x$ more than ${k}$?" for k in range(250)] + ["Is $y$ a letter?"]
    bank = formula_bank(tmp_path, prompts)
    result = run("check", bank)
    assert result.exit_code == 1
    assert [x for x in result.output.splitlines() if "formula 501" in x] == [
        f"{bank}:1006:5: q250: prompt: formula 501 of the bank: a bank holds at most 500 "
        "formulas (each takes a PDF tens of milliseconds to draw); split the bank"
    ]
    assert run("check", formula_bank(tmp_path, prompts[:-1])).exit_code == 0


# --- 13: units, long integers, non-Latin rosters ---------------------------------------------

UNITS_BANK = """\
bank: units
title: Units
questions:
  - id: num
    type: numeric
    prompt: A temperature.
    answer: 20
    units: {units}
"""


@pytest.mark.parametrize("units", ["m/0", "1/0", "(" * 3000 + "m" + ")" * 3000])
def test_units_that_break_the_units_library_are_a_finding_at_their_line(
    tmp_path: Path, units: str
) -> None:
    # "unexpected ZeroDivisionError" / "unexpected RecursionError (this is a bug)"
    bank = write(tmp_path / "bank.yaml", UNITS_BANK.format(units=f'"{units}"'))
    result = run("check", bank)  # a warning: the text is kept as a label
    assert "unexpected" not in result.output
    [line] = [x for x in result.output.splitlines() if "warning: num: units" in x]
    shown = units if len(units) <= 60 else units[:59] + "…"
    assert line == (
        f"{bank}:8:5: warning: num: units {shown!r} are not a unit the units library knows "
        "(m/s, km/h, %, J/(kg K), …); answers in other units cannot be converted, and only this "
        "text is accepted after the number"
    )


def test_a_temperature_difference_for_a_temperature_has_a_clear_verdict(tmp_path: Path) -> None:
    # "could not be graded (DimensionalityError)"
    bank = write(tmp_path / "bank.yaml", UNITS_BANK.format(units="degC"))
    data = write(tmp_path / "class.csv", "student,num\ns1,20 delta_degC\ns2,293.15 K\n")
    result = run("grade", bank, data, "-o", tmp_path / "g")
    assert result.exit_code == 0, result.output
    graded = {r["student"]: r for r in rows(tmp_path / "g" / "responses.csv")}
    assert (graded["s1"]["verdict"], graded["s1"]["feedback"]) == (
        "incorrect",
        "delta_degC cannot be converted to degC: the answer is in degC.",
    )
    assert graded["s2"]["verdict"] == "correct"


def test_an_integer_of_5000_digits_is_a_finding_at_its_line(tmp_path: Path) -> None:
    # "unexpected ValueError: Exceeds the limit (4300 digits) for integer string conversion"
    bank = write(
        tmp_path / "bank.yaml", UNITS_BANK.format(units="degC") + "    value: " + "9" * 5000
    )
    result = run("check", bank)
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        f"{bank}:9:12: questions[0].value: a number of 5,000 digits; write a shorter number"
    )


def test_a_roster_of_non_latin_ids_gets_one_worksheet_each(tmp_path: Path) -> None:
    # Every id of one length became the same file name ("worksheet-___.html"): refused.
    bank = write(tmp_path / "bank.yaml", BANK)
    roster = write(tmp_path / "roster.csv", "student,name\n学生一,王芳\n学生二,李娜\nиван,Иван\n")
    result = run("render", bank, "--roster", roster, "-o", tmp_path / "out", "--format", "html")
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in (tmp_path / "out").glob("worksheet-*.html"))
    assert names == ["worksheet-иван.html", "worksheet-学生一.html", "worksheet-学生二.html"]


def test_a_canvas_report_of_one_text_for_two_questions_says_what_is_ambiguous(
    tmp_path: Path,
) -> None:
    # It said "no question column of this Canvas export matches the bank".
    bank = write(
        tmp_path / "bank.yaml",
        "bank: twice\ntitle: Twice\nquestions:\n"
        "  - {id: tf-a, type: true_false, prompt: Is this statement true?, answer: true}\n"
        "  - {id: tf-b, type: true_false, prompt: Is this statement true?, answer: false}\n",
    )
    report = write(
        tmp_path / "canvas.csv",
        "name,id,sis_id,section,section_id,section_sis_id,submitted,attempt,"
        '"101: Is this statement true?",1.0,"102: Is this statement true?",1.0,'
        "n correct,n incorrect,score\n"
        "Student One,2001,s1,Sec A,1,,2026-01-01 10:00:00 UTC,1,True,1,False,1,2,0,2\n",
    )
    result = run("grade", bank, report, "-o", tmp_path / "g")
    assert (result.exit_code, result.output) == (
        2,
        f"Error: {report}:1: no question column of this Canvas export names one question of "
        "the bank: '101: Is this statement true?' is that of several items (tf-a, tf-b): cannot "
        "tell which; give those questions different texts, or grade with --issued FILE (the "
        "manifest of the export tells its items apart)\n",
    )


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_utf16_submissions_file_is_read(tmp_path: Path, encoding: str) -> None:
    # It read as "no 'student' column".
    bank = write(tmp_path / "bank.yaml", BANK)
    data = tmp_path / "class.csv"
    text = "student,tf,num\nJosé,true,4\n,true,4\ns2,false,5\n"
    mark = b"\xfe\xff" if encoding == "utf-16-be" else b""
    data.write_bytes(mark + text.encode(encoding))
    result = run("grade", bank, data, "-o", tmp_path / "g")
    assert result.exit_code == 1, result.output  # the row without an id is rejected
    assert f"note: {data}: read as {encoding[:6].upper()} (its byte-order mark)" in result.output
    graded = {r["student"]: r["score"] for r in rows(tmp_path / "g" / "grades.csv")}
    assert graded == {"José": "2", "s2": "0"}
    [rejected] = rows(tmp_path / "g" / "rejected.csv")
    assert (rejected["source"], rejected["line"], rejected["reason"]) == (
        str(data),
        "3",
        "no student id",
    )
    chunked = run("grade", bank, data, "-o", tmp_path / "c", "--chunk-rows", "1")
    assert (chunked.exit_code, chunked.output) == (
        2,
        f"Error: {data}: the file is {encoding[:6].upper()} (its byte-order mark says so): grade "
        "it without --chunk-rows and --engine (they read files in place), or save it as UTF-8\n",
    )
