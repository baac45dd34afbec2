"""A heavy library's name in, the library out, imported the first time it is read (PEP 562)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mpmath as mpmath
    import numpy as numpy
    import sympy as sympy

__all__ = ["LIBRARIES", "names_from"]

LIBRARIES = frozenset({"mpmath", "numpy", "sympy"})
"""The libraries read as ``lazy.sympy``, ``lazy.mpmath`` and ``lazy.numpy``.

sympy, numpy and mpmath are needed by exact solving and by grading a class, not by ``quizgym
--help``, ``solve`` of plain arithmetic, a warm ``check`` or the first prompt of the drill
(``tests/test_imports.py`` holds each command to what it imports). A module that uses one all
through its code writes ``from quizgym import lazy`` and ``lazy.sympy.Rational(1, 2)``, and keeps
``import sympy`` under ``TYPE_CHECKING`` for its annotations. Nothing is put in ``sys.modules``
before the real import, so ``"sympy" in sys.modules`` stays the honest test of whether sympy
was imported."""


def __getattr__(name: str) -> ModuleType:
    if name not in LIBRARIES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(name)
    globals()[name] = module  # later reads are a plain attribute, without this function
    return module


def names_from(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's module ``__getattr__`` that imports each of its names from the submodule
    ``homes`` gives (``{"Doc": "tree"}``) when it is first asked for, then keeps it.

    Each package face writes ``__getattr__ = names_from(__name__, _HOMES)`` and lists the same
    names under ``TYPE_CHECKING`` for the type checker. A name whose home is a module outside the
    package gives it in full (``{"grade_response": "quizgym.answers"}``).
    """

    def attribute(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        where = home if home.startswith("quizgym.") else f"{package}.{home}"
        value = getattr(importlib.import_module(where), name)
        setattr(sys.modules[package], name, value)
        return value

    return attribute
