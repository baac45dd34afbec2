"""Normalized text in, tokens out (numbers with their digits as typed, names, operators), or a
refusal of an ambiguous separator that says how to write it."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from quizgym.errors import AnswerParseError
from quizgym.expr.base import (
    _AMBIGUOUS_COMMA,
    _MAX_LITERAL_LOG10,
    _PERCENT,
    _TOO_BIG,
    _TWO_NUMBERS,
    Constant,
    Function,
    _Num,
)
from quizgym.expr.vocabulary import CONSTANTS

if TYPE_CHECKING:
    pass


@dataclass(frozen=True, slots=True)
class _Token:
    kind: Literal["num", "name", "func", "const", "op", "(", ")", ",", "end"]
    text: str
    offset: int  # in the source
    num: _Num | None = None
    function: Function | None = None
    constant: Constant | None = None


_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EXPONENT_RE = re.compile(r"[eE]([+-]?)([0-9]+)")


class _Tokenizer:
    def __init__(
        self,
        text: str,
        offsets: list[int],
        names: frozenset[str],
        functions: Mapping[str, Function],
        constants: Mapping[str, Constant] = CONSTANTS,
    ) -> None:
        self.text = text
        self.offsets = offsets
        self.names = names
        self.functions = functions
        self.constants = constants
        self.end_offset = offsets[-1] + 1

    def at(self, i: int) -> int:
        return self.offsets[i] if i < len(self.offsets) else self.end_offset

    def tokens(self) -> list[_Token]:
        text, out = self.text, []
        contexts: list[bool] = []  # per open parenthesis: does "," separate arguments there?
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == " ":
                i += 1
            elif ch.isdigit() or (ch == "." and text[i + 1 : i + 2].isdigit()):
                allow_comma = not (contexts and contexts[-1])
                num, i = self.number(i, allow_comma=allow_comma)
                out.append(_Token("num", num.text, num.offset, num=num))
            elif ch.isalpha() or ch == "_":
                token, i = self.identifier(i)
                out.append(token)
            elif ch == "*" and text[i + 1 : i + 2] == "*":
                out.append(_Token("op", "^", self.at(i)))
                i += 2
            elif ch in "+-*/^":
                out.append(_Token("op", ch, self.at(i)))
                i += 1
            elif ch == "(":
                previous = out[-1] if out else None
                contexts.append(
                    previous is not None
                    and previous.function is not None
                    and previous.function.max_args != 1
                )
                out.append(_Token("(", ch, self.at(i)))
                i += 1
            elif ch == ")":
                if contexts:
                    contexts.pop()
                out.append(_Token(")", ch, self.at(i)))
                i += 1
            elif ch == ",":
                out.append(_Token(",", ch, self.at(i)))
                i += 1
            elif ch == "%":
                raise AnswerParseError(_PERCENT, self.at(i))
            elif ch == "!":
                if text[i + 1 : i + 2] == "!":
                    raise AnswerParseError(
                        "n!! (a double factorial) is not supported; for (n!)! write "
                        "factorial(factorial(n)).",
                        self.at(i),
                    )
                out.append(_Token("op", "!", self.at(i)))
                i += 1
            else:
                raise AnswerParseError(f"Unexpected character {ch!r}.", self.at(i))
        out.append(_Token("end", "", self.end_offset))
        return out

    def number(self, i: int, *, allow_comma: bool) -> tuple[_Num, int]:
        """Read a number: digits, one decimal separator, digit groups, e-notation."""
        text, j = self.text, i
        while j < len(text):
            ch = text[j]
            nxt = text[j + 1 : j + 2]
            if ch.isdigit() or ch == ".":
                j += 1
            elif ch in ", " and nxt.isdigit() and text[j - 1].isdigit():
                # A comma between digits may be a decimal comma, a space a digit group; both
                # are judged below once the whole run is known.
                if ch == "," and not allow_comma:
                    break
                j += 1
            else:
                break
        body = text[i:j]
        offset = self.at(i)
        exp_sign, exp_digits = "", ""
        match = _EXPONENT_RE.match(text, j)
        if match:
            exp_sign, exp_digits = match.group(1), match.group(2)
            j = match.end()
        body, separator, grouped = _separators(body, offset)
        whole, _, fraction = body.partition(separator) if separator else (body, "", "")
        if (
            separator == ","
            and len(fraction.split(" ")[0]) == 3
            and re.fullmatch(r"[1-9][0-9]{0,2}", whole)
        ):
            # "1,000" and "2,302": thousands separator or decimal comma? Refuse to guess.
            raise AnswerParseError(
                _AMBIGUOUS_COMMA.format(
                    text=body, point=body.replace(",", "."), plain=body.replace(",", "")
                ),
                offset,
            )
        if not _grouped(whole, first=True) or not _grouped(fraction, first=False):
            raise AnswerParseError(_TWO_NUMBERS, self.at(i + text[i:j].index(" ")))
        grouped = grouped or " " in whole or " " in fraction
        whole, fraction = whole.replace(" ", ""), fraction.replace(" ", "")
        digits = whole + fraction
        if len(exp_digits.lstrip("0")) > 6:
            raise AnswerParseError(_TOO_BIG, offset)
        exponent = int(exp_sign + exp_digits) if exp_digits else 0
        mantissa = int(digits)
        if mantissa and not (
            -_MAX_LITERAL_LOG10
            <= len(str(mantissa)) - 1 + exponent - len(fraction)
            < _MAX_LITERAL_LOG10
        ):
            raise AnswerParseError(_TOO_BIG, offset)
        significant = digits.lstrip("0")
        canonical = (whole or "0") + ("." + fraction if separator else "")
        if exp_digits:
            canonical += "e" + ("-" if exp_sign == "-" else "") + (exp_digits.lstrip("0") or "0")
        num = _Num(
            mantissa=mantissa,
            # 0e999999 is 0: never let a zero carry its exponent into 10**exponent.
            exponent=exponent - len(fraction) if mantissa else 0,
            text=canonical,
            decimal=bool(separator),
            decimals=len(fraction) - exponent,  # "2.5e-3" → 4, "1.23e4" → -2
            sigfigs=len(significant) if significant else max(1, len(fraction)),
            comma=separator == ",",
            offset=offset,
            grouped=grouped,
            zeros=len(whole) - len(whole.rstrip("0")) if not separator and not exp_digits else 0,
        )
        return num, j

    def identifier(self, i: int) -> tuple[_Token, int]:
        match = _IDENT_RE.match(self.text, i)
        assert match is not None  # called on a letter or underscore
        word = match.group()
        low = word.lower()
        offset = self.at(i)
        if low in self.names:
            return _Token("name", low, offset), match.end()
        if low in self.functions:
            return _Token("func", low, offset, function=self.functions[low]), match.end()
        if low in self.constants:
            return _Token("const", low, offset, constant=self.constants[low]), match.end()
        # "8ln2", "sqrt2": a function name glued to its number; "log28" could be log(28) or
        # log2(8), so a glued name is split only when exactly one split exists.
        # ("f10(": a call of a name that ends in digits, never f1 applied to 0.)
        called = self.text[match.end() : match.end() + 1] == "("
        splits = [
            f
            for f in self.functions
            if not called and low.startswith(f) and low[len(f) :].isdigit()
        ]
        if len(splits) == 1:
            name = splits[0]
            return _Token("func", name, offset, function=self.functions[name]), i + len(name)
        if splits:
            options = " or ".join(f"{f}({low[len(f) :]})" for f in sorted(splits))
            raise AnswerParseError(f"{word} is ambiguous: write {options}.", offset)
        if word.startswith("_"):
            raise AnswerParseError("Unexpected character '_'.", offset)
        shown = word if len(word) <= 20 else word[:20] + "..."
        close = _closest(low, frozenset({*self.functions, *self.constants, *self.names}))
        if close:
            hint = f"; did you mean {close}?"
        elif self.names:
            values = sorted({*self.constants, *self.names})
            hint = f"; the names here are {', '.join(values)}, and the functions."
        else:
            hint = (
                "; an answer is a number or an expression of numbers, e and pi, and functions "
                "such as ln, sqrt, sin (a unit goes after the number: 10 m/s)."
            )
        raise AnswerParseError(f"Unknown name {shown!r}{hint}", offset)


@functools.lru_cache(maxsize=4096)
def _closest(word: str, known: frozenset[str]) -> str | None:
    """The known name closest to an unknown word, if one is close (memoized: a class types the
    same unknown word, a unit the question does not name, thousands of times)."""
    import difflib  # a misspelt name only

    close = difflib.get_close_matches(word, sorted(known), n=1, cutoff=0.75)
    return close[0] if close else None


def _separators(body: str, offset: int) -> tuple[str, str, bool]:
    """Judge the separators of a digit run: ``(body with thousands separators removed, the
    decimal separator or '', whether thousands separators were removed)``.

    One separator that appears once is a decimal one (``2,30``; ``1,000`` is judged ambiguous
    by the caller). Thousands separators are read only where nothing else is possible: the same
    separator more than once (``1,234,567``, ``1.234.567``), or both kinds with the decimal one
    last (``12,345.6``, ``1.234,5``), each group of exactly three digits after a first group of
    one to three.
    """
    points, commas = body.count("."), body.count(",")
    if not (points > 1 or commas > 1 or (points and commas)):
        return body, "." if points else "," if commas else "", False
    last = max(body.rfind("."), body.rfind(","))
    tail_separator = body[last]
    thousands = "," if tail_separator == "." else "."
    if points and commas and body.count(tail_separator) == 1:
        head, tail = body[:last], body[last + 1 :]
    elif not (points and commas):
        head, tail, tail_separator, thousands = body, "", "", tail_separator
    else:
        head, tail = body, ""
    groups = head.replace(" ", "").split(thousands)
    if (
        (tail_separator and tail_separator in head)
        or not 1 <= len(groups[0]) <= 3
        or not all(len(g) == 3 and g.isdigit() for g in groups[1:])
        or not groups[0].isdigit()
    ):
        if points and commas:
            raise AnswerParseError(
                f"{body} mixes '.' and ',' (mixed separators) in a way that is not a thousands "
                "separator; write the number with a decimal point only, e.g. 1000.5.",
                offset,
            )
        kind = "decimal point" if thousands == "." else "comma"
        raise AnswerParseError(
            f"{body} has more than one {kind}, not in groups of three digits; write numbers "
            "without thousands separators.",
            offset,
        )
    plain = "".join(groups)
    if tail_separator:
        return f"{plain}{tail_separator}{tail}", tail_separator, True
    return plain, "", True


def _grouped(part: str, *, first: bool) -> bool:
    """Whether spaces in a digit run are digit grouping: "30 000", or "539 816 3" after a point."""
    if " " not in part:
        return True
    groups = part.split(" ")
    if first:
        return 1 <= len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:])
    return all(len(g) == 3 for g in groups[:-1]) and 1 <= len(groups[-1]) <= 3
