"""A pack's or a bank's mistake rules and a key in, the wrong answers they derive from it out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import mpmath

from quizgym import lazy
from quizgym.errors import AnswerParseError
from quizgym.expr import Parsed, evaluate, tree_call
from quizgym.solver.functions import FunctionTable
from quizgym.solver.keys import Key
from quizgym.tolerance import AUTO_ABS, AUTO_REL, within_rel

if TYPE_CHECKING:
    from quizgym.model import MistakeRule

__all__ = ["CompiledRule", "ResolvedMistake", "close", "compile_rule"]


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


# The sympy classes (by name: sympy is imported when a key is solved) of the exact forms that
# "key_uses" names stand for.
_USES: dict[str, str] = {
    "ln": "log",
    "log": "log",
    "exp": "exp",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "asin": "asin",
    "acos": "acos",
    "atan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "erf": "erf",
    "erfc": "erfc",
    "gamma": "gamma",
    "factorial": "factorial",
    "comb": "binomial",
}


@dataclass(frozen=True, kw_only=True)
class CompiledRule:
    """A mistake rule, parsed."""

    rule: MistakeRule
    answer: Parsed
    uses: tuple[str, ...]
    """The sympy classes, by name, that the key's exact form must have (``key_uses``)."""

    def resolve(self, key: Key, written: Parsed) -> ResolvedMistake | None:
        """The rule's wrong value for one key (``written`` is the key as the bank has it), or
        None when the rule does not fit the key or its value is undefined there."""
        rule = self.rule
        if self.uses:
            if key.exact is None:  # a key read back from storage: the caller solves it again
                return None
            # the key's exact form is a sympy expression: sympy is imported already
            if not all(key.exact.has(getattr(lazy.sympy, u)) for u in self.uses):
                return None
        n_args = 0
        if rule.key_calls is not None:
            call = tree_call(written)
            if call is None or call[0] != rule.key_calls or call[1] < rule.min_args:
                return None
            n_args = call[1]
        try:
            value = evaluate(self.answer, {"key": key.value, "n_args": mpmath.mpf(n_args)})
        except AnswerParseError:
            return None
        return ResolvedMistake(
            value=float(value),
            feedback=rule.feedback.replace("{n_args}", str(n_args)),
            tag=rule.tag,
            credit=rule.credit,
            derived=True,
        )


def compile_rule(rule: MistakeRule, table: FunctionTable) -> CompiledRule:
    """Parse a mistake rule against a bank's vocabulary.

    A rule (``mistake_rules:``) derives a wrong value from every key it fits (``key_uses: [ln]``:
    its exact form has a logarithm; ``key_calls: mlm_loss``: it is one call of that function), such
    as the machine-learning pack's log base 10 or 2, the dropped sign and the mean instead of the
    sum. The compiled bank uses them only for values the author has not covered and that do not
    coincide with the key. A bank without rules (and without a pack that has them) gets none.

    Raises:
        AnswerParseError: its answer cannot be read, or it names a function it cannot know.
    """
    unknown = [name for name in rule.key_uses if name not in _USES]
    if unknown:
        known = ", ".join(sorted(_USES))
        raise AnswerParseError(f"key_uses: {unknown[0]!r} is not one of {known}")
    if rule.key_calls is not None and rule.key_calls not in table.functions:
        raise AnswerParseError(f"key_calls: {rule.key_calls!r} is no function of this bank")
    answer = table.parse(rule.answer, ["key", "n_args"])
    return CompiledRule(rule=rule, answer=answer, uses=tuple(_USES[n] for n in rule.key_uses))
