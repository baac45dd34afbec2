"""The one safe expression language: the text of keys, mistakes and student answers in, checked
trees, 30-digit values and exact forms out."""

# The package reads from the bottom up, one stage a module (see docs/answers.md for the language):
#
#   base        limits, budgets, errors; the checked tree, Function, Constant, Parsed, Reading
#   evaluate    tree → 30-digit value (mpmath, guarded)
#   exact       tree → exact form (sympy, the same guards and size bounds)
#   vocabulary  the functions and constants, each with its guarded value and exact form
#   normalize   raw text → the language's characters, with offsets into the raw text
#   tokens      normalized text → tokens
#   parse       tokens → checked tree (recursive descent, implicit *) and its canonical spelling
#   conditions  a key's where: constraints and function requirements
#   read        a student's answer → Reading or ParseFailure (a plain decimal read directly)
#
# Student mode is parse() with its defaults (numbers, + - * / ^ **, parentheses, the functions of
# STUDENT_FUNCTIONS, e, pi). Author mode (keys and mistakes) passes extra names (parameters,
# earlier part ids) and a wider function table (domain functions such as mlm_loss(p1, p2)).

from quizgym.expr.base import (
    DPS,
    EXACT_BITS,
    MAX_DEPTH,
    MAX_LENGTH,
    MAX_LOG2,
    MAX_NODES,
    ROOT_COST,
    Constant,
    ExactBudgetError,
    ExactLimitError,
    Function,
    Parsed,
    ParseFailure,
    Reading,
    calls,
    check_budget,
    exact_budget,
    format_value,
    tidy_digits,
    tree_call,
    work_seconds,
)
from quizgym.expr.conditions import Condition, holds, parse_condition
from quizgym.expr.evaluate import cost, evaluate, evaluate_node
from quizgym.expr.exact import (
    exact_bits,
    exact_node,
    exact_sign,
    rational_value,
    root_size,
    to_sympy,
    to_text,
)
from quizgym.expr.parse import parse
from quizgym.expr.read import MAX_UNIT_LENGTH, PLAIN_NUMBER, read_answer
from quizgym.expr.vocabulary import CONSTANTS, STEP_FUNCTIONS, STUDENT_FUNCTIONS

__all__ = [
    "CONSTANTS",
    "DPS",
    "EXACT_BITS",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "MAX_LOG2",
    "MAX_NODES",
    "MAX_UNIT_LENGTH",
    "PLAIN_NUMBER",
    "ROOT_COST",
    "STEP_FUNCTIONS",
    "STUDENT_FUNCTIONS",
    "Condition",
    "Constant",
    "ExactBudgetError",
    "ExactLimitError",
    "Function",
    "ParseFailure",
    "Parsed",
    "Reading",
    "calls",
    "check_budget",
    "cost",
    "evaluate",
    "evaluate_node",
    "exact_bits",
    "exact_budget",
    "exact_node",
    "exact_sign",
    "format_value",
    "holds",
    "parse",
    "parse_condition",
    "rational_value",
    "read_answer",
    "root_size",
    "tidy_digits",
    "to_sympy",
    "to_text",
    "tree_call",
    "work_seconds",
]
