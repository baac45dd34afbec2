"""Each LMS's import and scoring rules, re-stated from its own source for the scoring tests.

Written apart from ``quizgym/export/scoring.py`` (which the tests hold to these) and read off
the LMSs' code, cited file by file:

- Canvas: its QTI 1.2 importer is QTIMigrationTool (run for real by the tests), then
  ``gems/plugins/qti_exporter/lib/qti/numeric_interaction.rb`` (``get_answer_values``,
  ``get_canvas_answers``) on the QTI 2 it writes, then
  ``app/models/quizzes/quiz_question/numerical_question.rb`` (``correct_answer_parts``) at
  scoring time, after ``public/javascripts/take_quiz.js`` has replaced the typed answer with
  ``I18n.n(val.toFixed(4), {strip_insignificant_zeros: true})`` (run in node here).
- Moodle: ``question/type/numerical/question.php`` (``get_matching_answer``,
  ``qtype_numerical_answer::get_tolerance_interval`` nominal: ``tolerance + epsilon *
  max(|tolerance|, |answer|, epsilon)``, ``epsilon = pow(10, -ini_get('precision'))``) with
  ``questiontype.php`` (answers ``ORDER BY a.id``; ``save_question_options`` stores
  ``apply_unit(...)``, a PHP float, so 14 significant figures with PHP's default precision).
- GIFT: parsed by gift-pegjs, then the Moodle rules above.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from conftest import require_tool
from export_checkers import strip_namespaces
from lxml import etree

# --- Canvas: numeric_interaction.rb on the converter's QTI 2 ---------------------------------


@dataclass(frozen=True)
class CanvasAnswer:
    """One entry of ``@question[:answers]`` for a numerical question."""

    numerical_answer_type: str
    weight: int
    start: float | None = None
    end: float | None = None
    exact: float | None = None
    margin: float | None = None
    approximate: float | None = None
    precision: int | None = None


def _first(node: Any, path: str) -> Any:
    """Nokogiri's ``at_css``: the first match in document order, or None."""
    found = node.xpath(path)
    return found[0] if found else None


def canvas_answers(qti2_item: bytes) -> list[CanvasAnswer]:
    """``NumericInteraction#parse_question_data``'s answers for one converted item."""
    doc = strip_namespaces(etree.fromstring(qti2_item))
    answers: list[CanvasAnswer] = []
    # get_answer_values: gte/lte (or equal) base values anywhere under a responseCondition
    gte = _first(doc, ".//responseCondition//gte//baseValue")
    lte = _first(doc, ".//responseCondition//lte//baseValue")
    if gte is not None and lte is not None:
        answers.append(
            CanvasAnswer("range_answer", 100, start=float(gte.text), end=float(lte.text))
        )
    elif (equal := _first(doc, ".//responseCondition//equal//baseValue")) is not None:
        answers.append(CanvasAnswer("exact_answer", 100, exact=float(equal.text)))
    # get_canvas_answers: every responseIf / responseElseIf, weight 100 whatever it sets
    for r_if in doc.xpath(".//*[self::responseIf or self::responseElseIf]"):
        or_node = _first(r_if, ".//or")
        if or_node is not None:
            exact_node = _first(or_node, ".//stringMatch//baseValue")
            if exact_node is None:
                continue
            exact = exact_node.text
            lower = _first(or_node, ".//and//customOperator[@class='vargt']//baseValue")
            upper = _first(or_node, ".//and//customOperator[@class='varlte']//baseValue")
            if (
                lower is not None
                and upper is not None
                and lower.text.replace("0", "").replace(".", "").endswith("5")
                and upper.text.replace("0", "").replace(".", "").endswith("5")
            ):
                lo, hi, value = Decimal(lower.text), Decimal(upper.text), Decimal(exact)
                width = (hi - lo).normalize()
                if value - lo == hi - value and width.as_tuple().digits == (1,):
                    # BigDecimal#exponent is adjusted() + 1; split's exp likewise
                    answers.append(
                        CanvasAnswer(
                            "precision_answer",
                            100,
                            approximate=float(exact),
                            precision=(value.adjusted() + 1) - (width.adjusted() + 1) + 1,
                        )
                    )
                    continue
            upper = _first(or_node, ".//and//customOperator[@class='varlte']//baseValue")
            margin = float(Decimal(upper.text) - Decimal(exact)) if upper is not None else None
            answers.append(CanvasAnswer("exact_answer", 100, exact=float(exact), margin=margin))
        elif (and_node := _first(r_if, ".//and")) is not None:
            lower = _first(and_node, ".//customOperator[@class='vargte']//baseValue")
            upper = _first(and_node, ".//customOperator[@class='varlte']//baseValue")
            if lower is None and upper is None:
                continue
            answers.append(
                CanvasAnswer(
                    "range_answer",
                    100,
                    start=float(lower.text) if lower is not None else None,
                    end=float(upper.text) if upper is not None else None,
                )
            )
    return answers


def _big(x: float | None) -> Decimal:
    """``BigDecimal.new(x.to_s)`` for a Ruby Float (``to_s`` is the shortest round trip)."""
    return Decimal(repr(float(x or 0.0)))


def canvas_correct(answers: list[CanvasAnswer], answer_text: str) -> bool:
    """``NumericalQuestion#correct_answer_parts``: true when any answer covers the response."""
    if not answer_text.strip():
        return False
    number = Decimal(answer_text)
    for answer in sorted(answers, key=lambda a: a.weight):
        if answer.numerical_answer_type == "exact_answer":
            val, margin = _big(answer.exact), _big(answer.margin)
            if val - margin <= number <= val + margin:
                return True
        elif answer.numerical_answer_type == "precision_answer":
            got, want = (
                number.normalize().as_tuple(),
                _big(answer.approximate).normalize().as_tuple(),
            )
            digits = "".join(map(str, got.digits))
            expected = "".join(map(str, want.digits))
            precision = answer.precision or 0
            if (
                got.sign == want.sign
                and digits[:precision] == expected[:precision]
                and number.adjusted() == _big(answer.approximate).adjusted()
            ):
                return True
        else:
            low, high = sorted((_big(answer.start), _big(answer.end)))
            if low <= number <= high:
                return True
    return False


_TO_FIXED = """
const texts = JSON.parse(require('fs').readFileSync(0, 'utf8'));
// take_quiz.js: const val = numberHelper.parse(...); I18n.n(val.toFixed(4),
// {strip_insignificant_zeros: true}); an answer that is no number is blanked.
const out = texts.map(t => {
  const val = parseFloat(t);
  if (Number.isNaN(val)) return '';
  let s = val.toFixed(4);
  if (s.includes('.')) s = s.replace(/0+$/, '').replace(/\\.$/, '');
  return s === '-0' ? '0' : s;
});
console.log(JSON.stringify(out));
"""


def canvas_submitted(texts: list[str]) -> dict[str, str]:
    """What Canvas's quiz page submits for each typed text (JavaScript's own toFixed, in node)."""
    node = require_tool("node")
    done = subprocess.run(
        [node, "-e", _TO_FIXED], input=json.dumps(texts), capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    return dict(zip(texts, json.loads(done.stdout), strict=True))


def run_converter(tool: Path, package: Path, out: Path) -> dict[str, bytes]:
    """Run QTIMigrationTool as Canvas does; the converted items by identifier."""
    import sys

    done = subprocess.run(
        [sys.executable, str(tool / "migrate.py"), "--ucvars", "--nogui", "--overwrite",
         f"--cpout={out}", str(package)],
        cwd=tool, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    items = {}
    for path in sorted((out / "assessmentItems").glob("*.xml")):
        doc = etree.parse(str(path)).getroot()
        items[doc.get("identifier")] = path.read_bytes()
    assert items, done.stdout
    return items


# --- Moodle ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MoodleAnswer:
    """A row of question_answers + question_numerical, as Moodle loads it."""

    answer: float
    tolerance: float
    fraction: float


def moodle_stored(answer: float, tolerance: float, fraction: float) -> MoodleAnswer:
    """``save_question_options``: each number goes through a PHP float and back as text with
    ``precision`` = 14 (``%.14G``); the constructor keeps ``abs($tolerance)``."""
    return MoodleAnswer(float(f"{answer:.14G}"), abs(float(f"{tolerance:.14G}")), fraction)


def moodle_fraction(answers: list[MoodleAnswer], value: float) -> float:
    """``grade_response``: the first answer (by id, i.e. file order) whose nominal interval
    holds the value gives its fraction; none gives 0."""
    epsilon = 10.0**-14
    for a in answers:
        tolerance = a.tolerance + epsilon * max(abs(a.tolerance), abs(a.answer), epsilon)
        if a.answer - tolerance <= value <= a.answer + tolerance:
            return a.fraction
    return 0.0


def gift_numerical(choices: list[dict[str, Any]]) -> list[MoodleAnswer]:
    """gift-pegjs's choices of a Numerical question as Moodle's answers (``value:tolerance``;
    a weight ``%w%``, no weight is 100 %), in file order."""
    out = []
    for choice in choices:
        text = choice["text"]
        weight = 100.0 if choice.get("weight") is None else float(choice["weight"])
        if text.get("type") == "range":
            number, tolerance = float(text["number"]), float(text["range"])
        elif text.get("type") == "high-low":
            low, high = float(text["numberLow"]), float(text["numberHigh"])
            number, tolerance = (low + high) / 2, (high - low) / 2
        else:
            number, tolerance = float(text["number"]), 0.0
        out.append(moodle_stored(number, tolerance, weight / 100))
    return out
