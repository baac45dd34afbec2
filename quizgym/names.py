"""File names that stand for student ids: the same stem for a worksheet and a feedback file."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_FILE_SAFE = re.compile(r"[^A-Za-z0-9._@+-]")
LONGEST = 64
"""Longest stem, in UTF-8 bytes: a longer id keeps its first characters and gains a hash of the
whole id, so a file name stays short (file systems refuse names over 255 bytes), safe and
unique."""


def _safe(ch: str) -> str:
    """A character of an id as a file name holds it: an ASCII letter, digit or ``._@+-``, or a
    letter, mark or digit of another script (``学``, ``и``, ``é``); anything else is ``_``."""
    if ch.isascii():
        return _FILE_SAFE.sub("_", ch)
    return ch if unicodedata.category(ch)[0] in "LMN" else "_"


def file_stem(student: str) -> str:
    """The part of a file name that stands for a student id (``s001``, ``a.b@uni.edu``,
    ``学生一``).

    Characters other than letters, marks and digits (of any script) and ``._@+-`` become ``_``;
    a leading dot too (no hidden files). An id longer than :data:`LONGEST` bytes keeps its
    first characters and a hash of the whole id: ``sxxxx…-3f2a9c1d0b4e``.
    """
    if student.isascii():
        stem = _FILE_SAFE.sub("_", student)
    else:
        stem = "".join(map(_safe, unicodedata.normalize("NFC", student)))
    stem = "_" + stem[1:] if stem.startswith(".") else stem
    if len(stem.encode("utf-8", "surrogatepass")) > LONGEST:
        digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        kept = stem.encode("utf-8", "surrogatepass")[: LONGEST - 13]
        stem = f"{kept.decode('utf-8', 'ignore')}-{digest}"
    return stem


def claim_name(name: str, used: set[str]) -> str:
    """``name``, or ``name-2.md``, ``name-3.md`` … when taken; the result is marked as used."""
    stem, suffix = (name[:-3], ".md") if name.endswith(".md") else (name, "")
    k = 2
    while name in used:
        name, k = f"{stem}-{k}{suffix}", k + 1
    used.add(name)
    return name
