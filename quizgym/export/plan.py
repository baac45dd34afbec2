"""What every export format needs to know about a bank, computed once from the engine.

The formats differ in syntax, never in what is right: keys, wrong answers and variants come
from the compiled bank (:class:`~quizgym.solver.CompiledBank`), exactly what the engine accepts
from :mod:`quizgym.accept` (runs of decimals found with the engine's own comparator). This
module turns
a bank into :class:`Pool` objects (one per question, holding one item per exported variant) that
the format modules only translate.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from quizgym.accept import FINE, Run, number_text, runs_of
from quizgym.answers import grade_response
from quizgym.errors import BankError, ExportError, Finding
from quizgym.expr import format_value
from quizgym.model import (
    BLANK,
    AnyQuestion,
    Bank,
    QuestionBase,
    Tolerance,
    question_points,
)
from quizgym.richtext import (
    HtmlStyle,
    Image,
    ImageFile,
    find_image,
    html_plain,
    image_findings,
    image_folder,
    parse,
    to_html,
)
from quizgym.solver import CompiledBank, Key, Variant, compiled, param_values
from quizgym.tolerance import describe, interval
from quizgym.types import blanks_of, correction_of, numeric_of, statement_of

ROOT_CATEGORY = "quizgym"


@dataclass(frozen=True)
class Range:
    """A closed interval of accepted numbers, ``low <= x <= high``, around ``value``."""

    value: float
    low: float
    high: float


@dataclass(frozen=True)
class WrongAnswer:
    """A known wrong number (a bank mistake or a derived one) with its feedback."""

    range: Range
    feedback: str
    credit: float
    tag: str | None
    runs: tuple[Run, ...] = ()
    """What the engine takes for this mistake, on the fine grid (see :mod:`.accept`)."""


@dataclass(frozen=True)
class Blank:
    """One numeric answer blank: the question itself, or one of its parts, with its ranges."""

    part: str | None
    prompt: str
    """The part's prompt ('' for a question without parts)."""
    key: Key
    accept: Range
    """What the engine accepts as a typed decimal, as one interval (auto's rule)."""
    tolerance_text: str
    units: str | None
    points: float
    wrong: tuple[WrongAnswer, ...]
    explanation: str | None
    tolerance: Tolerance = "auto"
    runs: tuple[Run, ...] = ()
    """Exactly what the engine accepts, as runs of decimals on the fine grid (:mod:`.accept`)."""


@dataclass(frozen=True)
class Item:
    """One exported question: a question of the bank in one variant (or one of its parts)."""

    ident: str
    """Stable identifier: the question id, ``id.seedS`` for a variant, ``….part`` for a part."""
    question: AnyQuestion
    variant: Variant
    seed: int | None
    prompt: str
    points: float
    slots: tuple[Blank, ...] = ()
    feedback: str = ""
    """General feedback: the explanation (and a spot-the-error's correction)."""

    @property
    def title(self) -> str:
        """A short human title (the ident, with the seed spelled out)."""
        return self.ident


@dataclass(frozen=True)
class Pool:
    """A question and the items exported for it; a pool of several variants is drawn from."""

    question: AnyQuestion
    items: tuple[Item, ...]
    variants: bool
    """True when the items are alternative variants (pick one), not a single question."""

    @property
    def ident(self) -> str:
        """The question id."""
        return self.question.id


def is_parametric(question: AnyQuestion) -> bool:
    """Whether a question has a parameter with more than one value (so variants differ)."""
    numeric = numeric_of(question)
    return numeric is not None and any(
        len(param_values(p)) > 1 for p in numeric.question.params.values()
    )


def plan(bank: Bank | CompiledBank, *, variants: int = 0, seed: int = 0) -> list[Pool]:
    """Compute what every format exports: one :class:`Pool` per question, in bank order.

    Args:
        bank: the bank, compiled (a plain bank is compiled for this call).
        variants: export this many variants (seeds ``seed`` … ``seed + variants - 1``) of each
            parametric question as a pool; 0 exports the default variant of every question.
        seed: the first seed.

    Returns:
        The pools. Identical draws are exported once, so a pool may hold fewer than
        ``variants`` items.

    Raises:
        ExportError: ``variants`` is negative.
    """
    if variants < 0:
        raise ExportError(f"--variants must be 0 or more, got {variants}")
    book = compiled(bank)
    bad_images = image_findings(book.bank)
    if bad_images:  # an export with a hole where a figure should be is worse than none
        raise BankError(bad_images)
    pools = []
    for question in book.bank.questions:
        if variants and is_parametric(question):
            items: list[Item] = []
            seen: set[tuple[object, ...]] = set()
            for s in range(seed, seed + variants):
                variant = book.variant(question, student=None, seed=s)
                if variant.signature in seen:
                    continue
                seen.add(variant.signature)
                items.append(_item(book, question, variant, f"{question.id}.seed{s}", s))
            pools.append(Pool(question, tuple(items), variants=True))
        else:
            variant = book.variant(question)
            pools.append(
                Pool(question, (_item(book, question, variant, question.id, None),), False)
            )
    return pools


def _item(
    bank: CompiledBank, question: AnyQuestion, variant: Variant, ident: str, seed: int | None
) -> Item:
    prompt = variant.fill(question.prompt)
    numeric = numeric_of(question)
    if numeric is not None and not numeric.question.parts:
        prompt = join_text(prompt, units_note(numeric.question.units, prompt).strip())
    feedback = variant.fill(question.explanation or "")
    correction = correction_of(question)
    if correction is not None:
        feedback = join_text(correction, feedback)
    numbered = numeric is not None or blanks_of(question) is not None
    blanks = _blanks(bank, question, variant) if numbered else ()
    points = question_points(question, bank.bank.defaults)
    return Item(ident, question, variant, seed, prompt, points, blanks, feedback)


def _blanks(bank: CompiledBank, question: AnyQuestion, variant: Variant) -> tuple[Blank, ...]:
    """The numeric slots of a question (a numeric question's, a cloze's number blanks)."""
    out = []
    for slot in bank.numbered(question):
        tolerance = slot.tolerance
        assert tolerance is not None
        key = bank.key(slot, variant)
        low, high = interval(key=key.number, tolerance=tolerance)
        wrong = []
        for mistake in bank.mistakes(slot, variant):
            m_low, m_high = interval(key=mistake.value, tolerance=tolerance)
            wrong.append(
                WrongAnswer(
                    Range(mistake.value, m_low, m_high),
                    mistake.feedback,
                    mistake.credit,
                    mistake.tag,
                    runs_of(bank, target=mistake.value, tolerance=tolerance, grid=FINE),
                )
            )
        part = slot.part
        out.append(
            Blank(
                part=part,
                prompt=join_text(
                    variant.fill(slot.prompt), units_note(slot.units, slot.prompt).strip()
                )
                if part
                else "",
                key=key,
                accept=Range(key.number, low, high),
                tolerance_text=describe(tolerance),
                units=slot.units,
                points=slot.points,
                wrong=tuple(wrong),
                explanation=variant.fill(slot.explanation or "") if part else None,
                tolerance=tolerance,
                runs=runs_of(bank, target=key.number, tolerance=tolerance, grid=FINE),
            )
        )
    return tuple(out)


def split_parts(item: Item) -> list[Item]:
    """One self-contained item per part, for formats without multi-blank numeric questions.

    Each part item repeats the question's prompt (with this variant's numbers), so any one of
    them can be drawn alone. A cloze is one item: its blanks stand in its text.
    """
    if blanks_of(item.question) is not None:
        return [item]
    if len(item.slots) < 2 and not (item.slots and item.slots[0].part):
        return [item]
    out = []
    for slot in item.slots:
        prompt = join_text(item.prompt, slot.prompt, sep="\\\n")
        feedback = join_text(slot.explanation or "", item.feedback)
        out.append(
            Item(
                f"{item.ident}.{slot.part}",
                item.question,
                item.variant,
                item.seed,
                prompt,
                slot.points,
                (slot,),
                feedback,
            )
        )
    return out


def spellings(bank: CompiledBank, item: Item, blank: str) -> list[str]:
    """What a format that compares typed text (not numbers) may accept for one blank of a
    cloze: a word's accepted spellings; a choice's right option; for a number, the key to
    1 to 7 significant figures (and its exact decimal), each only if quizgym gives it full
    credit, shortest first."""
    blanks = blanks_of(item.question)
    assert blanks is not None
    spec = blanks.blank(blank)
    if spec.kind == "word":
        return [text.strip() for text in spec.accept]
    if spec.kind == "choice":
        return [str(spec.answer)]
    slot = bank.slot(f"{item.question.id}.{blank}")
    key = bank.key(slot, item.variant)
    candidates = dict.fromkeys(
        [*(format_value(key.value, digits) for digits in range(1, 8)), key.shown, key.text]
    )
    out = []
    for text in candidates:
        if "e" in text.lower():
            continue  # 8e1: no student types it
        verdict = grade_response(bank, item.question, text, part=blank, variant=item.variant)
        if verdict.max_score and verdict.score >= verdict.max_score:
            out.append(text)
    return sorted(out, key=len)


BLANK_MARK = "QZBLANK{}Q"
"""What stands for a cloze's k-th blank while its text is rendered (letters and digits only,
so no Markup reads it as syntax); :func:`fill_blanks` replaces it."""


def fill_blanks(prompt: str, render: Callable[[str], str], fill: Callable[[str], str]) -> str:
    """A cloze prompt rendered (``render``: Markdown to the format's HTML or text) with each
    ``{{name}}`` blank replaced by the format's own markup for it (``fill(name)``, written
    as is)."""
    names: list[str] = []

    def token(match: re.Match[str]) -> str:
        names.append(match[1])
        return BLANK_MARK.format(len(names) - 1)

    shown = render(BLANK.sub(token, prompt))
    for k, name in enumerate(names):
        shown = shown.replace(BLANK_MARK.format(k), fill(name), 1)
    return shown


def issued_items(
    pools: Sequence[Pool], *, split: bool, math: str = "tex"
) -> list[tuple[str, str, str | None, Variant, str]]:
    """Every exported item as the issue manifest records it: (ident, question, part, variant,
    the text students see), in export order; ``split``: one item per part.

    The text is what the LMS shows as text: the plain text of the HTML written for the item's
    statement and prompt (formulas as ``\\(…\\)`` TeX, or as MathML's characters with
    ``math="mathml"``), so an LMS's response columns match it (tags and entities aside).
    """
    style = HtmlStyle(math=math, image=lambda image: image.src)
    out = []
    for pool in pools:
        for item in pool.items:
            for piece in split_parts(item) if split else [item]:
                one = split and len(piece.slots) == 1 and blanks_of(piece.question) is None
                part = piece.slots[0].part if one else None  # a cloze is one item, never a part
                text = piece.prompt
                statement = statement_of(piece.question)
                if statement is not None:
                    text = join_text(statement, text, sep="\\\n")
                shown = html_plain(to_html(parse(text), style, inline=False))
                out.append((piece.ident, piece.question.id, part, piece.variant, shown))
    return out


def units_note(units: str | None, prompt: str = "") -> str:
    """What is appended to a numeric prompt to name its units: `` (in nats)``; nothing when the
    prompt names them already as the answer's unit ("How fast, in m/s?", "the speed (m/s)" are
    not followed by "(in m/s)"; "the marks of five students" does not name the unit "marks")."""
    if not units:
        return ""
    if re.search(rf"(?:\bin\s+|\()(?:\$\s*)?{re.escape(units)}(?![\w/])", prompt):
        return ""
    return f" (in {units})"


def wrong_feedback_true_false(bank: CompiledBank, question: AnyQuestion, *, answer: bool) -> str:
    """What the engine tells a student who answered ``answer`` (empty when it is right)."""
    return grade_response(bank, question, "true" if answer else "false").feedback


def numeric_answer_text(slot: Blank) -> str:
    """The key as a student would read it, with units: ``ln 10 ≈ 2.3026 nats``."""
    return f"{slot.key}{' ' + slot.units if slot.units else ''}"


# --- shared text helpers --------------------------------------------------------------------------


def html_text(text: str) -> str:
    """Plain text (not bank Markdown: ids, phrases, numbers) as HTML: ``<``, ``>``, ``&``
    escaped, line breaks kept."""
    return html.escape(text, quote=False).replace("\n", "<br>")


def join_text(*texts: str, sep: str = " ") -> str:
    """Bank texts (Markdown) joined into one: on one line, with ``sep`` between them (``" "``,
    or ``"\\\n"`` for a line break), when each is a single paragraph; as paragraphs
    otherwise (a table or a list cannot continue on the same line). Empty texts are left out."""
    present = [t for t in texts if t and t.strip()]
    if all(parse(t).inline is not None for t in present):
        return sep.join(present)
    return "\n\n".join(present)


@dataclass
class Media:
    """The images an export carries: each image of the bank once, under the name the package
    gives it (``url`` turns a found image into what the HTML refers to)."""

    bank: Bank
    url: Callable[[ImageFile], str]
    files: dict[str, ImageFile] = field(default_factory=dict)
    """Name (``figures/x.png``) → the image, in the order first used."""

    def image_url(self, image: Image) -> str:
        """Record an image of the bank's text and return the URL written for it.

        Raises:
            ExportError: the image cannot be found or shipped (``plan`` refuses such banks
                first, with the image's line).
        """
        try:
            found = find_image(image.src, folder=image_folder(self.bank.path))
        except ValueError as exc:
            raise ExportError(str(exc)) from exc
        self.files.setdefault(found.name, found)
        return self.url(found)

    def take(self) -> list[ImageFile]:
        """The images recorded since the last call (for formats that attach files per field)."""
        taken = list(self.files.values())
        self.files.clear()
        return taken


def data_media(bank: Bank) -> Media:
    """Images inlined as ``data:`` URIs (GIFT and Blackboard: one text file carries no files)."""
    return Media(bank, lambda found: found.data_uri())


def lms_html(
    text: str,
    media: Media | None = None,
    *,
    math: str = "tex",
    inline: bool = True,
    qti: bool = False,
) -> str:
    """Bank text (Markdown) as the HTML an LMS imports.

    Args:
        text: the bank text, placeholders filled.
        media: where images go (None: an image prints as its alt text).
        math: ``tex`` (``\\(…\\)`` for the LMS's TeX filter or MathJax) or ``mathml``.
        inline: one paragraph prints without ``<p>`` (a choice, a GIFT field).
        qti: QTI 2.1's XHTML (see :class:`~quizgym.richtext.HtmlStyle`).
    """
    style = HtmlStyle(
        math=math,
        image=media.image_url if media is not None else (lambda image: None),
        qti=qti,
    )
    return to_html(parse(text), style, inline=inline)


def decimal_text(x: float) -> str:
    """A float as a plain positional decimal that reads back as the same float (no exponent)."""
    if not math.isfinite(x):
        raise ExportError(f"cannot export the number {x}")
    text = format(Decimal(repr(float(x))), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in {"-0", ""} else text


def centred(run: Run) -> tuple[str, str]:
    """A run as ``(value, tolerance)`` texts for a symmetric LMS answer (Moodle, GIFT, Cloze).

    The tolerance reaches half a grid step past each end, so the run's end points are inside
    and their refused neighbours outside, far beyond the LMS's own float slack (Moodle adds
    1e-14 relative). Both texts have at most 14 significant figures, which Moodle stores
    unchanged.
    """
    value = (run.low + run.high) / 2
    tolerance = (run.high - run.low) / 2 + run.step / 2
    return number_text(value), number_text(tolerance)


ALLOWED_FRACTIONS: tuple[float, ...] = (
    1.0, 0.9, 0.8333333, 0.8, 0.75, 0.7, 0.6666667, 0.6, 0.5, 0.4, 0.3333333, 0.3, 0.25,
    0.2, 0.1666667, 0.1428571, 0.125, 0.1111111, 0.1, 0.05, 0.0,
)  # fmt: skip
"""``question_bank::fraction_options_full()``: grades Moodle accepts (and their negatives)."""


def moodle_percent(fraction: float, *, where: Where) -> str:
    """A fraction of full credit as the percentage Moodle accepts: 1/3 → ``33.33333``.

    Raises:
        BankError: it is not one of Moodle's allowed grades (located at ``where``).
    """
    for allowed in ALLOWED_FRACTIONS:
        if abs(abs(fraction) - allowed) < 5e-7:
            text = f"{allowed * 100:.5f}".rstrip("0").rstrip(".")
            return text if fraction >= 0 or allowed == 0 else f"-{text}"
    raise where.error(
        f"Moodle accepts no weight of {fraction * 100:.5g}%; "
        "use a credit or a number of correct choices that gives an allowed grade "
        "(1/2, 1/3, …, 1/10, 1/20, 0.3, 0.4, …)"
    )


@dataclass(frozen=True)
class Where:
    """A question (or part) of a bank, to report what a format cannot express."""

    path: str
    line: int
    col: int
    label: str

    def error(self, message: str) -> BankError:
        """A one-finding error, ``path:line:col: label: message`` (exit 1 in the CLI)."""
        return BankError([Finding(self.path, self.line, self.col, f"{self.label}: {message}")])

    def part(self, name: str | None) -> Where:
        """The same place, labelled with a part."""
        return (
            self if name is None else Where(self.path, self.line, self.col, f"{self.label}.{name}")
        )


def locate(bank: Bank, question: QuestionBase, label: str | None = None) -> Where:
    """Where a question stands in its bank."""
    index = next(i for i, q in enumerate(bank.questions) if q.id == question.id)
    path, line, col = bank.locate(("questions", index))
    return Where(path or bank.bank, line, col, label or question.id)


def category_path(bank: Bank, *parts: str) -> str:
    """A category path below the bank's, with ``/`` in names doubled as Moodle wants."""
    names = [ROOT_CATEGORY, bank.bank, *parts]
    return "/".join(n.replace("/", "//") for n in names)
