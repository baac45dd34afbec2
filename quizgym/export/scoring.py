"""How each LMS will score an exported numeric item, emulated from the exported file itself.

Each emulator reads the bytes an export wrote, as the LMS imports them, and scores a typed
answer by the LMS's own rules; :func:`check_export` then holds those scores to the engine's
(:func:`quizgym.answers.grade_response`) on realistic typed answers (:func:`probes`). The rules,
with their sources (the test suite re-states them independently and runs Canvas's converter):

- **Canvas** (classic quizzes, QTI 1.2 through QTIMigrationTool): every ``respcondition``
  becomes a ``responseIf``/``responseElseIf``; ``Qti::NumericInteraction#get_canvas_answers``
  (``gems/plugins/qti_exporter/lib/qti/numeric_interaction.rb``) makes each one holding an
  ``or`` with a ``varequal`` an *exact* answer (exact = the ``varequal``, margin = ``varlte`` −
  exact: symmetric, from the upper bound), or a *precision* answer when its bounds are a
  ``vargt``/``varlte`` pair ending in 5 around the value; each one holding an ``and`` a *range*
  answer (``vargte``, ``varlte``); every answer weighs 100, whatever ``setvar`` says.
  ``Quizzes::QuizQuestion::NumericalQuestion#correct_answer_parts``
  (``app/models/quizzes/quiz_question/numerical_question.rb``) gives full credit when any answer
  covers the response, in BigDecimal; there is no partial credit and no feedback per wrong
  number. Before that, the quiz page (``public/javascripts/take_quiz.js``) replaces the typed
  answer with ``val.toFixed(4)``: 4 decimal places.
- **Moodle** (Moodle XML, Cloze, GIFT): ``question/type/numerical/question.php``: the first
  answer, in file order (``questiontype.php`` loads them ``ORDER BY a.id``), whose
  ``answer ± (tolerance + 1e-14·max(|tolerance|, |answer|, 1e-14))`` holds the value gives its
  fraction; answers and tolerances are stored as PHP floats printed with ``precision`` 14. GIFT
  numeric answers (``question/format/gift/format.php``): after ``#``, everything from the first
  ``~`` is the catch-all; answers are split at ``=``, ``%w%`` is the weight, ``#`` the feedback,
  ``value:tolerance`` or ``min..max``.
- **QTI 2.1**: the specification's response processing (``responseCondition``,
  ``gte``/``lte``/``and``/``or``, ``equal`` with its tolerance modes, ``sum``), the response
  read as a float.
"""

from __future__ import annotations

import io
import math
import re
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import partial
from typing import TYPE_CHECKING, Any

from quizgym.accept import (
    CANVAS,
    FINE,
    Grid,
    accepted_runs,
    describe_runs,
    number_text,
    typed_text,
)
from quizgym.errors import ExportError
from quizgym.export.targets import TARGETS

if TYPE_CHECKING:
    from quizgym.export.plan import Blank, Item
    from quizgym.solver import CompiledBank


Q12 = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
Q21 = "{http://www.imsglobal.org/xsd/imsqti_v2p1}"


# --- Canvas ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CanvasAnswer:
    """One numerical answer as Canvas stores it (all weigh 100)."""

    kind: str
    """``exact_answer``, ``range_answer`` or ``precision_answer``."""
    start: Decimal = Decimal(0)
    end: Decimal = Decimal(0)
    exact: Decimal = Decimal(0)
    margin: Decimal = Decimal(0)
    approximate: Decimal = Decimal(0)
    precision: int = 0

    def covers(self, number: Decimal) -> bool:
        """``NumericalQuestion#correct_answer_parts`` for one answer."""
        if self.kind == "exact_answer":
            return self.exact - self.margin <= number <= self.exact + self.margin
        if self.kind == "precision_answer":
            got, want = number.as_tuple(), self.approximate.as_tuple()
            digits = "".join(map(str, got.digits)).rstrip("0")
            expected = "".join(map(str, want.digits)).rstrip("0")
            return (
                got.sign == want.sign
                and digits[: self.precision] == expected[: self.precision]
                and number.adjusted() == self.approximate.adjusted()
            )
        low, high = sorted((self.start, self.end))
        return low <= number <= high

    def describe(self) -> str:
        """The answer as a teacher reads it."""
        if self.kind == "exact_answer":
            return f"{number_text(self.exact)} ± {number_text(self.margin)}"
        if self.kind == "precision_answer":
            return f"{number_text(self.approximate)} to {self.precision} figures"
        if self.start == self.end:
            return number_text(self.start)
        return f"{number_text(self.start)} to {number_text(self.end)}"


def _ruby_float(text: str | None) -> Decimal:
    """``text.to_f`` then ``BigDecimal(float.to_s)``: the shortest decimal of the double."""
    try:
        return Decimal(repr(float((text or "").strip() or 0)))
    except ValueError:
        return Decimal(0)


def canvas_answers(condition: ET.Element) -> CanvasAnswer | None:
    """The answer Canvas makes of one ``respcondition`` (None: it makes none)."""
    var = condition.find(f"{Q12}conditionvar")
    if var is None:
        return None
    either = var.find(f".//{Q12}or")
    if either is not None:
        exact = either.find(f".//{Q12}varequal")
        if exact is None:
            return None
        upper = either.find(f".//{Q12}and/{Q12}varlte")
        lower_gt = either.find(f".//{Q12}and/{Q12}vargt")
        value = Decimal((exact.text or "0").strip())
        if lower_gt is not None and upper is not None:
            lo, hi = (Decimal((e.text or "0").strip()) for e in (lower_gt, upper))
            fives = all(str(e.text).replace("0", "").replace(".", "").endswith("5")
                        for e in (lower_gt, upper))  # fmt: skip
            width = hi - lo
            if fives and value - lo == hi - value and width.normalize().as_tuple().digits == (1,):
                return CanvasAnswer(
                    kind="precision_answer",
                    approximate=_ruby_float(exact.text),
                    precision=value.adjusted() - width.adjusted() + 1,
                )
        margin = (Decimal((upper.text or "0").strip()) - value) if upper is not None else 0
        return CanvasAnswer(
            kind="exact_answer",
            exact=_ruby_float(exact.text),
            margin=_ruby_float(str(margin)),
        )
    both = var.find(f".//{Q12}and")
    if both is None:
        return None
    lower, upper = both.find(f"{Q12}vargte"), both.find(f"{Q12}varlte")
    if lower is None and upper is None:
        return None
    return CanvasAnswer(
        kind="range_answer",
        start=_ruby_float(lower.text if lower is not None else None),
        end=_ruby_float(upper.text if upper is not None else None),
    )


def read_canvas(data: bytes) -> dict[str, list[list[CanvasAnswer]]]:
    """Canvas's answers for every numerical item of a QTI 1.2 package, by item ident."""
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        names = [n for n in package.namelist() if n.endswith(".xml") and "/" in n]
        documents = [package.read(n) for n in names if not n.endswith("assessment_meta.xml")]
    out: dict[str, list[list[CanvasAnswer]]] = {}
    for document in documents:
        for item in ET.fromstring(document).iter(f"{Q12}item"):  # noqa: S314 (our export)
            fields = {
                f.findtext(f"{Q12}fieldlabel"): f.findtext(f"{Q12}fieldentry")
                for f in item.iter(f"{Q12}qtimetadatafield")
            }
            if fields.get("question_type") != "numerical_question":
                continue
            answers = [
                answer
                for condition in item.iter(f"{Q12}respcondition")
                if (answer := canvas_answers(condition)) is not None
            ]
            out[item.get("ident", "")] = [answers]
    return out


def canvas_typed(text: str) -> Decimal | None:
    """What Canvas's quiz page submits for a typed answer: ``toFixed(4)``, zeros stripped.

    ``toFixed`` rounds the double's exact value half away from zero; a text that is no number
    is blanked, which Canvas scores 0.
    """
    value = _plain_number(text)
    if value is None:
        return None
    rounded = Decimal(value).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)
    return Decimal(number_text(rounded))


def canvas_score(answers: list[CanvasAnswer], text: str) -> Score:
    """Canvas's score (1 or 0) for a typed answer."""
    number = canvas_typed(text)
    if number is None:
        return Score(credit=0.0, seen=None)
    hit = any(a.covers(number) for a in answers)
    return Score(credit=1.0 if hit else 0.0, seen=number_text(number))


# --- Moodle -------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class MoodleAnswer:
    """One numerical answer as Moodle stores it."""

    answer: float
    tolerance: float
    fraction: float
    feedback: str = ""

    @classmethod
    def stored(cls, answer: str, tolerance: str, fraction: float, feedback: str) -> MoodleAnswer:
        """An answer as ``save_question_options`` keeps it: a float, printed to 14 digits."""
        return cls(
            answer=_php14(answer),
            tolerance=abs(_php14(tolerance or "0")),
            fraction=fraction,
            feedback=feedback,
        )

    def interval(self) -> tuple[float, float]:
        """``qtype_numerical_answer::get_tolerance_interval`` (nominal), in float arithmetic."""
        epsilon = 1e-14  # pow(10, -ini_get('precision')), precision = 14
        tolerance = self.tolerance + epsilon * max(abs(self.tolerance), abs(self.answer), epsilon)
        return self.answer - tolerance, self.answer + tolerance

    def within(self, value: float) -> bool:
        """``within_tolerance``."""
        low, high = self.interval()
        return low <= value <= high


def _php14(text: str) -> float:
    try:
        return float(format(float(text), ".14G"))
    except ValueError as exc:
        raise ExportError(f"Moodle reads no number in {text!r}") from exc


def moodle_value(text: str) -> float | None:
    """``qtype_numerical_answer_processor::apply_units`` on an answer without units."""
    response = text.replace(" ", "")
    response = re.sub(r"(?:e|E|(?:x|\*|×)10(?:\^|\*\*))([+-]?\d+)", r"e\1", response)
    if "." in response or response.count(",") > 1:
        response = response.replace(",", "")
    else:
        response = response.replace(",", ".")
    match = re.match(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?", response)
    if match is None or match.group(0) != response:
        return None  # no number, or a unit this export never declares
    return float(match.group(0))


def moodle_score(answers: list[MoodleAnswer], text: str) -> Score:
    """Moodle's fraction for a typed answer: the first answer within tolerance."""
    value = moodle_value(text)
    if value is None:
        return Score(credit=0.0, seen=None)
    for answer in answers:
        if answer.within(value):
            return Score(credit=answer.fraction, seen=repr(value), feedback=answer.feedback)
    return Score(credit=0.0, seen=repr(value))


_CLOZE = re.compile(r"\{(\d*):(?:NUMERICAL|NM):(.*?)(?<!\\)\}", re.DOTALL)
MOODLE_CLOZE = "cloze"
"""Moodle XML's ``type`` of an embedded-answers question (a format's word, not a quizgym type)."""


def read_moodle(data: bytes) -> dict[str, list[list[MoodleAnswer]]]:
    """Moodle's answers for every numerical question (and Cloze blank), by ``idnumber``."""
    out: dict[str, list[list[MoodleAnswer]]] = {}
    for question in ET.fromstring(data).iter("question"):  # noqa: S314 (our export)
        kind = question.get("type")
        ident = question.findtext("idnumber") or ""
        if kind == "numerical":
            out[ident] = [
                [
                    MoodleAnswer.stored(
                        (a.findtext("text") or "").strip(),
                        (a.findtext("tolerance") or "0").strip(),
                        float(a.get("fraction", "0")) / 100,
                        a.findtext("feedback/text") or "",
                    )
                    for a in question.findall("answer")
                ]
            ]
        elif kind == MOODLE_CLOZE:
            text = question.findtext("questiontext/text") or ""
            out[ident] = [_cloze_answers(m.group(2)) for m in _CLOZE.finditer(text)]
    return out


def _cloze_answers(body: str) -> list[MoodleAnswer]:
    """``qtype_multianswer_extract_question`` for a NUMERICAL blank: ``~``-separated answers,
    ``=`` or ``%w%`` weights, ``value:tolerance``, ``#feedback``."""
    answers = []
    for alternative in re.split(r"(?<!\\)~", body):
        weight = 1.0 if alternative.startswith("=") else 0.0
        alternative = alternative.removeprefix("=")
        percent = re.match(r"%(-?\d+(?:\.\d+)?)%", alternative)
        if percent:
            weight = float(percent.group(1)) / 100
            alternative = alternative[percent.end() :]
        value, _, feedback = alternative.partition("#")
        number, _, tolerance = value.partition(":")
        answers.append(MoodleAnswer.stored(number, tolerance or "0", weight, feedback))
    return answers


def read_gift(data: bytes) -> dict[str, list[list[MoodleAnswer]]]:
    """Moodle's answers for every numerical GIFT question, by its ``// [id:…]`` comment."""
    out: dict[str, list[list[MoodleAnswer]]] = {}
    for block in data.decode("utf-8").split("\n\n"):
        ident = re.search(r"^// \[id:(.*)\]$", block, flags=re.MULTILINE)
        body = _gift_answer_block(block)
        if ident is None or body is None or not body.startswith("#"):
            continue
        out[ident.group(1)] = [_gift_numerical(body)]
    return out


_ESCAPED = re.compile(r"\\(.)")


def _gift_answer_block(block: str) -> str | None:
    """The text between a question's answer braces, general feedback removed."""
    text = "\n".join(line for line in block.splitlines() if not line.startswith("//"))
    start = re.search(r"(?<!\\)\{", text)
    end = [m.start() for m in re.finditer(r"(?<!\\)\}", text)]
    if start is None or not end:
        return None
    body = text[start.end() : end[-1]]
    general = body.find("####")
    return (body if general < 0 else body[:general]).strip()


def _gift_numerical(body: str) -> list[MoodleAnswer]:
    """``qformat_gift::readquestion``, case ``numerical``, with escapes held back as Moodle's
    ``escapedchar_pre`` does."""
    held = _ESCAPED.sub(lambda m: f"\0{ord(m.group(1))}\0", body[1:])
    held = held.split("~", 1)[0]
    answers = []
    for answer in (a.strip() for a in held.split("=")):
        if not answer:
            continue
        weight = 1.0
        if re.match(r"^%-*([0-9]{1,2})\.?([0-9]*)%", answer):
            rest = answer[1:]
            weight = float(rest[: rest.index("%")]) / 100
            answer = rest[rest.index("%") + 1 :]
        value, _, feedback = answer.partition("#")
        value = value.strip()
        if ".." in value[1:]:
            low, high = (float(p) for p in value.split("..", 1))
            centre = (high + low) / 2
            number, tolerance = repr(centre), repr(high - centre)
        elif ":" in value[1:]:
            number, tolerance = (p.strip() for p in value.split(":", 1))
        else:
            number, tolerance = value, "0"
        text = re.sub(r"\0(\d+)\0", lambda m: chr(int(m.group(1))), feedback)
        answers.append(MoodleAnswer.stored(number, tolerance, weight, text))
    return answers


# --- QTI 2.1 ------------------------------------------------------------------------------


Value = float | bool | str | list[str] | None


@dataclass
class Qti21Item:
    """One QTI 2.1 item's response processing, runnable."""

    processing: ET.Element
    outcomes: dict[str, Value]
    correct: dict[str, Value]
    responses: list[str]

    def run(self, responses: dict[str, float | None]) -> dict[str, Value]:
        """The outcome values after response processing for these float responses."""
        state: dict[str, Value] = {**self.outcomes, **responses}
        _rules(list(self.processing), state, self.correct)
        return state


def read_qti21(data: bytes) -> dict[str, Qti21Item]:
    """Every item of a QTI 2.1 package with a float response, by its identifier."""
    out: dict[str, Qti21Item] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        for name in package.namelist():
            if not (name.startswith("items/") and name.endswith(".xml")):
                continue
            root = ET.fromstring(package.read(name))  # noqa: S314 (our export)
            declarations = root.findall(f"{Q21}responseDeclaration")
            floats = [d.get("identifier", "") for d in declarations if d.get("baseType") == "float"]
            processing = root.find(f"{Q21}responseProcessing")
            if not floats or processing is None:
                continue
            outcomes: dict[str, Value] = {}
            for outcome in root.findall(f"{Q21}outcomeDeclaration"):
                default = outcome.findtext(f"{Q21}defaultValue/{Q21}value")
                multiple = outcome.get("cardinality") == "multiple"
                outcomes[outcome.get("identifier", "")] = (
                    [] if multiple else (float(default) if default is not None else None)
                )
            correct: dict[str, Value] = {
                d.get("identifier", ""): _float(d.findtext(f"{Q21}correctResponse/{Q21}value"))
                for d in declarations
            }
            out[root.get("identifier", "")] = Qti21Item(processing, outcomes, correct, floats)
    return out


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def qti21_value(text: str) -> float | None:
    """A typed answer as a float response (None: no valid float, so NULL)."""
    return _plain_number(text)


def _rules(rules: list[ET.Element], state: dict[str, Value], correct: dict[str, Value]) -> None:
    for rule in rules:
        tag = rule.tag.removeprefix(Q21)
        if tag == "responseCondition":
            for branch in rule:
                name = branch.tag.removeprefix(Q21)
                if name == "responseElse" or _eval(branch[0], state, correct) is True:
                    start = 0 if name == "responseElse" else 1
                    _rules(list(branch)[start:], state, correct)
                    break
        elif tag == "setOutcomeValue":
            state[rule.get("identifier", "")] = _eval(rule[0], state, correct)
        else:
            raise ExportError(f"the QTI 2.1 emulator does not run <{tag}>")


def _eval(node: ET.Element, state: dict[str, Value], correct: dict[str, Value]) -> Value:
    tag = node.tag.removeprefix(Q21)
    args = [_eval(child, state, correct) for child in node] if len(node) else []
    if tag == "baseValue":
        kind, text = node.get("baseType"), (node.text or "").strip()
        if kind in {"float", "integer"}:
            return float(text)
        return text == "true" if kind == "boolean" else text
    if tag == "variable":
        return state.get(node.get("identifier", ""))
    if tag == "correct":
        return correct.get(node.get("identifier", ""))
    if tag in {"and", "or"}:
        decisive = tag == "or"  # or: any true is true; and: any false is false
        if any(a is decisive for a in args):
            return decisive
        return None if any(a is None for a in args) else not decisive
    if tag == "not":
        return None if args[0] is None else not args[0]
    if tag == "isNull":
        return args[0] is None or args[0] == []
    if tag == "multiple":
        out: list[str] = []
        for a in args:
            out += a if isinstance(a, list) else [] if a is None else [str(a)]
        return out
    if tag == "sum":
        numbers = [a for a in args if isinstance(a, float)]
        return None if len(numbers) < len(args) else math.fsum(numbers)
    if tag in {"gte", "lte", "gt", "lt", "match", "equal"}:
        a, b = args
        if not isinstance(a, float) or not isinstance(b, float):
            return None
        return _compare(tag, a, b, node)
    raise ExportError(f"the QTI 2.1 emulator does not evaluate <{tag}>")


def _compare(tag: str, a: float, b: float, node: ET.Element) -> bool:
    if tag == "equal":
        mode = node.get("toleranceMode", "exact")
        if mode == "exact":
            return a == b
        t0, _, t1 = (node.get("tolerance") or "0").partition(" ")
        below, above = float(t0), float(t1 or t0)
        if mode == "relative":
            low, high = b * (1 - below / 100), b * (1 + above / 100)
        else:
            low, high = b - below, b + above
        lower_ok = a >= low if node.get("includeLowerBound", "true") == "true" else a > low
        upper_ok = a <= high if node.get("includeUpperBound", "true") == "true" else a < high
        return lower_ok and upper_ok
    return {"gte": a >= b, "lte": a <= b, "gt": a > b, "lt": a < b, "match": a == b}[tag]


def _plain_number(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


# --- probes and the check -----------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Score:
    """What an LMS gives one typed answer."""

    credit: float
    """Fraction of the blank's points."""
    seen: str | None
    """The number the LMS scored (None: not a number to it)."""
    feedback: str = ""


@dataclass(frozen=True, kw_only=True)
class Probe:
    """A typed answer to try, and why it is realistic."""

    text: str
    why: str
    edge: bool = False
    """A 6-figure answer next to an edge of what the engine accepts, finer than some LMSs see."""


def _figures(value: float, digits: int) -> Decimal:
    exact = Decimal(repr(value))
    if exact == 0:
        return exact
    quantum = Decimal(1).scaleb(exact.adjusted() - digits + 1)
    return exact.quantize(quantum, rounding=ROUND_HALF_UP)


def _text(value: Decimal) -> str:
    """A rounded number as typed, trailing zeros kept (2.30 stays 2.30)."""
    return format(value, "f")


def probes(slot: Blank, *, grid: Grid = FINE) -> list[Probe]:
    """Realistic typed answers for one blank: the key at 3-6 significant figures (and in full),
    truncated, near misses on both sides, the edges of what the engine accepts (on the LMS's
    grid, and at 6 figures), each known mistake and the sign slip."""
    key = slot.key.number
    out = [Probe(text=repr(key) if key != int(key) else str(int(key)), why="the key in full")]
    out += [
        Probe(text=_text(_figures(key, n)), why=f"the key to {n} figures") for n in (3, 4, 5, 6)
    ]
    if key:
        truncated = Decimal(repr(key)).quantize(
            Decimal(1).scaleb(Decimal(repr(key)).adjusted() - 3), rounding="ROUND_DOWN"
        )
        out.append(Probe(text=_text(truncated), why="the key truncated to 4 figures"))
        for factor, side in ((1.002, "above"), (0.998, "below"), (1.02, "above"), (0.98, "below")):
            share = f"{abs(factor - 1) * 100:g}%"
            out.append(
                Probe(text=_text(_figures(key * factor, 4)), why=f"a near miss {share} {side}")
            )
        rounded = _figures(key, 3)
        unit = Decimal(1).scaleb(rounded.adjusted() - 2)
        out += [
            Probe(text=_text(rounded + unit), why="the key to 3 figures, last digit +1"),
            Probe(text=_text(rounded - unit), why="the key to 3 figures, last digit -1"),
        ]
    for run in accepted_runs(target=key, tolerance=slot.tolerance, grid=grid):
        # The edges the LMS itself can tell apart, and the numbers just past them.
        for edge, outside in ((run.low, run.low - run.step), (run.high, run.high + run.step)):
            out.append(Probe(text=typed_text(edge), why="an edge of what quizgym accepts"))
            out.append(Probe(text=typed_text(outside), why="just past that edge"))
    for run in slot.runs:
        if run.low == run.high:
            continue
        for edge, inward in ((run.low, "ROUND_CEILING"), (run.high, "ROUND_FLOOR")):
            unit = Decimal(1).scaleb(edge.adjusted() - 5)
            inside = edge.quantize(unit, rounding=inward)
            outside = inside - unit if inward == "ROUND_CEILING" else inside + unit
            out.append(Probe(text=_text(inside), why="6 figures just inside an edge", edge=True))
            out.append(Probe(text=_text(outside), why="6 figures just outside an edge", edge=True))
    out.append(Probe(text=_text(_figures(-key, 3)), why="the sign slip"))
    for wrong in slot.wrong:
        label = f"the {wrong.tag} mistake" if wrong.tag else "a known mistake"
        value = wrong.range.value
        out.append(Probe(text=_text(_figures(value, 3)), why=f"{label}, to 3 figures"))
        out.append(Probe(text=_text(_figures(value, 5)), why=f"{label}, to 5 figures"))
    seen: set[str] = set()
    unique = []
    for probe in out:
        if probe.text not in seen and probe.text not in {"-0", "-0.00"}:
            seen.add(probe.text)
            unique.append(probe)
    return unique


KINDS: dict[str, tuple[bool, str]] = {
    "refused": (True, "correct answer refused"),
    "accepted": (True, "wrong answer accepted"),
    "partial": (False, "{target} cannot give this partial credit"),
    "rounding": (False, "{target} rounds answers to 4 decimal places"),
    "typing": (False, "{target} scores the number alone, quizgym also the figures typed"),
    "feedback": (False, "mistake feedback is shown to every wrong answer ({target} attaches "
                 "none to a wrong number)"),
}  # fmt: skip
"""Finding kinds: whether ``--check`` fails on it, and how the report names it."""


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One typed answer an LMS scores differently from quizgym (or a note on the blank)."""

    kind: str
    """A key of :data:`KINDS`."""
    text: str = ""
    """What was typed and how each scored, e.g. ``1.15 (the mean-vs-sum mistake): 0%, 50%``."""
    typed: bool = True
    """A finding on one typed answer (each typed answer the LMS scores otherwise has one);
    False for a note on the blank itself (feedback, an answer not imported)."""

    @property
    def severe(self) -> bool:
        """A correct answer refused or a wrong one accepted (``--check`` exits 1)."""
        return KINDS[self.kind][0]


@dataclass(frozen=True, kw_only=True)
class BlankCheck:
    """One numeric blank of one exported item in one target."""

    ident: str
    accepts: str
    """What the LMS accepts for full credit, as a teacher reads it."""
    probes: int
    agreed: int
    findings: tuple[Finding, ...]


@dataclass(frozen=True, kw_only=True)
class CheckReport:
    """What ``quizgym export … --check`` prints."""

    format: str
    target: str
    schema: str
    blanks: tuple[BlankCheck, ...]

    @property
    def failed(self) -> bool:
        """Whether any correct answer would be refused or any wrong one accepted."""
        return any(f.severe for b in self.blanks for f in b.findings)

    def lines(self) -> list[str]:
        """The report: per blank what the LMS accepts, then each kind of difference."""
        out = [f"check {self.format} as {self.target} scores it; schema: {self.schema}"]
        for blank in self.blanks:
            out.append(f"{blank.ident}: accepts {blank.accepts}")
            for kind, (severe, label) in KINDS.items():
                found = [f for f in blank.findings if f.kind == kind]
                if not found:
                    continue
                head = ("DIFFERS: " if severe else "note: ") + label.format(target=self.target)
                details = "; ".join(f.text for f in found if f.text)
                out.append(f"  {head}" + (f": {details}" if details else ""))
        out.append(self.summary())
        return out

    def summary(self) -> str:
        """The last line: every typed answer counted once, by one rule: scored as quizgym
        scores it, scored otherwise where the LMS can do no better (a note above: partial credit,
        figures typed, rounding just at an edge), or scored wrong (a correct answer refused or a
        wrong one accepted); and the blanks the LMS imports no answer for."""
        probes = sum(b.probes for b in self.blanks)
        agreed = sum(b.agreed for b in self.blanks)
        typed = [f for b in self.blanks for f in b.findings if f.typed]
        wrong = sum(1 for f in typed if f.severe)
        noted = len(typed) - wrong
        missing = sum(1 for b in self.blanks for f in b.findings if f.severe and not f.typed)
        verdict = "FAILED" if self.failed else "ok"
        line = (
            f"{verdict}: {len(self.blanks)} numeric blanks, {probes} typed answers: {agreed} "
            f"scored as quizgym scores them, {noted} otherwise as noted, {wrong} scored wrong"
        )
        return line + (f"; {missing} blanks with no answer imported" if missing else "")

    def warnings(self) -> list[str]:
        """One line per blank scored wrong (a correct answer refused or a wrong one accepted),
        with the first typed answer of each kind: what a plain export prints on stderr."""
        out = []
        for blank in self.blanks:
            severe = [
                f"{label}: {first.text}" if first.text else label
                for kind, (bad, label) in KINDS.items()
                if bad
                for first in [f for f in blank.findings if f.kind == kind][:1]
            ]
            if severe:
                out.append(
                    f"warning: {blank.ident}: {self.target} scores it unlike quizgym: "
                    + "; ".join(severe)
                )
        return out


Scorer = Callable[[str, float], Score]
"""Scores a typed answer to one blank worth the given points."""


def _scorers(fmt: str, data: bytes) -> tuple[dict[str, list[Scorer]], Callable[[str, int], str]]:
    """For each exported item, one scorer per blank; and how to name a blank's accepted set."""
    if fmt == "qti12":
        canvas = read_canvas(data)

        def canvas_accepts(ident: str, index: int) -> str:
            return ", ".join(a.describe() for a in canvas[ident][index]) or "nothing"

        scorers: dict[str, list[Scorer]] = {
            ident: [partial(_canvas_scorer, answers) for answers in blanks]
            for ident, blanks in canvas.items()
        }
        return scorers, canvas_accepts
    if fmt in {"moodle", "gift"}:
        moodle = read_moodle(data) if fmt == "moodle" else read_gift(data)

        def moodle_accepts(ident: str, index: int) -> str:
            spans = [_span(*a.interval()) for a in moodle[ident][index] if a.fraction >= 1]
            return ", ".join(spans) or "nothing"

        scorers = {
            ident: [partial(_moodle_scorer, answers) for answers in blanks]
            for ident, blanks in moodle.items()
        }
        return scorers, moodle_accepts
    if fmt == "qti21":
        items = read_qti21(data)
        scorers = {
            ident: [partial(_qti21_score, item, response) for response in item.responses]
            for ident, item in items.items()
        }
        return scorers, lambda ident, index: ""
    raise ExportError(f"--check does not emulate {fmt}; it checks {', '.join(TARGETS)}")


def _span(low: float, high: float) -> str:
    """An LMS interval as the decimals of up to 12 figures it holds: ``1.95000000001 to 2.05``."""
    step = FINE.step(max(abs(low), abs(high)))
    first = (Decimal(low) / step).to_integral_value(rounding="ROUND_CEILING") * step
    last = (Decimal(high) / step).to_integral_value(rounding="ROUND_FLOOR") * step
    ends = [number_text(first), number_text(last)]
    return ends[0] if ends[0] == ends[1] else f"{ends[0]} to {ends[1]}"


def _canvas_scorer(answers: list[CanvasAnswer], text: str, points: float) -> Score:
    return canvas_score(answers, text)


def _moodle_scorer(answers: list[MoodleAnswer], text: str, points: float) -> Score:
    return moodle_score(answers, text)


def _qti21_score(item: Qti21Item, response: str, text: str, points: float) -> Score:
    value = qti21_value(text)
    after = item.run({**dict.fromkeys(item.responses), response: value})
    score = after.get("SCORE")
    if not isinstance(score, float):
        return Score(credit=0.0, seen=None)
    return Score(credit=score / points, seen=repr(value))


def check_export(
    bank: CompiledBank,
    *,
    fmt: str,
    data: bytes,
    variants: int = 0,
    seed: int = 0,
    schema: bool = True,
) -> CheckReport:
    """Score realistic typed answers to every numeric item as the LMS will, and compare.

    Args:
        bank: the compiled bank that was exported.
        fmt: the format (a key of :data:`TARGETS`).
        data: the exported file's bytes, read back as the LMS imports them.
        variants: the ``--variants`` of the export.
        seed: its ``--seed``.
        schema: also validate the file against the official schema (``report.schema``).

    Returns:
        Per blank, what the LMS accepts and every way it scores differently.

    Raises:
        ExportError: the format is not one the check emulates.
    """
    from quizgym.answers import grade_response
    from quizgym.export.plan import plan, split_parts
    from quizgym.types import blanks_of

    if fmt not in TARGETS:
        raise ExportError(f"--check does not emulate {fmt}; it checks {', '.join(TARGETS)}")
    target = TARGETS[fmt]
    scorers, accepts = _scorers(fmt, data)
    split = fmt in {"qti12", "gift"}
    blanks: list[BlankCheck] = []
    for pool in plan(bank, variants=variants, seed=seed):
        for whole in pool.items:
            if not whole.slots:
                continue
            if fmt == "qti12" and blanks_of(whole.question) is not None:
                continue  # Canvas compares a cloze's blanks as text: the export says how
            pieces = split_parts(whole) if split else [whole]
            for piece in pieces:
                ident = piece.ident if split or fmt != "qti21" else _ncname(piece.ident)
                found = scorers.get(ident)
                for index, slot in enumerate(piece.slots):
                    name = piece.ident if split else whole.ident
                    if slot.part and not split:
                        name = f"{name}.{slot.part}"
                    if found is None or index >= len(found):
                        blanks.append(
                            BlankCheck(
                                ident=name,
                                accepts="nothing",
                                probes=0,
                                agreed=0,
                                findings=(
                                    Finding(
                                        kind="refused",
                                        text=f"{target} imports no answer",
                                        typed=False,
                                    ),
                                ),
                            )  # fmt: skip
                        )
                        continue

                    def engine(text: str, it: Item = whole, s: Blank = slot) -> float:
                        verdict = grade_response(
                            bank, it.question, text, part=s.part, variant=it.variant
                        )
                        return verdict.score / verdict.max_score if verdict.max_score else 0.0

                    shown = describe_runs(slot.runs) if fmt == "qti21" else accepts(ident, index)
                    blanks.append(
                        _check_blank(name, slot, found[index], engine, target, fmt, shown)
                    )
    checked = validate_schema(fmt, data) if schema else "not checked"
    return CheckReport(format=fmt, target=target, schema=checked, blanks=tuple(blanks))


def _ncname(ident: str) -> str:
    return ident if ident[:1].isalpha() else f"q{ident}"


def _check_blank(
    name: str,
    slot: Blank,
    score: Scorer,
    engine: Callable[[str], float],
    target: str,
    fmt: str,
    shown: str,
) -> BlankCheck:
    findings: list[Finding] = []
    agreed = 0
    tried = probes(slot, grid=CANVAS if fmt == "qti12" else FINE)
    for probe in tried:
        ours, theirs = engine(probe.text), score(probe.text, slot.points)
        lms = theirs.credit
        if math.isclose(ours, lms, abs_tol=1e-9):
            agreed += 1
            continue
        findings.append(_finding(probe, ours, theirs, engine, fmt))
    if fmt == "qti12" and slot.wrong:
        findings.append(Finding(kind="feedback", typed=False))
    return BlankCheck(
        ident=name, accepts=shown, probes=len(tried), agreed=agreed, findings=tuple(findings)
    )


def _finding(
    probe: Probe,
    ours: float,
    theirs: Score,
    engine: Callable[[str], float],
    fmt: str,
) -> Finding:
    lms = theirs.credit
    number = _decimal(probe.text)
    rounded = (
        theirs.seen is not None
        and number is not None
        and fmt == "qti12"
        and Decimal(theirs.seen) != number
    )
    seen = f" as {theirs.seen}" if rounded else ""
    what = f"{probe.text} ({probe.why}){seen}: {_pct(lms)}, quizgym {_pct(ours)}"
    if 0 < ours < 1 and lms == 0:
        return Finding(kind="partial", text=what)
    # quizgym reads how the number was typed (2.3 has 2 figures, 2.30 has 3); an LMS sees the
    # number only, and the export scores each number as quizgym scores it typed the plain way
    # (accept.typed_text). A typed answer that differs from that only in how it is typed gets
    # that score: 10.50 is 10.5 to an LMS.
    plain = typed_text(number) if number is not None else probe.text
    if plain != probe.text and math.isclose(engine(plain), lms, abs_tol=1e-9):
        return Finding(kind="typing", text=f"{what} (as {plain}: {_pct(lms)})")
    if probe.edge and rounded:
        return Finding(kind="rounding", text=what)
    if ours >= 1 > lms:
        return Finding(kind="refused", text=what)
    return Finding(kind="accepted", text=what)


def _pct(fraction: float) -> str:
    return f"{fraction * 100:.4g}%"


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


# --- schema-level validation --------------------------------------------------------------


def validate_schema(fmt: str, data: bytes) -> str:
    """Validate the export against the official schema shipped in ``quizgym/export/schemas``.

    Returns:
        One line: which schema, and ok, or what is invalid, or why it could not run (lxml is an
        optional dependency).
    """
    from importlib.util import find_spec
    from pathlib import Path

    if fmt not in {"qti12", "qti21"}:
        return "no official schema for this format"
    if find_spec("lxml") is None:
        return "schema not checked: install lxml (pip install lxml) for a schema-level check"
    from lxml import etree  # type: ignore[import-untyped]

    schemas = Path(__file__).resolve().parent / "schemas"
    problems: list[str] = []
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        for name in package.namelist():
            if not name.endswith(".xml") or name.endswith(("assessment_meta.xml", "manifest.xml")):
                continue
            doc = etree.fromstring(package.read(name))
            if fmt == "qti12":
                for element in doc.iter():
                    if isinstance(element.tag, str) and element.tag.startswith("{"):
                        element.tag = etree.QName(element).localname
                etree.cleanup_namespaces(doc)
                validator = etree.DTD(str(schemas / "qti12" / "ims_qtiasiv1p2p1.dtd"))
            else:
                validator = _qti21_schema(str(schemas / "qti21" / "qtiv2p1" / "imsqti_v2p1.xsd"))
            if not validator.validate(doc):
                problems.append(f"{name}: {validator.error_log.last_error}")
    label = "ASI 1.2.1 DTD" if fmt == "qti12" else "imsqti_v2p1.xsd"
    return f"{label}: ok" if not problems else f"{label}: INVALID: " + "; ".join(problems[:3])


_XSD: dict[str, Any] = {}


def _qti21_schema(path: str) -> Any:
    from lxml import etree

    if path not in _XSD:
        _XSD[path] = etree.XMLSchema(etree.parse(path))
    return _XSD[path]


__all__ = [
    "CANVAS",
    "FINE",
    "TARGETS",
    "BlankCheck",
    "CanvasAnswer",
    "CheckReport",
    "Finding",
    "Grid",
    "MoodleAnswer",
    "Probe",
    "Qti21Item",
    "Score",
    "accepted_runs",
    "canvas_score",
    "canvas_typed",
    "check_export",
    "moodle_score",
    "moodle_value",
    "probes",
    "read_canvas",
    "read_gift",
    "read_moodle",
    "read_qti21",
    "validate_schema",
]
