"""Known wrong answers derived from a loss key, for values the author has not covered.

Derived mistakes cover the classic slips with cross-entropy losses — log base 10 or 2 instead of
ln, the sign dropped, the mean instead of the sum over masked tokens. The compiled bank uses them
only for values the author has not covered and that do not coincide with the key.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from quizgym.solver.keys import Key
from quizgym.tolerance import AUTO_ABS, AUTO_REL, within_rel

__all__ = ["ResolvedMistake", "close", "derived_mistakes"]


@dataclass(frozen=True, kw_only=True)
class ResolvedMistake:
    """A mistake's value for one variant, with what to tell the student."""

    value: float
    feedback: str
    tag: str | None
    credit: float
    derived: bool


def close(a: float, b: float) -> bool:
    """Within auto's band (0.1 % plus 1e-9): a derived slip that close is already covered."""
    return within_rel(value=a, key=b, rel=AUTO_REL, atol=AUTO_ABS)


def derived_mistakes(key: Key, key_text: str) -> list[ResolvedMistake]:
    """The classic slips for a loss key (one that involves a logarithm)."""
    import sympy  # a key with an exact form: sympy is imported already

    if key.exact is None or not key.exact.has(sympy.log):
        return []
    value = key.number
    out = [
        ResolvedMistake(
            value=value / math.log(10),
            feedback=(
                "That is the loss with log base 10; in machine learning, log is the natural "
                "log (ln)."
            ),
            tag="log-base",
            credit=0.0,
            derived=True,
        ),
        ResolvedMistake(
            value=value / math.log(2),
            feedback=(
                "That is the loss in bits (log base 2); the loss uses the natural log, in nats."
            ),
            tag="log-base",
            credit=0.0,
            derived=True,
        ),
        ResolvedMistake(
            value=-value,
            feedback=(
                "Check the sign: −log P is never negative, because a probability is at most 1."
            ),
            tag="sign",
            credit=0.0,
            derived=True,
        ),
    ]
    call = re.fullmatch(r"mlm_loss\((.*)\)", key_text.replace(" ", ""))
    if call and "(" not in call.group(1):
        k = len(call.group(1).split(","))
        if k >= 2:
            out.append(
                ResolvedMistake(
                    value=value / k,
                    feedback=f"That is the mean over the {k} masked tokens; L_MLM sums over them.",
                    tag="mean-vs-sum",
                    credit=0.0,
                    derived=True,
                )
            )
    return out
