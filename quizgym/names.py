"""File names that stand for student ids: the same stem for a worksheet and a feedback file."""

from __future__ import annotations

import re

_FILE_SAFE = re.compile(r"[^A-Za-z0-9._@+-]")


def file_stem(student: str) -> str:
    """The part of a file name that stands for a student id (``s001``, ``a.b@uni.edu``)."""
    stem = _FILE_SAFE.sub("_", student)
    return "_" + stem[1:] if stem.startswith(".") else stem


def claim_name(name: str, used: set[str]) -> str:
    """``name``, or ``name-2.md``, ``name-3.md`` … when taken; the result is marked as used."""
    stem, suffix = (name[:-3], ".md") if name.endswith(".md") else (name, "")
    k = 2
    while name in used:
        name, k = f"{stem}-{k}{suffix}", k + 1
    used.add(name)
    return name
