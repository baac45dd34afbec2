"""The formats whose LMS scoring quizgym emulates (a module of its own, light: every export
asks it, and only some need the check itself)."""

from __future__ import annotations

__all__ = ["TARGETS"]

TARGETS: dict[str, str] = {
    "qti12": "Canvas",
    "moodle": "Moodle",
    "gift": "Moodle (GIFT)",
    "qti21": "QTI 2.1",
}
"""The formats :func:`~quizgym.export.scoring.check_export` emulates, with the LMS each is
scored by (here, so that an export that needs no check need not import the check)."""
