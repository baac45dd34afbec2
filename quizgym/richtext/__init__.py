"""Bank text in; its parsed tree, and that tree as HTML, Markdown, plain text or formulas, out for
every output."""

# Every text field of a bank (prompt, statement, choices, feedback, hint, explanation, model answer,
# correction, rubric criteria, units, the bank's instructions) is CommonMark with GitHub's tables,
# ``$…$`` and ``$$…$$`` formulas and images beside the bank file. Text that uses none of it reads as
# it always has.
#
# - :mod:`~quizgym.richtext.parse`: text → :class:`~quizgym.richtext.tree.Doc` (markdown-it-py),
#   with the limits that keep every output bounded;
# - :mod:`~quizgym.richtext.tex`: formulas → MathML, Unicode text, SVG (latex2mathml, ziamath);
# - :mod:`~quizgym.richtext.html`, :mod:`~quizgym.richtext.markdown`,
#   :mod:`~quizgym.richtext.plain`: a document as HTML, Markdown or plain text;
# - :mod:`~quizgym.richtext.images`: images, found and checked;
# - :mod:`~quizgym.richtext.fields`: a bank's text fields and what ``check`` says about them.
#
# Nothing here imports markdown-it or latex2mathml until a text that holds markup is parsed
# (``quizgym --help`` stays light; a line of plain words never needs them).

from typing import TYPE_CHECKING

from quizgym.lazy import names_from

# parse is imported now: importing its module later would bind the package's name ``parse`` to
# the module, not the function (and every screen parses its text).
from quizgym.richtext.parse import MAX_COLUMNS, MAX_DEPTH, MAX_ROWS, MAX_TEXT, parse

if TYPE_CHECKING:  # each name is imported from its module when first asked for
    from quizgym.richtext.fields import (
        bank_fields,
        image_findings,
        question_fields,
        text_findings,
    )
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
    from quizgym.richtext.plain import to_plain
    from quizgym.richtext.subscripts import parse_math
    from quizgym.richtext.tex import (
        MATHML_NS,
        tex_problems,
        tex_to_mathml,
        tex_to_svg,
        tex_to_text,
    )
    from quizgym.richtext.tree import Doc, Image, Math

_WHERE = {
    **dict.fromkeys(
        ["bank_fields", "image_findings", "question_fields", "text_findings"], "fields"
    ),
    **dict.fromkeys(["HtmlStyle", "html_plain", "to_html"], "html"),
    **dict.fromkeys(
        ["IMAGE_TYPES", "MAX_IMAGE_BYTES", "ImageFile", "find_image", "image_folder"], "images"
    ),
    "image_problems": "images",
    **dict.fromkeys(["MarkdownStyle", "escape_markdown", "to_markdown"], "markdown"),
    "to_plain": "plain",
    "parse_math": "subscripts",
    **dict.fromkeys(
        ["MATHML_NS", "tex_problems", "tex_to_mathml", "tex_to_svg", "tex_to_text"], "tex"
    ),
    **dict.fromkeys(["Doc", "Image", "Math"], "tree"),
}
"""The module each name lives in. A name is imported from it when first asked for: the
practice screen needs the tree and the parser, not the HTML writer, the images nor the bank's
fields (which read the bank's model, pydantic)."""


__getattr__ = names_from(__name__, _WHERE)


def plain_text(text: str, *, subscripts: bool = False) -> str:
    """Bank text as plain text (formulas in Unicode, no markup): :func:`to_plain` of it."""
    from quizgym.richtext.plain import to_plain

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
