"""Heavy libraries imported on first use, so that a command pays only for what it touches.

``np = lazy("numpy")`` gives a stand-in that imports numpy the first time one of its attributes
is read (``np.array``), then forwards to it. sympy (0.3 s to import), numpy (0.1 s) and mpmath
are needed by exact solving and by grading a class, not by ``quizgym --help``, a warm ``check``
or the first prompt of the drill. Modules that use one keep the real import under
``TYPE_CHECKING`` for the type checker::

    if TYPE_CHECKING:
        import numpy as np
    else:
        np = lazy("numpy")

Nothing is put in ``sys.modules`` before the real import, so ``"sympy" in sys.modules`` stays
the honest test of whether sympy was imported.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["lazy", "names_from"]


class _Lazy:
    """A module imported when one of its attributes is first read."""

    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<lazy module {self._name} ({state})>"


def lazy(name: str) -> Any:
    """A stand-in for module ``name`` that imports it on first attribute access."""
    return _Lazy(name)


def names_from(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's module ``__getattr__`` that imports each of its names from the submodule
    ``homes`` gives (``{"Doc": "tree"}``) when it is first asked for, then keeps it."""

    def attribute(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return attribute
