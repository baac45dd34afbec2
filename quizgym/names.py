"""File names that stand for student ids: the same stem for a worksheet and a feedback file."""

from __future__ import annotations

import hashlib
import re

_FILE_SAFE = re.compile(r"[^A-Za-z0-9._@+-]")
LONGEST = 64
"""Longest stem: a longer id keeps its first characters and gains a hash of the whole id, so a
file name stays short (file systems refuse names over 255 bytes), safe and unique."""


def file_stem(student: str) -> str:
    """The part of a file name that stands for a student id (``s001``, ``a.b@uni.edu``).

    Characters other than letters, digits and ``._@+-`` become ``_``; a leading dot too (no
    hidden files). An id longer than :data:`LONGEST` characters keeps its first ones and a hash
    of the whole id: ``sxxxx…-3f2a9c1d0b4e``.
    """
    stem = _FILE_SAFE.sub("_", student)
    stem = "_" + stem[1:] if stem.startswith(".") else stem
    if len(stem) > LONGEST:
        digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        stem = f"{stem[: LONGEST - 13]}-{digest}"
    return stem


def claim_name(name: str, used: set[str]) -> str:
    """``name``, or ``name-2.md``, ``name-3.md`` … when taken; the result is marked as used."""
    stem, suffix = (name[:-3], ".md") if name.endswith(".md") else (name, "")
    k = 2
    while name in used:
        name, k = f"{stem}-{k}{suffix}", k + 1
    used.add(name)
    return name
