"""A bank's data in, validated and frozen Pydantic models out: the single definition of the bank
format."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
"""Choice labels in the order shown: a bank allows at most this many choices."""
NAME_PATTERN = r"^[a-z_][a-z0-9_]*$"


def _number_as_text(value: object) -> object:
    """A key written as a plain YAML number (``answer: 15``) is the expression ``15``."""
    if isinstance(value, bool):
        return value  # true/false is not a number; let validation refuse it
    if isinstance(value, int | float):
        return repr(value)
    return value


Expression = Annotated[str, BeforeValidator(_number_as_text)]

Slug = Annotated[
    str,
    Field(pattern=SLUG_PATTERN, description="lowercase letters, digits and single hyphens"),
]
Name = Annotated[
    str,
    Field(
        pattern=NAME_PATTERN,
        description="an identifier usable in expressions: lowercase letters, digits, underscore",
    ),
]


class StrictModel(BaseModel):
    """Base of every bank model: unknown fields are errors; instances are immutable.

    Every model forbids unknown fields (a typo in a bank key must be an error, never a silent
    default) and is frozen. Questions form a union tagged by ``type``. This module imports nothing
    else from quizgym, so every other module can depend on it (a test keeps it that way).
    """

    # allow_inf_nan=False: YAML reads 1e999 as infinity, which no point value or key can be.
    # defer_build: the validators are built on first validation, not at import; a bank read back
    # from the cache (model_construct) never needs them.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True)


# --- tolerance --------------------------------------------------------------------------------


class RelTolerance(StrictModel):
    """Relative tolerance, with an optional absolute floor: |s - t| <= abs + rel * |t|."""

    rel: float = Field(gt=0, lt=1, description="relative tolerance, e.g. 1e-3 for 0.1%")
    abs: float = Field(default=0.0, ge=0, description="absolute floor added to the relative band")


class AbsTolerance(StrictModel):
    """Absolute tolerance: |s - t| <= abs."""

    abs: float = Field(gt=0, description="largest accepted absolute error")


class SigfigsTolerance(StrictModel):
    """Agreement to a number of significant figures (PrairieLearn's ``sigfig``)."""

    sigfigs: int = Field(ge=1, le=15, description="significant figures that must agree")


class DecimalsTolerance(StrictModel):
    """Agreement to a number of decimal places (PrairieLearn's ``decdig``)."""

    decimals: int = Field(ge=0, le=15, description="decimal places that must agree")


Tolerance = Literal["auto"] | RelTolerance | AbsTolerance | SigfigsTolerance | DecimalsTolerance


class UnitPenalty(StrictModel):
    """Units are required; a right number without one loses this share of its points."""

    penalty: float = Field(
        gt=0, le=1, description="share of the points lost without a unit (1: no credit)"
    )


RequireUnits = bool | UnitPenalty
"""``false`` (a bare number is read in the question's units), ``true`` (no credit without a
unit) or ``{penalty: 0.5}``."""


class DecimalDisplay(StrictModel):
    """Show the key as a decimal to a number of significant figures."""

    decimal: int = Field(ge=1, le=15, description="significant figures shown")


Display = Literal["exact", "decimal"] | DecimalDisplay
"""How a key is shown: ``exact`` (``ln 10 ≈ 2.3026``), ``decimal`` (5 significant figures) or
``{decimal: N}``."""


class Defaults(StrictModel):
    """Bank-wide defaults for questions that do not set their own."""

    points: float = Field(
        default=1.0,
        gt=0,
        description="points for a question or part that sets none (not free text: a free-text "
        "question without points is worth its rubric's total)",
    )
    tolerance: Tolerance = Field(default="auto", description="numeric comparison policy")
    require_units: RequireUnits = Field(
        default=False,
        description="whether an answer must state its unit: false, true (no credit without "
        "one) or {penalty: share of the points lost}",
    )
    display: Display = Field(
        default="exact", description="how keys are shown: exact, decimal or {decimal: N}"
    )


# --- pieces of questions ----------------------------------------------------------------------


class Choice(StrictModel):
    """One option of a multiple-choice or spot-the-error question."""

    text: str = Field(min_length=1, description="the option as shown")
    correct: bool = Field(default=False, description="whether choosing it is right")
    feedback: str | None = Field(default=None, description="shown to a student who chose it")
    tag: Slug | None = Field(default=None, description="misconception tag for item analysis")


class Mistake(StrictModel):
    """A known wrong numeric answer with its feedback (first match wins)."""

    answer: Expression = Field(
        min_length=1, description="the wrong value, in the expression language"
    )
    feedback: str = Field(min_length=1, description="what the student is told")
    tag: Slug | None = Field(default=None, description="misconception tag for item analysis")
    credit: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="credit, 0 to 1; 1 makes it another correct answer (with its feedback)",
    )


class FunctionSpec(StrictModel):
    """A function in the expression language with conditions its arguments must meet."""

    expr: Expression = Field(min_length=1, description="its value, over its parameters")
    requires: list[str] = Field(
        default_factory=list, description="conditions on the parameters (0 < p <= 1)"
    )
    message: str | None = Field(
        default=None,
        min_length=1,
        description="what a key is told when a condition fails; {name} shows an argument",
    )


FunctionDef = Expression | FunctionSpec
"""A function's body: its expression, or ``{expr, requires, message}``."""

FUNCTION_HEAD = re.compile(
    r"^([a-z_][a-z0-9_]*)\(\s*((?:[a-z_][a-z0-9_]*\s*,\s*)*[a-z_][a-z0-9_]*)?\s*\)$"
)
"""``name(a, b)``: how a function is named in ``functions``."""


class MistakeRule(StrictModel):
    """A wrong answer derived from every key it fits, unless the author covered its value.

    ``answer`` is an expression in ``key`` (the key's value) and ``n_args`` (how many
    arguments the key's call has, with ``key_calls``).
    """

    answer: Expression = Field(min_length=1, description="the wrong value, in key and n_args")
    feedback: str = Field(min_length=1, description="what the student is told; {n_args} shows it")
    tag: Slug | None = Field(default=None, description="misconception tag for item analysis")
    credit: float = Field(default=0.0, ge=0, lt=1, description="partial credit, 0 to <1")
    key_uses: list[Name] = Field(
        default_factory=list,
        description="functions the key's exact form must contain (ln, exp, sqrt, sin, ...)",
    )
    key_calls: Name | None = Field(
        default=None, description="the key, as written, must be one call of this function"
    )
    min_args: int = Field(default=0, ge=0, description="with key_calls: at least so many arguments")


class Pack(StrictModel):
    """A domain pack: functions, constants, derived mistakes and worksheet instructions that a
    bank opts into with ``packs: [name]``."""

    pack: Slug = Field(description="the pack's name")
    title: str = Field(min_length=1, description="human title")
    description: str | None = Field(default=None, description="what the pack is for")
    builtins: list[Name] = Field(
        default_factory=list,
        description="functions quizgym implements in code that the pack makes available (mlm_loss)",
    )
    constants: dict[Name, float] = Field(default_factory=dict, description="named numbers")
    functions: dict[str, FunctionDef] = Field(
        default_factory=dict, description="functions in the expression language"
    )
    mistake_rules: list[MistakeRule] = Field(
        default_factory=list, description="wrong answers derived from every key they fit"
    )
    instructions: str | None = Field(
        default=None, min_length=1, description="printed under every worksheet's heading"
    )

    _source: SourceMap = PrivateAttr(default_factory=lambda: SourceMap.model_construct())

    def locate(self, loc: tuple[str | int, ...]) -> tuple[str, int, int]:
        """Return ``(path, line, col)`` of the deepest known field on ``loc`` (1-based)."""
        line, col = self._source.find(loc)
        return self._source.path, line, col


def _plain_words(text: str) -> list[str]:
    return re.findall(r"\w+", text.casefold())


def _contains(words: list[str], part: list[str]) -> bool:
    return any(words[i : i + len(part)] == part for i in range(len(words) - len(part) + 1))


class RubricCriterion(StrictModel):
    """One criterion of a free-text rubric, met when any of its phrases occurs.

    Phrases match word forms (Snowball stems), in one clause, and not when denied (``nothing to
    do with bias``); see ``docs/answers.md``.
    """

    criterion: str = Field(min_length=1, description="what the answer must say")
    any_of: list[str] = Field(
        min_length=1,
        description="phrases, any of which meets it; word forms match (degrees ~ degree), "
        "articles are optional, a phrase denied in the answer does not count",
    )
    points: float = Field(default=1.0, gt=0, description="points for meeting it")
    synonyms: dict[str, list[str]] = Field(
        default_factory=dict,
        description="alternatives for words or phrases of any_of, each of which may stand in "
        "their place: {lose: [use up, lost]} lets 'lose a degree of freedom' match "
        "'uses up a degree of freedom'",
    )

    @model_validator(mode="after")
    def _phrases_have_words(self) -> RubricCriterion:
        phrases = [_plain_words(p) for p in self.any_of]
        for phrase, words in zip(self.any_of, phrases, strict=True):
            if not words:
                raise ValueError(f"phrase {phrase!r} has no words, so it can never match")
        for key, alternatives in self.synonyms.items():
            if not _plain_words(key):
                raise ValueError(f"synonym {key!r} has no words")
            if not any(_contains(words, _plain_words(key)) for words in phrases):
                raise ValueError(
                    f"synonym {key!r} is in none of the phrases of any_of; "
                    "write it as a phrase has it"
                )
            if not alternatives or not all(_plain_words(a) for a in alternatives):
                raise ValueError(f"synonym {key!r} needs alternatives with words")
        return self


class ParamChoices(StrictModel):
    """A parameter drawn from a list; the first value is the default."""

    choices: list[float] = Field(min_length=1, description="candidate values")


class ParamRange(StrictModel):
    """A parameter drawn from min, min+step, ... <= max; min is the default."""

    min: float = Field(description="smallest value, and the default")
    max: float = Field(description="largest value")
    step: float = Field(gt=0, description="spacing of the values")

    @model_validator(mode="after")
    def _ordered(self) -> ParamRange:
        if self.max < self.min:
            raise ValueError("max must not be smaller than min")
        if (self.max - self.min) / self.step > 100_000:
            raise ValueError("range has more than 100000 values; use a larger step")
        return self


Param = float | ParamChoices | ParamRange


UNITS_DESCRIPTION = (
    "the answer's unit: a unit the units library knows (m/s, km/h, %, nats, bits, deg), "
    "converted from any compatible unit a student types, or a label (tokens) repeated as is"
)


class Part(StrictModel):
    """One numeric part of a multi-part problem."""

    id: Name = Field(description="part id; later parts' keys may use it as a name")
    prompt: str = Field(min_length=1, description="what this part asks")
    answer: Expression = Field(min_length=1, description="key, in the expression language")
    value: float | None = Field(default=None, description="the author's number, held to the key")
    tolerance: Tolerance | None = Field(default=None, description="comparison policy")
    units: str | None = Field(default=None, description=UNITS_DESCRIPTION)
    require_units: RequireUnits | None = Field(
        default=None, description="whether the answer must state its unit (see defaults)"
    )
    display: Display | None = Field(default=None, description="how the key is shown")
    answers: list[Expression] = Field(
        default_factory=list, description="other correct answers, in the expression language"
    )
    points: float | None = Field(default=None, gt=0, description="points for this part")
    mistakes: list[Mistake] = Field(default_factory=list, description="known wrong answers")
    hint: str | None = Field(default=None, description="shown on request")
    explanation: str | None = Field(default=None, description="shown after answering")


# --- questions --------------------------------------------------------------------------------


class QuestionBase(StrictModel):
    """Fields every question has."""

    id: Slug = Field(description="unique, stable id: progress and grades key on it")
    prompt: str = Field(min_length=1, description="the question; {name} shows a parameter")
    tags: list[Slug] = Field(default_factory=list, description="topics and kinds")
    points: float | None = Field(default=None, gt=0, description="points (bank default if unset)")
    hint: str | None = Field(default=None, description="shown on request")
    explanation: str | None = Field(default=None, description="shown after answering")
    source: str | None = Field(default=None, description="which seed item this encodes")

    def part_ids(self) -> list[str]:
        """The ids of the question's parts, in order (none: one answer for the whole question)."""
        return []

    def unset_points(self, defaults: Defaults) -> float:
        """What the question is worth when it does not set ``points``: the bank default."""
        return defaults.points

    def total_points(self, defaults: Defaults) -> float:
        """What the whole question is worth (see :func:`question_points`)."""
        return points_of(self, defaults)


class TrueFalse(QuestionBase):
    """A statement to judge true or false."""

    type: Literal["true_false"] = Field(description="question type")
    answer: bool = Field(description="whether the statement is true")


def _check_choices(choices: list[Choice], *, multiple: bool) -> None:
    right = sum(c.correct for c in choices)
    if multiple and right == 0:
        raise ValueError("at least one choice must be marked correct: true")
    if not multiple and right != 1:
        raise ValueError(
            f"exactly one choice must be marked correct: true (found {right}); "
            "set multiple: true for several"
        )
    seen: set[str] = set()
    for choice in choices:
        if choice.text in seen:
            raise ValueError(f"choice {choice.text!r} appears twice")
        seen.add(choice.text)


class MultipleChoice(QuestionBase):
    """Choose one correct option, or several with ``multiple: true`` (partial credit)."""

    type: Literal["multiple_choice"] = Field(description="question type")
    choices: list[Choice] = Field(min_length=2, max_length=len(LETTERS), description="the options")
    multiple: bool = Field(default=False, description="several may be correct")
    shuffle: bool = Field(default=False, description="show each student a seeded order")

    @model_validator(mode="after")
    def _one_correct(self) -> MultipleChoice:
        _check_choices(self.choices, multiple=self.multiple)
        return self


class SpotTheError(QuestionBase):
    """A flawed statement; the student chooses the right diagnosis."""

    type: Literal["spot_the_error"] = Field(description="question type")
    prompt: str = Field(
        default="What is wrong with this statement?", min_length=1, description="the question"
    )
    statement: str = Field(min_length=1, description="the flawed statement")
    choices: list[Choice] = Field(
        min_length=2, max_length=len(LETTERS), description="candidate diagnoses"
    )
    correction: str = Field(min_length=1, description="what is actually true")
    shuffle: bool = Field(default=False, description="show each student a seeded order")

    @model_validator(mode="after")
    def _one_correct(self) -> SpotTheError:
        _check_choices(self.choices, multiple=False)
        return self


class FreeText(QuestionBase):
    """A free-text answer scored by a rubric and marked for review."""

    type: Literal["free_text"] = Field(description="question type")
    model_answer: str = Field(min_length=1, description="a full-credit answer")
    rubric: list[RubricCriterion] = Field(min_length=1, description="criteria and their points")
    points: float | None = Field(
        default=None,
        gt=0,
        description="points; unset, the rubric's total (its criteria's points added up), never "
        "defaults.points; set, the rubric's share met earns that share of them",
    )

    def unset_points(self, defaults: Defaults) -> float:
        """The rubric's total: three 1-point criteria make a 3-point question."""
        return sum(criterion.points for criterion in self.rubric)


class Numeric(QuestionBase):
    """A number computed from a key expression, optionally in several parts, with variants."""

    type: Literal["numeric"] = Field(description="question type")
    params: dict[Name, Param] = Field(
        default_factory=dict, description="variant parameters; the first value is the default"
    )
    derived: dict[Name, Expression] = Field(
        default_factory=dict,
        description="values computed from params, in order (df: n - 1), usable in prompts, "
        "keys and mistakes",
    )
    where: list[str] = Field(
        default_factory=list,
        description="conditions every draw must meet (sxx > sx^2 / n); other draws are redrawn",
    )
    answer: Expression | None = Field(default=None, description="key, in the expression language")
    value: float | None = Field(default=None, description="the author's number, held to the key")
    tolerance: Tolerance | None = Field(default=None, description="comparison policy")
    units: str | None = Field(default=None, description=UNITS_DESCRIPTION)
    require_units: RequireUnits | None = Field(
        default=None, description="whether the answer must state its unit (see defaults)"
    )
    display: Display | None = Field(default=None, description="how the key is shown")
    answers: list[Expression] = Field(
        default_factory=list, description="other correct answers, in the expression language"
    )
    mistakes: list[Mistake] = Field(default_factory=list, description="known wrong answers")
    parts: list[Part] = Field(default_factory=list, description="parts of a multi-part problem")

    def part_ids(self) -> list[str]:
        return [part.id for part in self.parts]

    def total_points(self, defaults: Defaults) -> float:
        """Its parts' points added up (a question without parts: its own)."""
        if self.parts:
            return sum(points_of(part, defaults) for part in self.parts)
        return points_of(self, defaults)

    @model_validator(mode="after")
    def _answer_or_parts(self) -> Numeric:
        if self.parts:
            if self.answer is not None or self.value is not None or self.mistakes or self.answers:
                raise ValueError(
                    "a question with parts keeps answer, answers, value and mistakes in its parts"
                )
            ids = [p.id for p in self.parts]
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            if dupes:
                raise ValueError(f"part id {dupes[0]!r} is used twice")
            clash = sorted(set(ids) & (set(self.params) | set(self.derived)))
            if clash:
                raise ValueError(f"{clash[0]!r} is both a part id and a parameter")
        elif self.answer is None:
            raise ValueError("a numeric question needs answer (or parts)")
        clash = sorted(set(self.params) & set(self.derived))
        if clash:
            raise ValueError(f"{clash[0]!r} is both a parameter and a derived value")
        return self

    @model_validator(mode="after")
    def _placeholders_are_params(self) -> Numeric:
        texts = [self.prompt, self.hint or "", self.explanation or ""]
        for part in self.parts:
            texts += [part.prompt, part.hint or "", part.explanation or ""]
        for text in texts:
            for name, spec in placeholder_specs(text):
                if name not in self.params and name not in self.derived:
                    raise ValueError(
                        f"placeholder {{{name}}} names no parameter in params or derived"
                    )
                if spec is not None:
                    problem = format_problem(spec)
                    if problem:
                        raise ValueError(f"placeholder {{{name}:{spec}}}: {problem}")
        return self


class MatchPair(StrictModel):
    """One item of a matching question and the answer it pairs with: one answer slot."""

    id: Name = Field(description="the item's id: its slot is question.id")
    item: str = Field(min_length=1, description="the item as shown ([CLS])")
    answer: str = Field(min_length=1, description="the answer it pairs with, as shown")
    points: float | None = Field(default=None, gt=0, description="points for pairing it")
    feedback: str | None = Field(
        default=None, description="shown to a student who pairs the item with a wrong answer"
    )
    tag: Slug | None = Field(default=None, description="misconception tag of a wrong pairing")


class Matching(QuestionBase):
    """Pair each item with one of a list of answers; each item is an answer slot of its own."""

    type: Literal["matching"] = Field(description="question type")
    pairs: list[MatchPair] = Field(
        min_length=2, max_length=len(LETTERS), description="the items and their answers"
    )
    distractors: list[str] = Field(
        default_factory=list, description="answers that pair with no item (more answers than items)"
    )
    shuffle: bool = Field(
        default=False, description="show each student the answers in a seeded order"
    )
    one_to_one: bool = Field(
        default=True, description="each answer pairs with one item at most (false: answers repeat)"
    )

    @model_validator(mode="after")
    def _well_formed(self) -> Matching:
        ids = [p.id for p in self.pairs]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"item id {dupes[0]!r} is used twice")
        items = [p.item for p in self.pairs]
        twice = [i for i in items if items.count(i) > 1]
        if twice:
            raise ValueError(f"item {twice[0]!r} appears twice")
        answers = [p.answer for p in self.pairs]
        if self.one_to_one:
            shared = [a for a in answers if answers.count(a) > 1]
            if shared:
                raise ValueError(
                    f"two items pair with {shared[0]!r}, but the question is one-to-one; "
                    "set one_to_one: false to let answers repeat"
                )
        for text in self.distractors:
            if text in answers:
                raise ValueError(f"distractor {text!r} is also an item's answer")
            if self.distractors.count(text) > 1:
                raise ValueError(f"distractor {text!r} appears twice")
        if len(self.answers) > len(LETTERS):
            raise ValueError(f"more than {len(LETTERS)} answers")
        return self

    @property
    def answers(self) -> list[str]:
        """Every answer a student picks from, in bank order: the items' answers (each once),
        then the distractors."""
        return [*dict.fromkeys(p.answer for p in self.pairs), *self.distractors]

    def part_ids(self) -> list[str]:
        return [pair.id for pair in self.pairs]

    def total_points(self, defaults: Defaults) -> float:
        """Its items' points added up."""
        return sum(self.item_points(pair, defaults) for pair in self.pairs)

    def item_points(self, pair: MatchPair, defaults: Defaults) -> float:
        """What pairing one item is worth: its own points, else an equal share of the
        question's, else the bank default."""
        if pair.points is not None:
            return pair.points
        if self.points is not None:
            return self.points / len(self.pairs)
        return defaults.points


BLANK = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
"""A blank in a cloze prompt: ``{{name}}``, the name of one of its ``blanks``."""


def blank_names(text: str) -> list[str]:
    """The names of the ``{{name}}`` blanks of a cloze prompt, in order (repeats kept)."""
    return [m[1] for m in BLANK.finditer(text)]


class Blank(StrictModel):
    """One blank of a cloze question: a number (``answer``, an expression), a dropdown
    (``choices``, with ``answer`` among them) or a short word (``accept``: its spellings)."""

    answer: Expression | None = Field(
        default=None,
        min_length=1,
        description="a number blank's key (an expression), or a choice blank's right option",
    )
    choices: list[str] = Field(
        default_factory=list, description="a choice blank's options, shown as a dropdown"
    )
    accept: list[str] = Field(
        default_factory=list,
        description="a word blank's accepted spellings; case, accents and spacing are ignored "
        "unless case_sensitive",
    )
    case_sensitive: bool = Field(
        default=False, description="a word blank: the case of a spelling counts (spacing never)"
    )
    tolerance: Tolerance | None = Field(default=None, description="a number blank's comparison")
    units: str | None = Field(default=None, description=UNITS_DESCRIPTION)
    require_units: RequireUnits | None = Field(
        default=None, description="a number blank: whether the answer must state its unit"
    )
    display: Display | None = Field(default=None, description="how a number blank's key is shown")
    answers: list[Expression] = Field(
        default_factory=list, description="a number blank's other correct answers"
    )
    mistakes: list[Mistake] = Field(
        default_factory=list, description="a number blank's known wrong answers"
    )
    points: float | None = Field(default=None, gt=0, description="points for this blank")
    feedback: str | None = Field(default=None, description="shown to a student who gets it wrong")
    tag: Slug | None = Field(default=None, description="misconception tag of a wrong answer")

    @property
    def kind(self) -> Literal["number", "choice", "word"]:
        """What the blank asks for: ``number``, ``choice`` (a dropdown) or ``word``."""
        if self.choices:
            return "choice"
        if self.accept:
            return "word"
        return "number"

    @model_validator(mode="after")
    def _one_kind(self) -> Blank:
        if self.choices and self.accept:
            raise ValueError("a blank has choices or accept, not both")
        if self.kind != "number":
            numeric = ("tolerance", "units", "require_units", "display", "answers", "mistakes")
            stray = [name for name in numeric if getattr(self, name) not in (None, [])]
            if stray:
                raise ValueError(f"{stray[0]} is for a number blank, not a {self.kind} blank")
        if self.kind == "choice":
            if len(self.choices) < 2:
                raise ValueError("a choice blank needs at least 2 choices")
            if len(self.choices) > len(LETTERS):
                raise ValueError(f"a choice blank has at most {len(LETTERS)} choices")
            for text in self.choices:
                if not text.strip():
                    raise ValueError("a choice blank has an empty choice")
                if self.choices.count(text) > 1:
                    raise ValueError(f"choice {text!r} appears twice")
            if self.answer is None:
                raise ValueError("a choice blank needs answer: its right choice")
            if self.answer not in self.choices:
                raise ValueError(
                    f"the answer {self.answer!r} is not among its choices "
                    f"({', '.join(map(repr, self.choices))})"
                )
        elif self.kind == "word":
            if self.answer is not None:
                raise ValueError("a word blank lists its spellings in accept, without answer")
            for text in self.accept:
                if not text.strip():
                    raise ValueError("accept holds an empty spelling, which no answer can be")
        elif self.answer is None:
            if "accept" in self.model_fields_set:
                raise ValueError("accept is empty: list at least one spelling")
            if "choices" in self.model_fields_set:
                raise ValueError("choices is empty: list the dropdown's options")
            raise ValueError(
                "a blank needs answer (a number), choices (a dropdown) or accept (a word)"
            )
        if self.kind != "word" and self.case_sensitive:
            raise ValueError(f"case_sensitive is for a word blank, not a {self.kind} blank")
        return self


class Cloze(QuestionBase):
    """A text with named blanks, ``{{name}}``, each an answer slot ``question.name``."""

    type: Literal["cloze"] = Field(description="question type")
    prompt: str = Field(
        min_length=1, description="the text, with each blank written {{name}} where it stands"
    )
    blanks: dict[Name, Blank] = Field(
        min_length=1, description="each blank by its name: a number, a choice or a word"
    )

    @field_validator("blanks")
    @classmethod
    def _blanks_placed(cls, blanks: dict[str, Blank], info: ValidationInfo) -> dict[str, Blank]:
        prompt = info.data.get("prompt")
        if not isinstance(prompt, str):
            return blanks  # the prompt has its own error
        used = blank_names(prompt)
        for name in used:
            if name not in blanks:
                known = ", ".join(blanks)
                raise ValueError(f"the prompt's {{{{{name}}}}} names no blank (blanks: {known})")
            if used.count(name) > 1:
                raise ValueError(f"blank {name!r} is used twice in the prompt; give each its own")
        for name in blanks:
            if name not in used:
                raise ValueError(
                    f"blank {name!r} is never used in the prompt (write {{{{{name}}}}})"
                )
        return blanks

    @model_validator(mode="after")
    def _blanks_in_prompt_only(self) -> Cloze:
        for text in (self.hint or "", self.explanation or ""):
            if BLANK.search(text):
                raise ValueError(
                    "blanks ({{name}}) belong in the prompt, not a hint or explanation"
                )
        return self

    @property
    def order(self) -> list[str]:
        """The blanks' names in the order the prompt shows them."""
        return blank_names(self.prompt)

    def part_ids(self) -> list[str]:
        return self.order

    def total_points(self, defaults: Defaults) -> float:
        """Its blanks' points added up."""
        return sum(self.blank_points(name, defaults) for name in self.order)

    def blank_points(self, name: str, defaults: Defaults) -> float:
        """What one blank is worth: its own points, else an equal share of the question's,
        else the bank default."""
        blank = self.blanks[name]
        if blank.points is not None:
            return blank.points
        if self.points is not None:
            return self.points / len(self.blanks)
        return defaults.points


AnyQuestion = TrueFalse | MultipleChoice | SpotTheError | FreeText | Numeric | Matching | Cloze
"""Any question, as a plain union (for signatures)."""

Question = Annotated[AnyQuestion, Field(discriminator="type")]
"""Any question, as the bank format reads it: a union tagged by ``type``."""

QUESTION_TYPES: dict[str, type[QuestionBase]] = {
    "true_false": TrueFalse,
    "multiple_choice": MultipleChoice,
    "spot_the_error": SpotTheError,
    "free_text": FreeText,
    "numeric": Numeric,
    "matching": Matching,
    "cloze": Cloze,
}


class SourceMap(StrictModel):
    """Where each field of a bank stands in its file (filled by the loader)."""

    path: str = ""
    positions: dict[str, tuple[int, int]] = Field(default_factory=dict)

    def find(self, loc: tuple[str | int, ...]) -> tuple[int, int]:
        """``(line, col)`` of the deepest field on ``loc`` that has a position (1-based)."""
        for end in range(len(loc), -1, -1):
            key = loc_key(loc[:end])
            if key in self.positions:
                return self.positions[key]
        return 1, 1


class Bank(StrictModel):
    """A question bank: the unit that is checked, practised, rendered, exported and graded."""

    bank: Slug = Field(description="the bank's slug, e.g. bert-mlm")
    title: str = Field(min_length=1, description="human title")
    version: int = Field(default=1, ge=1, description="bump when keys change")
    description: str | None = Field(default=None, description="what the bank covers")
    instructions: str | None = Field(
        default=None,
        min_length=1,
        description="a note printed under the heading of every worksheet (Markdown), "
        "after quizgym's own advice on how to answer",
    )
    packs: list[str] = Field(
        default_factory=list,
        description="domain packs the bank uses: a bundled pack's name (machine-learning) or "
        "a pack file's path, relative to the bank",
    )
    constants: dict[Name, float] = Field(
        default_factory=dict,
        description="named numbers every key may use (g: 9.81), exact as written",
    )
    functions: dict[str, FunctionDef] = Field(
        default_factory=dict,
        description="functions keys may call, in the expression language: "
        '{"range(v, theta)": "v^2 * sin(2*theta) / g"}; each may call only functions '
        "defined before it",
    )
    mistake_rules: list[MistakeRule] = Field(
        default_factory=list,
        description="wrong answers derived from every key they fit (see docs/answers.md)",
    )
    defaults: Defaults = Field(default_factory=Defaults, description="bank-wide defaults")
    questions: list[Question] = Field(min_length=1, description="the questions")

    # model_construct: an empty map needs no validation (which would build SourceMap's validator
    # for a bank read back from the cache).
    _source: SourceMap = PrivateAttr(default_factory=lambda: SourceMap.model_construct())
    _compiled: object = PrivateAttr(default=None)
    """The bank's compiled form, kept by :func:`quizgym.solver.compiled` for the one-off
    conveniences that take a plain bank (a bank is immutable, so it never goes stale)."""

    def __getstate__(self) -> dict[object, object]:
        # The compiled form is derived and holds functions: a pickled bank travels without it.
        state: dict[object, object] = super().__getstate__()
        private = state.get("__pydantic_private__")
        if isinstance(private, dict) and private.get("_compiled") is not None:
            state["__pydantic_private__"] = {**private, "_compiled": None}
        return state

    def question(self, qid: str) -> AnyQuestion:
        """Return the question with this id.

        Raises:
            KeyError: no such question.
        """
        for q in self.questions:
            if q.id == qid:
                return q
        raise KeyError(qid)

    def locate(self, loc: tuple[str | int, ...]) -> tuple[str, int, int]:
        """Return ``(path, line, col)`` of the deepest known field on ``loc`` (1-based)."""
        line, col = self._source.find(loc)
        return self._source.path, line, col

    @property
    def path(self) -> str:
        """The file the bank was loaded from ('' when built in code)."""
        return self._source.path

    def slot_ids(self) -> list[str]:
        """Every answer slot's id, in bank order: a question's id, or one per part."""
        out: list[str] = []
        for q in self.questions:
            parts = q.part_ids()
            out.extend([slot_id(q.id, p) for p in parts] if parts else [q.id])
        return out


def slot_id(question: str, part: str | None = None) -> str:
    """The id of an answer slot: ``q`` for a question, ``q.part`` for a part of it.

    The one spelling of a slot's id: submission columns, grades and reports all use it.
    """
    return question if part is None else f"{question}.{part}"


def loc_key(loc: tuple[str | int, ...]) -> str:
    """Encode a field path as the key of :attr:`SourceMap.positions`."""
    return "/".join(str(part) for part in loc)


PLACEHOLDER = re.compile(r"(?<![A-Za-z\\_^}\]])\{([a-z_][a-z0-9_]*)(?::([^{}:]+))?\}")
r"""A ``{name}`` (or ``{name:spec}``, with a Python format spec: ``{n:.2f}``, ``{p:.0%}``)
placeholder: an identifier in braces that is not a TeX group.

Braces straight after a letter, a backslash, ``_``, ``^``, ``}`` or ``]`` belong to TeX
(``\bar{x}``, ``x_{i}``, ``e^{k}``, ``\frac{a}{b}``, ``\sqrt[3]{x}``, ``\{x\}``), so
they stay literal. Anywhere else, in text or in a formula (``$P = {p1}$``), ``{name}`` is a
placeholder; a parameter inside a TeX group is written in braces of its own: ``e^{{k}}``.
"""


def placeholders(text: str) -> list[str]:
    r"""Return the names of the ``{name}`` placeholders of a prompt, in order.

    Only identifiers in braces are placeholders, so ``M = {3, 5}`` in a prompt stays literal,
    and only braces that are not TeX's (see :data:`PLACEHOLDER`), so ``$\bar{x}$`` does too.
    """
    return [m[1] for m in PLACEHOLDER.finditer(text)]


def placeholder_specs(text: str) -> list[tuple[str, str | None]]:
    """Each placeholder's name and format spec (None without one), in order."""
    return [(m[1], m[2]) for m in PLACEHOLDER.finditer(text)]


def format_problem(spec: str) -> str:
    """Why a format spec cannot show a number ('' when it can): ``.2f``, ``.0%``, ``,``, ``g``."""
    try:
        format(1.5, spec)
    except ValueError as exc:
        try:
            format(1, spec)  # an integer format (d, x, b): for whole-number values
        except ValueError:
            return f"{spec!r} is not a number format ({exc}); use e.g. .2f, .3g or .0%"
    return ""


def points_of(question: QuestionBase | Part, defaults: Defaults) -> float:
    """The points a question or part is worth.

    Its own ``points`` if set; for free text, else the rubric's total (a rubric of three 1-point
    criteria makes a 3-point question); otherwise the bank default.
    """
    if question.points is not None:
        return question.points
    if isinstance(question, QuestionBase):
        return question.unset_points(defaults)
    return defaults.points


def question_points(question: QuestionBase, defaults: Defaults) -> float:
    """What a whole question is worth: its parts' points added up, or :func:`points_of`."""
    return question.total_points(defaults)
