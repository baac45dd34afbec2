"""A student's answer in, a :class:`~quizgym.expr.base.Reading` (value, how it was read, unit) or a
:class:`~quizgym.expr.base.ParseFailure` saying why not out (:func:`read_answer`)."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from quizgym import lazy
from quizgym.errors import AnswerParseError
from quizgym.expr.base import (
    DPS,
    MAX_LENGTH,
    Parsed,
    ParseFailure,
    Reading,
    _Node,
    _Num,
    _Unary,
    format_value,
)
from quizgym.expr.evaluate import evaluate
from quizgym.expr.normalize import _normalize
from quizgym.expr.parse import parse
from quizgym.expr.vocabulary import CONSTANTS

if TYPE_CHECKING:
    from mpmath import mpf


def _pointer(source: str, offset: int | None, width: int = 12) -> str:
    if offset is None:
        return ""
    offset = max(0, min(offset, len(source)))
    lo, hi = max(0, offset - width), min(len(source), offset + width)
    excerpt = "".join(ch if ch.isprintable() else " " for ch in source[lo:hi])
    lead = "..." if lo else ""
    tail = "..." if hi < len(source) else ""
    return f"{lead}{excerpt}{tail}\n{' ' * (len(lead) + offset - lo)}^"


@functools.lru_cache(maxsize=65536)
def read_answer(text: str) -> Reading | ParseFailure:
    """Read and evaluate a student's answer (memoized: a pure function of the text, and answers
    repeat heavily across a class).

    Args:
        text: the raw answer.

    Returns:
        A :class:`Reading`, or a :class:`ParseFailure` whose message starts "Your answer".
    """
    plain = _read_plain(text)
    if plain is not None:
        return plain
    return _read_parsed(text)


_PLAIN_PREC = 103
"""mpmath's precision in bits at DPS digits (``mpmath.libmp.dps_to_prec(30)``)."""
PLAIN_NUMBER = re.compile(
    r"(?P<lead> *(?:= *)?)(?P<sign>[+-]?)(?P<whole>[0-9]{1,15})"
    r"(?:(?P<sep>[.,])(?P<frac>[0-9]{1,15}))? *"
)
"""A plain decimal as most students type it: ``2.30``, ``-0.5``, ``12``, ``2,30`` (no exponent,
no grouping, at most 15 digits each side, ASCII spaces around, after an ``=`` or not). Read whole
(``fullmatch``); the batch grader runs the same pattern over a column in pyarrow (RE2)."""


def _read_plain(text: str) -> Reading | None:
    """:func:`read_answer` of a plain decimal without the tokenizer and the parser (a few µs
    instead of tens): the same tree, reading and value, built directly; None for anything else
    (which takes the full path). ``tests/test_fast_paths.py`` holds the two paths equal.
    """
    match = PLAIN_NUMBER.fullmatch(text) if len(text) <= MAX_LENGTH else None
    if match is None:
        return None
    lead, sign, whole, separator, fraction = match.groups()
    fraction = fraction or ""
    if separator == "," and len(fraction) == 3:
        return None  # "2,302": a thousands separator or a decimal comma; the parser refuses it
    digits = whole + fraction
    mantissa = int(digits)
    significant = digits.lstrip("0")
    offset = len(lead) + len(sign)
    num = _Num(
        mantissa=mantissa,
        exponent=-len(fraction) if mantissa else 0,
        text=whole + ("." + fraction if separator else ""),
        decimal=bool(separator),
        decimals=len(fraction),
        sigfigs=len(significant) if significant else max(1, len(fraction)),
        comma=separator == ",",
        offset=offset,
        zeros=0 if separator else len(whole) - len(whole.rstrip("0")),
    )
    tree: _Node = _Unary(sign, num, len(lead)) if sign else num
    canonical = sign + num.text  # as _canonical prints a signed literal
    parsed = Parsed(
        text, canonical, "decimal", num.decimals, num.sigfigs, frozenset(), tree, False, num.zeros
    )
    # The value _literal gives at DPS digits, rounded once from the exact fraction.
    signed = -mantissa if sign == "-" else mantissa
    scale = 10 ** len(fraction)
    reading = Reading(
        parsed,
        lazy.mpmath.mp.make_mpf(
            lazy.mpmath.libmp.from_rational(
                signed, scale, _PLAIN_PREC, lazy.mpmath.libmp.round_nearest
            )
        ),
        canonical,
    )
    reading.__dict__["number"] = signed / scale  # correctly rounded from the exact fraction
    return reading


def _read_parsed(text: str) -> Reading | ParseFailure:
    """:func:`read_answer` through the tokenizer, the parser and the guarded evaluator."""
    stage = "read"
    try:
        parsed = parse(text)
        stage = "evaluated"
        value = evaluate(parsed)
    except AnswerParseError as exc:
        failure = ParseFailure(
            f"Your answer could not be {stage}. {exc.message}",
            exc.offset,
            _pointer(text, exc.offset),
        )
        split = _split_unit(text) if stage == "read" else None
        if split is None:
            return failure
        head, unit = split
        found = read_answer(head)
        if not isinstance(found, Reading):
            return failure
        read_as = found.read_as + (unit if unit == "%" else f" {unit}")
        return Reading(
            found.parsed, found.value, read_as, unit=unit, fallback=failure, typed=found.typed
        )
    typed = _normalize(text)[0] if parsed.grouped and parsed.kind == "decimal" else ""
    read_as = _plain_read_as(parsed, value)
    if typed:  # say how the separators were read: "12,345.6 read as 12345.6"
        read_as = f"{typed} read as {read_as}"
    return Reading(parsed, value, read_as, typed=typed)


def _plain_read_as(parsed: Parsed, value: mpf) -> str:
    """How an answer (without its unit) was read: ``2.30``, ``ln(10) ≈ 2.302585``."""
    if parsed.kind == "decimal" and "e" not in parsed.canonical:
        read_as = parsed.canonical
    else:
        shown = format_value(value)
        with lazy.mpmath.workdps(DPS):
            same = lazy.mpmath.mpf(shown) == value  # our own digits, not the student's text
        read_as = f"{parsed.canonical} {'=' if same else '≈'} {shown}"
    return read_as


MAX_UNIT_LENGTH = 40
"""Longest unit read after a number (``kg m^2 s^-2``), in characters."""
_MAX_UNIT_FACTORS = 8
_UNIT_WORD_RE = re.compile(r"%|[A-Za-z][A-Za-z_]*")
_UNIT_POWER_RE = re.compile(r"\^(?:-?[0-9]|\(-?[0-9]\))|-?[0-9](?![0-9])")
"""A factor's power: ``^2``, ``^-1``, ``^(-1)``, or written straight after the letters as
students do (``s-1``, ``m2``, ``ms-2``)."""
_UNIT_PAREN_POWER_RE = re.compile(r"\^\((-?[0-9])\)")  # s⁻¹ normalizes to s^(-1): show s^-1
_UNIT_BARE_POWER_RE = re.compile(r"(?<=[A-Za-z])(-?[0-9])")  # s-1 and m2: show s^-1 and m^2
_UNIT_DOT_RE = re.compile(r"(?<=[A-Za-z0-9)])\.(?=[A-Za-z(])")  # m.s^-1: show m*s^-1


def _split_unit(text: str) -> tuple[str, str] | None:
    """Split ``10 m/s`` into the number ``10`` and the unit ``m/s``: the longest tail of words
    (with small integer powers, joined by spaces, ``*`` or ``/``) after which the rest reads.

    Only the shape is judged here; whether the words name a unit is for the units library, which
    the answer engine asks with the question's own units. The constants ``e`` and ``pi`` are
    never unit words (``5 pi rad`` is 5π radians).
    """
    try:
        normalized, offsets = _normalize(text)
    except AnswerParseError:
        return None
    for i in range(1, len(normalized)):
        if len(normalized) - i > MAX_UNIT_LENGTH:
            continue
        before, here = normalized[i - 1], normalized[i]
        if not (here.isalpha() or here == "%") or before.isalpha() or before == "_":
            continue
        tail = normalized[i:].strip()
        if tail and _is_unit(tail):
            head = text[: offsets[i]]
            if head.strip():
                return head, _unit_text(tail)
    return None


def _unit_text(tail: str) -> str:
    """A unit as read, in the spelling the units library takes and answers show: ``s^-1`` for
    ``s^(-1)`` and ``s-1``, ``m^2`` for ``m2``, ``m*s^-1`` for ``m.s^-1``."""
    tail = _UNIT_PAREN_POWER_RE.sub(r"^\1", tail)
    tail = _UNIT_BARE_POWER_RE.sub(r"^\1", tail)
    return _UNIT_DOT_RE.sub("*", tail)


def _is_unit(text: str) -> bool:
    """Whether text has the shape of a unit: ``m/s``, ``m s^-1``, ``kg*m/s^2``, ``J/(kg K)``,
    ``m.s^-1``, ``m s-1``."""
    i, n, factors, depth = 0, len(text), 0, 0
    want_factor = True
    while i < n:
        if want_factor:
            if text[i] == "(" and not depth:
                depth, i = 1, i + 1
                continue
            word = _UNIT_WORD_RE.match(text, i)
            if word is None or word.group().lower() in CONSTANTS:
                return False
            i, factors, want_factor = word.end(), factors + 1, False
            power = _UNIT_POWER_RE.match(text, i)
            if power is not None:
                i = power.end()
            continue
        if text[i] == ")" and depth:
            depth, i = 0, i + 1
            power = _UNIT_POWER_RE.match(text, i)
            if power is not None:
                i = power.end()
            continue
        operators = 0
        start = i
        while i < n and text[i] in " */.":
            operators += text[i] != " "
            i += 1
        if i in (start, n) or operators > 1:
            return False
        want_factor = True
    return not want_factor and not depth and factors <= _MAX_UNIT_FACTORS
