"""A graded run's statistics and review in, ``report.html`` out: one self-contained page a teacher
reads after grading."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Literal

import jinja2
from markupsafe import Markup

from quizgym.analysis import Agreement, ItemStats, Statistics, TagStats
from quizgym.fairness import RESAMPLES
from quizgym.model import LETTERS, Bank
from quizgym.render.charts import HEIGHT, PAD, WIDTH, axes, svg_open
from quizgym.render.env import make_env
from quizgym.render.markup import Target, math_html
from quizgym.richtext import image_folder
from quizgym.richtext.tree import Image
from quizgym.types import (
    BlanksInteraction,
    blanks_of,
    choices_of,
    drawn_prompt,
    numeric_of,
    pairing_of,
    param_names,
    statement_of,
)

if TYPE_CHECKING:
    from quizgym.irt import IrtFit
    from quizgym.render.irt_report import IrtSection
    from quizgym.solver import CompiledBank

__all__ = [
    "ReviewSummary",
    "Silent",
    "facility_chart",
    "histogram",
    "non_answer_line",
    "render_report",
]


def histogram(totals: Counter[float], *, maximum: float, bins: int = 20) -> Markup:
    """The distribution of total scores as an SVG bar chart (bins of equal width over 0..max).

    The two plots (score distribution; facility against discrimination) are drawn here as small
    inline SVG documents rather than with matplotlib: the report is a default output of every run,
    matplotlib would add its install and its import to each, and two charts of rectangles and
    circles need none of it. Text in the SVG is escaped here; everything else is escaped by the
    template (autoescape).
    """
    bins = max(1, min(bins, int(maximum) + 1 if maximum >= 1 else bins))
    counts = [0] * bins
    for value, count in totals.items():
        k = min(bins - 1, max(0, int(value / maximum * bins))) if maximum else 0
        counts[k] += count
    top = max(counts) or 1
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    bar = inner_w / bins
    parts = [svg_open("Distribution of total scores")]
    for k, count in enumerate(counts):
        h = inner_h * count / top
        lo, hi = maximum * k / bins, maximum * (k + 1) / bins
        parts.append(
            f'<rect x="{PAD + k * bar:.1f}" y="{HEIGHT - PAD - h:.1f}" width="{bar - 1:.1f}" '
            f'height="{h:.1f}" fill="#4c78a8"><title>{lo:g}–{hi:g}: {count} students</title></rect>'
        )
    x_ticks = [(q / 4, f"{maximum * q / 4:.3g}") for q in range(5)]
    parts += axes(f"total score (0–{maximum:g})", "students", top, x_ticks=x_ticks)
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 (every text in it went through escape())


def facility_chart(items: Sequence[ItemStats]) -> Markup:
    """Facility (x, %) against discrimination index (y, %), flagged items in red."""
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    parts = [svg_open("Facility against discrimination")]
    y0 = HEIGHT - PAD - inner_h / 2  # discrimination 0 at mid-height, range −100..100
    parts.append(
        f'<line x1="{PAD}" y1="{y0:.1f}" x2="{WIDTH - PAD}" y2="{y0:.1f}" stroke="#bbb" '
        'stroke-dasharray="4 3"/>'
    )
    for item in items:
        if item.discrimination is None or not math.isfinite(item.facility):
            continue
        x = PAD + inner_w * item.facility / 100
        y = y0 - inner_h / 2 * max(-100.0, min(100.0, item.discrimination)) / 100
        colour = "#d62728" if item.flags else "#4c78a8"
        label = escape(
            f"{item.question}: facility {item.facility:.0f}%, "
            f"discrimination {item.discrimination:.0f}%"
        )
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}" fill-opacity="0.8">'
            f"<title>{label}</title></circle>"
        )
    parts += axes(
        "facility (%)",
        "discrimination (%)",
        None,
        x_ticks=[(q / 4, str(25 * q)) for q in range(5)],
        y_ticks=[(0.0, "−100"), (0.5, "0"), (1.0, "100")],
    )
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 (every text in it went through escape())


@dataclass(frozen=True)
class _QuestionText:
    id: str
    html: Markup


def report_questions(book: CompiledBank) -> list[_QuestionText]:
    """:func:`_question_texts` of a compiled bank, kept with it (and so in the compiled-bank
    cache, whose key names markdown-it and latex2mathml) when no question shows an image:
    an image is read from its file, which the bank's key does not cover."""
    kept: list[tuple[str, str]] | None = book.memo(
        "report_questions", None, lambda: _without_images(book.bank)
    )
    if kept is None:
        return _question_texts(book.bank)
    # Safe: made by _question_texts, whose every piece of bank text went through math_html.
    return [_QuestionText(qid, Markup(html)) for qid, html in kept]  # noqa: S704


class _ImageShownError(Exception):
    """A question's text shows an image."""


class _NoImages(Target):
    def image_url(self, image: Image) -> str:
        raise _ImageShownError


def _without_images(bank: Bank) -> list[tuple[str, str]] | None:
    """The question texts of a bank that shows no image, or None."""
    try:
        texts = _question_texts(bank, _NoImages("html", image_folder(bank.path)))
    except _ImageShownError:
        return None
    return [(q.id, str(q.html)) for q in texts]


def _question_texts(bank: Bank, target: Target | None = None) -> list[_QuestionText]:
    """Every question's text as students read it (formulas as MathML, images inline), so the
    report says what each item asked; parameters stay symbolic (students had different
    numbers)."""
    target = target or Target("html", image_folder(bank.path))
    out = []
    for question in bank.questions:
        names = param_names(question)
        prompt = drawn_prompt(question, question.prompt)
        parts = [f'<div class="prompt">{math_html(prompt, names, target=target)}</div>']
        statement = statement_of(question)
        if statement is not None:
            parts.insert(0, f"<blockquote>{math_html(statement, target=target)}</blockquote>")
        options = choices_of(question)
        if options is not None and options.lettered:
            rows = "".join(
                f"<li><strong>{LETTERS[i]}</strong> {math_html(c.text, target=target)}"
                f"{' ✓' if c.correct else ''}</li>"
                for i, c in enumerate(options.choices)
            )
            parts.append(f'<ul class="choices">{rows}</ul>')
        pairing = pairing_of(question)
        if pairing is not None:
            rows = "".join(
                f"<li><strong>{pair.id}</strong> {math_html(pair.item, target=target)} → "
                f"{math_html(pair.answer, target=target)}</li>"
                for pair in pairing.items
            )
            parts.append(f'<ul class="pairs">{rows}</ul>')
        blanks = blanks_of(question)
        if blanks is not None:
            rows = "".join(
                f"<li><strong>({blanks.number(name)}) {name}</strong> "
                f"{math_html(_blank_key(blanks, name), target=target)}</li>"
                for name in blanks.names
            )
            parts.append(f'<ul class="blanks">{rows}</ul>')
        numeric = numeric_of(question)
        if numeric is not None:
            for part in numeric.question.parts:
                prompt = math_html(part.prompt, names, target=target)
                parts.append(f'<p class="part"><strong>{part.id}</strong>: {prompt}</p>')
        # Safe: every piece of bank text went through math_html, which escapes it.
        out.append(_QuestionText(question.id, Markup("".join(parts))))  # noqa: S704
    return out


def _blank_key(blanks: BlanksInteraction, name: str) -> str:
    """A blank's key as the report lists it: its key expression and unit, its right choice
    among the options, or its accepted spellings."""
    blank = blanks.blank(name)
    if blank.kind == "choice":
        return f"{blank.answer} (of {' / '.join(blank.choices)})"
    if blank.kind == "word":
        return " / ".join(blank.accept)
    return f"`{blank.answer}`" + (f" {blank.units}" if blank.units else "")


@dataclass(frozen=True)
class _TagRow:
    tag: str
    questions: str
    n: int
    p_upper: float | None
    p_middle: float | None
    p_lower: float | None


def _tag_summary(tags: Sequence[TagStats]) -> list[_TagRow]:
    by: dict[str, list[TagStats]] = {}
    for t in tags:
        by.setdefault(t.tag, []).append(t)
    rows = []
    for tag, entries in by.items():
        rows.append(
            _TagRow(
                tag,
                ", ".join(e.question for e in entries),
                sum(e.n for e in entries),
                _mean([e.p_upper for e in entries]),
                _mean([e.p_middle for e in entries]),
                _mean([e.p_lower for e in entries]),
            )
        )
    return sorted(rows, key=lambda r: -r.n)


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _pct(value: float | None, digits: int = 0) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:.{digits}f}"


@dataclass(frozen=True, kw_only=True)
class ReviewSummary:
    """What ``review.csv`` holds, and how the rubric agreed with the teacher's decisions."""

    rows: int = 0
    """Distinct answers listed."""
    waiting: int = 0
    """Students' answers awaiting a decision."""
    decided: int = 0
    """Students' answers a teacher scored."""
    agreement: Sequence[Agreement] = ()


@dataclass(frozen=True)
class Silent:
    """The students who answered nothing at all."""

    count: int = 0
    names: tuple[str, ...] = ()
    """The first of them (``count`` says how many)."""

    def line(self) -> str:
        """How the report names them: ``2 students answered nothing: u063, u064``."""
        if not self.count:
            return ""
        more = self.count - len(self.names)
        names = ", ".join(self.names) + (f" and {more} more" if more else "")
        who = "student answered" if self.count == 1 else "students answered"
        return f"{self.count} {who} nothing (every answer blank): {names}"


def non_answer_line(non_answers: Counter[str]) -> str:
    """The non-answers of a class, listed once: ``counted as no answer (blank), not in
    review.csv: “-” ×5, “idk” ×5, …``; '' when there were none."""
    if not non_answers:
        return ""
    ranked = sorted(non_answers.items(), key=lambda kv: (-kv[1], kv[0]))
    listed = ", ".join(f"“{text}” ×{n}" for text, n in ranked[:12])
    more = f" and {len(ranked) - 12} more" if len(ranked) > 12 else ""
    total = sum(non_answers.values())
    return (
        f"{total} {'answer says' if total == 1 else 'answers say'} “no answer” and "
        f"{'is' if total == 1 else 'are'} counted as blank, not sent to review: {listed}{more}"
    )


FIRST_FLAGS = 6
"""Flagged items listed in "What to check first" (all are in "Items to look at")."""


def check_first(
    *,
    stats: Statistics,
    rejected_rows: int,
    ignored_columns: int,
    warnings: Sequence[str],
    review: ReviewSummary,
    flags: Sequence[str] = (),
) -> list[str]:
    """The short list at the top of the report: what could make a grade wrong, most urgent
    first, in plain words."""
    out = list(warnings)
    for flag in flags[:FIRST_FLAGS]:
        out.append(f"{flag} (in review.csv; no score was changed)")
    if len(flags) > FIRST_FLAGS:
        out.append(f"{len(flags) - FIRST_FLAGS} more flagged students in review.csv")
    if rejected_rows:
        out.append(
            f"{rejected_rows} {'row' if rejected_rows == 1 else 'rows'} of the submissions could "
            "not be graded and have no grade: see rejected.csv"
        )
    if ignored_columns:
        out.append(
            f"{ignored_columns} {'column' if ignored_columns == 1 else 'columns'} of the "
            "submissions name no question and were ignored: see rejected.csv"
        )
    if review.waiting:
        out.append(
            f"{review.waiting} {'answer awaits' if review.waiting == 1 else 'answers await'} your "
            f"decision ({review.rows} distinct, in review.csv): free text carries the rubric's "
            "suggested score, answers read leniently (a unit converted, a % read as a fraction) "
            "the machine's, and unreadable answers score 0 until you decide them; grade again "
            "with --review review.csv"
        )
    pending = [i for i in stats.items if i.pending]
    for item in pending[:FIRST_FLAGS]:
        out.append(f"{item.question}: {item.pending}")
    if len(pending) > FIRST_FLAGS:
        out.append(f"{len(pending) - FIRST_FLAGS} more items pending review below")
    flagged = [i for i in stats.items if i.flags]
    for item in flagged[:FIRST_FLAGS]:
        out.append(f"{item.question}: {item.flags[0]}")
    if len(flagged) > FIRST_FLAGS:
        out.append(f"{len(flagged) - FIRST_FLAGS} more flagged items below (Items to look at)")
    return out


def report_environment() -> jinja2.Environment:
    """The environment ``report.html`` is rendered in."""
    return make_env(filters={"pct": _pct})


def render_report(
    *,
    bank: Bank,
    stats: Statistics,
    totals: Counter[float],
    rejected_rows: int,
    ignored_columns: int,
    students: int,
    warnings: Sequence[str] = (),
    notes: Sequence[str] = (),
    review: ReviewSummary | None = None,
    questions: Sequence[_QuestionText] | None = None,
    flags: Sequence[str] = (),
    irt: IrtFit | None = None,
    non_answers: Counter[str] | None = None,
    silent: Silent | None = None,
    part: Literal["page", "analysis"] = "page",
) -> str:
    """The report as one HTML string (no external resources: images are inlined).

    Args:
        bank: the bank graded.
        stats: the class's statistics.
        totals: how many students got each total score.
        rejected_rows: rows of the submissions that could not be graded.
        ignored_columns: columns of the submissions that name no question.
        students: students graded.
        warnings: grades that may be wrong, and why (shown first).
        notes: what the run assumed (how versions were chosen).
        review: what review.csv holds (answers awaiting a decision, decisions applied).
        questions: the questions' texts (:func:`report_questions`), when the caller has them.
        flags: students whose answers fit another seed's versions, or whose seed cell the
            manifest contradicts (:mod:`~quizgym.grading.wrong_seed`).
        irt: the IRT fit of ``grade --irt`` (:mod:`quizgym.irt`): its section is shown.
        non_answers: what students typed for no answer (``idk``, ``-``), by text, counted.
        silent: the students who answered nothing.
        part: ``page``, the whole report; ``analysis``, its body without the questions' texts
            or a stylesheet (HTML to put inside another page: ``quizgym serve``'s teacher page).
    """
    review = review or ReviewSummary()
    name = "report.html.j2" if part == "page" else "report-analysis.html.j2"
    template = report_environment().get_template(name)
    flagged = [i for i in stats.items if i.flags]
    with_options = {o.question for o in stats.options}
    with_picks = {p.question for p in stats.picks}
    with_wrong = {w.question for w in stats.wrong}
    return template.render(
        bank=bank,
        stats=stats,
        test=stats.test,
        students=students,
        warnings=list(warnings),
        notes=list(notes),
        rejected_rows=rejected_rows,
        ignored_columns=ignored_columns,
        flagged=flagged,
        pending=[i for i in stats.items if i.pending],
        silent=(silent or Silent()).line(),
        non_answers=non_answer_line(non_answers or Counter()),
        histogram=histogram(totals, maximum=stats.test.max_score),
        scatter=facility_chart(stats.items),
        tag_rows=_tag_summary(stats.tags),
        option_questions=[i.question for i in stats.items if i.question in with_options],
        pick_questions=[i.question for i in stats.items if i.question in with_picks],
        wrong_questions=[i.question for i in stats.items if i.question in with_wrong],
        review=review,
        first=check_first(
            stats=stats,
            rejected_rows=rejected_rows,
            ignored_columns=ignored_columns,
            warnings=warnings,
            review=review,
            flags=flags,
        ),
        questions=([] if part == "analysis" else _question_texts(bank))
        if questions is None
        else questions,
        resamples=f"{RESAMPLES:,}",
        irt=_irt_section(irt),
    )


def _irt_section(fit: IrtFit | None) -> IrtSection | None:
    if fit is None:
        return None
    from quizgym.render.irt_report import irt_section

    return irt_section(fit)
