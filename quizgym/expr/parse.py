"""Text in, a checked :class:`~quizgym.expr.base.Parsed` tree and its canonical spelling out
(:func:`parse`), within the length, node and nesting limits."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Literal

from quizgym.errors import AnswerParseError
from quizgym.expr.base import (
    _MAX_LITERAL_LOG10,
    _ONE_ARGUMENT,
    _TOO_BIG,
    _TWO_NUMBERS,
    MAX_DEPTH,
    MAX_LENGTH,
    MAX_NODES,
    Constant,
    Function,
    Parsed,
    _Binary,
    _Call,
    _Const,
    _Name,
    _Node,
    _Num,
    _Unary,
    _walk,
)
from quizgym.expr.normalize import _normalize
from quizgym.expr.tokens import _Token, _Tokenizer
from quizgym.expr.vocabulary import _NAME_RE, CONSTANTS, STUDENT_FUNCTIONS

if TYPE_CHECKING:
    pass


_ATOM_START = frozenset({"num", "name", "func", "const", "("})


class _Parser:
    """Recursive descent; precedence low to high: + -, * / (and implicit *), unary sign, ^."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.depth = 0
        self.nodes = 0

    # token helpers
    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def take(self) -> _Token:
        token = self.peek()
        self.pos += 1
        return token

    def node(self, node: _Node) -> _Node:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise AnswerParseError(
                f"The expression is too complex (more than {MAX_NODES} parts).", node.offset
            )
        return node

    def nested(self, offset: int) -> _Nesting:
        return _Nesting(self, offset)

    # grammar
    def parse(self) -> _Node:
        tree = self.sum()
        token = self.peek()
        if token.kind != "end":
            raise AnswerParseError(self.unexpected(token), token.offset)
        return tree

    def sum(self) -> _Node:
        tree = self.product()
        while self.peek().kind == "op" and self.peek().text in "+-":
            op = self.take()
            tree = self.node(_Binary(op.text, tree, self.product(), op.offset))
        return tree

    def product(self) -> _Node:
        tree = self.signed()
        while True:
            token = self.peek()
            if token.kind == "op" and token.text in "*/":
                self.take()
                tree = self.node(_Binary(token.text, tree, self.signed(), token.offset))
            elif token.kind in _ATOM_START:
                # Implicit multiplication: "8 ln 2", "2(3)", "(2)(3)", "2 pi", "2e".
                if token.kind == "num" and self.tokens[self.pos - 1].kind == "num":
                    raise AnswerParseError(_TWO_NUMBERS, token.offset)
                tree = self.node(_Binary("*", tree, self.power(), token.offset))
            else:
                return tree

    def signed(self) -> _Node:
        token = self.peek()
        if token.kind == "op" and token.text in "+-":
            self.take()
            with self.nested(token.offset):
                return self.node(_Unary(token.text, self.signed(), token.offset))
        return self.power()

    def power(self) -> _Node:
        base = self.factorial(self.atom())
        token = self.peek()
        if token.kind == "op" and token.text == "^":
            self.take()
            with self.nested(token.offset):
                # Right-associative, and the exponent may carry a sign: 2^3^2 = 2^9, 10^-3.
                return self.node(_Binary("^", base, self.signed(), token.offset))
        return base

    def factorial(self, base: _Node) -> _Node:
        """``n!``: binds tighter than ``^`` (``2^3!`` is 2^6) and than a sign (``-3!`` is −6)."""
        token = self.peek()
        if token.kind == "op" and token.text == "!":
            self.take()
            return self.node(_Call(STUDENT_FUNCTIONS["factorial"], (base,), token.offset))
        return base

    def atom(self) -> _Node:
        token = self.take()
        if token.kind == "num":
            assert token.num is not None
            return self.node(token.num)
        if token.kind == "const":
            assert token.constant is not None
            return self.node(_Const(token.constant, token.offset))
        if token.kind == "name":
            return self.node(_Name(token.text, token.offset))
        if token.kind == "(":
            with self.nested(token.offset):
                if self.peek().kind == ")":
                    raise AnswerParseError("Empty parentheses.", token.offset)
                inner = self.sum()
                self.close(token)
            return inner
        if token.kind == "func":
            return self.call(token)
        self.pos -= 1
        raise AnswerParseError(self.unexpected(token), token.offset)

    def close(self, opening: _Token) -> None:
        token = self.peek()
        if token.kind == ")":
            self.take()
            return
        if token.kind == "end":
            raise AnswerParseError("A '(' is never closed; add ')'.", opening.offset)
        if token.kind == ",":
            raise AnswerParseError(
                "Unexpected ','; write decimals as 2.30 or 2,30 (no space).", token.offset
            )
        raise AnswerParseError(self.unexpected(token), token.offset)

    def call(self, token: _Token) -> _Node:
        function = token.function
        assert function is not None
        if self.peek().kind == "(":
            opening = self.take()
            with self.nested(opening.offset):
                args: list[_Node] = []
                if self.peek().kind != ")":
                    args.append(self.sum())
                    while self.peek().kind == ",":
                        comma = self.take()
                        if function.max_args == 1:
                            message = (
                                _ONE_ARGUMENT
                                if function in STUDENT_FUNCTIONS.values()
                                else f"{function.name}() takes one argument."
                            )
                            raise AnswerParseError(message, comma.offset)
                        args.append(self.sum())
                self.close(opening)
            self.check_arity(function, len(args), token)
            return self.node(_Call(function, tuple(args), token.offset))
        return self.bare_call(token, function)

    def bare_call(self, token: _Token, function: Function) -> _Node:
        """``ln 10``: a one-argument function applied to a single number, name or constant."""
        name = function.name
        argument = self.peek()
        if function.max_args != 1:
            raise AnswerParseError(f"Write {name}(...) with parentheses.", token.offset)
        if argument.kind == "func":
            raise AnswerParseError(
                f"Use parentheses with nested functions, e.g. {name}({argument.text}(2)).",
                argument.offset,
            )
        if argument.kind not in {"num", "name", "const"}:
            raise AnswerParseError(
                f"{name} needs its argument in parentheses here, e.g. {name}(10).", token.offset
            )
        with self.nested(token.offset):
            arg = self.atom()
        after = self.peek()
        if after.kind == "op" and after.text == "^":
            raise AnswerParseError(
                f"{token.text} {argument.text}^... is ambiguous; use parentheses: "
                f"{name}({argument.text}^2) or {name}({argument.text})^2.",
                after.offset,
            )
        if after.kind == "op" and after.text == "!":
            raise AnswerParseError(
                f"{token.text} {argument.text}! is ambiguous; use parentheses: "
                f"{name}({argument.text}!) or {name}({argument.text})!.",
                after.offset,
            )
        if after.kind in _ATOM_START:
            raise AnswerParseError(
                f"{token.text} {argument.text} {after.text}... is ambiguous; use parentheses, "
                f"e.g. {name}({argument.text}) * {after.text}.",
                after.offset,
            )
        return self.node(_Call(function, (arg,), token.offset))

    @staticmethod
    def check_arity(function: Function, count: int, token: _Token) -> None:
        if function.min_args <= count and (function.max_args is None or count <= function.max_args):
            return
        if function.max_args == 1:
            raise AnswerParseError(f"{function.name} needs one argument.", token.offset)
        most = "any number of" if function.max_args is None else f"at most {function.max_args}"
        raise AnswerParseError(
            f"{function.name} takes at least {function.min_args} and {most} arguments, "
            f"but got {count}.",
            token.offset,
        )

    @staticmethod
    def unexpected(token: _Token) -> str:
        if token.kind == "end":
            return "The expression ends too early."
        if token.kind == ",":
            return "Unexpected ','; write decimals as 2.30 or 2,30 (no space)."
        if token.kind == ")":
            return "Unexpected ')'."
        return f"Unexpected {token.text!r}."


class _Nesting:
    """Counts one level of nesting for the duration of a ``with`` block."""

    def __init__(self, parser: _Parser, offset: int) -> None:
        self.parser = parser
        self.offset = offset

    def __enter__(self) -> None:
        self.parser.depth += 1
        if self.parser.depth > MAX_DEPTH:
            raise AnswerParseError(
                f"The expression is nested too deeply (more than {MAX_DEPTH} levels).", self.offset
            )

    def __exit__(self, *exc: object) -> None:
        self.parser.depth -= 1


def _scientific(tree: _Node) -> _Node:
    """``1.5 × 10^-3`` (or ``1.5 x 10^-3``, ``1.5·10⁻³``) as a whole answer is the number
    ``1.5e-3``: read with the digits typed, as e-notation is."""
    sign = tree.op if isinstance(tree, _Unary) else ""
    body = tree.operand if isinstance(tree, _Unary) else tree
    if (
        not sign
        and isinstance(body, _Binary)
        and isinstance(body.left, _Unary)
        and isinstance(body.left.operand, _Num)
    ):  # "-1.5 × 10^-3" reads as (-1.5) × 10^-3
        sign = body.left.op
        body = _Binary(body.op, body.left.operand, body.right, body.offset)
    if not (isinstance(body, _Binary) and body.op == "*" and isinstance(body.left, _Num)):
        return tree
    power = body.right
    if not (isinstance(power, _Binary) and power.op == "^" and isinstance(power.left, _Num)):
        return tree
    ten, exponent = power.left, power.right
    negative = isinstance(exponent, _Unary) and exponent.op == "-"
    if isinstance(exponent, _Unary):
        exponent = exponent.operand
    number = body.left
    if not (
        ten.text == "10"
        and isinstance(exponent, _Num)
        and not exponent.decimal
        and "e" not in exponent.text
        and "e" not in number.text
        and len(exponent.text) <= 6
    ):
        return tree
    shift = -int(exponent.text) if negative else int(exponent.text)
    literal = _Num(
        mantissa=number.mantissa,
        exponent=number.exponent + shift if number.mantissa else 0,
        text=f"{number.text}e{shift}",
        decimal=number.decimal,
        decimals=number.decimals - shift,
        sigfigs=number.sigfigs,
        comma=number.comma,
        offset=number.offset,
        grouped=number.grouped,
    )
    scaled = abs(literal.mantissa) and len(str(literal.mantissa)) - 1 + literal.exponent
    if literal.mantissa and not -_MAX_LITERAL_LOG10 <= scaled < _MAX_LITERAL_LOG10:
        raise AnswerParseError(_TOO_BIG, number.offset)
    return _Unary(sign, literal, tree.offset) if sign else literal


def parse(
    text: str,
    *,
    names: Collection[str] = (),
    functions: Mapping[str, Function] = STUDENT_FUNCTIONS,
    constants: Mapping[str, Constant] | None = None,
) -> Parsed:
    """Read text in the expression language, without evaluating it.

    Args:
        text: the raw text (a student answer, a key or a mistake).
        names: free names allowed (author mode): parameters, earlier part ids.
        functions: the function table; keys are the spellings accepted.
        constants: named constants beyond ``e`` and ``pi`` (a bank's or a pack's, such as
            ``g``), each with its exact value.

    Returns:
        The checked expression and how it was read.

    Raises:
        AnswerParseError: the text cannot be read (``offset`` points into ``text``), or a name
            is already a function or constant.
        ValueError: a name is not an identifier (``[a-z_][a-z0-9_]*``).
    """
    name_set = frozenset(names)
    table = {**CONSTANTS, **(constants or {})}
    for name in name_set:
        if not _NAME_RE.fullmatch(name):
            raise ValueError(f"{name!r} cannot be used as a name in expressions")
        if name in functions or name in table:
            # An author's parameter or part id; reported like any other problem in a key.
            raise AnswerParseError(
                f"The name {name!r} is already a function or constant; rename it.", None
            )
    normalized, offsets = _normalize(text, name_set)
    tokens = _Tokenizer(normalized, offsets, name_set, functions, table).tokens()
    tree = _scientific(_Parser(tokens).parse())
    literals = [n for n in _walk(tree) if isinstance(n, _Num)]
    comma = next((n for n in literals if n.comma), None)
    if comma is not None and any(n.decimal and not n.comma for n in literals):
        raise AnswerParseError(
            "Both '.' and ',' are used as decimal separators (mixed separators); use one.",
            comma.offset,
        )
    single = tree.operand if isinstance(tree, _Unary) else tree
    zeros = 0
    if isinstance(single, _Num):
        kind: Literal["decimal", "expression", "mixed"] = "decimal"
        decimals, sigfigs, zeros = single.decimals, single.sigfigs, single.zeros
    else:
        kind = "mixed" if any(n.decimal for n in literals) else "expression"
        decimals = sigfigs = 0
    used = frozenset(n.name for n in _walk(tree) if isinstance(n, _Name))
    canonical = _canonical(tree, name_set, functions, table)
    grouped = any(n.grouped for n in literals)
    return Parsed(text, canonical, kind, decimals, sigfigs, used, tree, grouped, zeros)


def _precedence(node: _Node) -> int:
    if isinstance(node, _Binary):
        return {"+": 1, "-": 1, "*": 2, "/": 2, "^": 4}[node.op]
    return 3 if isinstance(node, _Unary) else 5


def _render(node: _Node, compact: bool = False) -> str:
    """Print a tree in the language; ``compact`` leaves out every space and optional parenthesis.

    The spaced form (``1 - 2``, ``10^(-3)``, ``-(-2)``) is the one people see; the compact one
    (``1-2``, ``10^-3``, ``--2``) is used when the spaced one could not be typed back, being
    longer than :data:`MAX_LENGTH` or nested deeper than :data:`MAX_DEPTH`.
    """
    if isinstance(node, _Num):
        return node.text
    if isinstance(node, _Const):
        return node.constant.name
    if isinstance(node, _Name):
        return node.name
    if isinstance(node, _Call):
        separator = "," if compact else ", "
        return f"{node.function.name}({separator.join(_render(a, compact) for a in node.args)})"
    if isinstance(node, _Unary):
        operand = node.operand
        wrap = _precedence(operand) <= 3 and not (compact and isinstance(operand, _Unary))
        return node.op + _wrap(operand, wrap, compact)
    level = _precedence(node)
    if node.op == "^":
        left = _wrap(node.left, _precedence(node.left) <= 4, compact)
        # The exponent may carry its sign (the grammar reads 10^-3): compact leaves it bare.
        signed_exponent = compact and isinstance(node.right, _Unary)
        right = _wrap(node.right, _precedence(node.right) < 4 and not signed_exponent, compact)
        return f"{left}^{right}"
    left = _wrap(node.left, _precedence(node.left) < level, compact)
    # A signed right operand needs no parentheses: "1 - -2", "2*-3" read back the same.
    signed = isinstance(node.right, _Unary)
    right = _wrap(node.right, _precedence(node.right) <= level and not signed, compact)
    return f"{left} {node.op} {right}" if level == 1 and not compact else f"{left}{node.op}{right}"


def _wrap(node: _Node, parenthesize: bool, compact: bool = False) -> str:
    text = _render(node, compact)
    return f"({text})" if parenthesize else text


def _canonical(
    tree: _Node,
    names: frozenset[str],
    functions: Mapping[str, Function],
    constants: Mapping[str, Constant],
) -> str:
    """How a tree was read, in text that reads back as the same tree (see :func:`_render`)."""
    spaced = _render(tree)
    if _readable(spaced, names, functions, constants):
        return spaced
    return _render(tree, compact=True)


def _readable(
    text: str,
    names: frozenset[str],
    functions: Mapping[str, Function],
    constants: Mapping[str, Constant],
) -> bool:
    """Whether our own printed text is within the parser's limits (parsed again only when it
    may not be: parentheses around a signed exponent add a level per sign)."""
    if len(text) > MAX_LENGTH:
        return False
    if sum(text.count(ch) for ch in "(^+-") <= MAX_DEPTH:  # each level needs one of these
        return True
    try:
        normalized, offsets = _normalize(text, names)
        _Parser(_Tokenizer(normalized, offsets, names, functions, constants).tokens()).parse()
    except AnswerParseError:
        return False
    return True
