"""One response and its slot in, one :class:`Verdict` out: the single source of truth for what
counts as right."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from mpmath import mpf

from quizgym.expr import ParseFailure, Reading, format_value, read_answer
from quizgym.model import (
    LETTERS,
    AbsTolerance,
    AnyQuestion,
    Bank,
    DecimalsTolerance,
    Numeric,
    RubricCriterion,
    Tolerance,
)
from quizgym.solver import (
    CompiledBank,
    ResolvedMistake,
    Slot,
    Variant,
    compiled,
)
from quizgym.tolerance import Match, compare
from quizgym.types import (
    BlanksInteraction,
    ChoiceInteraction,
    NumericInteraction,
    PairingInteraction,
    TextInteraction,
    WordInteraction,
    choices_of,
    interaction_of,
    word_of,
)
from quizgym.units import Conversion, convert
from quizgym.words import (
    Occurrence,
    Phrase,
    Word,
    compile_phrase,
    occurrences,
    quote_span,
    read_words,
)


class Status(StrEnum):
    """The outcome of grading one response."""

    CORRECT = "correct"
    PARTIAL = "partial"
    INCORRECT = "incorrect"
    INVALID = "invalid"
    BLANK = "blank"


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """How one response was graded, and everything a student or teacher is told about it."""

    question: str
    """The question id, or ``id.part`` for a part."""
    status: Status
    score: float
    max_score: float
    read_as: str = ""
    """How the response was read, e.g. ``ln(10) ≈ 2.302585`` or ``B: GPT``."""
    feedback: str = ""
    tag: str | None = None
    """Misconception tag of the matched mistake or choice."""
    expected: str = ""
    """The correct answer, as shown to the student afterwards."""
    needs_review: bool = False
    """Free text: the rubric score is a suggestion a person should confirm."""
    value: float | None = None
    """Numeric answers: the value read (in the question's unit)."""
    doubt: str = ""
    """Why a person may want to look at a verdict the machine did decide: a short phrase
    (``typed in km/h, converted``, ``no unit given``, ``incompatible unit: kg for m/s``,
    ``read 12,345.6 with thousands separators``); '' when the reading was plain."""
    machine: Verdict | None = None
    """Set when a teacher decided the score (``grade --review``): the machine's own verdict."""

    @property
    def is_correct(self) -> bool:
        """Full credit."""
        return self.status is Status.CORRECT

    @property
    def scored_by(self) -> str:
        """Who set the score: ``teacher``, ``rubric`` (a suggestion awaiting review) or
        ``machine``."""
        if self.machine is not None:
            return "teacher"
        return "rubric" if self.needs_review else "machine"


UNSPLIT = "\u2063"
"""Put (an invisible separator) before a text that answers several slots at once and could not
be split among them, as given to each of them (an LMS's cloze or matching cell): no reader takes
it for an answer, so each slot is graded unreadable, for review, never guessed."""

TRUE_WORDS = frozenset({"true", "t", "yes", "y", "1"})
FALSE_WORDS = frozenset({"false", "f", "no", "n", "0"})


def is_blank(response: str | None) -> bool:
    """No answer at all: missing, empty or whitespace, or a non-answer (:func:`non_answer`)."""
    return response is None or not response.strip() or non_answer(response)


NON_ANSWERS = frozenset(
    {
        "idk",
        "dk",
        "dont know",
        "don't know",
        "do not know",
        "i dont know",
        "i don't know",
        "i do not know",
        "dunno",
        "no idea",
        "not sure",
        "no clue",
        "n/a",
        "na",
        "n.a.",
        "#n/a",
        "no answer",
        "skip",
        "skipped",
    }
)
"""What students type for "no answer", folded as :func:`fold_text` folds (with ’ as ')."""
_NO_ANSWER = re.compile(r"(?:[a-z]\w{0,2} *= *)?(?:\?+|[-–—_]+|\.\.\.|…)")
"""A lone mark for no answer: ``?``, ``-``, ``--``, ``…``, also after ``x =`` (``x = ?``)."""


def non_answer(response: str) -> bool:
    """Whether a text says the student gave no answer (``idk``, ``?``, ``-``, ``n/a``,
    ``x = ?``, ``dont know``): graded as a blank, never read as an answer (a choice whose own
    text it is excepted, see :func:`unanswered`)."""
    folded = fold_text(response).replace("’", "'").strip(" .!")
    return folded in NON_ANSWERS or _NO_ANSWER.fullmatch(fold_text(response)) is not None


def unanswered(question: AnyQuestion, response: str | None, part: str | None = None) -> bool:
    """Whether a response to ``question`` (or to one of its slots, ``part``) is no answer
    (:func:`is_blank`), unless it is the text of one of its lettered options as typed (a choice
    "Not sure" is an answer)."""
    if not is_blank(response):
        return False
    if response is None or not response.strip():
        return True
    picks = choices_of(question, part)
    if picks is None or not picks.lettered:
        return True
    return fold_text(response) not in {fold_text(c.text) for c in picks.choices}


# --- true/false ---------------------------------------------------------------------------------


def read_bool(response: str) -> bool | None:
    """Read true/false/t/f/yes/no/1/0 in any case; None when it is none of them."""
    word = response.strip().rstrip(".!").strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None


def _grade_true_false(qid: str, truth: ChoiceInteraction, response: str, points: float) -> Verdict:
    answer = truth.choices[0].correct  # the options are true, then false
    expected = "true" if answer else "false"
    value = read_bool(response)
    if value is None:
        return Verdict(
            question=qid,
            status=Status.INVALID,
            score=0.0,
            max_score=points,
            feedback="Your answer should be true or false (or t/f, yes/no, 1/0).",
            expected=expected,
        )
    right = value == answer
    return Verdict(
        question=qid,
        status=Status.CORRECT if right else Status.INCORRECT,
        score=points if right else 0.0,
        max_score=points,
        read_as="true" if value else "false",
        feedback="" if right else f"The statement is {expected}.",
        expected=expected,
    )


# --- choices ------------------------------------------------------------------------------------


def options_of(question: AnyQuestion | ChoiceInteraction) -> ChoiceInteraction:
    """The options a student picks among, of a question or its interaction.

    Raises:
        ValueError: the question has no options.
    """
    if isinstance(question, ChoiceInteraction):
        return question
    found = choices_of(question)
    if found is None:
        msg = f"{question.id}: a {question.type} question has no options"
        raise ValueError(msg)
    return found


def shown_choices(question: AnyQuestion | ChoiceInteraction, variant: Variant) -> list[int]:
    """Bank indices of the choices in the order this student sees them."""
    return list(variant.order) if variant.order else list(range(len(options_of(question).choices)))


def read_choices(
    response: str, question: AnyQuestion | ChoiceInteraction, variant: Variant
) -> list[int] | str:
    """Read a letter, a 1-based number or the exact text of a choice (several for ``multiple``).

    Letters and numbers refer to the order the student saw. Returns bank indices, or an error
    message for the student.
    """
    options = options_of(question)
    order = shown_choices(options, variant)
    texts = {fold_text(options.choices[i].text): i for i in order}
    folded = fold_text(response)
    if folded in texts:
        return [texts[folded]]
    multiple = options.multiple
    tokens = [response.strip()]
    if multiple:
        # Several answers: one per line, or separated by commas or semicolons (each may be a
        # choice's text; one per line lets a text hold a comma), or letters and numbers
        # separated by spaces ("A C").
        for separator in (r"\n", r"[,;\n]"):
            pieces = [p.strip() for p in re.split(separator, response) if p.strip()]
            if pieces and all(fold_text(p) in texts for p in pieces):
                return list(dict.fromkeys(texts[fold_text(p)] for p in pieces))
        tokens = [t for t in re.split(r"[\s,;]+", response.strip()) if t]
    picked: list[int] = []
    for token in tokens:
        token = token.strip().rstrip(").").lstrip("(")
        index: int | None = None
        # ASCII only: "²", "①", "₁" and "٣" are digits to str.isdigit() but not to int(), and a
        # letter such as "ı" upper-cases to "I"; none of them is guessed at.
        if len(token) == 1 and token.isascii() and token.upper() in LETTERS[: len(order)]:
            index = LETTERS.index(token.upper())
        elif _NUMBER.fullmatch(token) and 1 <= int(token) <= len(order):
            index = int(token) - 1
        if index is None:
            last = LETTERS[len(order) - 1]
            return (
                f"Your answer {token!r} is not one of the choices; "
                f"answer with a letter A–{last}, a number 1–{len(order)} or the choice's text."
            )
        if order[index] not in picked:
            picked.append(order[index])
    if not multiple and len(picked) != 1:
        return "Choose exactly one answer."
    return picked


_NUMBER = re.compile(r"[0-9]{1,4}")
"""A choice's 1-based number as typed (a few ASCII digits: int() of 5,000 would refuse)."""


def fold_text(text: str) -> str:
    """A text as answers and choices are compared: NFKC-normalized, case folded, its runs of
    whitespace one space."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _label(options: ChoiceInteraction, variant: Variant, index: int) -> str:
    position = shown_choices(options, variant).index(index)
    return f"{LETTERS[position]}: {options.choices[index].text}"


def _grade_choice(
    qid: str,
    options: ChoiceInteraction,
    variant: Variant,
    response: str,
    points: float,
) -> Verdict:
    right = options.right
    expected = "; ".join(_label(options, variant, i) for i in right)
    picked = read_choices(response, options, variant)
    if isinstance(picked, str):
        return Verdict(
            question=qid,
            status=Status.INVALID,
            score=0.0,
            max_score=points,
            feedback=picked,
            expected=expected,
        )
    read_as = "; ".join(_label(options, variant, i) for i in picked)
    choices = options.choices
    wrong = [i for i in picked if not choices[i].correct]
    feedback = " ".join(f for i in wrong if (f := choices[i].feedback))
    tag = next((choices[i].tag for i in wrong if choices[i].tag), None)
    if options.multiple:
        # Canvas/Moodle convention: each right pick earns 1/k, each wrong pick costs 1/k, floor 0.
        hits = sum(1 for i in picked if choices[i].correct)
        fraction = max(0.0, (hits - len(wrong)) / len(right))
        status = (
            Status.CORRECT
            if fraction == 1
            else Status.PARTIAL
            if fraction > 0
            else Status.INCORRECT
        )
        if status is not Status.CORRECT and not feedback:
            feedback = f"{hits} of {len(right)} correct choices picked, {len(wrong)} wrong."
    else:
        fraction = 0.0 if wrong else 1.0
        status = Status.INCORRECT if wrong else Status.CORRECT
    return Verdict(
        question=qid,
        status=status,
        score=points * fraction,
        max_score=points,
        read_as=read_as,
        feedback=feedback,
        tag=tag,
        expected=expected,
    )


# --- free text ----------------------------------------------------------------------------------

# A criterion is met when one of its phrases occurs in the answer the way the criterion itself
# puts it: plainly, or denied when the criterion denies it ("the model cannot trust its inputs",
# phrase "trust"). An occurrence the other way round ("it has nothing to do with bias" for a
# criterion about bias) says the opposite and meets nothing. A negator that is a word of a rubric
# phrase found in the answer ("never appears") is that phrase's and denies no other. Word forms,
# clauses and negators are quizgym.words's rules. The score is a suggestion: every free-text
# verdict needs review.


@dataclass(frozen=True, kw_only=True)
class CriterionMatch:
    """How one rubric criterion fared against one answer."""

    criterion: RubricCriterion
    met: bool
    quotes: tuple[str, ...] = ()
    """The words of the answer that meet it, as typed (``lose one degree of freedom``)."""
    opposite: tuple[str, ...] = ()
    """Words that name it but say the opposite (``nothing to do with bias``)."""


def _own_negators(phrases: Iterable[Phrase], words: Sequence[Word]) -> frozenset[int]:
    """The negators of a text that are words of a phrase found in it (``never appears``): taken
    as the rubric wrote them, they deny no other phrase (``it never appears downstream``)."""
    return frozenset(
        i
        for phrase in phrases
        for found in occurrences(phrase, words)
        for i in range(found.first, found.last + 1)
        if words[i].negator
    )


@functools.lru_cache(maxsize=4096)
def _compiled(
    criterion: str, any_of: tuple[str, ...], synonyms: tuple[tuple[str, tuple[str, ...]], ...]
) -> tuple[tuple[Phrase, bool], ...]:
    """Each phrase of a criterion, compiled, with whether the criterion itself denies it."""
    alternatives = dict(synonyms)
    phrases = [compile_phrase(text, alternatives) for text in any_of]
    stated = read_words(criterion)
    own = _own_negators(phrases, stated)
    compiled_phrases = []
    for phrase in phrases:
        found = occurrences(phrase, stated, ignore=own)
        compiled_phrases.append((phrase, bool(found) and all(o.negated for o in found)))
    return tuple(compiled_phrases)


def _compile(criterion: RubricCriterion) -> tuple[tuple[Phrase, bool], ...]:
    synonyms = tuple((k, tuple(v)) for k, v in criterion.synonyms.items())
    return _compiled(criterion.criterion, tuple(criterion.any_of), synonyms)


def match_rubric(rubric: Sequence[RubricCriterion], text: str) -> list[CriterionMatch]:
    """Which criteria of a rubric an answer meets, and the words that decided each.

    Args:
        rubric: the criteria of one question.
        text: the student's answer.

    Returns:
        One match per criterion, in the rubric's order.
    """
    words = read_words(text)
    compiled_rubric = [_compile(criterion) for criterion in rubric]
    own = _own_negators((p for phrases in compiled_rubric for p, _ in phrases), words)
    matches = []
    for criterion, phrases in zip(rubric, compiled_rubric, strict=True):
        met: list[Occurrence] = []
        opposite: list[Occurrence] = []
        for phrase, denied in phrases:
            for occurrence in occurrences(phrase, words, ignore=own):
                (met if occurrence.negated == denied else opposite).append(occurrence)
        matches.append(
            CriterionMatch(
                criterion=criterion,
                met=bool(met),
                quotes=_quotes(text, words, met),
                opposite=_quotes(text, words, opposite),
            )
        )
    return matches


def match_criterion(criterion: RubricCriterion, text: str) -> CriterionMatch:
    """Whether an answer meets one rubric criterion (:func:`match_rubric` of it alone).

    Args:
        criterion: the criterion.
        text: the student's answer.

    Returns:
        The match: met or not, with the words that meet it or say the opposite.
    """
    return match_rubric([criterion], text)[0]


def _quotes(text: str, words: tuple[Word, ...], found: list[Occurrence]) -> tuple[str, ...]:
    """The words of each occurrence as typed, in the answer's order, each text once; an
    occurrence inside another one's words is left out."""
    # by start, the longest first: a span lies inside another one iff an earlier span of this
    # order reaches as far as it does (one pass, so a long answer costs linear time, not square)
    outer = []
    reach = -1
    for a, b in sorted({quote_span(words, o) for o in found}, key=lambda s: (s[0], -s[1])):
        if b > reach:
            outer.append((a, b))
            reach = b
    return tuple(dict.fromkeys(" ".join(text[a:b].split()) for a, b in outer))


def _quoted(quotes: tuple[str, ...]) -> str:
    return ", ".join(f"“{q}”" for q in quotes)


def _grade_free_text(qid: str, text: TextInteraction, response: str, points: float) -> Verdict:
    matches = match_rubric(text.rubric, response)
    total = sum(c.points for c in text.rubric)
    earned = sum(m.criterion.points for m in matches if m.met)
    fraction = earned / total
    status = (
        Status.CORRECT if fraction == 1 else Status.PARTIAL if fraction > 0 else Status.INCORRECT
    )
    met = [f"{m.criterion.criterion} ({_quoted(m.quotes)})" for m in matches if m.met]
    missing = [
        m.criterion.criterion
        + (f" (says the opposite: {_quoted(m.opposite)})" if m.opposite else "")
        for m in matches
        if not m.met
    ]
    parts = []
    if met:
        parts.append("Mentions: " + "; ".join(met) + ".")
    if missing:
        parts.append("Not yet: " + "; ".join(missing) + ".")
    parts.append("Suggested score from the rubric; to be reviewed.")
    return Verdict(
        question=qid,
        status=status,
        score=round(points * fraction, 6),
        max_score=points,
        read_as=f"rubric {format_value(earned)}/{format_value(total)}",
        feedback=" ".join(parts),
        expected=text.model_answer,
        needs_review=True,
    )


# --- numeric ------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class UnitReading:
    """What the unit of a numeric answer (or its absence) means for one slot."""

    conversion: Conversion | None
    """How the typed unit relates to the slot's; None when no unit was typed."""
    read_as: str
    """How the answer was read, with the conversion: ``36 km/h = 10 m/s``."""
    doubt: str = ""
    penalty: float = 0.0
    """Share of the points lost: a unit was required and none was given."""
    note: str = ""
    """What the student is told about the unit."""


def read_unit(reading: Reading, slot: Slot) -> UnitReading:
    """Judge the unit of a numeric answer against the slot's units (see :mod:`quizgym.units`);
    its doubt also says when thousands separators were read (``1,234,567 m``)."""
    judged = _judge_unit(reading, slot)
    if not reading.typed:
        return judged
    separators = f"read {reading.typed} with thousands separators"
    return dataclasses.replace(judged, doubt="; ".join(d for d in (separators, judged.doubt) if d))


def _judge_unit(reading: Reading, slot: Slot) -> UnitReading:
    units = slot.units
    if not reading.unit:
        if units and slot.require_units > 0:
            lost = slot.require_units
            cost = "no credit" if lost >= 1 else f"{format_value(lost * 100)}% of the points lost"
            return UnitReading(
                conversion=None,
                read_as=reading.read_as,
                doubt="no unit given",
                penalty=lost,
                note=f"Give the unit: the answer is in {units} (without one: {cost}).",
            )
        return UnitReading(conversion=None, read_as=reading.read_as)
    conversion = convert(reading.unit, units)
    typed = reading.unit
    if conversion.kind == "same":
        return UnitReading(conversion=conversion, read_as=reading.read_as)
    if conversion.kind == "incompatible":
        note, doubt = incompatible_unit(typed, units)
        return UnitReading(conversion=conversion, read_as=reading.read_as, doubt=doubt, note=note)
    if conversion.kind == "unknown":
        return UnitReading(conversion=conversion, read_as=reading.read_as)
    value = conversion.scale * reading.number + conversion.offset
    shown = f"{format_value(value)}{'' if units is None else ' ' + units}"
    if conversion.spelled:  # ms^-1 read as m*s^-1: said, and doubted only when converted
        typed = conversion.spelled
        if conversion.identity:
            return UnitReading(conversion=conversion, read_as=f"{reading.read_as} = {shown}")
    return UnitReading(
        conversion=conversion,
        read_as=f"{reading.read_as} = {shown}",
        doubt=f"typed in {typed}, converted" if units else f"read {typed} as a fraction",
        note="",
    )


def incompatible_unit(typed: str, units: str | None) -> tuple[str, str]:
    """What a numeric answer's verdict says of a unit that cannot be converted to the slot's
    (``kg`` for ``m/s``, or any unit for a plain number): its feedback and its doubt (shared
    with the batch grader, which judges such answers a column at a time)."""
    if units:
        note = f"{typed} cannot be converted to {units}: the answer is in {units}."
    else:
        note = f"This answer is a plain number, without a unit such as {typed}."
    return note, f"incompatible unit: {typed} for {units or 'no unit (a plain number)'}"


def in_slot_unit(conversion: Conversion, tolerance: Tolerance) -> bool:
    """Whether an answer typed in a converted unit is compared in the slot's unit (a band of
    the slot's unit, or a unit whose zero is another, such as degF for degC), rather than the
    key in the unit typed (relative policies, so that the digits typed still count)."""
    return isinstance(tolerance, AbsTolerance | DecimalsTolerance) or conversion.offset != 0


def _match(reading: Reading, target: float, slot: Slot) -> Match:
    assert slot.tolerance is not None
    value, kind = reading.number, reading.parsed.kind
    conversion = convert(reading.unit, slot.units) if reading.unit else None
    if conversion is not None and conversion.kind == "converted" and not conversion.identity:
        if in_slot_unit(conversion, slot.tolerance):
            # A band in the slot's unit, or a scale with another zero (degF for degC, where a
            # share of the typed number means nothing): compare there, the typed digits aside.
            value, kind = conversion.scale * value + conversion.offset, "mixed"
        else:
            # Relative policies: the key in the unit typed, so the digits typed still count.
            target = (target - conversion.offset) / conversion.scale
    return compare(
        value=value,
        key=target,
        tolerance=slot.tolerance,
        kind=kind,
        decimals=reading.parsed.decimals,
        sigfigs=reading.parsed.sigfigs,
        zeros=reading.parsed.zeros,
    )


def grade_slot(
    bank: CompiledBank,
    slot: Slot,
    variant: Variant,
    response: str | None,
    *,
    earlier_values: Mapping[str, mpf] | None = None,
) -> Verdict:
    """Grade one numeric slot: the key, then the key carried forward, then each mistake.

    Args:
        bank: the compiled bank.
        slot: the slot (a numeric question or one of its parts).
        variant: the student's variant.
        response: the raw text (None or blank: no answer).
        earlier_values: the student's earlier parts, read (error carried forward).
    """
    key = bank.key(slot, variant)
    expected = expected_number(slot, variant, bank)
    reading = None if is_blank(response) else read_answer(response or "")
    if not isinstance(reading, Reading) or not _usable(reading, slot):
        return numeric_verdict(slot, expected, reading)
    match = _match(reading, key.number, slot)
    if match.ok:
        return numeric_verdict(slot, expected, reading, correct=True)
    if slot.earlier and earlier_values:
        carried = bank.carried_forward(slot, variant, earlier_values)
        if carried is not None and _match(reading, carried, slot).ok:
            names = ", ".join(slot.earlier)
            feedback = (
                f"Correct for your answer to {names} (error carried forward); "
                f"with the right {names} it would be {key}."
            )
            return numeric_verdict(slot, expected, reading, correct=True, feedback=feedback)
    for mistake in bank.mistakes(slot, variant):
        if _match(reading, mistake.value, slot).ok:
            return numeric_verdict(slot, expected, reading, mistake=mistake)
    return numeric_verdict(slot, expected, reading, feedback=match.hint or "")


def _usable(reading: Reading, slot: Slot) -> bool:
    """Whether an answer's number can be compared: no unit, or one that converts."""
    return not reading.unit or convert(reading.unit, slot.units).usable


def expected_number(slot: Slot, variant: Variant, bank: CompiledBank) -> str:
    """The key of a numeric slot as shown to the student, with units: ``ln 10 ≈ 2.3026 nats``."""
    key = bank.key(slot, variant)
    return str(key) + (f" {slot.units}" if slot.units else "")


def numeric_verdict(
    slot: Slot,
    expected: str,
    reading: Reading | ParseFailure | None,
    *,
    correct: bool = False,
    mistake: ResolvedMistake | None = None,
    feedback: str = "",
) -> Verdict:
    """The verdict of a numeric answer once it has been compared (shared with the batch grader).

    The answer's unit is judged here (:func:`read_unit`), so both paths say the same about it:
    a unit that is no unit makes the answer invalid (with the reason the whole text did not
    read), an incompatible one wrong, a missing required one costs its penalty.

    Args:
        slot: the slot.
        expected: the key as shown to the student.
        reading: how the answer was read; None for a blank answer.
        correct: it matched the key (or the key carried forward from the student's own answers).
        mistake: else, the known mistake it matched (credit 1: another correct answer).
        feedback: what to tell the student when no mistake matched (a precision hint), or why
            a carried-forward answer is right.
    """
    qid, points = slot.id, slot.points
    if reading is None:
        return Verdict(
            question=qid, status=Status.BLANK, score=0.0, max_score=points, expected=expected
        )
    unit = read_unit(reading, slot) if isinstance(reading, Reading) else None
    if (
        isinstance(reading, Reading)
        and unit is not None
        and unit.conversion is not None
        and unit.conversion.kind == "unknown"
    ):
        assert reading.fallback is not None
        reading = reading.fallback
    if isinstance(reading, ParseFailure):
        return Verdict(
            question=qid,
            status=Status.INVALID,
            score=0.0,
            max_score=points,
            feedback=reading.message,
            expected=expected,
        )
    assert unit is not None
    value = reading.number
    if unit.conversion is not None and unit.conversion.kind == "converted":
        value = unit.conversion.scale * value + unit.conversion.offset
    return _scored(slot, expected, unit, value, correct=correct, mistake=mistake, feedback=feedback)


def _scored(
    slot: Slot,
    expected: str,
    unit: UnitReading,
    value: float,
    *,
    correct: bool,
    mistake: ResolvedMistake | None,
    feedback: str,
) -> Verdict:
    """The verdict of a readable numeric answer once its unit is judged (``value`` in the
    slot's unit)."""
    qid, points = slot.id, slot.points
    if unit.conversion is not None and unit.conversion.kind == "incompatible":
        return Verdict(
            question=qid,
            status=Status.INCORRECT,
            score=0.0,
            max_score=points,
            read_as=unit.read_as,
            feedback=unit.note,
            expected=expected,
            value=None,
            doubt=unit.doubt,
        )
    if correct:
        credit = 1.0
    elif mistake is not None:
        credit, feedback = mistake.credit, mistake.feedback
    else:
        credit = 0.0
    credit *= 1 - unit.penalty
    status = Status.CORRECT if credit >= 1 else Status.PARTIAL if credit > 0 else Status.INCORRECT
    if unit.note and (correct or mistake is not None):
        feedback = f"{feedback} {unit.note}".strip()
    tag = None if mistake is None or correct else mistake.tag
    return Verdict(
        question=qid,
        status=status,
        score=points * credit,
        max_score=points,
        read_as=unit.read_as,
        feedback=feedback,
        tag=tag,
        expected=expected,
        value=value,
        doubt=unit.doubt,
    )


def mistakes_for(
    bank: Bank | CompiledBank, question: Numeric, variant: Variant, index: int
) -> tuple[ResolvedMistake, ...]:
    """The mistakes of slot ``index`` of a question for one variant (a convenience over
    :meth:`CompiledBank.mistakes`)."""
    book = compiled(bank)
    return book.mistakes(book.slots_of(question)[index], variant)


# --- entry points -------------------------------------------------------------------------------


def grade_response(
    bank: Bank | CompiledBank,
    question: AnyQuestion,
    response: str | None,
    *,
    student: str | None = None,
    seed: int | None = None,
    part: str | None = None,
    earlier: Mapping[str, str] | None = None,
    variant: Variant | None = None,
) -> Verdict:
    """Grade one response to one question (or one part of it).

    The answer engine sits just above the solver, below everything that shows or grades answers: the
    drill, the worksheets' keys, the exports and the batch grader all defer to this module (the
    batch grader re-implements only the numeric comparison in NumPy, and a property test holds the
    two paths to the same verdict on every response).

    Args:
        bank: the bank the question belongs to, compiled (a plain bank is compiled for this
            call: compile it once with :func:`~quizgym.solver.compile_bank` to grade many).
        question: the question.
        response: the raw text the student gave (None or blank = no answer).
        student: the student's id (selects the variant).
        seed: the seed (selects the variant).
        part: for a multi-part question, the part's id.
        earlier: the student's raw answers to earlier parts, by part id (error carried forward).
        variant: the variant, when the caller already has it.

    Returns:
        The verdict.

    Raises:
        KeyError: no such part, or a part named for a question without parts.
    """
    book = compiled(bank)
    variant = variant or book.variant(question, student=student, seed=seed)
    slots = book.slots_of(question)
    interaction = interaction_of(question)
    if isinstance(interaction, NumericInteraction):
        ids = [slot.part for slot in slots]
        if part not in ids:
            raise KeyError(
                f"{question.id}: no part {part!r}" if part else f"{question.id}: name a part"
            )
        slot = slots[ids.index(part)]
        values = _earlier_values(earlier or {}, slots)
        return grade_slot(book, slot, variant, response, earlier_values=values)
    if isinstance(interaction, BlanksInteraction):
        return _grade_blank(book, question, interaction, slots, variant, response, part, earlier)
    if isinstance(interaction, PairingInteraction):
        ids = [slot.part for slot in slots]
        if part not in ids:
            raise KeyError(
                f"{question.id}: no item {part!r}" if part else f"{question.id}: name an item"
            )
        slot = slots[ids.index(part)]
        interaction = interaction.slot(str(part))
    elif part is not None:
        raise KeyError(f"{question.id} has no parts")
    else:
        (slot,) = slots
    points = slot.points
    if unanswered(question, response, slot.part):
        return Verdict(
            question=slot.id,
            status=Status.BLANK,
            score=0.0,
            max_score=points,
            expected=expected_answer(question, variant, part=slot.part),
        )
    assert response is not None
    if isinstance(interaction, ChoiceInteraction) and interaction.boolean:
        return _grade_true_false(slot.id, interaction, response, points)
    if isinstance(interaction, ChoiceInteraction):
        return _grade_choice(slot.id, interaction, variant, response, points)
    assert isinstance(interaction, TextInteraction)
    return _grade_free_text(slot.id, interaction, response, points)


def _grade_blank(
    book: CompiledBank,
    question: AnyQuestion,
    blanks: BlanksInteraction,
    slots: Sequence[Slot],
    variant: Variant,
    response: str | None,
    part: str | None,
    earlier: Mapping[str, str] | None,
) -> Verdict:
    """Grade one blank of a cloze question as the kind it is: a number, a choice or a word."""
    ids = [slot.part for slot in slots]
    if part not in ids:
        raise KeyError(
            f"{question.id}: no blank {part!r}" if part else f"{question.id}: name a blank"
        )
    slot = slots[ids.index(part)]
    if slot.is_numeric:
        values = _earlier_values(earlier or {}, slots)
        return grade_slot(book, slot, variant, response, earlier_values=values)
    assert part is not None
    interaction = blanks.slot(part)
    if response is not None and response.startswith(UNSPLIT):  # a number reads none already
        return Verdict(
            question=slot.id,
            status=Status.INVALID,
            score=0.0,
            max_score=slot.points,
            feedback="This answer fills several blanks at once and cannot be split among them.",
            expected=expected_answer(question, variant, part=part),
        )
    if unanswered(question, response, part):
        return Verdict(
            question=slot.id,
            status=Status.BLANK,
            score=0.0,
            max_score=slot.points,
            expected=expected_answer(question, variant, part=part),
        )
    assert response is not None
    if isinstance(interaction, ChoiceInteraction):
        return _grade_choice(slot.id, interaction, variant, response, slot.points)
    assert isinstance(interaction, WordInteraction)
    return grade_word(slot.id, interaction, response, slot.points)


def grade_word(qid: str, word: WordInteraction, response: str, points: float) -> Verdict:
    """Grade a short word: right when it is an accepted spelling (see
    :class:`~quizgym.types.WordInteraction`); a wrong one close to a spelling is flagged for a
    look (a typo, perhaps), never accepted."""
    expected = word.accept[0]
    read = word.fold(response)
    if word.accepts(response):
        return Verdict(
            question=qid,
            status=Status.CORRECT,
            score=points,
            max_score=points,
            read_as=read,
            expected=expected,
        )
    near = difflib.get_close_matches(read, [word.fold(a) for a in word.accept], n=1, cutoff=0.75)
    return Verdict(
        question=qid,
        status=Status.INCORRECT,
        score=0.0,
        max_score=points,
        read_as=read,
        feedback=word.feedback or f"The answer is {expected}.",
        tag=word.tag,
        expected=expected,
        doubt=f"close to the accepted spelling '{near[0]}'" if near else "",
    )


def grade_question(
    bank: Bank | CompiledBank,
    question: AnyQuestion,
    responses: Mapping[str | None, str | None],
    *,
    student: str | None = None,
    seed: int | None = None,
) -> list[Verdict]:
    """Grade every slot of a question; ``responses`` maps part id (None for no parts) to text."""
    book = compiled(bank)
    variant = book.variant(question, student=student, seed=seed)
    part_ids = [slot.part for slot in book.slots_of(question)]
    if part_ids == [None]:
        return [grade_response(book, question, responses.get(None), variant=variant)]
    return [
        grade_response(
            book,
            question,
            responses.get(part_id),
            part=part_id,
            earlier={p: t for p in part_ids[:index] if p and (t := responses.get(p)) is not None},
            variant=variant,
        )
        for index, part_id in enumerate(part_ids)
    ]


def _earlier_values(earlier: Mapping[str, str], slots: Sequence[Slot]) -> dict[str, mpf]:
    """The student's earlier parts, read from their text at full precision, in each part's own
    unit (an earlier ``36 km/h`` for a part in m/s counts as 10)."""
    units = {slot.part: slot for slot in slots}
    values = {}
    for name, text in earlier.items():
        reading = read_answer(text) if not is_blank(text) else None
        if not isinstance(reading, Reading):
            continue
        value = reading.value
        slot = units.get(name)
        if reading.unit and slot is not None:
            conversion = convert(reading.unit, slot.units)
            if not conversion.usable:
                continue
            value = value * conversion.scale + conversion.offset
        values[name] = value
    return values


def expected_answer(question: AnyQuestion, variant: Variant, *, part: str | None = None) -> str:
    """The correct answer to a question without numbers (or to one matching item, ``part``),
    as shown to a student."""
    word = word_of(question, part)
    if word is not None:
        return word.accept[0]
    interaction = choices_of(question, part) or interaction_of(question)
    if isinstance(interaction, ChoiceInteraction) and interaction.boolean:
        return "true" if interaction.choices[0].correct else "false"
    if isinstance(interaction, ChoiceInteraction):
        return "; ".join(_label(interaction, variant, i) for i in interaction.right)
    if isinstance(interaction, TextInteraction):
        return interaction.model_answer
    return ""


__all__ = [
    "CriterionMatch",
    "ResolvedMistake",
    "Status",
    "UnitReading",
    "Verdict",
    "expected_answer",
    "expected_number",
    "fold_text",
    "grade_question",
    "grade_response",
    "grade_slot",
    "grade_word",
    "incompatible_unit",
    "is_blank",
    "match_criterion",
    "match_rubric",
    "mistakes_for",
    "non_answer",
    "numeric_verdict",
    "options_of",
    "read_bool",
    "read_choices",
    "read_unit",
    "shown_choices",
    "unanswered",
]
