"""The one Jinja environment of quizgym, and printable worksheets and answer keys.

Templates live in the top-level ``templates/`` folder (package data in a wheel). A teacher's own
folder, when given, is searched first. Autoescaping is on for HTML and XML, and an undefined
variable is an error: a typo in a template must fail loudly, never print an empty string. Bank text
is always passed to templates as data, never compiled as template source.

Worksheets and keys are pure functions of the bank, the selection, the student, the seed and the
date. Every number on a student's page comes from :func:`quizgym.solver.variant_of` and every key
from :func:`quizgym.solver.keys_of` (through :func:`quizgym.grading.verdict.slot_keys`), so the
paper, the LMS exports and the grader agree for the same student and seed.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from quizgym.errors import QuizgymError
from quizgym.expr import format_value
from quizgym.grading.verdict import expected_answer, mistakes_for, shown_choices, slot_keys
from quizgym.model import (
    LETTERS,
    Bank,
    FreeText,
    MultipleChoice,
    Numeric,
    Question,
    SpotTheError,
    points_of,
    question_points,
)
from quizgym.resources import resource_dir
from quizgym.selection import check_filters, matches
from quizgym.solver import Variant, prompt_of, show_number, slots, variant_of
from quizgym.tolerance import describe, interval


def make_env(
    *, user_dir: Path | None = None, filters: dict[str, Any] | None = None
) -> jinja2.Environment:
    """Build the Jinja environment.

    Args:
        user_dir: a folder of templates that override the bundled ones by name.
        filters: extra filters to register (name → function).

    Returns:
        The environment. No autoreload: editing a template in the middle of a run is not useful.
    """
    loaders: list[jinja2.BaseLoader] = []
    if user_dir is not None:
        loaders.append(jinja2.FileSystemLoader(str(user_dir)))
    loaders.append(jinja2.FileSystemLoader(str(resource_dir("templates"))))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=jinja2.select_autoescape(["html", "htm", "xml", "html.j2", "xml.j2", "svg.j2"]),
        undefined=jinja2.StrictUndefined,
        auto_reload=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(filters or {})
    return env


# --- mathematics in bank text -------------------------------------------------------------------
#
# Banks write mathematics the way people type it: L_MLM, x_i, x_∖M, Σ_{i∈M}, w_(x_i)ᵀ, h_[CLS],
# 2^−3. A subscript starts at "_" after a single letter that is not part of a longer word (so
# mlm_loss and dog_id stay as they are); its argument is {…}, (…), […] or a run of letters and
# digits, optionally after "∖". Everything else is literal text. The same tree prints as HTML
# (<sub>/<sup>), as Markdown (inline <sub>, which CommonMark and GitHub render) and as plain text.

_MATH = re.compile(
    r"(?<!\w)(?P<base>[A-Za-zΑ-Ωα-ω])_"
    r"(?P<sub>\{[^{}]*\}|\((?:[^()]|\([^()]*\))*\)|\[[^\[\]]*\]|∖?[A-Za-z0-9]+)"
    r"|\^(?P<sup>\{[^{}]*\}|[−-]?[0-9]+|[A-Za-z])"
    r"|\{(?P<var>[a-z_][a-z0-9_]*)\}"
)

Node = str | tuple[str, Any]
"""A piece of marked-up text: plain text, ("sub"|"sup", [nodes]) or ("var", name)."""


def parse_math(text: str, *, variables: frozenset[str] = frozenset()) -> list[Node]:
    """Split bank text into plain text, subscripts, superscripts and parameter names.

    Args:
        text: the text as written in the bank.
        variables: parameter names whose ``{name}`` placeholders stay symbolic (answer keys that
            list several variants); other braces are literal.

    Returns:
        The nodes, in order.
    """
    nodes: list[Node] = []
    at = 0
    for match in _MATH.finditer(text):
        if match.group("var") is not None and match.group("var") not in variables:
            continue
        nodes.append(text[at : match.start()])
        at = match.end()
        if match.group("var") is not None:
            nodes.append(("var", match.group("var")))
            continue
        kind = "sub" if match.group("sub") is not None else "sup"
        arg = match.group(kind)
        if arg[0] in "{(":
            arg = arg[1:-1]
        if kind == "sub":
            nodes.append(match.group("base"))
        nodes.append((kind, parse_math(arg, variables=variables)))
    nodes.append(text[at:])
    return [n for n in nodes if n != ""]


def _walk(nodes: list[Node], *, text: Callable[[str], str], tag: Callable[[str, str], str]) -> str:
    out = []
    for node in nodes:
        if isinstance(node, str):
            out.append(text(node))
        elif node[0] == "var":
            out.append(tag("var", text(node[1])))
        else:
            out.append(tag(node[0], _walk(node[1], text=text, tag=tag)))
    return "".join(out)


def _squash(text: str) -> str:
    return " ".join(text.split())


@functools.lru_cache(maxsize=8192)
def math_html(text: str, variables: frozenset[str] = frozenset()) -> Markup:
    """Bank text as safe HTML, with subscripts and superscripts (the ``math`` filter)."""
    # Safe by construction: every piece of bank text is escaped; only our own tags are added.
    return Markup(  # noqa: S704
        _walk(
            parse_math(_squash(str(text)), variables=variables),
            text=lambda s: str(escape(s)),
            tag=lambda name, inner: f"<{name}>{inner}</{name}>",
        )
    )


_MD_SPECIAL = re.compile(r"([\\`*_#~])|(<)|(&(?=#?\w+;))|(\](?=[(\[:]))")


def escape_markdown(text: str) -> str:
    """Make text print literally in Markdown: no emphasis, code, links or raw HTML.

    ``[MASK]`` stays readable: a bracket only becomes a link when ``](``, ``][`` or ``]:``
    follows it, so only such a ``]`` is escaped.
    """

    def one(match: re.Match[str]) -> str:
        if match.group(2):
            return "&lt;"
        if match.group(3):
            return "&amp;"
        return "\\" + match.group(0)

    return _MD_SPECIAL.sub(one, text)


@functools.lru_cache(maxsize=8192)
def math_markdown(text: str, variables: frozenset[str] = frozenset()) -> str:
    """Bank text as Markdown that prints literally, with <sub>/<sup> (the ``md`` filter)."""
    return _walk(
        parse_math(_squash(str(text)), variables=variables),
        text=escape_markdown,
        tag=lambda name, inner: f"*{inner}*" if name == "var" else f"<{name}>{inner}</{name}>",
    )


def math_plain(text: str) -> str:
    """Bank text as it reads once printed, without markup (``L_MLM`` → ``LMLM``)."""
    return _walk(parse_math(_squash(text)), text=str, tag=lambda _name, inner: inner)


def _math_html_filter(text: Any, variables: Any = ()) -> Markup:
    return math_html(str(text), frozenset(variables))


def _math_md_filter(text: Any, variables: Any = ()) -> str:
    return math_markdown(str(text), frozenset(variables))


FILTERS: dict[str, Callable[..., Any]] = {"math": _math_html_filter, "md": _math_md_filter}
"""Filters every worksheet and key template may use."""


# --- selection ----------------------------------------------------------------------------------


def select_questions(
    bank: Bank,
    *,
    tags: Sequence[str] = (),
    types: Sequence[str] = (),
    ids: Sequence[str] = (),
    count: int | None = None,
    seed: int | None = None,
) -> list[Question]:
    """Choose the questions of a worksheet.

    Args:
        bank: the bank.
        tags: keep questions with any of these tags (all when empty).
        types: keep questions of any of these types (all when empty).
        ids: keep exactly these questions, in this order (bank order when empty).
        count: then keep this many, drawn by a shuffle seeded with ``seed`` (all when None).
        seed: seeds the shuffle (and, elsewhere, the variants); None shuffles as seed 0.

    Returns:
        The questions, in worksheet order.

    Raises:
        QuizgymError: an unknown id, tag or type, an empty selection, or a count larger than it.
    """
    known_ids = {q.id for q in bank.questions}
    unknown = [i for i in ids if i not in known_ids]
    if unknown:
        raise QuizgymError(f"{bank.bank}: no question with id {', '.join(unknown)}")
    check_filters([bank], tags=tags, types=types)
    chosen = [bank.question(i) for i in dict.fromkeys(ids)] if ids else list(bank.questions)
    chosen = [q for q in chosen if matches(q, tags=tags, types=types)]
    if not chosen:
        raise QuizgymError(f"{bank.bank}: no question matches the selection")
    if count is not None:
        if not 1 <= count <= len(chosen):
            raise QuizgymError(
                f"--count {count}: the selection has {len(chosen)} question"
                f"{'s' if len(chosen) != 1 else ''}"
            )
        digest = hashlib.sha256(f"{bank.bank}\x1fselect\x1f{seed or 0}".encode()).digest()
        random.Random(int.from_bytes(digest[:8], "big")).shuffle(chosen)  # noqa: S311
        chosen = chosen[:count]
    return chosen


# --- the roster ---------------------------------------------------------------------------------


class RosterError(QuizgymError):
    """A roster file cannot be used; names every bad row at once."""


@dataclass(frozen=True)
class Student:
    """One student of a roster."""

    id: str
    name: str = ""
    seed: int | None = None
    """The student's own seed (a ``seed`` column); None uses the class seed."""


_FILE_SAFE = re.compile(r"[^A-Za-z0-9._@+-]")


def file_stem(student: str) -> str:
    """The part of a file name that stands for a student id (``s001``, ``a.b@uni.edu``)."""
    stem = _FILE_SAFE.sub("_", student)
    return "_" + stem[1:] if stem.startswith(".") else stem


def read_roster(path: Path) -> list[Student]:
    """Read a roster CSV: a ``student`` column, optional ``name`` and ``seed``; others ignored.

    Raises:
        RosterError: the file cannot be read, or rows are bad (every bad row is listed).
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise RosterError(f"{path}: cannot read: {reason}") from exc
    reader = csv.DictReader(io.StringIO(text, newline=""))
    fields = [f.strip() for f in reader.fieldnames or []]
    if "student" not in fields:
        raise RosterError(
            f"{path}:1: a roster needs a 'student' column (found: {fields or 'none'})"
        )
    reader.fieldnames = fields
    problems: list[str] = []
    students: list[Student] = []
    seen: dict[str, int] = {}
    stems: dict[str, str] = {}
    for row in reader:
        line = reader.line_num
        sid = (row.get("student") or "").strip()
        raw_seed = (row.get("seed") or "").strip()
        if not sid:
            problems.append(f"{path}:{line}: empty student id")
            continue
        if sid in seen:
            problems.append(f"{path}:{line}: student {sid!r} appears twice (also line {seen[sid]})")
            continue
        if file_stem(sid) in stems:
            other = stems[file_stem(sid)]
            problems.append(f"{path}:{line}: student {sid!r} and {other!r} share a file name")
            continue
        if raw_seed and not re.fullmatch(r"-?\d+", raw_seed):
            problems.append(f"{path}:{line}: seed {raw_seed!r} is not a whole number")
            continue
        seen[sid] = line
        stems[file_stem(sid)] = sid
        name = (row.get("name") or "").strip()
        students.append(Student(sid, name, int(raw_seed) if raw_seed else None))
    if problems:
        raise RosterError("\n".join(problems))
    if not students:
        raise RosterError(f"{path}: the roster has no students")
    return students


# --- what a template sees -----------------------------------------------------------------------


@dataclass(frozen=True)
class ChoiceView:
    """One choice as printed: its letter for this student, its text, and what a key says."""

    letter: str
    text: str
    correct: bool
    feedback: str


@dataclass(frozen=True)
class SlotView:
    """One answer box of a numeric question (the question itself or one part)."""

    id: str | None
    label: str
    """``(a)``, ``(b)``, … for parts; empty for a single answer."""
    prompt: str
    units: str
    points: float


@dataclass(frozen=True)
class QuestionView:
    """A question as printed on one student's worksheet."""

    number: int
    id: str
    type: str
    points: float
    prompt: str
    statement: str
    choices: tuple[ChoiceView, ...]
    multiple: bool
    slots: tuple[SlotView, ...]
    lines: int
    """Ruled lines of answer space for free text."""


@dataclass(frozen=True)
class KeyLine:
    """The answer to one slot for one variant."""

    label: str
    prompt: str
    answer: str
    """The exact form (``ln 10``), the choice (``B: GPT``), true/false or the model answer."""
    decimal: str
    """The key to 7 significant figures, when it is not already a plain number."""
    units: str
    tolerance: str
    """The tolerance in words (empty for non-numeric answers)."""
    interval: str
    """The interval of accepted decimals, ``low to high``."""
    mistakes: tuple[tuple[str, str], ...]
    """Known wrong answers for this variant: (value, feedback)."""


@dataclass(frozen=True)
class KeyGroup:
    """Students who share one variant of a question, and its answers."""

    students: tuple[str, ...]
    params: tuple[tuple[str, str], ...]
    prompt: str
    answers: tuple[KeyLine, ...]


@dataclass(frozen=True)
class KeyView:
    """A question in an answer key: its answers by variant and its worked explanation."""

    number: int
    id: str
    type: str
    points: float
    prompt: str
    """The prompt; ``{name}`` placeholders stay symbolic when several variants are listed."""
    variables: tuple[str, ...]
    statement: str
    choices: tuple[ChoiceView, ...]
    groups: tuple[KeyGroup, ...]
    rubric: tuple[tuple[str, float], ...]
    explanation: str
    worked_for: str
    """For questions with variants: the numbers the explanation was written for."""
    correction: str
    hint: str


def _points(points: float) -> float | int:
    return int(points) if float(points).is_integer() else points


def _choices(question: Question, variant: Variant) -> tuple[ChoiceView, ...]:
    if not isinstance(question, MultipleChoice | SpotTheError):
        return ()
    return tuple(
        ChoiceView(LETTERS[k], c.text, c.correct, c.feedback or "")
        for k, i in enumerate(shown_choices(question, variant))
        for c in (question.choices[i],)
    )


def _slot_views(bank: Bank, question: Numeric, variant: Variant) -> tuple[SlotView, ...]:
    many = len(question.parts) > 0
    return tuple(
        SlotView(
            pid,
            f"({LETTERS[k].lower()})" if many else "",
            variant.fill(slot.prompt) if many else "",
            slot.units or "",
            _points(points_of(slot, bank.defaults)),
        )
        for k, (pid, slot) in enumerate(slots(question))
    )


def question_view(bank: Bank, question: Question, number: int, variant: Variant) -> QuestionView:
    """What a worksheet prints for one question and one variant."""
    points = question_points(question, bank.defaults)
    lines = 0
    if isinstance(question, FreeText):
        lines = min(12, 3 + 2 * len(question.rubric))
    return QuestionView(
        number=number,
        id=question.id,
        type=question.type,
        points=_points(points),
        prompt=prompt_of(question, variant),
        statement=question.statement if isinstance(question, SpotTheError) else "",
        choices=_choices(question, variant),
        multiple=isinstance(question, MultipleChoice) and question.multiple,
        slots=_slot_views(bank, question, variant) if isinstance(question, Numeric) else (),
        lines=lines,
    )


def _interval(tolerance: Any, value: float) -> str:
    low, high = interval(key=value, tolerance=tolerance)
    return f"{format_value(low, 6)} to {format_value(high, 6)}"


def _key_lines(bank: Bank, question: Question, variant: Variant) -> tuple[KeyLine, ...]:
    if not isinstance(question, Numeric):
        return (KeyLine("", "", expected_answer(question, variant), "", "", "", "", ()),)
    views = _slot_views(bank, question, variant)
    lines = []
    for index, ((_, slot, key, compiled), view) in enumerate(
        zip(slot_keys(bank, question, variant), views, strict=True)
    ):
        decimal = format_value(key.value, 7)
        mistakes = tuple(
            (format_value(m.value, 5), m.feedback)
            for m in mistakes_for(bank, question, variant, index)
        )
        lines.append(
            KeyLine(
                view.label,
                view.prompt,
                key.text,
                "" if decimal == key.text else decimal,
                slot.units or "",
                describe(compiled.tolerance),
                _interval(compiled.tolerance, key.number),
                mistakes,
            )
        )
    return tuple(lines)


def key_view(
    bank: Bank,
    question: Question,
    number: int,
    students: Sequence[tuple[str, Variant]],
) -> KeyView:
    """What an answer key prints for one question, its students grouped by variant.

    Args:
        bank: the bank.
        question: the question.
        number: its number on the worksheet.
        students: (label, variant) of every student the key covers; label is '' for a
            worksheet without a roster.
    """
    by_variant: dict[tuple[Any, ...], list[tuple[str, Variant]]] = {}
    for label, variant in students:
        signature = (tuple(sorted(variant.params.items())), variant.order)
        by_variant.setdefault(signature, []).append((label, variant))
    groups = tuple(
        KeyGroup(
            tuple(label for label, _ in members if label),
            tuple((name, show_number(value)) for name, value in members[0][1].params.items()),
            prompt_of(question, members[0][1]),
            _key_lines(bank, question, members[0][1]),
        )
        for members in by_variant.values()
    )
    first = students[0][1]
    one = len(groups) == 1
    worked = first if one else variant_of(bank, question)  # the numbers the text is worked for
    variables = tuple(first.params) if not one else ()
    return KeyView(
        number=number,
        id=question.id,
        type=question.type,
        points=question_view(bank, question, number, first).points,
        prompt=prompt_of(question, first) if one else question.prompt,
        variables=variables,
        statement=question.statement if isinstance(question, SpotTheError) else "",
        choices=_choices(question, first) if one else _choices(question, Variant(question.id)),
        groups=groups,
        rubric=tuple((r.criterion, _points(r.points)) for r in question.rubric)
        if isinstance(question, FreeText)
        else (),
        explanation=worked.fill(question.explanation or ""),
        worked_for=", ".join(
            f"{name} = {show_number(value)}"
            for name, value in variant_of(bank, question).params.items()
        ),
        correction=question.correction if isinstance(question, SpotTheError) else "",
        hint=worked.fill(question.hint or ""),
    )


# --- documents ----------------------------------------------------------------------------------

FORMATS = ("html", "md", "pdf")
PAPERS = {"a4": "A4", "letter": "Letter"}


def _variant(bank: Bank, question: Question, student: Student | None, seed: int | None) -> Variant:
    if student is not None and student.seed is not None:
        seed = student.seed
    return variant_of(bank, question, student=student.id if student else None, seed=seed)


def _common(
    bank: Bank, *, date: str, paper: str, seed: int | None, title: str | None
) -> dict[str, Any]:
    if paper not in PAPERS:
        raise QuizgymError(f"unknown paper size {paper!r} (sizes: {', '.join(PAPERS)})")
    return {
        "bank": bank,
        "title": title or bank.title,
        "date": date,
        "paper": PAPERS[paper],
        "seed": seed,
    }


@functools.lru_cache(maxsize=1)
def _bundled_env() -> jinja2.Environment:
    """The environment over the bundled templates, built once (compiling templates is slow)."""
    return make_env(filters=FILTERS)


def _template(env: jinja2.Environment | None, name: str) -> jinja2.Template:
    return (env or _bundled_env()).get_template(name)


def _tidy(text: str, fmt: str) -> str:
    """Markdown: no trailing spaces, at most one blank line in a row, one newline at the end."""
    if fmt != "md":
        return text
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def _ext(fmt: str) -> str:
    if fmt not in ("html", "md"):
        raise QuizgymError(f"unknown format {fmt!r} for a template (formats: html, md)")
    return fmt


def render_worksheet(
    bank: Bank,
    questions: Sequence[Question],
    *,
    fmt: str = "html",
    student: Student | None = None,
    seed: int | None = None,
    date: str = "",
    paper: str = "a4",
    title: str | None = None,
    env: jinja2.Environment | None = None,
) -> str:
    """One student's worksheet (or the class's, without a student) as HTML or Markdown.

    Args:
        bank: the bank.
        questions: the selection, in order (see :func:`select_questions`).
        fmt: ``html`` or ``md``.
        student: whose variant numbers and choice order to print; None for the default variant
            (or the class seed's variant when ``seed`` is given).
        seed: the class seed; a student's own seed wins.
        date: printed in the header; empty leaves a line to write on.
        paper: ``a4`` or ``letter``.
        title: the heading; the bank's title when None.
        env: a Jinja environment from :func:`make_env` (teacher's templates first).

    Returns:
        The document.
    """
    views = [
        question_view(bank, q, n, _variant(bank, q, student, seed))
        for n, q in enumerate(questions, 1)
    ]
    text = _template(env, f"worksheet.{_ext(fmt)}.j2").render(
        **_common(bank, date=date, paper=paper, seed=seed, title=title),
        student=student,
        questions=views,
        total=_points(sum(v.points for v in views)),
    )
    return _tidy(text, fmt)


def render_key(
    bank: Bank,
    questions: Sequence[Question],
    *,
    fmt: str = "html",
    students: Sequence[Student | None] = (None,),
    seed: int | None = None,
    date: str = "",
    paper: str = "a4",
    title: str | None = None,
    env: jinja2.Environment | None = None,
) -> str:
    """An answer key for one student, or for a class with every student's numbers.

    Each question lists its answer once per variant, with the students who got that variant:
    exact forms (``ln 10``), decimals, the accepted tolerance and interval, known wrong answers,
    the rubric and the worked explanation.

    Args:
        bank: the bank.
        questions: the selection, in order.
        fmt: ``html`` or ``md``.
        students: the students the key covers; ``(None,)`` for a worksheet without a roster.
        seed: the class seed; a student's own seed wins.
        date: printed in the header.
        paper: ``a4`` or ``letter``.
        title: the heading; the bank's title when None.
        env: a Jinja environment from :func:`make_env`.

    Returns:
        The document.
    """
    if not students:
        raise QuizgymError("an answer key needs at least one student")
    keys = [
        key_view(
            bank,
            q,
            n,
            [(s.id if s else "", _variant(bank, q, s, seed)) for s in students],
        )
        for n, q in enumerate(questions, 1)
    ]
    text = _template(env, f"key.{_ext(fmt)}.j2").render(
        **_common(bank, date=date, paper=paper, seed=seed, title=title),
        students=[s for s in students if s is not None],
        keys=keys,
        total=_points(sum(k.points for k in keys)),
    )
    return _tidy(text, fmt)


def html_to_pdf(html: str) -> bytes:
    """Print an HTML worksheet or key to PDF with WeasyPrint (page size from its CSS).

    Raises:
        QuizgymError: WeasyPrint or its system libraries (Pango) are missing.
    """
    try:
        import weasyprint  # type: ignore[import-untyped]
    except ImportError as exc:
        raise QuizgymError(
            f'PDF output needs WeasyPrint ({exc}); install it with: pip install "quizgym[pdf]"'
        ) from exc
    except OSError as exc:  # WeasyPrint imports, but Pango cannot be loaded
        raise QuizgymError(f"PDF output needs Pango (libpango-1.0-0): {exc}") from exc
    pdf: bytes = weasyprint.HTML(string=html, base_url=".").write_pdf()
    return pdf


def today() -> str:
    """Today's local date as YYYY-MM-DD, the default date in a worksheet's header."""
    return datetime.now(UTC).astimezone().date().isoformat()


@dataclass(frozen=True)
class Rendered:
    """What :func:`render_files` wrote."""

    out_dir: Path
    worksheets: int
    keys: int
    questions: int
    files: tuple[Path, ...]

    def summary(self) -> str:
        """One line for the terminal."""
        kinds = sorted({p.suffix.lstrip(".") for p in self.files})
        keys = f" and {self.keys} key{'s' if self.keys != 1 else ''}" if self.keys else ""
        return (
            f"{self.out_dir}: {self.worksheets} worksheet{'s' if self.worksheets != 1 else ''}"
            f"{keys} ({', '.join(kinds)}), {self.questions} question"
            f"{'s' if self.questions != 1 else ''} each"
        )


def render_files(
    bank: Bank,
    *,
    out_dir: Path = Path("worksheets"),
    formats: Sequence[str] = ("html",),
    key: bool = False,
    key_per_student: bool = False,
    tags: Sequence[str] = (),
    types: Sequence[str] = (),
    ids: Sequence[str] = (),
    count: int | None = None,
    seed: int | None = None,
    roster: Path | None = None,
    date: str | None = None,
    paper: str = "a4",
    title: str | None = None,
    templates: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Rendered:
    """Write worksheets (one per student with a roster) and answer keys into a folder.

    Without a roster: ``worksheet.EXT`` (and ``key.EXT``). With one: ``worksheet-ID.EXT`` per
    student, and ``key.EXT`` listing every student's numbers or, with ``key_per_student``,
    ``key-ID.EXT`` per student.

    Args:
        bank: the bank.
        out_dir: the folder (created).
        formats: any of ``html``, ``md``, ``pdf`` (PDF is printed from the HTML).
        key: also write the answer key.
        key_per_student: one key per student instead of one for the class (implies ``key``).
        tags: see :func:`select_questions`.
        types: see :func:`select_questions`.
        ids: see :func:`select_questions`.
        count: see :func:`select_questions`.
        seed: the class seed: the shuffle of ``count`` and every student's variants.
        roster: a CSV with a ``student`` column (optional ``name``, ``seed``).
        date: for the header; today when None, a blank line to write on when empty.
        paper: ``a4`` or ``letter``.
        title: the heading; the bank's title when None.
        templates: a folder of templates that override the bundled ones by name.
        progress: called with (done, total) after each file.

    Returns:
        What was written.

    Raises:
        QuizgymError: bad options, roster or templates; nothing is written then.
    """
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        raise QuizgymError(f"unknown format {', '.join(bad)} (formats: {', '.join(FORMATS)})")
    if templates is not None and not templates.is_dir():
        raise QuizgymError(f"{templates}: no such templates folder")
    questions = select_questions(bank, tags=tags, types=types, ids=ids, count=count, seed=seed)
    students: list[Student | None] = list(read_roster(roster)) if roster else [None]
    env = make_env(user_dir=templates, filters=FILTERS)
    options: dict[str, Any] = {
        "seed": seed,
        "date": today() if date is None else date,
        "paper": paper,
        "title": title,
        "env": env,
    }
    key = key or key_per_student
    jobs: list[tuple[str, str, Any]] = []
    for student in students:
        suffix = f"-{file_stem(student.id)}" if student else ""
        jobs.append((f"worksheet{suffix}", "worksheet", student))
        if key_per_student:
            jobs.append((f"key{suffix}", "key", [student]))
    if key and not key_per_student:
        jobs.append(("key", "key", students))

    def produce(kind: str, who: Any, fmt: str) -> str:
        if kind == "worksheet":
            return render_worksheet(bank, questions, fmt=fmt, student=who, **options)
        return render_key(bank, questions, fmt=fmt, students=who, **options)

    # Everything is rendered before anything is written: a template error leaves no half folder.
    documents: list[tuple[Path, str | bytes]] = []
    total = len(jobs) * len(formats)
    try:
        for stem, kind, who in jobs:
            html = produce(kind, who, "html") if {"html", "pdf"} & set(formats) else ""
            for fmt in formats:
                content: str | bytes = html
                if fmt == "pdf":
                    content = html_to_pdf(html)
                elif fmt == "md":
                    content = produce(kind, who, "md")
                documents.append((out_dir / f"{stem}.{fmt}", content))
                if progress:
                    progress(len(documents), total)
    except jinja2.TemplateSyntaxError as exc:
        raise QuizgymError(f"{exc.filename or exc.name}:{exc.lineno}: {exc.message}") from exc
    except jinja2.TemplateError as exc:
        raise QuizgymError(f"template error: {exc}") from exc
    out_dir.mkdir(parents=True, exist_ok=True)
    for path, content in documents:
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    keys = sum(1 for _, kind, _ in jobs if kind == "key")
    return Rendered(out_dir, len(jobs) - keys, keys, len(questions), tuple(p for p, _ in documents))
