"""A bank, a selection and a roster in; printable worksheets and answer keys (HTML, Markdown, PDF)
and the grading report out."""

# - :mod:`~quizgym.render.env`: the one Jinja environment;
# - :mod:`~quizgym.render.markup`: bank text (Markdown, formulas, images) in documents: the template
#   filters;
# - :mod:`~quizgym.render.roster`: class rosters;
# - :mod:`~quizgym.render.views`: what a worksheet or key shows for one question;
# - :mod:`~quizgym.render.documents`: worksheets, keys and the files ``quizgym render`` writes;
# - :mod:`~quizgym.render.report`: ``report.html`` after grading.

from typing import TYPE_CHECKING

from quizgym.lazy import names_from

if TYPE_CHECKING:
    from quizgym.render.documents import (
        FORMATS,
        PAPERS,
        Rendered,
        html_to_pdf,
        render_files,
        render_key,
        render_worksheet,
        today,
    )
    from quizgym.render.env import make_env
    from quizgym.render.markup import (
        escape_markdown,
        math_html,
        math_markdown,
        math_plain,
        parse_math,
    )
    from quizgym.render.roster import RosterError, Student, read_roster
    from quizgym.render.views import key_view, question_view
    from quizgym.selection import select_questions

__all__ = [
    "FORMATS",
    "PAPERS",
    "Rendered",
    "RosterError",
    "Student",
    "escape_markdown",
    "html_to_pdf",
    "key_view",
    "make_env",
    "math_html",
    "math_markdown",
    "math_plain",
    "parse_math",
    "question_view",
    "read_roster",
    "render_files",
    "render_key",
    "render_worksheet",
    "select_questions",
    "today",
]

_HOMES = {
    **dict.fromkeys(
        ["FORMATS", "PAPERS", "Rendered", "html_to_pdf", "render_files", "render_key"], "documents"
    ),
    **dict.fromkeys(["render_worksheet", "today"], "documents"),
    "make_env": "env",
    **dict.fromkeys(
        ["escape_markdown", "math_html", "math_markdown", "math_plain", "parse_math"], "markup"
    ),
    **dict.fromkeys(["RosterError", "Student", "read_roster"], "roster"),
    **dict.fromkeys(["key_view", "question_view"], "views"),
    "select_questions": "quizgym.selection",
}
"""The module each name lives in, imported when the name is first asked for: the grading report
(:mod:`quizgym.render.report`) needs the environment and the markup filters, not the worksheets'
modules."""

__getattr__ = names_from(__name__, _HOMES)
