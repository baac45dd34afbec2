"""The layers of the code, as a contract: imports run down, never up, across or in a circle.

Each top-level module or package of ``quizgym`` is a *room*; rooms sit on layers. A module may
import its own room and any room of a lower layer; an import of a room on the same layer (across)
or a higher one (up) fails, and so does any cycle of modules, lazy imports inside functions and
``TYPE_CHECKING`` blocks included. docs/architecture.md draws the same picture.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "quizgym"

LAYERS: list[set[str]] = [
    {"errors", "arrays", "lazy", "names", "places", "terminal", "version", "distributions"},
    # small helpers (distributions: chi-square and F tails, Holm's correction)
    {"model", "resources", "reliability", "fairness"},  # the bank format; the bundled files;
    # statistics of counts that need no bank (α's interval, tests of variants)
    {"types"},  # the question types: what each asks of the rest, through a few interactions
    {
        "loader",
        "schema",
        "selection",
        "expr",
        "tolerance",
        "units",
        "words",
        "richtext",
    },  # reading banks, answers, text
    {"solver"},  # the compiled bank: keys, variants, mistakes
    {"answers", "analysis", "issued", "similar", "accept", "irt"},  # verdicts; statistics;
    # handed out; grouping; what the engine accepts as typed decimals (for keys and exports);
    # IRT fits
    {"meaning"},  # what an unreadable answer likely meant, graded by the answer engine
    {"check", "practice", "render", "export"},  # what the commands do with a bank
    {"grading"},  # a class: reads, grades, and writes its report with render
    {"serve"},  # the web: practice and a quiz; its teacher's pages grade the class with grading
    {"__init__"},  # the public library surface: quizgym.load_bank, quizgym.grade_response, …
    {"cli"},  # the command line
    {"__main__"},  # python -m quizgym
]


def imports(source: str, module: str) -> set[str]:
    """Every ``quizgym`` module a module's source imports, wherever the import statement is."""
    package = module.rsplit(".", 1)[0] if not module.endswith("__init__") else module
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "quizgym"}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            if base.split(".")[0] == "quizgym":
                # from quizgym import lazy: the module quizgym.lazy, not the package's face
                found |= {_module_or(f"{base}.{a.name}", base) for a in node.names}
    return found


def _module_or(name: str, package: str) -> str:
    """``name`` when it is a module or package of quizgym, else ``package`` (a name in it)."""
    path = PACKAGE.parent.joinpath(*name.split("."))
    return name if path.with_suffix(".py").exists() or (path / "__init__.py").exists() else package


def graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module → the quizgym modules it imports, for every module under ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        module = ".".join(parts)
        out[module] = imports(path.read_text(encoding="utf-8"), module)
    return out


def room(module: str) -> str:
    """``quizgym.grading.batch`` → ``grading``; ``quizgym`` (the package) → ``__init__``."""
    parts = module.split(".")
    return "__init__" if len(parts) == 1 or parts[1] == "__init__" else parts[1]


def layer_of(name: str) -> int:
    for level, rooms in enumerate(LAYERS):
        if name in rooms:
            return level
    raise AssertionError(f"quizgym/{name} is on no layer: add it to LAYERS (and the docs)")


def violations(edges: Mapping[str, set[str]]) -> list[str]:
    """Imports that run up or across the layers, and import cycles, in words."""
    found = []
    for module, targets in sorted(edges.items()):
        here = room(module)
        for target in sorted(targets):
            there = room(target)
            if there == here:
                continue
            if layer_of(there) >= layer_of(here):
                way = "across" if layer_of(there) == layer_of(here) else "up"
                found.append(f"{module} imports {target} ({way}: {here} → {there})")
    found += [f"import cycle: {' → '.join(cycle)}" for cycle in cycles(edges)]
    return found


def cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as a path."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            target = target if target in edges else f"{target}.__init__"
            if target not in edges:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_imports_run_down_the_layers() -> None:
    assert violations(graph()) == []


def test_every_room_is_on_a_layer() -> None:
    rooms = {room(m) for m in graph()}
    for name in rooms:
        layer_of(name)


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        (
            "quizgym.solver.compiled",
            "from quizgym.grading.batch import grade_partition\n",
            "quizgym.solver.compiled imports quizgym.grading.batch (up: solver → grading)",
        ),
        (
            "quizgym.render.views",
            "def f():\n    from quizgym.export.plan import plan\n",
            "quizgym.render.views imports quizgym.export.plan (across: render → export)",
        ),
    ],
)
def test_a_bad_import_fails(module: str, source: str, expected: str) -> None:
    edges = graph()
    edges[module] = edges.get(module, set()) | imports(source, module)
    assert expected in violations(edges)


def test_a_cycle_fails_even_lazily() -> None:
    edges = graph()
    edges["quizgym.grading.batch"] = edges["quizgym.grading.batch"] | imports(
        "def later():\n    import quizgym.grading.outputs\n", "quizgym.grading.batch"
    )
    found = [v for v in violations(edges) if v.startswith("import cycle")]
    assert found and "quizgym.grading.batch" in found[0] and "quizgym.grading.outputs" in found[0]


# Inside grading/: its modules (or packages) on floors, lowest first. A module may import only
# from its own floor or below; docs/architecture.md draws the same floors.
GRADING_FLOORS: list[set[str]] = [
    {"rows", "cells", "census", "decimals", "verdicts", "splits"},  # a row's rules, a cell, a
    # file's record count, plain numbers a column at a time, a slot's distinct verdicts
    {"table"},  # ClassAnswers: a class's answers as read
    {"readers", "variants", "decisions"},  # the formats; whose variant is whose; a teacher's
    # decisions
    {"batch"},  # grade_partition: every response of a set of students
    {"causes", "wrong_version", "wrong_seed", "sums", "outputs"},  # what the graded class says
    {"review", "compare", "irt"},  # review.csv, changes.csv, the IRT files
    {"pieces"},  # a class in pieces, each graded into a result
    {"scale"},  # chunked, Parquet and Dask runs (a wing the in-memory run does not need)
    {"run"},  # read → grade → write
    {"__init__"},  # the package's face
]


def grading_floor(module: str) -> int:
    """``quizgym.grading.readers.wide`` → the floor of ``readers``."""
    parts = module.split(".")
    name = parts[2] if len(parts) > 2 else "__init__"
    for level, rooms in enumerate(GRADING_FLOORS):
        if name in rooms:
            return level
    raise AssertionError(f"quizgym/grading/{name} is on no floor: add it to GRADING_FLOORS")


def grading_violations(edges: Mapping[str, set[str]]) -> list[str]:
    """Imports inside grading/ that run up its floors, in words."""
    found = []
    for module, targets in sorted(edges.items()):
        if room(module) != "grading":
            continue
        for target in sorted(targets):
            inside = room(target) == "grading" and target != "quizgym.grading"
            if inside and grading_floor(target) > grading_floor(module):
                found.append(f"{module} imports {target} (up grading's floors)")
    return found


def test_grading_imports_run_down_its_floors() -> None:
    assert grading_violations(graph()) == []


def test_every_grading_module_is_on_a_floor() -> None:
    for module in graph():
        if room(module) == "grading":
            grading_floor(module)


def test_an_upward_grading_import_fails() -> None:
    edges = graph()
    module = "quizgym.grading.batch"
    edges[module] = edges[module] | imports(
        "def f():\n    from quizgym.grading.scale.plan import plan_run\n", module
    )
    assert grading_violations(edges) == [
        "quizgym.grading.batch imports quizgym.grading.scale.plan (up grading's floors)"
    ]
