"""Which variant of each question each student was given: never guessed.

A question with parameters or shuffled choices has a variant per student, and grading against the
wrong one gives a silently wrong grade. So a run must say how variants were handed out:

- ``--issued FILE``: what ``render`` or ``export`` recorded (:mod:`quizgym.issued`): one variant for
  everyone, each roster student's own, or the LMS pool item each student answered;
- ``--seed N``: each student's own variant, as ``render --roster … --seed N`` drew it (a ``seed``
  column, where a row has one, wins, as a roster's does);
- ``--version default``: everyone had the default variant (one sheet for the whole class);
  ``--version per-student``: each student's own variant, drawn without a seed;
- a ``seed`` column on every row: each student's own variant with their seed.

Without any of them, a run whose bank has such questions is refused (:func:`resolve`). A row whose
seed cell is blank while other rows have one, and a student the manifest does not list, are
rejected rows (:func:`rejections`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from quizgym.errors import QuizgymError
from quizgym.grading.rows import no_seed, not_in_roster
from quizgym.grading.table import ClassAnswers
from quizgym.issued import Issued
from quizgym.model import AnyQuestion
from quizgym.solver import CompiledBank, Slot, Variant
from quizgym.types import choices_of

__all__ = ["Variants", "rejections", "resolve"]

Rule = Literal["seeds", "drawn", "default", "issued"]


@dataclass(frozen=True, kw_only=True)
class Variants:
    """How a run knows each student's variant of each question."""

    rule: Rule
    """``seeds``: drawn from each row's seed column (a library call without options); ``drawn``:
    drawn per student, with ``seed`` where a row has none; ``default``: the default variant for
    everyone; ``issued``: as the manifest says."""
    seed: int | None = None
    issued: Issued | None = None

    def describe(self) -> str:
        """How the run's variants were chosen, in words."""
        if self.rule == "issued" and self.issued is not None:
            return f"versions as issued ({self.issued.mode}, by {self.issued.issued_by})"
        if self.rule == "default":
            return "everyone graded against the default version"
        if self.rule == "drawn":
            seed = "no seed" if self.seed is None else f"seed {self.seed}"
            return f"each student's own version ({seed} where a row has no seed)"
        return "each student's own version, with the seed of their row"

    def of_class(
        self,
        bank: CompiledBank,
        slot: Slot,
        answers: ClassAnswers,
        *,
        keys: npt.NDArray[np.uint64] | None = None,
    ) -> tuple[list[Variant], npt.NDArray[np.int64]]:
        """The distinct variants of a slot's question in a class, and each student's index.

        A variant a reader saw in the file itself (the LMS item a student answered) wins over the
        rule: an LMS draws each item of a pool per student, each part's item on its own.

        Args:
            bank: the compiled bank.
            slot: the slot.
            answers: the class.
            keys: the students' draw keys (:func:`~quizgym.solver.student_keys`) when the
                caller has them; only the ``seeds`` and ``drawn`` rules use them.
        """
        n = len(answers)
        question = slot.question
        if not bank.varies(question) and not self.reordered(question):
            return [bank.variant(question)], np.zeros(n, dtype=np.int64)
        seen = answers.versions.get(slot.id)
        if self.rule == "issued" and self.issued is not None:
            return _issued(self.issued, question, answers, seen)
        if seen is not None:
            raise QuizgymError(
                f"{slot.id}: the file names the version each student answered, but only an "
                "issue manifest can say what it was: grade with --issued FILE"
            )
        if self.rule == "default":
            return [bank.variant(question)], np.zeros(n, dtype=np.int64)
        seeds = self.draw_seeds(answers)
        return bank.variants(question, students=answers.students, seeds=seeds, keys=keys)

    def variant_of(
        self, bank: CompiledBank, question: AnyQuestion, student: str, seed: int | None
    ) -> Variant | None:
        """One student's variant of a question under this rule (``seed``: their row's).

        None when only the submissions could say (the LMS item a student drew from a pool).
        """
        if (not bank.varies(question) and not self.reordered(question)) or self.rule == "default":
            return bank.variant(question)
        if self.rule == "issued" and self.issued is not None:
            table = self.issued.versions.get(question.id)
            if not table or self.issued.mode == "pools":
                return None
            index = 0
            record = self.issued.student(student)
            if self.issued.mode != "single" and record is not None:
                index = record.versions.get(question.id, 0)
            return table[index].variant(question.id)
        if seed is None and self.rule == "drawn":
            seed = self.seed
        return bank.variant(question, student=student, seed=seed)

    def reordered(self, question: AnyQuestion) -> bool:
        """Whether the manifest shows a question's choices in another order than the bank's now
        (choices reordered in the bank since issuing, as :func:`~quizgym.issued.reconcile`
        reads them)."""
        if self.rule != "issued" or self.issued is None:
            return False
        return any(record.order for record in self.issued.versions.get(question.id, ()))

    @property
    def draws(self) -> bool:
        """Whether variants are drawn per student (from seeds), as opposed to looked up."""
        return self.rule in ("seeds", "drawn")

    def draw_seeds(self, answers: ClassAnswers) -> Sequence[int | None]:
        """Each student's seed for the draws: their row's, else the run's ``--seed``."""
        if self.rule == "drawn" and self.seed is not None:
            return [self.seed if s is None else s for s in answers.seeds]
        return answers.seeds


def _issued(
    issued: Issued, question: AnyQuestion, answers: ClassAnswers, seen: list[int | None] | None
) -> tuple[list[Variant], npt.NDArray[np.int64]]:
    """Each student's variant as the manifest (or the LMS item they answered) says."""
    table = issued.versions.get(question.id)
    if not table:
        raise QuizgymError(f"{question.id}: the issue manifest did not hand this question out")
    variants = [record.variant(question.id) for record in table]
    n = len(answers)
    if seen is not None:
        # the LMS item a student answered; a student with none gets the first variant (their
        # answer is blank: no variant can be right or wrong)
        codes = np.array([0 if v is None else v for v in seen], dtype=np.int64)
        return variants, codes
    if issued.mode == "single" or len(table) == 1:
        return variants, np.zeros(n, dtype=np.int64)
    if issued.mode == "pools":
        raise QuizgymError(
            f"{question.id}: an LMS export's pools were handed out; grade the LMS's own response "
            "export (Canvas Student Analysis, Moodle Responses), which says which item each "
            "student answered"
        )
    codes = np.zeros(n, dtype=np.int64)
    for row, student in enumerate(answers.students):
        record = issued.student(student)
        if record is not None and question.id in record.versions:
            codes[row] = record.versions[question.id]
    return variants, codes


def resolve(
    bank: CompiledBank,
    present: Sequence[str],
    *,
    issued: Issued | None,
    seed: int | None,
    version: Literal["default", "per-student"] | None,
    has_seeds: bool,
    by_text: Collection[str] = (),
) -> Variants:
    """The rule a run grades by, from its options; refuse to guess.

    Args:
        bank: the compiled bank.
        present: the slots graded.
        issued: ``--issued``: the manifest.
        seed: ``--seed``.
        version: ``--version``.
        has_seeds: whether some row of the input has a seed.
        by_text: choice slots answered only with the choices' texts (LMS exports): the order
            choices were shown in does not matter for them.

    Raises:
        QuizgymError: more than one of the options, or none of them while the bank has questions
            that differ per student and no row has a seed.
    """
    given = [name for name, v in (("--issued", issued), ("--seed", seed), ("--version", version))
             if v is not None]  # fmt: skip
    if len(given) > 1:
        raise QuizgymError(f"{' and '.join(given)}: give one way the versions were handed out")
    if issued is not None:
        return Variants(rule="issued", issued=issued)
    if seed is not None:
        return Variants(rule="drawn", seed=seed)
    if version == "default":
        return Variants(rule="default")
    if version == "per-student":
        return Variants(rule="drawn")
    if has_seeds:
        return Variants(rule="seeds")
    varying = sorted(
        {
            bank.slot(s).question.id
            for s in present
            if bank.varies(bank.slot(s).question) and not _order_only(bank, s, by_text)
        }
    )
    if varying:
        shown = ", ".join(varying[:4]) + (
            f" and {len(varying) - 4} more" if len(varying) > 4 else ""
        )
        raise QuizgymError(
            f"{shown} differ per student (parameters or shuffled choices), and nothing says which "
            "version each student had: give --issued FILE (the issued.json render or export "
            "wrote), --seed N (as render --roster … --seed N), or --version default (one sheet "
            "for everyone)"
        )
    return Variants(rule="default")  # no question differs: every rule gives the same variants


def _order_only(bank: CompiledBank, slot: str, by_text: Collection[str]) -> bool:
    """A shuffled choice slot answered with the choices' texts: every order reads alike."""
    question = bank.slot(slot).question
    picks = choices_of(question, bank.slot(slot).part)
    return slot in by_text and picks is not None and picks.lettered


def rejections(answers: ClassAnswers, variants: Variants) -> list[tuple[int, str]]:
    """(row, reason) of every student whose variant cannot be known under the run's rule.

    A blank seed cell while other rows have a seed (without ``--seed``: grading that student
    without one would draw other numbers), and a student a per-student manifest does not list.
    """
    out: list[tuple[int, str]] = []
    if variants.rule == "seeds":
        out += [(row, no_seed()) for row, s in enumerate(answers.seeds) if s is None]
    issued = variants.issued
    if variants.rule == "issued" and issued is not None and issued.mode == "per-student":
        out += [
            (row, not_in_roster(len(issued.students)))
            for row, student in enumerate(answers.students)
            if issued.student(student) is None
        ]
    return out
