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


# Import cycles known and owned by another change, each named by its modules with the
# change that removes it. Any other cycle fails, and so does an entry whose cycle is gone
# (remove the entry with the cycle).
KNOWN_CYCLES: dict[frozenset[str], str] = {}  # none today: a new one is a defect


def _imports(path: Path) -> set[str]:
    """The package modules *path* imports, wherever the import statement is: at the top,
    inside a function, under TYPE_CHECKING (a type is a dependency too), relative ones."""
    module = _name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    return _imports_in(path.read_text(), package)


def _imports_in(source: str, package: str = "little_loops") -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.add(full if full in NAMES else target)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value)
    return {name for name in found if name in NAMES}


def cycles_of(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The modules of each import cycle of *graph* (its strongly connected components of
    more than one module, or one importing itself), found by Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _cycles() -> list[frozenset[str]]:
    return cycles_of({name: _imports(path) - {name} for name, path in NAMES.items()})


def test_the_import_graph_has_no_cycle() -> None:
    found = _cycles()
    unknown = [" <-> ".join(sorted(cycle)) for cycle in found if cycle not in KNOWN_CYCLES]
    assert unknown == []
    gone = [why for cycle, why in KNOWN_CYCLES.items() if cycle not in found]
    assert gone == [], "a known cycle is gone: remove its KNOWN_CYCLES entry"


def test_lazy_dynamic_and_type_checking_imports_all_count() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from little_loops.fsm.engine import executor\n"
        "def f():\n"
        "    from little_loops.cli import main_loop\n"
        "    importlib.import_module('little_loops.fsm.facts.errors')\n"
        "from . import runref\n"
    )
    assert _imports_in(source, "little_loops.cli") == {
        "little_loops.fsm.engine.executor",
        "little_loops.cli",
        "little_loops.fsm.facts.errors",
        "little_loops.cli.runref",
    }


def test_a_cycle_through_a_type_checking_import_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "d"}, "e": {"d"}}
    assert sorted(map(sorted, cycles_of(graph))) == [["a", "b", "c"], ["d"]]
    typed = "if TYPE_CHECKING:\n    from little_loops.fsm.actions.spec import ActionKindSpec\n"
    assert _imports_in(typed) == {"little_loops.fsm.actions.spec"}


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
