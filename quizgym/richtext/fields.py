"""A bank in; every text field, where it stands, and what is wrong with the text in it out."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path

from quizgym.errors import Finding
from quizgym.model import (
    PLACEHOLDER,
    AnyQuestion,
    Bank,
)
from quizgym.richtext.chars import control_characters
from quizgym.richtext.images import image_folder, image_problems
from quizgym.richtext.parse import parse
from quizgym.richtext.tex import tex_problems
from quizgym.types import param_names, type_of

Loc = tuple[str | int, ...]
MAX_FORMULAS = 500
"""Most formulas a bank holds: a PDF draws each one (about 65 ms of CPU here, with ziamath and
WeasyPrint; docs/performance.md), so a worksheet of the whole bank stays within half a minute."""
_BRACED = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


def question_fields(question: AnyQuestion, base: Loc = ()) -> Iterator[tuple[Loc, str]]:
    """Every text field of a question (prompt, statement, choices, feedback, hint, explanation,
    model answer, correction, rubric criteria, units, parts), with its field path."""
    for name in ("prompt", "statement", "hint", "explanation", "correction", "model_answer"):
        value = getattr(question, name, None)
        if isinstance(value, str):
            yield (*base, name), value
    yield from type_of(question).text_fields(question, base)


def bank_fields(bank: Bank) -> Iterator[tuple[Loc, str]]:
    """Every text field of a bank, with its field path (for :meth:`Bank.locate`).

    ``check`` reports these findings; ``render`` and ``export`` refuse a bank whose images cannot be
    shipped (:func:`image_findings`), with the same ``path:line:col`` messages.
    """
    for name in ("title", "description", "instructions"):
        value = getattr(bank, name, None)
        if isinstance(value, str):
            yield (name,), value
    for index, question in enumerate(bank.questions):
        yield from question_fields(question, ("questions", index))


@functools.lru_cache(maxsize=64)
def _lines(path: str, stamp: float) -> tuple[str, ...]:
    try:
        return tuple(Path(path).read_text(encoding="utf-8").splitlines())
    except (OSError, UnicodeDecodeError):
        return ()


def _place(bank: Bank, loc: Loc, needle: str, back: str = "") -> tuple[str, int, int]:
    """Where ``needle`` stands in the bank file, searching from the field's own line (a block
    scalar's text starts below its key); the field's position when it cannot be found. With
    ``back``, the column is that of the last ``back`` before the needle on its line."""
    path, line, col = bank.locate(loc)
    if not path or not needle:
        return path or bank.bank, line, col
    try:
        stamp = Path(path).stat().st_mtime
    except OSError:
        return path, line, col
    lines = _lines(path, stamp)
    # As written, or as a double-quoted YAML string writes it (a backslash doubled).
    for wanted in dict.fromkeys((needle, needle.replace("\\", "\\\\"))):
        for number in range(line - 1, min(len(lines), line + 400)):
            at = lines[number].find(wanted)
            if at >= 0:
                start = lines[number].rfind(back, 0, at) if back else -1
                return path, number + 1, (start if start >= 0 else at) + 1
    return path, line, col


def image_findings(bank: Bank) -> list[Finding]:
    """Every image that cannot be shipped: missing, absolute, outside the bank's folder, of a
    type not shipped, too large, or without alt text (errors, located at the image)."""
    folder = image_folder(bank.path)
    found = []
    for loc, text in bank_fields(bank):
        if "![" not in text:  # every image is written ![alt](src): nothing to parse for
            continue
        for image in parse(text).images():
            for problem in image_problems(image.src, image.alt, folder=folder):
                path, line, col = _place(bank, loc, f"]({image.src}", back="![")
                found.append(Finding(path, line, col, f"{_label(bank, loc)}: {problem}"))
    return found


def text_findings(bank: Bank) -> list[Finding]:
    """What ``check`` says about a bank's text: images (see :func:`image_findings`), formulas
    that do not print, text past the layout limits, links that cannot be links (warnings), and
    a ``{name}`` of a parameter written straight after a letter, which reads as TeX."""
    found = image_findings(bank)
    formulas = 0
    for loc, text in bank_fields(bank):
        label = _label(bank, loc)
        found.extend(_control_findings(bank, loc, label, text))
        doc = parse(text)
        before, formulas = formulas, formulas + len(doc.formulas())
        if before <= MAX_FORMULAS < formulas:
            path, line, col = bank.locate(loc)
            message = (
                f"{label}: formula {MAX_FORMULAS + 1:,} of the bank: a bank holds at most "
                f"{MAX_FORMULAS:,} formulas (each takes a PDF tens of milliseconds to draw); "
                "split the bank"
            )
            found.append(Finding(path or bank.bank, line, col, message))
        for problem in doc.problems:
            severity = "warning" if problem.startswith("the link") else "error"
            path, line, col = bank.locate(loc)
            found.append(Finding(path or bank.bank, line, col, f"{label}: {problem}", severity))
        for formula in doc.formulas():
            for problem in tex_problems(formula.tex, display=formula.display):
                path, line, col = _place(bank, loc, formula.tex.split("\n")[0][:60])
                found.append(Finding(path, line, col, f"{label}: ${formula.tex}$: {problem}"))
    for index, question in enumerate(bank.questions):
        params = param_names(question)
        for loc, text in question_fields(question, ("questions", index)):
            for name in _glued(text, params):
                path, line, col = _place(bank, loc, f"{{{name}}}")
                found.append(
                    Finding(
                        path,
                        line,
                        col,
                        f"{question.id}: {{{name}}} follows a letter or a TeX command, so it is "
                        f"TeX, not the parameter {name}; put a space before it, or write "
                        f"{{{{{name}}}}} inside a formula",
                        "warning",
                    )
                )
    return found


def _control_findings(bank: Bank, loc: Loc, label: str, text: str) -> list[Finding]:
    """A field holding control characters (a form feed, an escape): one error, at the words
    before the first one."""
    controls = control_characters(text)
    if not controls:
        return []
    at, name = controls[0]
    before = text[:at].rsplit("\n", 1)[-1][-30:].strip()
    path, line, col = _place(bank, loc, before)
    more = f" (and {len(controls) - 1} more)" if len(controls) > 1 else ""
    return [
        Finding(
            path,
            line,
            col,
            f"{label}: a control character, {name}, at character {at + 1}{more}: XML exports "
            "cannot hold it and it drives terminals; remove it",
        )
    ]


def _glued(text: str, params: frozenset[str]) -> list[str]:
    """Parameter names written as ``{name}`` where the placeholder rule reads them as TeX."""
    filled = {m.start() for m in PLACEHOLDER.finditer(text)}
    names = [m.group(1) for m in _BRACED.finditer(text) if m.start() not in filled]
    return sorted(set(names) & params)


def _label(bank: Bank, loc: Loc) -> str:
    if loc and loc[0] == "questions" and len(loc) > 1 and isinstance(loc[1], int):
        question = bank.questions[loc[1]]
        return f"{question.id}: {'.'.join(str(p) for p in loc[2:])}"
    return ".".join(str(p) for p in loc)
