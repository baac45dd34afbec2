"""Question types are one module each: outside ``quizgym/types/``, no code branches on a
question's type, by model class or by ``type:`` name."""

from __future__ import annotations

import ast
from pathlib import Path

from quizgym.model import QUESTION_TYPES

PACKAGE = Path(__file__).resolve().parent.parent / "quizgym"

MODELS = {model.__name__ for model in QUESTION_TYPES.values()}
NAMES = set(QUESTION_TYPES)


def _names(node: ast.AST) -> set[str]:
    """The plain and dotted names in an expression (``Numeric``, ``model.Numeric``)."""
    found = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            found.add(sub.attr)
    return found


def _type_names(node: ast.AST) -> bool:
    """Whether an expression is a ``type:`` name, or a tuple, list or set holding one."""
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return any(isinstance(i, ast.Constant) and i.value in NAMES for i in items)


def switches(source: str) -> list[tuple[int, str]]:
    """Each place a module branches on a question's type: ``(line, what)``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("isinstance", "issubclass")
            and len(node.args) == 2
            and _names(node.args[1]) & MODELS
        ):
            found.append((node.lineno, f"isinstance(…, {ast.unparse(node.args[1])})"))
        elif isinstance(node, ast.MatchClass) and _names(node.cls) & MODELS:
            found.append((node.lineno, f"case {ast.unparse(node.cls)}()"))
        elif isinstance(node, ast.Compare) and any(
            _type_names(side) for side in (node.left, *node.comparators)
        ):
            found.append((node.lineno, f"comparison {ast.unparse(node)}"))
        elif isinstance(node, ast.MatchValue) and _type_names(node.value):
            found.append((node.lineno, f"case {ast.unparse(node.value)}"))
        elif isinstance(node, ast.Dict) and any(
            k is not None and _type_names(k) for k in node.keys
        ):
            found.append((node.lineno, "a table keyed by type names"))
    return found


def census(root: Path = PACKAGE) -> dict[str, list[tuple[int, str]]]:
    """Module path (``export/qti12.py``) → its switches, for the modules outside types/."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if name.startswith("types/") or name == "model.py":
            continue  # the types, and the models with the table of them the union reads
        found = switches(path.read_text(encoding="utf-8"))
        if found:
            out[name] = found
    return out


def test_no_code_outside_the_types_branches_on_a_question_type() -> None:
    found = {
        name: [f"line {line}: {what}" for line, what in places] for name, places in census().items()
    }
    assert found == {}, "ask quizgym.types (the question's interaction) instead"


def test_every_kind_of_switch_is_seen() -> None:
    source = (
        "if isinstance(q, Numeric | model.FreeText): pass\n"
        "match q:\n    case TrueFalse(): pass\n    case 'numeric': pass\n"
        "if q.type == 'multiple_choice' or kind in ('free_text', 'x'): pass\n"
        "LABELS = {'spot_the_error': 1}\n"
        "if strings.type == pa.large_string() or isinstance(q, Part): pass\n"
    )
    assert sorted(line for line, _ in switches(source)) == [1, 3, 4, 5, 5, 6]


TEMPLATES = PACKAGE.parent / "templates"


def test_no_template_branches_on_a_question_type() -> None:
    # Templates draw an interaction (q.kind), not a type: a type name in one is a switch.
    found = [
        f"{path.name}: {name}"
        for path in sorted(TEMPLATES.glob("*.j2"))
        for name in sorted(NAMES)
        if f'"{name}"' in path.read_text(encoding="utf-8")
    ]
    assert found == []
