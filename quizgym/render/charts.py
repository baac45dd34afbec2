"""The report's SVG charts' frame: a chart's title in, its opening tag and its axes out."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__all__ = ["HEIGHT", "PAD", "WIDTH", "axes", "svg_open"]

WIDTH, HEIGHT, PAD = 560, 260, 40


def svg_open(title: str) -> str:
    """A chart's opening tag, titled for screen readers."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>"
    )


def axes(
    x_label: str,
    y_label: str,
    top: int | None = None,
    *,
    x_ticks: Sequence[tuple[float, str]] = (),
    y_ticks: Sequence[tuple[float, str]] = (),
) -> list[str]:
    """Both axes with their labels; ticks are (fraction of the axis, label)."""
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    out = [
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" '
        'stroke="#333"/>',
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}" stroke="#333"/>',
        f'<text x="{WIDTH / 2}" y="{HEIGHT - 4}" text-anchor="middle" font-size="12">'
        f"{escape(x_label)}</text>",
        f'<text x="12" y="{HEIGHT / 2}" text-anchor="middle" font-size="12" '
        f'transform="rotate(-90 12 {HEIGHT / 2})">{escape(y_label)}</text>',
    ]
    for fraction, label in x_ticks:
        x = PAD + inner_w * fraction
        out.append(
            f'<line x1="{x:.1f}" y1="{HEIGHT - PAD}" x2="{x:.1f}" y2="{HEIGHT - PAD + 4}" '
            'stroke="#333"/>'
            f'<text x="{x:.1f}" y="{HEIGHT - PAD + 15}" text-anchor="middle" font-size="10">'
            f"{escape(label)}</text>"
        )
    for fraction, label in y_ticks:
        y = HEIGHT - PAD - inner_h * fraction
        out.append(
            f'<text x="{PAD - 4}" y="{y + 3:.1f}" text-anchor="end" font-size="10">'
            f"{escape(label)}</text>"
        )
    if top is not None:
        out.append(
            f'<text x="{PAD - 4}" y="{PAD + 4}" text-anchor="end" font-size="10">{top}</text>'
        )
    return out
