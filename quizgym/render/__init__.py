"""Documents: printable worksheets and answer keys (HTML, Markdown, PDF) and the grading report.

- :mod:`~quizgym.render.env`: the one Jinja environment;
- :mod:`~quizgym.render.markup`: bank text (Markdown, formulas, images) in documents: the
  template filters;
- :mod:`~quizgym.render.roster`: class rosters;
- :mod:`~quizgym.render.views`: what a worksheet or key shows for one question;
- :mod:`~quizgym.render.documents`: worksheets, keys and the files ``quizgym render`` writes;
- :mod:`~quizgym.render.report`: ``report.html`` after grading.
"""

from typing import TYPE_CHECKING, Any

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

_DOCUMENTS = {"FORMATS", "PAPERS", "Rendered", "html_to_pdf", "render_files", "render_key"}
_DOCUMENTS |= {"render_worksheet", "today"}
_MARKUP = {"escape_markdown", "math_html", "math_markdown", "math_plain", "parse_math"}


def __getattr__(name: str) -> Any:
    # Each name is loaded on first use: the grading report (quizgym.render.report) needs the
    # environment and the markup filters, not the worksheets' modules.
    if name in _DOCUMENTS:
        from quizgym.render import documents

        return getattr(documents, name)
    if name == "make_env":
        from quizgym.render import env

        return env.make_env
    if name in _MARKUP:
        from quizgym.render import markup

        return getattr(markup, name)
    if name in {"RosterError", "Student", "read_roster"}:
        from quizgym.render import roster

        return getattr(roster, name)
    if name in {"key_view", "question_view"}:
        from quizgym.render import views

        return getattr(views, name)
    if name == "select_questions":
        from quizgym.selection import select_questions

        return select_questions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
