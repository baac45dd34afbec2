"""The drill's screens and ``quizgym stats``'s tables in, rich output on the terminal and lines of
input out."""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.text import Text

from quizgym.practice.views import ItemView, Outcome, SlotView, Summary, when
from quizgym.richtext import parse
from quizgym.richtext.tree import (
    Block,
    Break,
    Code,
    CodeBlock,
    Emph,
    Image,
    Inline,
    Link,
    ListBlock,
    Math,
    MathBlock,
    Paragraph,
    Quote,
    Rule,
    Strong,
    Verbatim,
)
from quizgym.richtext.tree import (
    Table as TableBlock,
)
from quizgym.richtext.tree import (
    Text as TextPiece,
)
from quizgym.terminal import escape_controls

if TYPE_CHECKING:  # the answer engine (sympy) stays unloaded for `quizgym stats`
    from quizgym.answers import Verdict
    from quizgym.practice.stats import BankStats
    from quizgym.types import TextInteraction

# Imported where they are drawn, not here: a formula (the TeX reader and its HTML and XML
# modules), a table (rich's tables) and the statistics are not on most first screens, and the
# first prompt is shown before the drill is loaded (quizgym.practice.preview). Never imported
# while the drill loads in the background: every screen is drawn before that or after it.

_FORMULAS: dict[tuple[str, bool], str] = {}
"""Formulas' texts handed over by :func:`remember_formulas`, by TeX and ``small_scripts``."""

_ASCII = str.maketrans(
    {
        "−": "-",
        "–": "-",
        "—": "--",
        "≈": "~",
        "·": "*",
        "×": "x",
        "✓": "+",
        "✗": "x",
        "…": "...",
        "∖": "\\",
        "∈": " in ",
        "∉": " not in ",
        "Σ": "sum",
        "∑": "sum",
        "∏": "prod",
        "∣": "|",
        "√": "sqrt",
        "∞": "inf",
        "⋅": "*",
        "≤": "<=",
        "≥": ">=",
        "≠": "!=",
        "→": "->",
        "‘": "'",
        "’": "'",
        "“": '"',
        "”": '"',
    }
)
_PROBE = "−≈·✓✗∈Σ…"

_MARKS = {
    "correct": ("✓ Correct", "bold green"),
    "partial": ("~ Partly right", "bold yellow"),
    "incorrect": ("✗ Not quite", "bold red"),
    "invalid": ("✗ Not readable", "bold red"),
    "blank": ("✗ No answer", "bold red"),
}

RUBRIC_NOTE = "Suggested score from the rubric; to be reviewed."
"""How a free-text verdict's feedback ends (for a teacher's review); the drill's student marks
their own answer, so it is not shown to them."""


def mistake_sentence(tag: str, *, said: bool) -> str:
    """A known mistake's tag as a student reads it: a sentence, never ``misconception: tag``
    (``said``: the mistake's own feedback was shown just before)."""
    if said:
        return f"This is a common mistake ({_tag_words(tag)})."
    return f"This is a common mistake: {_tag_words(tag)}."


def _tag_words(tag: str) -> str:
    """``se-over-n`` → ``se over n``: a tag's words."""
    return " ".join(tag.replace("_", "-").split("-"))


def plain(text: str) -> str:
    """An ASCII rendering of bank text: ``−log 0.2 ≈ 1.6`` → ``-log 0.2 ~ 1.6``, ``x₁`` → ``x1``."""
    folded = unicodedata.normalize("NFKC", text.translate(_ASCII))
    return folded.encode("ascii", "replace").decode("ascii")


def can_print_unicode(stream: object) -> bool:
    """Whether a stream's encoding can print the symbols banks use."""
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        _PROBE.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def remember_formulas(texts: Mapping[tuple[str, bool], str]) -> None:
    """Take formulas' texts that :func:`~quizgym.richtext.tex.tex_to_text` made earlier, by TeX
    and ``small_scripts`` (the drill keeps its first screens' in the compiled-bank cache): they
    are shown as they are, and the TeX reader (with latex2mathml) is not
    imported to read them again."""
    _FORMULAS.update(texts)


def formula_text(tex: str, small_scripts: bool) -> str:
    """A formula as the terminal shows it: :func:`~quizgym.richtext.tex.tex_to_text`."""
    known = _FORMULAS.get((tex, small_scripts))
    if known is not None:
        return known
    from quizgym.richtext.tex import tex_to_text

    return tex_to_text(tex, small_scripts)


def make_console() -> tuple[Console, bool]:
    """The console for stdout (as it is at call time) and whether it needs the ASCII fallback."""
    unicode_ok = can_print_unicode(sys.stdout)
    if not unicode_ok and hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")
    return Console(highlight=False, emoji=False), not unicode_ok


class RichUI:
    """The drill's :class:`~quizgym.practice.drill.DrillUI` on a rich console.

    Bank text is Markdown (:mod:`quizgym.richtext`): it is parsed, never handed to rich's own
    markup, and printed as :class:`rich.text.Text` pieces: emphasis as italic and bold, code in
    bold, formulas as readable Unicode (``$\\bar{x}$`` → ``x̄``, ``$\\sum_{i \\in M}$`` →
    ``Σ_{i∈M}``), tables as boxed tables, lists with their bullets, an image as ``[image: its alt
    text]``. So ``[MASK]`` or ``logits[i]`` reach the screen literally, and every string passes
    through :func:`quizgym.terminal.escape_controls` first, so bank text or an echoed answer holding
    escape sequences or bidi overrides cannot retitle, clear or reorder the terminal: they are shown
    spelled out (````, ``‮``). ``NO_COLOR`` and ``TERM=dumb`` are honoured by rich. When the
    terminal's encoding cannot print the bank's Unicode (``−``, ``≈``, ``∈``), every string goes
    through :func:`plain` first and boxes fall back to ASCII.
    """

    def __init__(
        self,
        console: Console,
        *,
        ascii_only: bool = False,
        read: Callable[[str], str] | None = None,
    ) -> None:
        self.console = console
        self.ascii_only = ascii_only
        self._read = read
        self._meanwhile: Callable[[], None] | None = None

    def at_next_prompt(self, meanwhile: Callable[[], None]) -> None:
        """Call ``meanwhile`` once the next prompt is on the screen, before its line is read."""
        self._meanwhile = meanwhile

    def t(self, text: str, style: str = "") -> Text:
        """Bank or UI text as a literal rich Text: never parsed as markup, never obeyed."""
        inert = escape_controls(text)
        return Text(plain(inert) if self.ascii_only else inert, style=style)

    def say(self, *parts: tuple[str, str] | str) -> None:
        """Print one line assembled from plain strings and (text, style) pairs."""
        line = Text()
        for part in parts:
            text, style = (part, "") if isinstance(part, str) else part
            line.append_text(self.t(text, style))
        self.console.print(line)

    # --- bank text (Markdown) -------------------------------------------------------------

    def rich(
        self, text: str, style: str = "", *, lead: Text | None = None, indent: int = 0
    ) -> RenderableType:
        """Bank text as renderables: its first paragraph after ``lead`` on one line, then its
        other blocks (tables, lists, formulas) below, indented by ``indent``."""
        blocks = list(parse(text).blocks)
        first = Text() if lead is None else lead.copy()
        head = blocks[0] if blocks else None
        if isinstance(head, Paragraph):
            first.append_text(self.inline(head.children, style))
            blocks.pop(0)
        rest = [self.block(b, style) for b in blocks]
        if indent:
            rest = [Padding(r, (0, 0, 0, indent)) for r in rest]
        if not first.plain and rest:
            return Group(*rest)
        return Group(first, *rest) if rest else first

    def say_text(self, text: str, *lead: tuple[str, str] | str, style: str = "") -> None:
        """Print bank text, its first line after the ``lead`` parts (see :meth:`say`)."""
        line = Text()
        for part in lead:
            piece, piece_style = (part, "") if isinstance(part, str) else part
            line.append_text(self.t(piece, piece_style))
        self.console.print(self.rich(text, style, lead=line))

    def inline(self, pieces: tuple[Inline, ...], style: str = "") -> Text:
        """Inline pieces as one styled Text (soft line breaks are spaces)."""
        out = Text()
        for piece in pieces:
            if isinstance(piece, TextPiece):
                out.append_text(self.t(piece.text.replace("\n", " "), style))
            elif isinstance(piece, Code):
                out.append_text(self.t(piece.text, f"{style} bold".strip()))
            elif isinstance(piece, Math):
                out.append_text(self.t(formula_text(piece.tex, not self.ascii_only), style))
            elif isinstance(piece, Emph):
                out.append_text(self.inline(piece.children, f"{style} italic".strip()))
            elif isinstance(piece, Strong):
                out.append_text(self.inline(piece.children, f"{style} bold".strip()))
            elif isinstance(piece, Link):
                out.append_text(self.inline(piece.children, f"{style} underline".strip()))
                out.append_text(self.t(f" ({piece.href})", style))
            elif isinstance(piece, Image):
                out.append_text(self.t(f"[image: {piece.alt or piece.src}]", f"{style} dim"))
            elif isinstance(piece, Break):
                out.append_text(self.t("\n", style))
        return out

    def block(self, block: Block, style: str = "") -> RenderableType:
        """One block of bank text as a renderable."""
        if isinstance(block, Paragraph):
            return self.inline(block.children, style)
        if isinstance(block, ListBlock):
            rows: list[RenderableType] = []
            for number, item in enumerate(block.items, block.start):
                marker = f"{number}. " if block.ordered else "• "
                parts = [self.block(b, style) for b in item]
                head = self.t(marker, style)
                if parts and isinstance(parts[0], Text):
                    head.append_text(parts.pop(0))  # type: ignore[arg-type]
                rows.append(head)
                rows += [Padding(p, (0, 0, 0, len(marker))) for p in parts]
            return Group(*rows)
        if isinstance(block, Quote):
            inner = Group(*(self.block(b, f"{style} italic".strip()) for b in block.children))
            return Padding(inner, (0, 0, 0, 2))
        if isinstance(block, CodeBlock | Verbatim):
            return self.t(block.text, style)
        if isinstance(block, MathBlock):
            formula = formula_text(block.tex, not self.ascii_only)
            return self.t("    " + formula, style)  # set off, as on paper
        if isinstance(block, TableBlock):
            from rich.table import Table

            table = Table(
                box=box.ASCII if self.ascii_only else box.SQUARE,
                show_header=True,
                header_style="bold",
                pad_edge=True,
            )
            for align, cell in zip(block.aligns, block.head, strict=True):
                justify = align if align in ("left", "center", "right") else "left"
                table.add_column(self.inline(cell, style), justify=justify)  # type: ignore[arg-type]
            for row in block.rows:
                table.add_row(*(self.inline(cell, style) for cell in row))
            return table
        if isinstance(block, Rule):
            return self.t("―" * 20, "dim")
        raise AssertionError(block)  # pragma: no cover

    def ask(self, label: str, *, shown: Callable[[], None] | None = None) -> str:
        """Read one line after a label (EOFError when input ends); ``shown`` is called once the
        label is on the screen, before the line is read."""
        prompt = self.t(f"{label} > ", "bold")
        if shown is None:
            shown, self._meanwhile = self._meanwhile, None
        if self._read is not None:
            self.console.print(prompt, end="")
            if shown is not None:
                shown()
            return self._read(label)
        if shown is None:
            return self.console.input(prompt)
        self.console.print(prompt, end="")  # what console.input(prompt) prints first
        shown()
        return self.console.input()

    def show_item(self, view: ItemView) -> None:
        """The item panel: header with progress, prompt, statement and choices."""
        flags = " · new" if view.new else " · again" if view.retry else ""
        partly = f" ~{view.partial}" if view.partial else ""
        score = f"✓{view.right}{partly} ✗{view.wrong}"
        title = f"{view.bank} · {view.position}/{view.total} · {score}{flags}"
        body: list[RenderableType] = [self.rich(view.prompt)]
        if view.statement:
            if parse(view.statement).inline is not None:
                statement = self.t("“", "italic")
                statement.append_text(self.inline(parse(view.statement).inline or (), "italic"))
                statement.append_text(self.t("”", "italic"))
                body.append(statement)
            else:
                body.append(Padding(self.rich(view.statement, "italic"), (0, 0, 0, 2)))
        for letter, text in view.choices:
            body.append(self.rich(text, lead=self.t(f"{letter}. ", "bold"), indent=3))
        if view.multiple:
            body.append(self.t("(several may be right)", "dim"))
        self.console.print()
        self.console.print(
            Panel(
                Group(*body),
                title=self.t(title),
                title_align="left",
                subtitle=self.t(view.item_id, "dim"),
                subtitle_align="right",
            )
        )

    @staticmethod
    def slot_text(slot: SlotView) -> str:
        """The bank text :meth:`show_slot` prints: the part's prompt, then its units in
        brackets (on its line when the prompt is one paragraph)."""
        text = slot.prompt or ""
        if slot.units:
            one_line = parse(text).inline is not None
            text = f"{text}{' ' if one_line else chr(10) * 2}[{slot.units}]"
        return text

    def show_slot(self, slot: SlotView) -> None:
        """A part's prompt."""
        self.say_text(self.slot_text(slot), (f"({slot.label}) ", "bold"))

    def show_note(self, text: str) -> None:
        """A short message (a hint or a feedback may hold bank text: it is read as such)."""
        self.say_text(text, style="cyan")

    def show_verdict(self, verdict: Verdict, *, label: str | None, revealed: bool) -> None:
        """Verdict, how the answer was read, the feedback, and the correct answer in exact form."""
        prefix = f"({label}) " if label else ""
        if revealed:
            self.say_text(verdict.expected, (f"{prefix}Answer: ", "bold"))
            return
        mark, style = _MARKS[str(verdict.status)]
        if verdict.read_as:
            self.say_text(verdict.read_as, (f"{prefix}{mark}", style), " · read as ")
        else:
            self.say((f"{prefix}{mark}", style))
        if verdict.feedback and parse(verdict.feedback).inline is not None:
            self.say_text(verdict.feedback, "  ")
        elif verdict.feedback:
            self.console.print(Padding(self.rich(verdict.feedback), (0, 0, 0, 2)))
        if verdict.tag and not verdict.is_correct:
            self.say_text(mistake_sentence(verdict.tag, said=bool(verdict.feedback)), "  ")
        if verdict.expected and verdict.expected != verdict.read_as:
            self.say_text(verdict.expected, ("  Answer: ", "bold"))

    def show_free_text(self, text: TextInteraction, verdict: Verdict) -> None:
        """Model answer, rubric, and the rubric's suggestion."""
        self.say_text(text.model_answer, ("Model answer: ", "bold"))
        self.say(("Rubric:", "bold"))
        for criterion in text.rubric:
            self.say_text(f"{criterion.criterion} ({criterion.points:g} pt)", "  - ")
        points = f"{verdict.score:g} of {verdict.max_score:g} points"
        said = verdict.feedback.removesuffix(RUBRIC_NOTE).strip()
        self.say_text(said, (f"The rubric finds {points}: ", "dim"))
        self.say(("Your mark is how well you knew it (1–4), not points.", "dim"))

    def show_outcome(self, outcome: Outcome) -> None:
        """Explanation, correction and when the item comes back."""
        if outcome.verdict == "skipped":
            self.say(("Skipped.", "dim"))
        if outcome.correction:
            self.say_text(outcome.correction, ("Correction: ", "bold"))
        if outcome.explanation and outcome.verdict != "skipped":
            self.say_text(outcome.explanation, ("Why: ", "bold"))
        if outcome.scheduled and outcome.next_due is not None:
            rating = outcome.rating.name.lower()
            self.say((f"Rated {rating}; next review {when(outcome.next_due, outcome.now)}.", "dim"))
        elif not outcome.scheduled:
            self.say(("Extra practice: logged, schedule unchanged.", "dim"))

    def show_summary(self, summary: Summary) -> None:
        """The end-of-session summary."""
        minutes, seconds = divmod(int(summary.seconds), 60)
        lines = [
            self.t(
                f"Answered {summary.answered} · right {summary.right} · partly {summary.partial}"
                f" · wrong {summary.wrong} · time {minutes}:{seconds:02d}"
            )
        ]
        if summary.misconceptions:
            met = ", ".join(
                f"{_tag_words(tag)}{f' ({n} times)' if n > 1 else ''}"
                for tag, n in summary.misconceptions
            )
            lines.append(self.t(f"Common mistakes you made: {met}."))
        if summary.missed:
            lines.append(self.t(f"Missed: {', '.join(summary.missed)}"))
        due = f"Due now: {summary.due_now} · within 24 h: {summary.due_day}"
        if summary.next_due is not None:
            due += f" · next {when(summary.next_due, summary.now)}"
        lines.append(self.t(due))
        if summary.unsaved is None:
            lines.append(self.t("Progress saved after every answer.", "dim"))
        else:
            lines.append(
                self.t(
                    f"Not saved: your answer to {summary.unsaved} (the progress database could"
                    " not be written); every answer before it is saved.",
                    "bold",
                )
            )
        self.console.print()
        title = "Session ended early" if summary.quit_early else "Session complete"
        self.console.print(Panel(Group(*lines), title=self.t(title), title_align="left"))


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def render_stats(ui: RichUI, figures: list[BankStats]) -> None:
    """Print ``quizgym stats``: per bank a table, forecast, streak, items missed most, leeches."""
    from rich.table import Table

    from quizgym.practice.stats import LEECH_LAPSES

    if not figures:
        ui.say("No progress yet: run quizgym practice first.")
        return
    for bank in figures:
        table = Table(title=ui.t(f"{bank.bank}"), title_justify="left")
        headers = ("tag", "items", "answers", "accuracy", "retention", "predicted", "due today")
        for header in (*headers, "due 7 d"):
            table.add_column(ui.t(header), justify="left" if header == "tag" else "right")
        for row in bank.tags:
            table.add_row(
                ui.t(row.tag, "bold" if row.tag == "all" else ""),
                ui.t(str(row.items)),
                ui.t(str(row.answers)),
                ui.t(_percent(row.accuracy)),
                ui.t(f"{_percent(row.retention)} of {row.reviews}" if row.reviews else "–"),
                ui.t(f"{_percent(row.predicted)} of {row.learned}" if row.learned else "–"),
                ui.t(str(row.due_today)),
                ui.t(str(row.due_week)),
            )
        ui.console.print(table)
        days = " · ".join(
            f"{'today' if k == 0 else day[5:]} {n}" for k, (day, n) in enumerate(bank.forecast)
        )
        ui.say(("Due: ", "bold"), days, f" · never seen {bank.new}")
        ui.say(("Streak: ", "bold"), f"{bank.streak} day" + ("" if bank.streak == 1 else "s"))
        if bank.scheduler:
            ui.say(("Predicted: ", "bold"), f"recall of the learned items now, by {bank.scheduler}")
        if bank.missed:
            missed = ", ".join(f"{item} ×{n}" for item, n in bank.missed)
            ui.say(("Missed most: ", "bold"), missed)
        if bank.leeches:
            leeches = ", ".join(f"{item} ×{n}" for item, n in bank.leeches)
            ui.say(
                ("Leeches: ", "bold"),
                f"{leeches} (forgotten {LEECH_LAPSES}+ times once learned: reread, rewrite or "
                "split them)",
            )
