"""A loaded bank in; its compiled form, exact keys, per-student variants and mistakes out."""

# - :mod:`~quizgym.solver.functions`: the functions keys may call beyond a student's;
# - :mod:`~quizgym.solver.keys`: exact keys (sympy), their values and display, ``quizgym solve``;
# - :mod:`~quizgym.solver.exact`: ``quizgym solve`` of plain arithmetic and of one logarithm without
#   sympy or mpmath, provably as the exact path shows them;
# - :mod:`~quizgym.solver.variants`: deterministic per-student draws, scalar and for a class;
# - :mod:`~quizgym.solver.mistakes`: wrong answers derived from a loss key;
# - :mod:`~quizgym.solver.compiled`: :class:`CompiledBank`, made once per command by
#   :func:`compile_bank`, which the answer engine, documents, exports and the grader all use.
#
# The free functions at the end (:func:`variant_of`, :func:`keys_of`, …) are conveniences for
# one-off use from a loaded bank; code that asks many questions of one bank compiles it once.

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from quizgym.lazy import names_from

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from quizgym.model import AnyQuestion, Bank, Numeric, Part
    from quizgym.solver.compiled import (
        Budget,
        CompiledBank,
        CompiledMistake,
        KeyRefusedError,
        Slot,
        compile_bank,
        pack_table,
    )
    from quizgym.solver.functions import BUILTINS, KEY_FUNCTIONS, FunctionTable
    from quizgym.solver.keys import Key, Solution, display, exact_key, solve, tidy, to_mpf
    from quizgym.solver.mistakes import CompiledRule, ResolvedMistake
    from quizgym.solver.variants import (
        Draw,
        ParamValues,
        Variant,
        param_values,
        show_number,
        student_key,
        student_keys,
    )

# Each name is imported from its module when first asked for: ``quizgym solve`` needs the keys
# module, not the bank format (pydantic) or the compiled bank.
_HOMES = {
    **dict.fromkeys(
        [
            "Budget",
            "CompiledBank",
            "CompiledMistake",
            "KeyRefusedError",
            "Slot",
            "compile_bank",
            "pack_table",
        ],
        "compiled",
    ),
    **dict.fromkeys(["BUILTINS", "KEY_FUNCTIONS", "FunctionTable"], "functions"),
    **dict.fromkeys(["Key", "Solution", "display", "exact_key", "solve", "tidy", "to_mpf"], "keys"),
    **dict.fromkeys(["CompiledRule", "ResolvedMistake"], "mistakes"),
    **dict.fromkeys(
        [
            "Draw",
            "ParamValues",
            "Variant",
            "param_values",
            "show_number",
            "student_key",
            "student_keys",
        ],
        "variants",
    ),
}


class _Package(types.ModuleType):
    """This package, whose ``compiled`` stays the function below when the module of the same
    name is imported (the import system sets a package's attribute to each submodule it loads)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "compiled" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__getattr__ = names_from(__name__, _HOMES)


__all__ = [
    "BUILTINS",
    "KEY_FUNCTIONS",
    "Budget",
    "CompiledBank",
    "CompiledMistake",
    "CompiledRule",
    "Draw",
    "FunctionTable",
    "Key",
    "KeyRefusedError",
    "ParamValues",
    "ResolvedMistake",
    "Slot",
    "Solution",
    "Variant",
    "bank_slots",
    "compile_bank",
    "compiled",
    "display",
    "exact_key",
    "keys_of",
    "pack_table",
    "param_values",
    "prompt_of",
    "show_number",
    "slots",
    "solve",
    "student_key",
    "student_keys",
    "tidy",
    "to_mpf",
    "variant_codes",
    "variant_of",
    "varies",
]


def compiled(bank: Bank | CompiledBank) -> CompiledBank:
    """The compiled form of a bank: ``bank`` itself when it is compiled already.

    A plain bank is compiled on first use and the result is kept with that bank object (never
    in a module-level table), so the conveniences below cost one compilation per bank.

    Raises:
        BankError: a key or mistake cannot be parsed.
    """
    from quizgym.solver.compiled import CompiledBank, compile_bank

    if isinstance(bank, CompiledBank):
        return bank
    kept = bank._compiled
    if isinstance(kept, CompiledBank):
        return kept
    book = compile_bank(bank)
    bank._compiled = book
    return book


def variant_of(
    bank: Bank | CompiledBank,
    question: AnyQuestion,
    *,
    student: str | None = None,
    seed: int | None = None,
) -> Variant:
    """The variant a student sees; the default variant when student and seed are both None."""
    return compiled(bank).variant(question, student=student, seed=seed)


def variant_codes(
    bank: Bank | CompiledBank,
    question: AnyQuestion,
    *,
    students: Sequence[str | None],
    seeds: Sequence[int | None],
    keys: npt.NDArray[np.uint64] | None = None,
) -> tuple[list[Variant], npt.NDArray[np.int64]]:
    """Many students' variants at once (see :meth:`Draw.variants`)."""
    return compiled(bank).variants(question, students=students, seeds=seeds, keys=keys)


def varies(bank: Bank | CompiledBank, question: AnyQuestion) -> bool:
    """Whether students can see different versions of a question."""
    return compiled(bank).varies(question)


def keys_of(bank: Bank | CompiledBank, question: Numeric, variant: Variant) -> tuple[Key, ...]:
    """The exact key of each slot of a numeric question for this variant.

    Raises:
        AnswerParseError: a key cannot be evaluated for these parameter values.
    """
    return compiled(bank).keys(question, variant)


def bank_slots(bank: Bank | CompiledBank) -> list[Slot]:
    """Every answer slot of a bank, in bank order."""
    return list(compiled(bank).slots)


def slots(question: Numeric) -> list[tuple[str | None, Numeric | Part]]:
    """The answer boxes of a numeric question as written in the bank: itself, or its parts."""
    if question.parts:
        return [(part.id, part) for part in question.parts]
    return [(None, question)]


def prompt_of(question: AnyQuestion, variant: Variant) -> str:
    """The question's prompt with this variant's numbers."""
    return variant.fill(question.prompt)
