"""Worksheets and answer keys: goldens, escaping, mathematics, selection, seeding and rosters."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from quizgym.answers import Status, grade_response
from quizgym.cli import cli
from quizgym.errors import QuizgymError
from quizgym.loader import load_bank, parse_bank
from quizgym.model import Numeric
from quizgym.render import (
    Student,
    math_html,
    math_markdown,
    read_roster,
    render_key,
    render_worksheet,
    select_questions,
)
from quizgym.solver import show_number, variant_of

DATA = Path(__file__).parent / "data" / "render"
GOLDENS = Path(__file__).parent / "goldens" / "render"
SMALL = DATA / "small.yaml"
STUDENTS = [Student("s001", "Row One"), Student("s002")]
DATE = "2026-01-05"


def _check_golden(name: str, text: str, update: bool) -> None:
    path = GOLDENS / name
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing; run pytest --update-goldens"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs; see --update-goldens"


# --- goldens --------------------------------------------------------------------------------------

GOLDEN_CASES = [
    ("worksheet-s001.html", "worksheet", "html"),
    ("worksheet-s001.md", "worksheet", "md"),
    ("key-class.html", "key", "html"),
    ("key-class.md", "key", "md"),
]


@pytest.mark.parametrize(("name", "kind", "fmt"), GOLDEN_CASES)
def test_small_bank_matches_golden(name: str, kind: str, fmt: str, update_goldens: bool) -> None:
    bank = load_bank(SMALL)
    questions = select_questions(bank)
    if kind == "worksheet":
        text = render_worksheet(bank, questions, fmt=fmt, student=STUDENTS[0], seed=7, date=DATE)
    else:
        text = render_key(bank, questions, fmt=fmt, students=STUDENTS, seed=7, date=DATE)
    _check_golden(name, text, update_goldens)


# --- mathematics ----------------------------------------------------------------------------------

MATH_HTML = [
    ("L_MLM", "L<sub>MLM</sub>"),
    ("−Σ_{i∈M} ln P(x_i | x_∖M)", "−Σ<sub>i∈M</sub> ln P(x<sub>i</sub> | x<sub>∖M</sub>)"),
    ("exp(w_(x_i)ᵀ h_i)", "exp(w<sub>x<sub>i</sub></sub>ᵀ h<sub>i</sub>)"),
    ("h_[CLS]", "h<sub>[CLS]</sub>"),
    ("x_(i+1)", "x<sub>i+1</sub>"),
    ("2^−3", "2<sup>−3</sup>"),
    ("mlm_loss(p1, p2) and dog_id", "mlm_loss(p1, p2) and dog_id"),
    ("The ___ was steep", "The ___ was steep"),
    ("M = {3, 5}", "M = {3, 5}"),
    ("a < b & <script>", "a &lt; b &amp; &lt;script&gt;"),
]


@pytest.mark.parametrize(("text", "html"), MATH_HTML)
def test_math_prints_as_html(text: str, html: str) -> None:
    assert str(math_html(text)) == html


MATH_MD = [
    ("L_MLM", "L<sub>MLM</sub>"),
    ("x_∖M", "x<sub>∖M</sub>"),
    ("mlm_loss", "mlm\\_loss"),
    ("*emphasis* and **strong**", "*emphasis* and **strong**"),
    ("2 * 3 * 4 and a\\*b", "2 \\* 3 \\* 4 and a\\*b"),
    ("[MASK] stays", "[MASK] stays"),
    ("[link](http://x)", "[link](<http://x>)"),
    ("[link](javascript:alert(1))", "[link\\](javascript:alert(1))"),
    ("<script>", "&lt;script>"),
    ("`code` and `` a`b ``", "`code` and ``a`b``"),
    ("costs $5 and $10", "costs \\$5 and \\$10"),
    ("$P = {p1}$", "$P = {p1}$"),
    ("\\- not a list", "\\- not a list"),
    ("- a list", "- a list"),
]


@pytest.mark.parametrize(("text", "md"), MATH_MD)
def test_math_prints_as_markdown(text: str, md: str) -> None:
    assert math_markdown(text) == md


def test_placeholders_stay_symbolic_only_when_asked() -> None:
    assert str(math_html("P = {p1}", frozenset({"p1"}))) == "P = <var>p1</var>"
    assert str(math_html("P = {p1}")) == "P = {p1}"
    assert math_markdown("P = {p1}", frozenset({"p1"})) == "P = *p1*"


# What bank text may turn into: the tree's own elements, with the attributes quizgym writes.
ALLOWED_TAGS = {
    "p", "em", "strong", "code", "pre", "ul", "ol", "li", "blockquote", "hr", "br", "table",
    "thead", "tbody", "tr", "th", "td", "a", "img", "sub", "sup", "var", "div", "span",
} | {f"m{name}" for name in ("ath", "row", "i", "n", "o", "s", "text", "space", "sub", "sup",
    "subsup", "frac", "sqrt", "root", "over", "under", "underover", "table", "tr", "td", "style",
    "padded", "phantom", "enclose", "error", "fenced")}  # fmt: skip
TAG = re.compile(r"<(/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+=\"[^\"]*\")*)\s*/?>")


def assert_only_our_markup(html: str) -> None:
    """Every tag is one the renderer writes; links point to the web; nothing else is markup."""
    rest = html
    for match in TAG.finditer(html):
        assert match.group(2) in ALLOWED_TAGS, match.group(0)
        for name, value in re.findall(r'([\w:-]+)="([^"]*)"', match.group(3)):
            assert not name.lower().startswith("on"), match.group(0)
            if name in ("href", "src"):
                assert value.startswith(("http://", "https://", "mailto:", "data:image/")), value
        rest = rest.replace(match.group(0), "", 1)
    assert "<" not in rest and ">" not in rest.replace("&gt;", "")


@given(st.text())
def test_html_never_carries_bank_markup(text: str) -> None:
    assert_only_our_markup(str(math_html(text)))


# --- escaping -------------------------------------------------------------------------------------

HOSTILE = """\
bank: hostile
title: "Tricky <b>title</b>"
questions:
  - id: q-template
    type: true_false
    prompt: "{{ 7 * 7 }} {% if true %}X{% endif %} <script>alert(1)</script> & *star* [a](b)"
    answer: true
  - id: q-choice
    type: multiple_choice
    prompt: "Pick {# comment #} one"
    choices:
      - {text: "<img src=x onerror=alert(1)>", correct: true}
      - {text: "{{ bank }}"}
"""


@pytest.mark.parametrize("fmt", ["html", "md"])
@pytest.mark.parametrize("kind", ["worksheet", "key"])
def test_bank_text_is_data_never_template_or_markup(fmt: str, kind: str) -> None:
    bank = parse_bank(HOSTILE)
    questions = select_questions(bank)
    if kind == "worksheet":
        text = render_worksheet(bank, questions, fmt=fmt, date=DATE)
    else:
        text = render_key(bank, questions, fmt=fmt, date=DATE)
    shown = re.sub(r"\\(.)", r"\1", text) if fmt == "md" else text  # as Markdown displays it
    for literal in ["{{ 7 * 7 }}", "{% if true %}X{% endif %}", "{# comment #}", "{{ bank }}"]:
        assert literal in shown
    assert "49" not in text
    assert "<script" not in text and "<img" not in text and "<b>" not in text
    if fmt == "html":
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
        assert "&lt;img src=x onerror=alert(1)&gt;" in text
    else:
        assert "&lt;script>alert(1)&lt;/script>" in text
        # Markdown means what it means (*star* is emphasis); a link that is not to a web
        # address is text, escaped so no Markdown reader makes it a link either.
        assert "*star*" in text and "[a\\](b)" in text


# --- selection ------------------------------------------------------------------------------------


def test_selection_by_tag_type_and_ids() -> None:
    bank = load_bank(SMALL)
    assert [q.id for q in select_questions(bank, tags=["masking"])] == [
        "why-not-all-mask",
        "num-counts",
    ]
    assert [q.id for q in select_questions(bank, types=["numeric", "true_false"])] == [
        "tf-loss-sign",
        "num-mlm-two",
        "num-counts",
    ]
    assert [q.id for q in select_questions(bank, ids=["num-counts", "mc-causal"])] == [
        "num-counts",
        "mc-causal",
    ]


SELECTION_ERRORS = [
    ({"ids": ["nope", "mc-causal"]}, "render-small: no question with id nope"),
    ({"tags": ["nope"]}, "render-small: no question is tagged nope"),
    ({"types": ["essay"]}, "unknown question type essay"),
    ({"tags": ["masking"], "types": ["true_false"]}, "no question matches the selection"),
    ({"count": 8}, "--count 8: the selection has 7 questions"),
]


@pytest.mark.parametrize(("options", "message"), SELECTION_ERRORS)
def test_selection_errors_say_why(options: dict[str, object], message: str) -> None:
    with pytest.raises(QuizgymError, match=re.escape(message)):
        select_questions(load_bank(SMALL), **options)  # type: ignore[arg-type]


@given(st.integers(1, 7), st.integers(-(10**6), 10**6))
def test_count_draws_a_seeded_subset(count: int, seed: int) -> None:
    bank = load_bank(SMALL)
    first = [q.id for q in select_questions(bank, count=count, seed=seed)]
    assert first == [q.id for q in select_questions(bank, count=count, seed=seed)]
    assert len(first) == len(set(first)) == count
    assert set(first) <= {q.id for q in bank.questions}


def test_different_seeds_draw_different_worksheets() -> None:
    bank = load_bank("bert-mlm")
    draws = {tuple(q.id for q in select_questions(bank, count=10, seed=s)) for s in range(5)}
    assert len(draws) == 5


# --- seeding: the page, the key and the grader agree ---------------------------------------


@pytest.mark.parametrize("student", ["s001", "s002", "s017"])
def test_printed_numbers_are_the_graders(student: str) -> None:
    bank = load_bank(SMALL)
    page = render_worksheet(
        bank, select_questions(bank), fmt="md", student=Student(student), seed=7, date=DATE
    )
    for question in bank.questions:
        if isinstance(question, Numeric):
            variant = variant_of(bank, question, student=student, seed=7)
            numbers = [show_number(v) for v in variant.params.values()]
            filled = question.prompt
            for name, number in zip(variant.params, numbers, strict=True):
                filled = filled.replace(f"{{{name}}}", number)
            assert math_markdown(filled) in page


ANSWER = re.compile(r"^\*\*(?:Answer:\*\*|\((\w)\)\*\* .*?:) \*\*(.+?)\*\*(?: ≈ (\S+))?", re.M)


@pytest.mark.parametrize("student", ["s001", "s002", "s003", "s004"])
def test_every_printed_key_is_graded_correct_for_that_student(student: str) -> None:
    """Read each answer off a student's own printed key and hand it to the grader."""
    bank = load_bank(SMALL)
    questions = select_questions(bank)
    key = render_key(bank, questions, fmt="md", students=[Student(student)], seed=7, date=DATE)
    sections = key.split("\n---\n")[1:]
    assert len(sections) == len(questions)
    for question, section in zip(questions, sections, strict=True):
        if question.type == "free_text":
            continue
        answers = ANSWER.findall(section)
        assert answers, section
        earlier: dict[str, str] = {}
        for part_letter, exact, decimal in answers:
            part = None
            if isinstance(question, Numeric) and question.parts:
                part = question.parts["abcdefgh".index(part_letter)].id
            text = exact
            if question.type in ("multiple_choice", "spot_the_error"):
                text = " ".join(re.findall(r"(?:^|; )([A-Z]):", exact))
            for response in filter(None, [text, decimal]):
                verdict = grade_response(
                    bank,
                    question,
                    response.replace("<sub>", "_").replace("</sub>", ""),
                    student=student,
                    seed=7,
                    part=part,
                    earlier=earlier,
                )
                assert verdict.status is Status.CORRECT, (question.id, response, verdict)
            if part:
                earlier[part] = text


def test_shuffled_choices_follow_the_student() -> None:
    bank = load_bank(SMALL)
    question = bank.question("mc-causal")
    orders = set()
    for n in range(1, 12):
        page = render_worksheet(
            bank, [question], fmt="md", student=Student(f"s{n:03}"), seed=7, date=DATE
        )
        shown = re.findall(r"- \[ \] \*\*([A-C])\.\*\* (.+)", page)
        variant = variant_of(bank, question, student=f"s{n:03}", seed=7)
        assert [t for _, t in shown] == [question.choices[i].text for i in variant.order]
        orders.add(variant.order)
    assert len(orders) > 1


# --- roster ---------------------------------------------------------------------------------------

ROSTER_ERRORS = [
    ("name\nRow One\n", "roster.csv:1: a roster needs a 'student' column (found: ['name'])"),
    (
        "student,name\ns001,A\n,B\ns001,C\ns/1,D\ns_1,E\ns009,F\n",
        "roster.csv:3: empty student id\n"
        "roster.csv:4: student 's001' appears twice (also line 2)\n"
        "roster.csv:6: student 's_1' and 's/1' share a file name",
    ),
    ("student,seed\ns001,seven\n", "roster.csv:2: seed 'seven' is not a whole number"),
    ("student\n", "roster.csv: the roster has no students"),
]


@pytest.mark.parametrize(("content", "message"), ROSTER_ERRORS)
def test_bad_roster_exits_2_naming_every_bad_row(
    tmp_path: Path, content: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("roster.csv").write_text(content, encoding="utf-8")
    result = CliRunner().invoke(cli, ["render", str(SMALL), "--roster", "roster.csv"])
    assert result.exit_code == 2
    # One error per line, each marked as one.
    assert result.output == "".join(f"Error: {line}\n" for line in message.splitlines())
    assert not Path("worksheets").exists()


def test_roster_reads_names_seeds_and_extra_columns(tmp_path: Path) -> None:
    path = tmp_path / "class.csv"
    path.write_text("\ufeffstudent,name,email,seed\ns001,Row One,x@y,\ns002,,,5\n", "utf-8")
    assert read_roster(path) == [Student("s001", "Row One"), Student("s002", "", 5)]


def test_a_students_own_seed_wins() -> None:
    bank = load_bank(SMALL)
    question = bank.question("num-counts")
    own = render_worksheet(bank, [question], fmt="md", student=Student("s001", seed=3), seed=7)
    plain = render_worksheet(bank, [question], fmt="md", student=Student("s001"), seed=3)
    assert own == plain


# --- the command ----------------------------------------------------------------------------------


def test_render_command_writes_a_worksheet_per_student_and_a_class_key(tmp_path: Path) -> None:
    roster = tmp_path / "class.csv"
    roster.write_text("student,name\ns001,Row One\ns002,\n", encoding="utf-8")
    out = tmp_path / "out"
    args = ["render", str(SMALL), "--roster", str(roster), "--seed", "7", "--key"]
    args += ["--format", "html", "--format", "md", "-o", str(out), "--date", DATE]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert result.output == (
        f"{out}: 2 worksheets and 1 key (html, md), 7 questions each; "
        "versions recorded in issued.json\n"
    )
    assert sorted(p.name for p in out.iterdir()) == [
        "issued.json",
        "key.html",
        "key.md",
        "worksheet-s001.html",
        "worksheet-s001.md",
        "worksheet-s002.html",
        "worksheet-s002.md",
    ]
    html = (out / "worksheet-s001.html").read_text(encoding="utf-8")
    assert html == render_worksheet(
        load_bank(SMALL), select_questions(load_bank(SMALL)), student=STUDENTS[0], seed=7, date=DATE
    )
    assert "Row One" in html and "s002" not in html
    key = (out / "key.md").read_text(encoding="utf-8")
    assert "s001" in key and "s002" in key


def test_key_per_student(tmp_path: Path) -> None:
    roster = tmp_path / "class.csv"
    roster.write_text("student\ns001\ns002\n", encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli,
        ["render", str(SMALL), "--roster", str(roster), "--key-per-student", "-o", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "issued.json",
        "key-s001.html",
        "key-s002.html",
        "worksheet-s001.html",
        "worksheet-s002.html",
    ]


def test_teacher_templates_override_and_undefined_names_fail(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "worksheet.md.j2").write_text(
        "# {{ title|md }}\n{% for q in questions %}{{ q.number }}) {{ q.prompt|md }}\n{% endfor %}",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    args = ["render", str(SMALL), "--format", "md", "--templates", str(mine), "-o", str(out)]
    result = CliRunner().invoke(cli, [*args, "--ids", "tf-loss-sign"])
    assert result.exit_code == 0, result.output
    assert (out / "worksheet.md").read_text(encoding="utf-8") == (
        "# Worksheet sample\n1) L<sub>MLM</sub> = −Σ<sub>i∈M</sub> ln P(x<sub>i</sub> | "
        "x<sub>∖M</sub>) is never negative.\n"
    )
    (mine / "worksheet.md.j2").write_text("{{ no_such_name }}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, [*args, "-o", str(tmp_path / "none")])
    assert result.exit_code == 2
    assert result.output == "Error: template error: 'no_such_name' is undefined\n"
    assert not (tmp_path / "none").exists()


def test_letter_paper_and_unknown_bank() -> None:
    bank = load_bank(SMALL)
    html = render_worksheet(bank, select_questions(bank), paper="letter")
    assert "size: Letter;" in html and "--page-width: 8.5in" in html
    result = CliRunner().invoke(cli, ["render", "no-such-bank"])
    assert result.exit_code == 2
    assert result.output.startswith("Error: no-such-bank: no such file or bundled bank")


def test_command_forwards_every_option(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import quizgym.render

    seen: dict[str, object] = {}

    def fake(bank: object, **kwargs: object) -> object:
        seen.update(kwargs, bank=bank)
        raise QuizgymError("stop here")

    monkeypatch.setattr(quizgym.render, "render_files", fake)
    args = ["render", str(SMALL), "--format", "pdf", "--tag", "loss", "--type", "numeric"]
    args += ["--ids", "a, b", "--count", "2", "--seed", "9", "--paper", "letter", "--date", ""]
    args += ["--key-per-student", "--title", "Quiz 3", "-o", str(tmp_path / "o")]
    args += ["--combine", "--duplex", "--jobs", "3", "--add"]
    result = CliRunner().invoke(cli, args)
    assert result.output == "Error: stop here\n" and result.exit_code == 2
    assert {k: v for k, v in seen.items() if k not in ("bank", "progress")} == {
        "out_dir": tmp_path / "o",
        "formats": ("pdf",),
        "key": False,
        "key_per_student": True,
        "tags": ("loss",),
        "types": ("numeric",),
        "ids": ["a", "b"],
        "count": 2,
        "seed": 9,
        "roster": None,
        "date": "",
        "paper": "letter",
        "title": "Quiz 3",
        "templates": None,
        "combine": True,
        "duplex": True,
        "workers": 3,
        "add": True,
    }


def test_placeholders_in_hints_and_explanations_are_filled() -> None:
    from quizgym.loader import parse_bank
    from quizgym.render import key_view
    from quizgym.solver import variant_of

    bank = parse_bank(
        "bank: ph\ntitle: PH\npacks: [machine-learning]\n"
        "questions:\n  - id: num-p\n    type: numeric\n"
        '    prompt: "L for {p}?"\n    params: {p: {choices: [0.5, 0.25]}}\n'
        "    answer: nsp_loss(p)\n"
        '    hint: "Take -ln of {p}."\n    explanation: "The loss is -ln {p}."\n'
    )
    question = bank.questions[0]
    alone = key_view(bank, question, 1, [("s1", variant_of(bank, question, student="s1"))])
    p = variant_of(bank, question, student="s1").fill("{p}")
    assert (alone.hint, alone.explanation) == (f"Take -ln of {p}.", f"The loss is -ln {p}.")
    mixed = [(f"s{k}", variant_of(bank, question, student=f"s{k}")) for k in range(20)]
    several = key_view(bank, question, 1, mixed)  # worked for the default numbers, labelled so
    assert (several.explanation, several.worked_for) == ("The loss is -ln 0.5.", "p = 0.5")


def test_the_key_lists_exactly_what_the_engine_accepts() -> None:
    # Under auto the digits typed count: 1.39 (3 figures) is right for ln 4 = 1.3863, 1.388 (4
    # figures, 0.12 % off) is not, so the key lists runs; one interval from 1.38491 to 1.39
    # (what it printed before) named 1.388 as accepted.
    bank = load_bank("bert-mlm")
    question = bank.question("num-two-sentences")
    text = render_key(bank, [question], fmt="md", date=DATE)
    assert "1.38491 to 1.38768, 1.39" in text, text
    for typed, right in [("1.39", True), ("1.3863", True), ("1.385", True), ("1.388", False)]:
        verdict = grade_response(bank, question, typed, part="sentence2")
        assert (verdict.score == verdict.max_score) is right, typed
