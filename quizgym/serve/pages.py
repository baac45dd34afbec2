"""The server's HTML: a page's title and body in, a whole page out (one stylesheet, no script,
no inline style, so ``Content-Security-Policy: default-src 'self'`` holds), and the pieces the
pages share."""

from __future__ import annotations

from collections.abc import Sequence

from quizgym.richtext.html import attr, escape

__all__ = ["CSS", "button_form", "page", "table"]

CSS = """\
:root{color-scheme:light;--ink:#1a1a1a;--muted:#4a4a4a;--line:#767676;--ok:#0b6b2e;--bad:#a3161b;
--part:#7a4a00;--link:#0645ad;--bg:#fff;--soft:#f3f5f8}
*{box-sizing:border-box}
body{margin:0;font:1.05rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
color:var(--ink);background:var(--bg)}
a{color:var(--link)}
.skip{position:absolute;left:-999px}.skip:focus{left:.5rem;top:.5rem;background:#fff;padding:.3rem}
header{background:var(--soft);border-bottom:1px solid var(--line);padding:.5rem 1rem}
header nav a{margin-right:1rem}
main{max-width:46rem;margin:0 auto;padding:1rem}
h1{font-size:1.4rem;margin:.5rem 0 1rem}h2{font-size:1.1rem;margin:0 0 .5rem}
.q{border:1px solid var(--line);border-radius:.4rem;padding:.8rem;margin:0 0 1rem}
fieldset{border:0;margin:.5rem 0;padding:0}legend{font-weight:600;margin-bottom:.3rem}
.opt{display:flex;gap:.5rem;align-items:flex-start;padding:.35rem 0}
.opt input{width:1.3rem;height:1.3rem;margin:.15rem 0 0;flex:none}
label{display:block;margin:.4rem 0 .2rem}.opt label{margin:0}
input[type=text],textarea{width:100%;font:inherit;padding:.5rem;border:1px solid var(--line);
border-radius:.3rem}
button{font:inherit;padding:.55rem 1.1rem;border-radius:.3rem;border:1px solid #053d8a;
background:#0a4fb0;color:#fff;cursor:pointer;margin:.3rem .5rem .3rem 0;min-height:2.75rem}
button.second{background:#fff;color:#053d8a}
:focus-visible{outline:3px solid #c25e00;outline-offset:2px}
.verdict{border-left:.35rem solid var(--line);padding:.4rem .7rem;margin:.5rem 0;
background:var(--soft)}
.v-correct{border-color:var(--ok)}.v-correct strong{color:var(--ok)}
.v-incorrect,.v-invalid,.v-blank{border-color:var(--bad)}.v-incorrect strong{color:var(--bad)}
.v-partial{border-color:var(--part)}.v-partial strong{color:var(--part)}
.problem{color:var(--bad);font-weight:600}.muted{color:var(--muted)}
.read{font-family:ui-monospace,monospace}
table{border-collapse:collapse;width:100%;font-size:.95rem}th,td{text-align:left;padding:.3rem;
border-bottom:1px solid var(--line)}
.wide{overflow-x:auto}
math{font-size:1.05em}
blockquote{margin:.5rem 0;padding:.3rem .8rem;border-left:.25rem solid var(--line)}
img{max-width:100%;height:auto}
.num{text-align:right;font-variant-numeric:tabular-nums}
tr.flagged td{background:#fdecea}tr.pending td{background:#fdf6e3}tr.key td{font-weight:600}
.note{color:var(--muted);font-size:.9rem}
.warning,.first{border:2px solid var(--bad);padding:.25rem 1rem;margin:1rem 0}
.first{border-color:var(--part)}
figure{display:inline-block;margin:0 1rem 1rem 0}
.analysis table{width:auto;margin:.5rem 0 1rem}.analysis h2{margin-top:1.2rem}
"""


def page(title: str, body: str, *, nav: str = "") -> str:
    """A whole HTML page (``body`` is HTML already; ``title`` is text)."""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · quizgym</title>"
        '<link rel="stylesheet" href="/static/quizgym.css"></head><body>'
        '<a class="skip" href="#main">Skip to the content</a>'
        f'<header><nav aria-label="Main">{nav}</nav></header>'
        f'<main id="main"><h1>{escape(title)}</h1>{body}</main></body></html>'
    )


def button_form(action: str, label: str, hidden: dict[str, str], *, second: bool = False) -> str:
    """A form of one button posting hidden fields."""
    fields = "".join(
        f'<input type="hidden" name="{attr(k)}" value="{attr(v)}">' for k, v in hidden.items()
    )
    cls = ' class="second"' if second else ""
    return (
        f'<form method="post" action="{attr(action)}">{fields}'
        f'<button type="submit"{cls}>{escape(label)}</button></form>'
    )


def table(caption: str, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A table of text cells (escaped here), scrolled sideways on a narrow screen."""
    head = "".join(f'<th scope="col">{escape(h)}</th>' for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(cell))}</td>" for cell in row) + "</tr>" for row in rows
    )
    return (
        f'<div class="wide" tabindex="0" role="region" aria-label="{attr(caption)}">'
        f"<table><caption>{escape(caption)}</caption><tr>{head}</tr>{body}"
        "</table></div>"
    )
