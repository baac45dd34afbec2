"""The report's IRT section: a fit (:class:`quizgym.irt.IrtFit`) in; its item and test
information curves as inline SVG, and sentences of what they say, out."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

import numpy as np
from markupsafe import Markup

from quizgym.irt import IrtFit
from quizgym.render.charts import HEIGHT, PAD, WIDTH, axes, svg_open

__all__ = ["IrtSection", "irt_section"]

"""The size of the report's charts (as :mod:`quizgym.render.report` draws its own)."""
COLOURS = ("#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2", "#9d755d")


@dataclass(frozen=True)
class IrtSection:
    """What the template shows of a fit."""

    fit: IrtFit
    model: str = ""
    """The model the curves are of (``2PL`` or ``Rasch``); '' when none was fitted."""
    items_chart: Markup = Markup("")
    test_chart: Markup = Markup("")
    sentences: list[str] = field(default_factory=list)


def irt_section(fit: IrtFit) -> IrtSection:
    """The charts and sentences of a fit (none when no model was fitted)."""
    information = fit.information()
    if information is None:
        return IrtSection(fit)
    theta, test, curves = information
    named = [i.question for i in fit.items if _fitted(fit, i.question)]
    model = "2PL" if fit.twopl is not None else "Rasch"
    best = int(np.argmax(test))
    se = 1 / np.sqrt(test)
    at_two = [float(se[int(np.argmin(np.abs(theta - t)))]) for t in (-2.0, 2.0)]
    share = 100 * _normal_cdf(float(theta[best]))
    sentences = [
        f"The test measures most precisely at ability θ = {_minus(theta[best])} (about "
        f"{share:.0f}% of a class like this one are below it), where an ability is known within ±"
        f"{1.96 * se[best]:.2f} (95%); at θ = −2 and θ = 2 within ±{1.96 * at_two[0]:.2f} and "
        f"±{1.96 * at_two[1]:.2f}.",
    ]
    if fit.twopl is not None:
        flat = [i.question for i in fit.items if i.a is not None and i.a < 0.3]
        if flat:
            sentences.append(
                f"{', '.join(flat)}: discrimination below 0.3, so the item tells little about "
                "who is abler (its curve stays flat)."
            )
    return IrtSection(
        fit=fit,
        model=model,
        items_chart=_chart(
            f"Item information ({model})", theta, list(zip(named, curves, strict=True))
        ),
        test_chart=_test_chart(f"Test information ({model})", theta, test, se),
        sentences=sentences,
    )


def _minus(value: float) -> str:
    return f"{value:.1f}".replace("-", "−")


def _fitted(fit: IrtFit, question: str) -> bool:
    item = next(i for i in fit.items if i.question == question)
    if fit.twopl is not None:
        return item.a is not None and item.b is not None
    return fit.rasch is not None and item.rasch_b is not None


def _normal_cdf(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def _path(theta: np.ndarray, values: np.ndarray, top: float) -> str:
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    xs = PAD + inner_w * (theta - theta[0]) / (theta[-1] - theta[0])
    ys = HEIGHT - PAD - inner_h * np.minimum(values / top, 1.0)
    return " ".join(
        f"{'M' if k == 0 else 'L'}{x:.1f},{y:.1f}"
        for k, (x, y) in enumerate(zip(xs, ys, strict=True))
    )


def _theta_ticks() -> list[tuple[float, str]]:
    return [(k / 8, f"{k - 4}".replace("-", "−")) for k in range(0, 9, 2)]


def _chart(title: str, theta: np.ndarray, curves: list[tuple[str, np.ndarray]]) -> Markup:
    top = max(float(c.max()) for _, c in curves) or 1.0
    parts = [svg_open(title)]
    for k, (name, curve) in enumerate(curves):
        peak = float(theta[int(np.argmax(curve))])
        label = escape(f"{name}: most information at θ = {_minus(peak)}")
        parts.append(
            f'<path d="{_path(theta, curve, top)}" fill="none" '
            f'stroke="{COLOURS[k % len(COLOURS)]}" stroke-width="1.5"><title>{label}</title></path>'
        )
    parts += axes("ability θ", "information", x_ticks=_theta_ticks(), y_ticks=[(1.0, f"{top:.2g}")])
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 (every text in it went through escape())


def _test_chart(title: str, theta: np.ndarray, test: np.ndarray, se: np.ndarray) -> Markup:
    top = float(test.max()) or 1.0
    se_top = float(min(se.max(), 3.0))
    parts = [svg_open(title)]
    parts.append(
        f'<path d="{_path(theta, test, top)}" fill="none" stroke="#4c78a8" stroke-width="2">'
        "<title>test information</title></path>"
    )
    parts.append(
        f'<path d="{_path(theta, se, se_top)}" fill="none" stroke="#d62728" stroke-width="1.5" '
        'stroke-dasharray="5 3"><title>standard error of an ability (dashed, right scale)</title>'
        "</path>"
    )
    parts.append(
        f'<text x="{WIDTH - PAD + 4}" y="{PAD + 4}" font-size="10" fill="#d62728">'
        f"SE {se_top:.2g}</text>"
    )
    parts += axes(
        "ability θ",
        "information (solid), SE (dashed)",
        x_ticks=_theta_ticks(),
        y_ticks=[(1.0, f"{top:.2g}")],
    )
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 (every text in it went through escape())
