"""Find the data shipped with quizgym: bundled banks, templates and domain packs.

In a source checkout they live at the repository's top level (``banks/``, ``templates/``,
``packs/``); in an
installed wheel they are package data under ``quizgym/_data/``. One function serves both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from quizgym.errors import QuizgymError

_PACKAGE = Path(__file__).resolve().parent


def resource_dir(name: Literal["banks", "templates", "packs"]) -> Path:
    """Return the folder holding the bundled ``banks``, ``templates`` or ``packs``.

    Raises:
        QuizgymError: the installation is broken (neither location exists).
    """
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise QuizgymError(f"quizgym is installed without its {name}/ folder; reinstall it")


def bundled_banks() -> dict[str, Path]:
    """Map each bundled bank's name (file stem) to its path."""
    folder = resource_dir("banks")
    return {p.stem: p for p in sorted(folder.glob("*.yaml"))}


def bundled_packs() -> dict[str, Path]:
    """Map each bundled domain pack's name (file stem) to its path."""
    folder = resource_dir("packs")
    return {p.stem: p for p in sorted(folder.glob("*.yaml"))}
