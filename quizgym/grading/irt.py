"""``grade --irt``'s files: the pieces' right/wrong matrices in; the fit (:mod:`quizgym.irt`),
``irt.csv`` (per item) and ``abilities.csv`` (per student) out."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from quizgym.grading.cells import fmt
from quizgym.grading.outputs import write_rows
from quizgym.irt import IrtFit, fit_irt, require_mirt

__all__ = ["IRT_FILES", "check_irt", "write_irt"]

IRT_FILES = ("irt.csv", "abilities.csv")

ITEM_HEADER = (
    "question",
    "right",
    "rasch_difficulty",
    "rasch_difficulty_se",
    "discrimination",
    "discrimination_se",
    "difficulty",
    "difficulty_se",
)
ABILITY_HEADER = ("student", "rasch_ability", "rasch_ability_se", "ability", "ability_se")


def check_irt() -> None:
    """Raises QuizgymError when mirt is not installed (``pip install "quizgym[irt]"``)."""
    require_mirt()


def write_irt(
    folder: Path,
    questions: Sequence[str],
    pieces: Sequence[tuple[list[str], npt.NDArray[np.int8]] | None],
) -> IrtFit:
    """Fit the class's right/wrong matrix and write ``irt.csv`` and ``abilities.csv``.

    Numbers a model did not give (too few students, an item everyone got right) are empty.
    """
    students = [s for piece in pieces if piece is not None for s in piece[0]]
    blocks = [piece[1] for piece in pieces if piece is not None]
    matrix = np.vstack(blocks) if blocks else np.zeros((0, len(questions)), dtype=np.int8)
    fit = fit_irt(matrix, questions)
    write_rows(
        folder / "irt.csv",
        ITEM_HEADER,
        [
            [
                i.question,
                fmt(i.right, 4),
                fmt(i.rasch_b, 4),
                fmt(i.rasch_b_se, 4),
                fmt(i.a, 4),
                fmt(i.a_se, 4),
                fmt(i.b, 4),
                fmt(i.b_se, 4),
            ]
            for i in fit.items
        ],
    )
    empty = [""] * len(students)

    def shown(values: npt.NDArray[np.float64] | None) -> list[str]:
        return empty if values is None else [fmt(float(v), 4) for v in values]

    columns = [
        shown(fit.rasch.theta if fit.rasch else None),
        shown(fit.rasch.se if fit.rasch else None),
        shown(fit.twopl.theta if fit.twopl else None),
        shown(fit.twopl.se if fit.twopl else None),
    ]
    write_rows(
        folder / "abilities.csv",
        ABILITY_HEADER,
        [[s, *(c[k] for c in columns)] for k, s in enumerate(students)],
    )
    return fit
