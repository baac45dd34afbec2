"""A teacher's templates folder (or none) in, the one Jinja environment of quizgym out (STYLE
§13)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from quizgym.render.markup import FILTERS
from quizgym.resources import resource_dir
from quizgym.terminal import escape_controls


def make_env(
    *, user_dir: Path | None = None, filters: dict[str, Any] | None = None
) -> jinja2.Environment:
    """Build the Jinja environment.

    Templates live in the top-level ``templates/`` folder (package data in a wheel). A teacher's own
    folder, when given, is searched first. Autoescaping is on for HTML and XML, and an undefined
    variable is an error: a typo in a template must fail loudly, never print an empty string. Bank
    text is always passed to templates as data, never compiled as template source.

    Args:
        user_dir: a folder of templates that override the bundled ones by name.
        filters: extra filters to register (name → function).

    Returns:
        The environment. No autoreload: editing a template in the middle of a run is not useful.
        Every plain string a template prints goes through
        :func:`~quizgym.terminal.escape_controls` first: bank and student text cannot reorder a
        page with bidi overrides or hide text behind control characters.
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
        finalize=_inert,
    )
    env.filters.update(filters or {})
    return env


def _inert(value: Any) -> Any:
    """A printed value: plain text with its control characters spelled out; markup we built
    (already escaped) as it is."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return escape_controls(value)
    return value


@functools.lru_cache(maxsize=1)
def bundled_env() -> jinja2.Environment:
    """The environment over the bundled templates, built once per process.

    Compiling templates is slow, and the bundled ones cannot change while quizgym runs (a
    teacher's own templates get an environment of their own from :func:`make_env`).
    """
    return make_env(filters=FILTERS)
