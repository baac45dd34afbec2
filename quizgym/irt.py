"""Item response theory beside the classical statistics: a class's right/wrong matrix in; Rasch and
2PL item parameters with standard errors, each student's ability with its standard error, and item
and test information out (``quizgym grade --irt``; the ``irt`` extra, ``mirt``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from quizgym.errors import QuizgymError

__all__ = [
    "MIN_2PL",
    "MIN_RASCH",
    "Abilities",
    "IrtFit",
    "IrtItem",
    "fit_irt",
]

MIN_RASCH = 100
"""Fewer students than this: no IRT model is fitted (the report says why)."""
MIN_2PL = 500
"""Fewer students than this: the Rasch model only."""
THETA = np.linspace(-4.0, 4.0, 81)
"""The abilities the information curves are drawn over."""

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class IrtItem:
    """One item's parameters in each model (None: not fitted)."""

    question: str
    right: float
    """Share of the students with full marks."""
    rasch_b: float | None = None
    rasch_b_se: float | None = None
    a: float | None = None
    """2PL discrimination."""
    a_se: float | None = None
    b: float | None = None
    """2PL difficulty."""
    b_se: float | None = None


@dataclass(frozen=True)
class Abilities:
    """Each student's estimated ability in one model, with its standard error."""

    theta: FloatArray
    se: FloatArray


@dataclass
class IrtFit:
    """What ``--irt`` found: the items, the students' abilities and the models' notes."""

    students: int
    items: list[IrtItem]
    left_out: list[str] = field(default_factory=list)
    """Items everyone or no one got right (not fitted)."""
    rasch_a: float | None = None
    """The Rasch model's one discrimination, shared by every item."""
    rasch_a_se: float | None = None
    rasch: Abilities | None = None
    twopl: Abilities | None = None
    notes: list[str] = field(default_factory=list)
    """Why a model was not fitted, or did not converge: shown instead of its numbers."""

    def information(self) -> tuple[FloatArray, FloatArray, list[FloatArray]] | None:
        """(θ grid, test information, each item's information) of the 2PL model, or of the
        Rasch model without one; None when neither was fitted."""
        curves = []
        for item in self.items:
            if self.twopl is not None and item.a is not None and item.b is not None:
                a, b = item.a, item.b
            elif self.rasch is not None and self.rasch_a is not None and item.rasch_b is not None:
                a, b = self.rasch_a, item.rasch_b
            else:
                continue
            p = 1 / (1 + np.exp(-a * (THETA - b)))
            curves.append(a * a * p * (1 - p))
        if not curves:
            return None
        return THETA, np.sum(curves, axis=0), curves


def require_mirt() -> Any:
    """The mirt module; raises QuizgymError naming the extra to install when it is missing."""
    try:
        import mirt
    except ImportError as exc:
        raise QuizgymError(
            f'--irt needs the mirt package ({exc}): pip install "quizgym[irt]"'
        ) from exc
    return mirt


def _column(value: Any) -> FloatArray:
    return np.asarray(value, dtype=np.float64).reshape(-1)


def fit_irt(right: npt.ArrayLike, questions: Sequence[str]) -> IrtFit:
    """Fit the Rasch and 2PL models to a students × items matrix of 1 (right) and 0.

    Both models say a student of ability θ answers item i right with probability ``1 / (1 + exp(−a_i
    (θ − b_i)))``, with abilities drawn from N(0, 1): b_i is the item's *difficulty* (the ability at
    which half the students get it right) and a_i its *discrimination* (how steeply the chance rises
    there). The Rasch model gives every item one shared a; the 2PL model gives each its own. Both
    are fitted by marginal maximum likelihood (Bock & Aitkin 1981, EM over quadrature) with
    ``mirt.fit_mirt``, standard errors from the observed information (Oakes 1999); abilities are
    expected a posteriori (EAP) estimates with their posterior SDs (Bock & Mislevy 1982). Item
    information is ``a² P (1 − P)`` and the test's is their sum; 1 / √information is the standard
    error of an ability estimated there (Lord 1980, ch. 5; Baker & Kim, *The Basics of Item Response
    Theory Using R*, 2017, ch. 6).

    An answer counts as right when it earned full marks; blank and partly right answers count as
    wrong, as they lower the classical facility. Items everyone (or no one) got right say nothing
    about who is abler and are left out of the fit. Below :data:`MIN_RASCH` students no model is
    fitted, below :data:`MIN_2PL` only the Rasch model: the estimates would move too much from one
    class to the next to be read (Linacre 1994: about 100 students put Rasch difficulties within
    ±0.5 logits with 95 % confidence; de Ayala 2009, §5.7 and §6.7, suggests some 500 for the 2PL).

    Raises:
        QuizgymError: mirt is not installed.
    """
    x = np.asarray(right, dtype=np.int64)
    students = x.shape[0] if x.ndim == 2 else 0
    share = x.mean(axis=0) if students else np.zeros(len(questions))
    keep = [j for j in range(len(questions)) if 0 < share[j] < 1]
    fit = IrtFit(
        students=students,
        items=[IrtItem(q, float(share[j])) for j, q in enumerate(questions)],
        left_out=[questions[j] for j in range(len(questions)) if j not in keep],
    )
    if students < MIN_RASCH:
        fit.notes.append(
            f"IRT needs at least {MIN_RASCH} students to estimate difficulties that would hold "
            f"from one class to the next; this class has {students}, so no model was fitted"
        )
        return fit
    if len(keep) < 3:
        fit.notes.append(
            f"IRT needs at least 3 items that some but not all students got right; this test "
            f"has {len(keep)}, so no model was fitted"
        )
        return fit
    mirt = require_mirt()
    data = x[:, keep]
    rasch = mirt.fit_mirt(
        data,
        "2PL",
        constraints=[("discrimination", list(range(len(keep))))],
        accelerate="squarem",
    )
    twopl = None
    if students >= MIN_2PL:
        twopl = mirt.fit_mirt(data, "2PL")
    else:
        fit.notes.append(
            f"the 2PL model (a discrimination per item) needs at least {MIN_2PL} students to be "
            f"read; this class has {students}, so only the Rasch model was fitted"
        )
    rb = _column(rasch.model.parameters["difficulty"])
    rb_se = _column(rasch.standard_errors["difficulty"])
    if rasch.converged:
        fit.rasch_a = float(_column(rasch.model.parameters["discrimination"])[0])
        fit.rasch_a_se = float(_column(rasch.standard_errors["discrimination"])[0])
        scores = mirt.fscores(rasch, data, method="EAP")
        fit.rasch = Abilities(_column(scores.theta), _column(scores.standard_error))
    else:
        fit.notes.append("the Rasch model did not converge: its numbers are not shown")
    if twopl is not None and not twopl.converged:
        fit.notes.append("the 2PL model did not converge: its numbers are not shown")
        twopl = None
    nothing = np.full(len(keep), math.nan)
    a = b = a_se = b_se = nothing
    if twopl is not None:
        scores = mirt.fscores(twopl, data, method="EAP")
        fit.twopl = Abilities(_column(scores.theta), _column(scores.standard_error))
        a = _column(twopl.model.parameters["discrimination"])
        b = _column(twopl.model.parameters["difficulty"])
        a_se = _column(twopl.standard_errors["discrimination"])
        b_se = _column(twopl.standard_errors["difficulty"])
    if fit.rasch is None:
        rb = rb_se = nothing
    for k, j in enumerate(keep):
        fit.items[j] = IrtItem(
            question=questions[j],
            right=float(share[j]),
            rasch_b=_finite(rb[k]),
            rasch_b_se=_finite(rb_se[k]),
            a=_finite(a[k]),
            a_se=_finite(a_se[k]),
            b=_finite(b[k]),
            b_se=_finite(b_se[k]),
        )
    return fit


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None
