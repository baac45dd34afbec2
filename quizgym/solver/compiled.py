"""A loaded :class:`~quizgym.model.Bank` in, a :class:`CompiledBank` out: one object per command
holding everything the commands derive from a bank."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Collection, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeVar

import mpmath

from quizgym import lazy
from quizgym.errors import AnswerParseError, BankError, Finding, QuizgymError
from quizgym.expr import (
    Condition,
    ExactBudgetError,
    ExactLimitError,
    Parsed,
    calls,
    cost,
    evaluate,
    exact_budget,
    to_sympy,
    work_seconds,
)
from quizgym.model import (
    FUNCTION_HEAD,
    AnyQuestion,
    Bank,
    DecimalDisplay,
    Display,
    Numeric,
    Pack,
    Part,
    RequireUnits,
    Tolerance,
    UnitPenalty,
    points_of,
    slot_id,
)
from quizgym.resources import bundled_packs
from quizgym.solver.functions import MAX_COST, STEP_FUNCTIONS, FunctionTable, function_table
from quizgym.solver.keys import Key, exact_key, tidy, to_mpf
from quizgym.solver.mistakes import CompiledRule, ResolvedMistake, close, compile_rule
from quizgym.solver.variants import Draw, Signature, Variant, number
from quizgym.types import blanks_of, choices_of, numeric_of, pairing_of, type_of

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import sympy

__all__ = [
    "Budget",
    "CompiledBank",
    "CompiledMistake",
    "KeyRefusedError",
    "Slot",
    "compile_bank",
    "pack_table",
]

Loc = tuple[str | int, ...]
T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Budget:
    """How long exact solving may take: each key (or rounding mistake) of one variant, and all
    of a bank's together.

    The size guards of :mod:`quizgym.expr` keep every step of exact work short; these
    budgets of CPU time (:func:`~quizgym.expr.work_seconds`: a busy machine changes no key)
    bound the sum, checked between steps (see
    :func:`~quizgym.expr.exact_budget`). Ordinary keys take milliseconds, so the bank's budget
    is reached only by a bank whose keys are slow, or by tens of thousands of variants of
    ranged parameters (a few milliseconds each).
    """

    key_seconds: float = 2.0
    bank_seconds: float = 300.0


class KeyRefusedError(AnswerParseError, BankError):
    """A key or mistake refused by a size or time budget, located at its line in the bank.

    An :class:`~quizgym.errors.AnswerParseError` (``message`` is the reason) for the callers
    that handle a key that cannot be evaluated, and a :class:`~quizgym.errors.BankError` (one
    finding, ``path:line:col: slot: …``) for the commands, which print it as such.
    """

    def __init__(self, finding: Finding, reason: str) -> None:
        BankError.__init__(self, [finding])
        self.message = reason
        self.offset = None


@dataclass(frozen=True, kw_only=True)
class CompiledMistake:
    """A bank mistake, parsed."""

    parsed: Parsed
    feedback: str
    tag: str | None
    credit: float
    loc: Loc = ()
    """Where the mistake's answer is written in the bank."""


@dataclass(frozen=True, kw_only=True)
class Slot:
    """One answer slot: a question, or one part of a multi-part numeric question."""

    id: str
    """``q`` for a question, ``q.part`` for a part: the one spelling of a slot's id."""
    question: AnyQuestion
    part: str | None = None
    """The part's id, for a slot of a multi-part question."""
    part_model: Part | None = None
    """The part as written in the bank."""
    index: int = 0
    """Position among the question's slots (0 for a question without parts)."""
    points: float
    units: str | None = None
    require_units: float = 0.0
    """Share of the points a right number without a unit loses (0: a unit is not required)."""
    display: int | None = None
    """Significant figures of the key shown as a decimal (``display: decimal``); None: exact."""
    tolerance: Tolerance | None = None
    """Numeric slots: the comparison policy (the bank's default when the slot sets none)."""
    key: Parsed | None = None
    """Numeric slots: the key, parsed."""
    mistakes: tuple[CompiledMistake, ...] = ()
    earlier: tuple[str, ...] = ()
    """Earlier part ids this key names (error carried forward applies to them)."""
    loc: Loc = ()
    """Where the slot is written in the bank (``("questions", 3, "parts", 1)``)."""

    @property
    def kind(self) -> str:
        """The question type (``true_false``, ``multiple_choice``, …)."""
        return str(self.question.type)

    @property
    def is_numeric(self) -> bool:
        """Whether the slot is answered with a number (it has a key)."""
        return self.key is not None

    @property
    def prompt(self) -> str:
        """The part's own prompt (a matching item's text, a cloze's text around its blank),
        or the question's."""
        if self.part_model is not None:
            return self.part_model.prompt
        blanks = blanks_of(self.question) if self.part is not None else None
        if blanks is not None and self.part is not None:
            return blanks.context(self.part)
        pairing = pairing_of(self.question) if self.part is not None else None
        return pairing.item(self.part).item if pairing and self.part else self.question.prompt

    @property
    def hint(self) -> str | None:
        """The part's hint, else the question's."""
        own = self.part_model.hint if self.part_model is not None else None
        return own or self.question.hint

    @property
    def explanation(self) -> str | None:
        """The part's explanation, or the question's for a slot that is the whole question."""
        part = self.part_model
        return part.explanation if part is not None else self.question.explanation

    @property
    def options(self) -> list[str]:
        """Labels of the options a student picks from (choice and true/false slots)."""
        options = choices_of(self.question, self.part)
        return options.options if options is not None else []


class CompiledBank:
    """A bank with its slots, draws, and per-variant keys and mistakes (see the module docs).

    Make one with :func:`compile_bank` (or :func:`quizgym.solver.cache.open_bank`, which reads
    what an earlier command worked out from disk); it is immutable apart from its caches.
    """

    STORED = ("_keys", "_mistakes", "_memo")
    """The tables :mod:`quizgym.solver.cache` keeps on disk: everything worked out on demand.
    Every other attribute is made by the constructor from the bank (a test holds the list)."""

    def __init__(
        self,
        bank: Bank,
        slots: Sequence[Slot],
        findings: Sequence[Finding] = (),
        *,
        budget: Budget | None = None,
        table: FunctionTable | None = None,
        rules: Sequence[CompiledRule] = (),
        packs: Sequence[Pack] = (),
        draws: Mapping[str, Draw] | None = None,
    ) -> None:
        self.bank = bank
        self.table = table or FunctionTable.plain()
        """The bank's functions and constants (its packs' and its own)."""
        self.rules: tuple[CompiledRule, ...] = tuple(rules)
        """Mistake rules (its packs' and its own), in matching order."""
        self.packs: tuple[Pack, ...] = tuple(packs)
        """The packs the bank uses, in its order."""
        self.budget = budget or Budget()
        """How long exact solving may take (see :class:`Budget`)."""
        self.solving_seconds = 0.0
        """CPU time spent solving keys and rounding mistakes exactly so far."""
        self.out_of_budget = False
        """Whether a key or mistake was refused because a time budget ran out: what this bank
        worked out then depends on how much work was allowed, so none of it is kept on disk
        (:func:`quizgym.solver.cache.save`)."""
        self.slots: tuple[Slot, ...] = tuple(slots)
        """Every slot, in bank order."""
        self.findings: tuple[Finding, ...] = tuple(findings)
        """Keys or mistakes that could not be parsed (only with ``compile_bank(partial=True)``)."""
        self._by_id = {slot.id: slot for slot in self.slots}
        self._by_question: dict[str, list[Slot]] = {}
        for slot in self.slots:
            self._by_question.setdefault(slot.question.id, []).append(slot)
        self._draws = {
            q.id: (draws or {}).get(q.id) or Draw.of(bank.bank, q) for q in bank.questions
        }
        self._keys: dict[tuple[str, Signature], tuple[Key, ...]] = {}
        self._mistakes: dict[tuple[str, Signature], tuple[ResolvedMistake, ...]] = {}
        self._memo: dict[tuple[str, Hashable], Any] = {}
        self.cache_key: str | None = None
        """The key of this bank in the on-disk cache (set by ``open_bank``)."""
        self.cached = False
        """Whether the on-disk cache holds this bank (it was read from it, or saved to it)."""
        self._saved_sizes: tuple[int, ...] = (0, 0, 0)

    def __repr__(self) -> str:
        return f"<CompiledBank {self.bank.bank}: {len(self.slots)} slots>"

    @property
    def instructions(self) -> str:
        """What worksheets say under their heading: the packs' notes, then the bank's own."""
        notes = [pack.instructions for pack in self.packs if pack.instructions]
        if self.bank.instructions:
            notes.append(self.bank.instructions)
        return " ".join(notes)

    # --- slots ----------------------------------------------------------------------------------

    def slot(self, slot_id: str) -> Slot:
        """The slot with this id (``q`` or ``q.part``).

        Raises:
            KeyError: no such slot.
        """
        return self._by_id[slot_id]

    def slots_of(self, question: AnyQuestion | str) -> tuple[Slot, ...]:
        """The slots of a question, in order: the question itself, or each of its parts."""
        qid = question if isinstance(question, str) else question.id
        return tuple(self._by_question.get(qid, ()))

    def slot_ids(self) -> list[str]:
        """Every slot's id, in bank order."""
        return [slot.id for slot in self.slots]

    def numbered(self, question: AnyQuestion | str) -> tuple[Slot, ...]:
        """The numeric slots of a question, in order (every slot of a numeric question; a
        cloze's number blanks): what :meth:`keys` solves, ``slot.index`` counting among them."""
        return tuple(slot for slot in self.slots_of(question) if slot.key is not None)

    # --- variants -------------------------------------------------------------------------------

    def draw(self, question: AnyQuestion | str) -> Draw:
        """How a question's variants are drawn."""
        return self._draws[question if isinstance(question, str) else question.id]

    def variant(
        self, question: AnyQuestion | str, *, student: str | None = None, seed: int | None = None
    ) -> Variant:
        """The variant a student sees; the default variant when student and seed are both None."""
        return self.draw(question).variant(student=student, seed=seed)

    def variants(
        self,
        question: AnyQuestion | str,
        *,
        students: Sequence[str | None],
        seeds: Sequence[int | None],
        keys: npt.NDArray[np.uint64] | None = None,
    ) -> tuple[list[Variant], npt.NDArray[np.int64]]:
        """A class's variants at once: see :meth:`~quizgym.solver.variants.Draw.variants`."""
        return self.draw(question).variants(students=students, seeds=seeds, keys=keys)

    def complete(self, variant: Variant) -> Variant:
        """The variant with its question's derived values: a variant rebuilt from a record (an
        issue manifest's parameters) has none until they are computed from its parameters."""
        draw = self._draws.get(variant.question)
        if draw is None or not draw.derived or variant.derived:
            return variant
        return dataclasses.replace(variant, derived=draw.complete(variant.params))

    def varies(self, question: AnyQuestion | str) -> bool:
        """Whether students can see different versions of a question."""
        return self.draw(question).varies

    # --- what is worked out on demand, and kept -------------------------------------------------

    def memo(self, namespace: str, key: Hashable, compute: Callable[[], T]) -> T:
        """A value derived from this bank, computed once and kept with the compiled bank (and so
        in the on-disk cache): ``compute()`` must depend only on the bank, ``namespace`` and
        ``key``, and return what :func:`quizgym.solver.cache.encode` stores."""
        found = self._memo.get((namespace, key), _MISSING)
        if found is _MISSING:
            found = self._memo[(namespace, key)] = compute()
        return found  # type: ignore[no-any-return]

    def tables(self) -> dict[str, dict[Any, Any]]:
        """The tables to store (see :attr:`STORED`), with every stored key's mistakes resolved
        while its exact form is at hand (a key read back has none)."""
        for qid, signature in list(self._keys):
            keys = self._keys[(qid, signature)]
            if any(key.exact is None for key in keys):
                continue
            variant = Variant(question=qid, params=dict(signature))
            for slot in self.numbered(qid):
                try:
                    self.mistakes(slot, variant)
                except AnswerParseError:  # refused or undefined: worked out (and said) on use
                    continue
        return {name: dict(getattr(self, name)) for name in self.STORED}

    def restore(self, tables: Mapping[str, Mapping[Any, Any] | None]) -> None:
        """Fill the tables from the cache (what :meth:`tables` gave, decoded)."""
        for name in self.STORED:
            table = tables.get(name)
            setattr(self, name, dict(table) if table else {})
        self._saved_sizes = self._sizes()

    def grew(self) -> bool:
        """Whether something was worked out since the tables were restored or last saved."""
        return self._sizes() != self._saved_sizes

    def saved(self) -> None:
        """Record that the tables as they are now are on disk."""
        self._saved_sizes = self._sizes()

    def _sizes(self) -> tuple[int, ...]:
        return tuple(len(getattr(self, name)) for name in self.STORED)

    # --- keys and mistakes ----------------------------------------------------------------------

    def keys(self, question: AnyQuestion | str, variant: Variant) -> tuple[Key, ...]:
        """The exact key of each slot of a numeric question for this variant (cached).

        Raises:
            AnswerParseError: a key cannot be evaluated for these parameter values.
            KeyRefusedError: working a key out exactly would exceed a size or time budget (an
                AnswerParseError too, located at the key's line).
        """
        qid = question if isinstance(question, str) else question.id
        cache = (qid, variant.signature)
        found = self._keys.get(cache)
        if found is None:
            variant = self.complete(variant)
            env = exact_params(variant)
            keys = []
            for slot in self.numbered(qid):
                assert slot.key is not None
                with self._solving(slot, variant, (*slot.loc, "answer"), "the key"):
                    key = exact_key(slot.key, env, decimal=slot.display)
                keys.append(key)
                if slot.part is not None:
                    env[slot.part] = key.exact
            found = self._keys[cache] = tuple(keys)
        return found

    @contextmanager
    def _solving(self, slot: Slot, variant: Variant, loc: Loc, what: str) -> Iterator[None]:
        """Solve exactly within the budgets; a refusal becomes a located KeyRefusedError."""
        remaining = self.budget.bank_seconds - self.solving_seconds
        start = work_seconds()
        try:
            if remaining <= 0:
                raise ExactBudgetError(
                    f"this bank's exact keys took longer than their budget "
                    f"({self.budget.bank_seconds:g} s) before this one"
                )
            if remaining < self.budget.key_seconds:
                budget = exact_budget(
                    remaining, what="this bank's keys", limit=self.budget.bank_seconds
                )
            else:
                budget = exact_budget(self.budget.key_seconds, what=what)
            with budget:
                yield
        except ExactLimitError as exc:
            if isinstance(exc, ExactBudgetError):
                self.out_of_budget = True
            path, line, col = self.bank.locate(loc)
            where = "" if not variant.params else f" for {variant.label}"
            message = f"{slot.id}: {what}{where} is refused: {exc.message}"
            raise KeyRefusedError(Finding(path, line, col, message), exc.message) from None
        finally:
            self.solving_seconds += work_seconds() - start

    def key(self, slot: Slot, variant: Variant) -> Key:
        """The exact key of one numeric slot for this variant."""
        return self.keys(slot.question, variant)[slot.index]

    def mistakes(self, slot: Slot, variant: Variant) -> tuple[ResolvedMistake, ...]:
        """A slot's mistakes for one variant, in matching order: the bank's, then derived ones
        for values the author did not cover (cached)."""
        cache = (slot.id, variant.signature)
        found = self._mistakes.get(cache)
        if found is None:
            found = self._mistakes[cache] = self._resolve(slot, variant)
        return found

    def _resolve(self, slot: Slot, variant: Variant) -> tuple[ResolvedMistake, ...]:
        assert slot.key is not None, f"{slot.id} is not a numeric slot"
        variant = self.complete(variant)
        key = self._exact_keys(slot.question, variant)[slot.index]  # derived mistakes need it
        resolved: list[ResolvedMistake] = []
        for mistake in slot.mistakes:
            value = self._mistake_value(slot, variant, mistake)
            if value is not None:
                resolved.append(
                    ResolvedMistake(
                        value=value,
                        feedback=variant.fill(mistake.feedback),
                        tag=mistake.tag,
                        credit=mistake.credit,
                        derived=False,
                    )
                )
        for rule in self.rules:
            derived = rule.resolve(key, slot.key)
            if derived is None or close(derived.value, key.number):
                continue
            if any(close(derived.value, m.value) for m in resolved):
                continue
            resolved.append(derived)
        return tuple(resolved)

    def _mistake_value(
        self, slot: Slot, variant: Variant, mistake: CompiledMistake
    ) -> float | None:
        """The value of a mistake for one variant, or None when it is undefined there.

        A mistake is matched within the slot's tolerance, so its 30-digit value from the guarded
        mpmath walker is enough, and much cheaper than an exact form. A mistake that rounds
        (round, floor, ceil) is solved exactly with sympy, like a key, since an exact half decides
        where it lands.
        """
        try:
            if calls(mistake.parsed) & STEP_FUNCTIONS:
                env = self.env(slot, variant)
                with self._solving(slot, variant, mistake.loc, "a rounding mistake"):
                    return float(to_mpf(tidy(to_sympy(mistake.parsed, env))))
            return float(evaluate(mistake.parsed, self.values(slot, variant)))
        except KeyRefusedError:
            raise  # refused by a budget: never silently dropped (it may carry credit)
        except (AnswerParseError, TypeError, ValueError):
            return None

    def _exact_keys(self, question: AnyQuestion, variant: Variant) -> tuple[Key, ...]:
        """:meth:`keys` with their exact forms: keys read back from the cache have none, and
        are solved again."""
        keys = self.keys(question, variant)
        if any(key.exact is None for key in keys):
            del self._keys[(question.id, variant.signature)]
            keys = self.keys(question, variant)
        return keys

    def env(self, slot: Slot, variant: Variant) -> dict[str, sympy.Expr]:
        """Names visible to a slot's key: the parameters, derived values and the earlier parts'
        exact keys."""
        env = exact_params(self.complete(variant))
        if slot.part is not None:
            keys = self._exact_keys(slot.question, variant)
            for earlier, key in zip(self.numbered(slot.question)[: slot.index], keys, strict=False):
                assert earlier.part is not None and key.exact is not None
                env[earlier.part] = key.exact
        return env

    def values(self, slot: Slot, variant: Variant) -> dict[str, mpmath.mpf]:
        """:meth:`env` as 30-digit numbers (mpmath), for :func:`~quizgym.expr.evaluate`."""
        env = {name: number(v) for name, v in self.complete(variant).values.items()}
        if slot.part is not None:
            keys = self.keys(slot.question, variant)
            for earlier, key in zip(self.numbered(slot.question)[: slot.index], keys, strict=False):
                assert earlier.part is not None
                env[earlier.part] = key.value
        return env

    def carried_forward(
        self, slot: Slot, variant: Variant, earlier_values: Mapping[str, mpmath.mpf]
    ) -> float | None:
        """A part's key recomputed from the student's own earlier answers (error carried forward).

        None when the slot names no earlier part, an earlier answer is missing, or the key cannot
        be evaluated with the student's numbers.
        """
        if slot.key is None or not slot.earlier:
            return None
        env = {name: number(v) for name, v in self.complete(variant).values.items()}
        for name in slot.earlier:
            if name not in earlier_values:
                return None
            env[name] = earlier_values[name]
        try:
            return float(evaluate(slot.key, env))
        except AnswerParseError:
            return None


_MISSING = object()


def exact_params(variant: Variant) -> dict[str, sympy.Expr]:
    """A variant's parameter and derived values as exact sympy numbers, for solving its keys."""
    return {
        name: lazy.sympy.Rational(value.numerator, value.denominator)
        if isinstance(value, Fraction)
        else value
        for name, value in variant.values.items()
    }


def compile_bank(
    bank: Bank,
    *,
    partial: bool = False,
    budget: Budget | None = None,
    packs: Sequence[Pack] | None = None,
) -> CompiledBank:
    """Compile a loaded bank: its packs, functions and constants, and its slots, with every
    key, mistake, derived value and condition parsed.

    :func:`compile_bank` turns a loaded :class:`~quizgym.model.Bank` into a :class:`CompiledBank`:

    - its **slots** — one :class:`Slot` per answer box: a question, or one part of a multi-part
      numeric question, with its points, units, tolerance, parsed key and mistakes and the earlier
      parts its key names;
    - its **draws** — how each question's variants are drawn
      (:class:`~quizgym.solver.variants.Draw`);
    - per variant, on demand and cached in the object: the exact **keys** of every slot and the
      **mistakes** resolved to numbers (the bank's own, then derived ones).

    Every key and mistake is parsed when the bank is compiled, so a bank with an unreadable key is
    refused at once, with every finding. The caches live exactly as long as the object; a caller
    that grades, renders or exports makes one and passes it down (the Dask engine makes one per
    worker).

    Args:
        bank: the bank.
        partial: keep going past keys that cannot be parsed: their questions get no slots and
            the problems are in :attr:`CompiledBank.findings` (``quizgym check`` uses this to
            report every problem at once).
        budget: how long exact solving may take (the default :class:`Budget` when None).
        packs: the packs the bank names, loaded already (the on-disk cache holds them as
            validated); None: load them from their files.

    Returns:
        The compiled bank.

    Raises:
        BankError: a key or mistake cannot be parsed (every one of them, each with its line);
            not raised with ``partial``.
    """
    slots: list[Slot] = []
    findings: list[Finding] = []
    used, table, rules = _vocabulary(bank, findings, packs)
    measured = _measured(bank, used, table)
    draws: dict[str, Draw] = {}
    for index, question in enumerate(bank.questions):
        numeric = numeric_of(question)
        if numeric is not None:
            found, draw = _numeric_slots(bank, table, numeric.question, index, findings, measured)
            slots.extend(found)
            if draw is not None:
                draws[question.id] = draw
        else:
            numbered: dict[str | None, Slot] = {}
            blanks = blanks_of(question)
            numbers = blanks.numbers if blanks is not None else None
            if numbers is not None:  # a cloze's number blanks: numeric parts, at their blanks
                at = [("blanks", part.id) for part in numbers.parts]
                found, _ = _numeric_slots(bank, table, numbers, index, findings, measured, at)
                if not found:
                    continue
                numbered = {s.part: dataclasses.replace(s, question=question) for s in found}
            for k, (part, points, loc) in enumerate(
                type_of(question).slots(question, bank.defaults)
            ):
                slots.append(
                    numbered.get(part)
                    or Slot(
                        id=slot_id(question.id, part),
                        question=question,
                        part=part,
                        index=k,
                        points=points,
                        loc=("questions", index, *loc) if loc else (),
                    )
                )
    if findings and not partial:
        raise BankError(findings)
    return CompiledBank(
        bank, slots, findings, budget=budget, table=table, rules=rules, packs=used, draws=draws
    )


def _vocabulary(
    bank: Bank, findings: list[Finding], loaded: Sequence[Pack] | None = None
) -> tuple[list[Pack], FunctionTable, list[CompiledRule]]:
    """The bank's packs (``loaded``, or read from their files), its function table (packs' then
    its own) and its mistake rules."""
    packs: list[Pack] = list(loaded) if loaded is not None else []
    if loaded is None and bank.packs:
        from quizgym.loader import load_pack  # YAML: not for packs the cache holds

        for k, name in enumerate(bank.packs):
            try:
                packs.append(load_pack(name, bank_path=bank.path))
            except BankError as exc:
                findings.extend(exc.findings)
            except QuizgymError as exc:
                path, line, col = bank.locate(("packs", k))
                findings.append(Finding(path, line, col, f"packs[{k}]: {exc}"))

    def problem(field: str, key: str | int, message: str) -> None:
        owner = next((o for o in packs if _has(o, field, key)), None)
        loc: tuple[str | int, ...] = (field, key)
        if field == "builtins" and owner is not None:
            loc = (field, owner.builtins.index(str(key)))
        where = owner.locate(loc) if owner is not None else bank.locate(loc)
        findings.append(Finding(*where, f"{field}: {key}: {message}"))

    owners: list[Pack | Bank] = [*packs, bank]
    table = function_table(
        builtins=[b for pack in packs for b in pack.builtins],
        constants=[(n, v) for o in owners for n, v in o.constants.items()],
        functions=[(h, f) for o in owners for h, f in o.functions.items()],
        problem=problem,
    )
    rules: list[CompiledRule] = []
    for owner in owners:
        for k, rule in enumerate(owner.mistake_rules):
            try:
                rules.append(compile_rule(rule, table))
            except AnswerParseError as exc:
                path, line, col = owner.locate(("mistake_rules", k, "answer"))
                findings.append(Finding(path, line, col, f"mistake_rules[{k}]: {exc.message}"))
    return packs, table, rules


def pack_table(names: Sequence[str]) -> FunctionTable:
    """The vocabulary of some packs alone (``quizgym solve --pack``): their functions and
    constants beside the language's own.

    Raises:
        QuizgymError: a pack cannot be found or read.
        BankError: a pack has errors.
    """
    from quizgym.loader import load_pack

    findings: list[Finding] = []
    packs = [load_pack(name) for name in names]

    def problem(field: str, key: str | int, message: str) -> None:
        owner = next((o for o in packs if _has(o, field, key)), packs[0])
        findings.append(Finding(*owner.locate((field, key)), f"{field}: {key}: {message}"))

    table = function_table(
        builtins=[b for pack in packs for b in pack.builtins],
        constants=[(n, v) for o in packs for n, v in o.constants.items()],
        functions=[(h, f) for o in packs for h, f in o.functions.items()],
        problem=problem,
    )
    if findings:
        raise BankError(findings)
    return table


_UNKNOWN = re.compile(r"Unknown name '([A-Za-z][A-Za-z0-9_]*)'")


def _pack_hint(message: str, bank: Bank) -> str:
    """An unknown name that a bundled pack the bank does not use defines gets the author's fix
    instead of the students' wording (what an answer is); any other message is kept."""
    found = _UNKNOWN.match(message)
    if found is None:
        return message
    name = found[1].lower()
    for pack in sorted(bundled_packs()):
        if pack not in bank.packs and name in _pack_names(pack):
            packs = ", ".join([*bank.packs, pack])
            return f"`{name}` is in the pack `{pack}`: add `packs: [{packs}]`"
    return message


@functools.cache
def _pack_names(pack: str) -> frozenset[str]:
    """The functions and constants a bundled pack defines (none when it cannot be loaded: its
    own check says why)."""
    from quizgym.loader import load_pack

    try:
        loaded = load_pack(pack)
    except (QuizgymError, BankError):
        return frozenset()
    heads = {head.partition("(")[0].strip() for head in loaded.functions}
    return frozenset({*loaded.builtins, *heads, *loaded.constants})


def _has(pack: Pack, field: str, key: str | int) -> bool:
    if field == "builtins":
        return key in pack.builtins
    return key in getattr(pack, field)


def _penalty(require: RequireUnits) -> float:
    if isinstance(require, UnitPenalty):
        return require.penalty
    return 1.0 if require else 0.0


def _digits(display: Display) -> int | None:
    if isinstance(display, DecimalDisplay):
        return display.decimal
    return 5 if display == "decimal" else None


def _measured(bank: Bank, packs: Sequence[Pack], table: FunctionTable) -> frozenset[str]:
    """The names whose value rests on a decimal constant (``g = 9.81``, a measured number):
    the constants themselves, and every function written with one (or with such a function)."""
    found = {
        name
        for name, constant in table.constants.items()
        if constant.exact is not None and constant.exact.denominator != 1
    }
    bodies: dict[str, str] = {}
    owners: list[Pack | Bank] = [*packs, bank]
    for owner in owners:
        for head, body in owner.functions.items():
            match = FUNCTION_HEAD.match(head)
            if match:
                bodies[match[1]] = body if isinstance(body, str) else body.expr
    grew = True
    while grew and found:
        grew = False
        for name, body in bodies.items():
            if name not in found and _mentions(body, found):
                found.add(name)
                grew = True
    return frozenset(found)


def _resting(question: Numeric, measured: frozenset[str]) -> frozenset[str]:
    """A question's derived values that rest on a measured name (derived values come in order)."""
    found: set[str] = set()
    for name, text in question.derived.items():
        if _mentions(text, measured | found):
            found.add(name)
    return frozenset(found)


def _mentions(text: str, names: Collection[str]) -> bool:
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    return not words.isdisjoint(names)


def _numeric_slots(
    bank: Bank,
    table: FunctionTable,
    question: Numeric,
    index: int,
    findings: list[Finding],
    measured: frozenset[str] = frozenset(),
    at: Sequence[Loc] = (),
) -> tuple[list[Slot], Draw | None]:
    """The slots of a numeric question and its draw, or no slots when one of its keys,
    mistakes, derived values or conditions is unreadable.

    A key that rests on a decimal constant (``measured``) is shown as a decimal, not as the
    fraction its exact value is (``g = 9.81`` makes ``250 / g`` 25000/981), unless the author
    chose how keys are shown. ``at``: where each part is written under the question, when not
    at ``parts`` (a cloze's number blanks, at ``blanks``)."""
    before = len(findings)
    names: list[str] = list(question.params)
    out: list[Slot] = []
    specs: list[Numeric | Part] = list(question.parts) if question.parts else [question]

    def report(loc: tuple[str | int, ...], message: str) -> None:
        path, line, col = bank.locate(loc)
        where = ".".join(map(str, loc[2:]))
        findings.append(Finding(path, line, col, f"{question.id}: {where}: {message}"))

    def read(text: str, loc: tuple[str | int, ...]) -> Parsed | None:
        refused = table.refusal(text)
        if refused:
            report(loc, refused)
            return None
        try:
            parsed = table.parse(text, names)
        except AnswerParseError as exc:
            report(loc, _pack_hint(exc.message, bank))
            return None
        spent = cost(parsed)
        if spent > MAX_COST:
            report(loc, f"too costly: it evaluates {spent} parts with its functions' bodies "
                        f"(at most {MAX_COST}); call fewer functions")  # fmt: skip
            return None
        return parsed

    derived: list[tuple[str, Parsed]] = []
    for name, text in question.derived.items():
        parsed = read(text, ("questions", index, "derived", name))
        if parsed is not None:
            derived.append((name, parsed))
        names.append(name)
    where: list[Condition] = []
    for k, text in enumerate(question.where):
        try:
            where.append(table.condition(text, names))
        except AnswerParseError as exc:
            report(("questions", index, "where", k), _pack_hint(exc.message, bank))
    draw = Draw.of(bank.bank, question, derived=derived, where=where)
    for position, spec in enumerate(specs):
        part = spec if isinstance(spec, Part) else None
        base: tuple[str | int, ...] = ("questions", index)
        if part is not None:
            base = (*base, *at[position]) if at else (*base, "parts", position)
        assert spec.answer is not None  # the model requires answer or parts
        key = read(spec.answer, (*base, "answer"))
        mistakes = []
        for a_index, text in enumerate(spec.answers):
            parsed = read(text, (*base, "answers", a_index))
            if parsed is not None:
                mistakes.append(
                    CompiledMistake(
                        parsed=parsed,
                        feedback="",
                        tag=None,
                        credit=1.0,
                        loc=(*base, "answers", a_index),
                    )
                )
        for m_index, mistake in enumerate(spec.mistakes):
            parsed = read(mistake.answer, (*base, "mistakes", m_index, "answer"))
            if parsed is not None:
                mistakes.append(
                    CompiledMistake(
                        parsed=parsed,
                        feedback=mistake.feedback,
                        tag=mistake.tag,
                        credit=mistake.credit,
                        loc=(*base, "mistakes", m_index, "answer"),
                    )
                )
        if key is not None:
            require = spec.require_units
            if require is None:
                require = question.require_units
            display = spec.display if spec.display is not None else question.display
            if (
                display is None
                and "display" not in bank.defaults.model_fields_set
                and measured
                and _mentions(spec.answer, measured | _resting(question, measured))
            ):
                display = "decimal"
            out.append(
                Slot(
                    id=slot_id(question.id, None if part is None else part.id),
                    question=question,
                    part=None if part is None else part.id,
                    part_model=part,
                    index=position,
                    points=points_of(spec, bank.defaults),
                    units=spec.units,
                    require_units=_penalty(
                        bank.defaults.require_units if require is None else require
                    ),
                    display=_digits(bank.defaults.display if display is None else display),
                    tolerance=spec.tolerance
                    if spec.tolerance is not None
                    else bank.defaults.tolerance,
                    key=key,
                    mistakes=tuple(mistakes),
                    earlier=tuple(n for n in names if n in key.names and n in _part_ids(question)),
                    loc=base,
                )
            )
        if part is not None:
            names.append(part.id)
    if len(findings) != before:
        return [], None
    return out, draw


def _part_ids(question: Numeric) -> set[str]:
    return {p.id for p in question.parts}
