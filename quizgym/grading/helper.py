"""Helper processes: a second Python that runs quizgym's own code while this one works.

Hashing a class's draw keys (:mod:`quizgym.grading.keys`) and counting a file's records
(:mod:`quizgym.grading.early`) are Python, which no thread can share with the grader. On a
machine with a core to spare, each may run in a helper process: the same interpreter, with the
same import path, isolated from the environment (``-I``) and from site packages' start-up hooks
(``-S``). A helper is never needed: whatever starts one does the work itself when it cannot
start, fails or answers anything it cannot check.
"""

from __future__ import annotations

import json
import os
import sys

__all__ = ["cores", "helper_command", "may_help"]


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def may_help() -> bool:
    """Whether a helper process is worth starting here: this process may run on more than one
    core, and its interpreter can start another (an application's executable is no Python)."""
    return bool(sys.executable) and not getattr(sys, "frozen", False) and cores() > 1


def helper_command(script: str, *arguments: str) -> list[str]:
    """The command that runs ``script`` in a helper, ``sys.argv[1]`` its import path (this
    process's) and the ``arguments`` after it."""
    return [sys.executable, "-I", "-S", "-c", script, json.dumps(sys.path), *arguments]
