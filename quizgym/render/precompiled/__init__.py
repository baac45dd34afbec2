"""The bundled report template, compiled ahead into Python.

Jinja compiles a template's source into Python each time an environment first loads it: 25-35
ms for ``report.html.j2``, paid by every ``quizgym grade``. The module here is that Python,
written by ``python -m quizgym.render.precompiled`` (run it after editing a bundled template
named in :data:`PRECOMPILED`; ``tests/test_render.py`` fails until it is run). Its first line
names what it was compiled from: the SHA-256 of the template's source, the Jinja version, and
the environment's options that shape the code (its delimiters and whitespace rules, autoescape,
extensions, and each filter's, test's and finalizer's name and what Jinja passes it). The
bundled templates' loader (:mod:`quizgym.render.env`) uses the module only while its first line
is exactly what the
template, Jinja and the environment say now, and compiles the source otherwise: an edited
template, another Jinja or other options are never served stale code. The module is executed
afresh for each environment, as compiled source is, so no two environments share its state. A
teacher's own templates folder is searched first, as always, and compiled from source.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from types import CodeType

import jinja2

__all__ = ["PRECOMPILED", "code_of", "header", "write"]

PRECOMPILED = ("report.html.j2",)
"""The bundled templates compiled ahead: those a command renders on every run."""

_FOLDER = Path(__file__).parent


def _path(name: str) -> Path:
    return _FOLDER / (name.replace(".", "_") + ".py")


def header(environment: jinja2.Environment, name: str, source: str) -> str:
    """The first line of the module compiled from ``source``: what the code depends on."""
    finalize = environment.finalize
    shaped = (
        environment.block_start_string,
        environment.block_end_string,
        environment.variable_start_string,
        environment.variable_end_string,
        environment.comment_start_string,
        environment.comment_end_string,
        environment.line_statement_prefix,
        environment.line_comment_prefix,
        environment.trim_blocks,
        environment.lstrip_blocks,
        environment.newline_sequence,
        environment.keep_trailing_newline,
        environment.optimized,
        environment.is_async,
        sorted(environment.extensions),
        bool(
            environment.autoescape(name)
            if callable(environment.autoescape)
            else environment.autoescape
        ),
        None if finalize is None else f"{finalize.__module__}.{finalize.__qualname__}",
        _passes(finalize),
        # Each filter's and test's name, and what it is passed (context, environment...):
        # Jinja writes the call accordingly.
        sorted((name, _passes(f)) for name, f in environment.filters.items()),
        sorted((name, _passes(f)) for name, f in environment.tests.items()),
    )
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    options = hashlib.sha256(repr(shaped).encode("utf-8")).hexdigest()[:16]
    return f"# {name} sha256={digest} jinja={jinja2.__version__} options={options}\n"


def _passes(function: object) -> str:
    """What Jinja passes a filter, test or finalizer first (``pass_context`` and the like)."""
    return repr(getattr(function, "jinja_pass_arg", None))


def code_of(environment: jinja2.Environment, name: str, source: str) -> CodeType | None:
    """The compiled code of a bundled template, if its module was compiled from this source by
    this Jinja under these options; None otherwise (compile the source)."""
    if name not in PRECOMPILED:
        return None
    path = _path(name)
    try:
        with path.open(encoding="utf-8") as module:
            first = module.readline()
    except OSError:
        return None
    if first != header(environment, name, source):
        return None
    spec = importlib.util.spec_from_file_location(f"{__name__}.{path.stem}", path)
    if spec is None or spec.loader is None or not hasattr(spec.loader, "get_code"):
        return None
    code: CodeType | None = spec.loader.get_code(spec.name)  # its bytecode, cached as any module's
    return code


def write(environment: jinja2.Environment) -> list[Path]:
    """Compile each template of :data:`PRECOMPILED` into its module; return the modules."""
    assert environment.loader is not None
    written = []
    for name in PRECOMPILED:
        source, _, _ = environment.loader.get_source(environment, name)
        code = environment.compile(source, name, raw=True)
        text = header(environment, name, source) + "# fmt: off\n" + code + "\n"
        _path(name).write_text(text, encoding="utf-8")
        written.append(_path(name))
    return written
