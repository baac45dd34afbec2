"""Known wrong answers: the bank's ``mistakes`` first, then ones derived from a loss key.

Derived mistakes cover the classic slips with cross-entropy losses — log base 10 or 2 instead of
ln, the sign dropped, the mean instead of the sum over masked tokens — and are used only for values
the author has not covered and that do not coincide with the key.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import sympy

from quizgym.model import Bank, Numeric
from quizgym.solver import (
    Key,
    Variant,
    bank_memo,
    compile_numeric,
    keys_of,
    mistake_value,
)
from quizgym.tolerance import AUTO_ABS, AUTO_REL, within_rel


@dataclass(frozen=True)
class ResolvedMistake:
    """A mistake's value for one variant, with what to tell the student."""

    value: float
    feedback: str
    tag: str | None
    credit: float
    derived: bool


def _close(a: float, b: float) -> bool:
    """Within auto's band (0.1 % plus 1e-9): a derived slip that close is already covered."""
    return within_rel(value=a, key=b, rel=AUTO_REL, atol=AUTO_ABS)


def derived_mistakes(key: Key, key_text: str) -> list[ResolvedMistake]:
    """The classic slips for a loss key (one that involves a logarithm)."""
    if not key.exact.has(sympy.log):
        return []
    value = key.number
    out = [
        ResolvedMistake(
            value / math.log(10),
            "That is the loss with log base 10; in machine learning, log is the natural log (ln).",
            "log-base",
            0.0,
            True,
        ),
        ResolvedMistake(
            value / math.log(2),
            "That is the loss in bits (log base 2); the loss uses the natural log, in nats.",
            "log-base",
            0.0,
            True,
        ),
        ResolvedMistake(
            -value,
            "Check the sign: −log P is never negative, because a probability is at most 1.",
            "sign",
            0.0,
            True,
        ),
    ]
    call = re.fullmatch(r"mlm_loss\((.*)\)", key_text.replace(" ", ""))
    if call and "(" not in call.group(1):
        k = len(call.group(1).split(","))
        if k >= 2:
            out.append(
                ResolvedMistake(
                    value / k,
                    f"That is the mean over the {k} masked tokens; L_MLM sums over them.",
                    "mean-vs-sum",
                    0.0,
                    True,
                )
            )
    return out


def resolve_mistakes(
    bank: Bank, question: Numeric, variant: Variant, index: int
) -> list[ResolvedMistake]:
    """The mistakes of one answer slot for one variant, in matching order (cached)."""
    memo = bank_memo(bank)
    cache_key = ("mistakes", question.id, tuple(sorted(variant.params.items())), index)
    if cache_key in memo:
        cached: list[ResolvedMistake] = memo[cache_key]
        return cached
    compiled = compile_numeric(bank, question)[index]
    key = keys_of(bank, question, variant)[index]
    resolved: list[ResolvedMistake] = []
    for mistake in compiled.mistakes:
        value = mistake_value(bank, question, variant, index, mistake)
        if value is not None:
            resolved.append(
                ResolvedMistake(value, mistake.feedback, mistake.tag, mistake.credit, False)
            )
    for derived in derived_mistakes(key, compiled.key.canonical):
        if _close(derived.value, key.number):
            continue
        if any(_close(derived.value, m.value) for m in resolved):
            continue
        resolved.append(derived)
    memo[cache_key] = resolved
    return resolved
