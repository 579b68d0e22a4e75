"""The package's shape: no import cycles, small modules, each opening with its one job."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import little_loops

PACKAGE = Path(little_loops.__file__).parent
MODULES = sorted(PACKAGE.rglob("*.py"))
# Modules are split by meaning, not to get under a number (issue 40, item 6): this is a
# ceiling far above a module of one concept, not a target to split at.
MAX_LINES = 600


def _name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


NAMES = {_name(path): path for path in MODULES}


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _imports(path: Path) -> set[str]:
    """The package modules *path* imports when it runs, at any depth (lazy imports too)."""
    return _imports_in(path.read_text())


def _imports_in(source: str) -> set[str]:
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if full in NAMES else node.module)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return {name for name in found if name in NAMES}


def _cycles() -> list[list[str]]:
    graph = {name: sorted(_imports(path) - {name}) for name, path in NAMES.items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                walk(nxt)
        stack.pop()
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name)
    return cycles


def test_the_import_graph_has_no_cycle() -> None:
    assert [" -> ".join(cycle) for cycle in _cycles()] == []


def test_lazy_and_dynamic_imports_count_and_type_checking_ones_do_not() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from little_loops.fsm.engine import executor\n"
        "def f():\n"
        "    from little_loops.cli import main_loop\n"
        "    importlib.import_module('little_loops.fsm.facts.errors')\n"
    )
    assert _imports_in(source) == {"little_loops.cli", "little_loops.fsm.facts.errors"}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_is_small(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= MAX_LINES


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_opens_with_its_job_in_one_line(path: Path) -> None:
    doc = ast.get_docstring(ast.parse(path.read_text()))
    assert doc, "no module docstring"
    first = doc.splitlines()[0]
    assert first.strip()
    assert first.endswith((".", ":", ")")) or first.endswith("`"), first
    assert len(first) <= 100
