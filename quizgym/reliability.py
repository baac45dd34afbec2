"""Cronbach's α with its uncertainty: an α, a class size and a number of items in, Feldt's
confidence interval out."""

from __future__ import annotations

from quizgym.distributions import f_quantile

__all__ = ["RELIABILITY_LEVEL", "feldt_interval"]

RELIABILITY_LEVEL = 0.95
"""The confidence level of the interval the report shows."""


def feldt_interval(
    alpha: float, *, students: int, items: int, level: float = RELIABILITY_LEVEL
) -> tuple[float, float] | None:
    """Feldt's ``level`` confidence interval of Cronbach's α (as fractions, not %).

    Feldt (1965), "The approximate sampling distribution of Kuder-Richardson reliability coefficient
    twenty", *Psychometrika* 30, 357–370; Feldt, Woodruff & Salih (1987), "Statistical inference for
    coefficient alpha", *Applied Psychological Measurement* 11, 93–103: for n students and k items,
    (1 − α) / (1 − α̂) follows an F distribution with n − 1 and (n − 1)(k − 1) degrees of freedom,
    so

        α_low  = 1 − (1 − α̂) · F_{1 − γ/2}(n − 1, (n − 1)(k − 1))
        α_high = 1 − (1 − α̂) · F_{γ/2}(n − 1, (n − 1)(k − 1))

    is a 100·(1 − γ) % interval (the one pingouin's ``cronbach_alpha`` and R's ``psych::alpha.ci``
    compute).

    Returns:
        (low, high), or None when it is undefined (fewer than 2 students or items, α ≥ 1).
    """
    if students < 2 or items < 2 or not alpha < 1:
        return None
    d1 = students - 1
    d2 = (students - 1) * (items - 1)
    tail = (1 - level) / 2
    low = 1 - (1 - alpha) * f_quantile(1 - tail, d1, d2)
    high = 1 - (1 - alpha) * f_quantile(tail, d1, d2)
    return low, high
