"""Fresh processes that start as an installed quizgym starts: with its bytecode compiled.

``pip install`` compiles a package's modules to bytecode, and an editable checkout writes
``__pycache__`` on its first run; a shell with ``PYTHONDONTWRITEBYTECODE`` set (common in
containers and CI images) never does, so every process would compile quizgym's own modules
from source (about 40 ms for a command that imports the answer engine), a cost no user pays.
The start-up and end-to-end benchmarks compile quizgym once and run their processes without
that variable, so both sides of each ratio start as they would on a user's machine.
"""

from __future__ import annotations

import compileall
import os
from pathlib import Path

import quizgym

__all__ = ["installed_env"]


def installed_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for fresh processes, after compiling quizgym's modules to bytecode.

    Args:
        base: the environment to start from (default: this process's).
    """
    package = Path(quizgym.__file__).parent
    compileall.compile_dir(str(package), quiet=1)
    env = dict(os.environ if base is None else base)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env
