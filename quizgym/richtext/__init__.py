"""Rich bank text: Markdown, LaTeX mathematics, tables and images, for every output.

Every text field of a bank (prompt, statement, choices, feedback, hint, explanation, model
answer, correction, rubric criteria, units, the bank's instructions) is CommonMark with
GitHub's tables, ``$…$`` and ``$$…$$`` formulas and images beside the bank file. Text that uses
none of it reads as it always has.

- :mod:`~quizgym.richtext.parse`: text → :class:`~quizgym.richtext.tree.Doc` (markdown-it-py),
  with the limits that keep every output bounded;
- :mod:`~quizgym.richtext.tex`: formulas → MathML, Unicode text, SVG (latex2mathml, ziamath);
- :mod:`~quizgym.richtext.html`, :mod:`~quizgym.richtext.markdown`,
  :mod:`~quizgym.richtext.plain`: a document as HTML, Markdown or plain text;
- :mod:`~quizgym.richtext.images`: images, found and checked;
- :mod:`~quizgym.richtext.fields`: a bank's text fields and what ``check`` says about them.

Nothing here imports markdown-it or latex2mathml until a text that holds markup is parsed
(``quizgym --help`` stays light; a line of plain words never needs them).
"""

from typing import TYPE_CHECKING, Any

from quizgym.richtext.html import HtmlStyle, html_plain, to_html
from quizgym.richtext.images import (
    IMAGE_TYPES,
    MAX_IMAGE_BYTES,
    ImageFile,
    find_image,
    image_folder,
    image_problems,
)
from quizgym.richtext.markdown import MarkdownStyle, escape_markdown, to_markdown
from quizgym.richtext.parse import MAX_COLUMNS, MAX_DEPTH, MAX_ROWS, MAX_TEXT, parse
from quizgym.richtext.plain import to_plain
from quizgym.richtext.subscripts import parse_math
from quizgym.richtext.tex import MATHML_NS, tex_problems, tex_to_mathml, tex_to_svg, tex_to_text
from quizgym.richtext.tree import Doc, Image, Math

if TYPE_CHECKING:  # fields reads the bank's model (pydantic): imported when first asked for
    from quizgym.richtext.fields import (
        bank_fields,
        image_findings,
        question_fields,
        text_findings,
    )

_FIELDS = {"bank_fields", "image_findings", "question_fields", "text_findings"}


def __getattr__(name: str) -> Any:
    """The :mod:`~quizgym.richtext.fields` names, imported on first use (``quizgym stats`` and
    the practice screen render text without loading pydantic)."""
    if name in _FIELDS:
        from quizgym.richtext import fields

        return getattr(fields, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def plain_text(text: str, *, subscripts: bool = False) -> str:
    """Bank text as plain text (formulas in Unicode, no markup): :func:`to_plain` of it."""
    return to_plain(parse(text), subscripts=subscripts)


__all__ = [
    "IMAGE_TYPES",
    "MATHML_NS",
    "MAX_COLUMNS",
    "MAX_DEPTH",
    "MAX_IMAGE_BYTES",
    "MAX_ROWS",
    "MAX_TEXT",
    "Doc",
    "HtmlStyle",
    "Image",
    "ImageFile",
    "MarkdownStyle",
    "Math",
    "bank_fields",
    "escape_markdown",
    "find_image",
    "html_plain",
    "image_findings",
    "image_folder",
    "image_problems",
    "parse",
    "parse_math",
    "plain_text",
    "question_fields",
    "tex_problems",
    "tex_to_mathml",
    "tex_to_svg",
    "tex_to_text",
    "text_findings",
    "to_html",
    "to_markdown",
    "to_plain",
]
