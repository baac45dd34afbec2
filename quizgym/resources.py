"""A bundled bank's, template's or pack's name in, its file out, from a source checkout or an
installed wheel."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from quizgym.errors import BankNotFoundError, QuizgymError

_PACKAGE = Path(__file__).resolve().parent


def resource_dir(name: Literal["banks", "templates", "packs"]) -> Path:
    """Return the folder holding the bundled ``banks``, ``templates`` or ``packs``.

    In a source checkout they live at the repository's top level (``banks/``, ``templates/``,
    ``packs/``); in an installed wheel they are package data under ``quizgym/_data/``. One function
    serves both.

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


def resolve_bank(name: str | Path) -> Path:
    """Find a bank by path or by the name of a bundled bank.

    Raises:
        BankNotFoundError: neither a readable file nor a bundled bank.
    """
    path = Path(name)
    if path.is_file():
        return path
    bundled = bundled_banks()
    if str(name) in bundled:
        return shortest(bundled[str(name)])
    raise BankNotFoundError(str(name), sorted(bundled))


def read_bank_file(name: str | Path) -> tuple[Path, bytes]:
    """A bank's path (see :func:`resolve_bank`) and its file's bytes.

    Raises:
        BankNotFoundError: the bank does not exist.
        QuizgymError: the file cannot be read.
    """
    path = resolve_bank(name)
    try:
        return path, path.read_bytes()
    except OSError as exc:
        raise QuizgymError(f"{path}: cannot read: {exc.strerror}") from exc


def shortest(path: Path) -> Path:
    """Show a path relative to the working folder when it lies inside it."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def resolve_pack(name: str, *, bank_path: str = "") -> Path:
    """Find a pack named in a bank's ``packs``: a bundled pack's name, or a file's path (relative
    to the bank's folder).

    Raises:
        QuizgymError: no such pack.
    """
    bundled = bundled_packs()
    if name in bundled:
        return bundled[name]
    path = Path(name)
    if not path.is_absolute() and bank_path:
        path = Path(bank_path).parent / path
    if path.is_file():
        return path
    known = ", ".join(sorted(bundled)) or "none"
    raise QuizgymError(f"no pack {name!r}: neither a bundled pack (there is {known}) nor a file")
