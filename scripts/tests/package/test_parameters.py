"""No function or method in the package takes MAX_PARAMETERS or more parameters (a record
of what belongs together is passed instead), besides the ones KNOWN lists."""

from __future__ import annotations

import ast
from pathlib import Path

import little_loops

PACKAGE = Path(little_loops.__file__).parent
MAX_PARAMETERS = 10
# Left as they are, each with its reason.
KNOWN = {
    # The process supervisor's one entry (argv, fds, limits, the agent's own retries): its
    # callers and retry_watch are being changed at the same time (issue 41); next in line.
    "little_loops/fsm/actions/supervisor.py: ProcessSupervisor.spawn",
}


def many_parameters(source: str) -> list[tuple[str, int]]:
    """(qualified name, parameter count) of each function in *source* with MAX_PARAMETERS
    or more parameters (`self` and `cls` not counted; `*args`, `**kwargs` each one)."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                args = child.args
                given = [*args.posonlyargs, *args.args, *args.kwonlyargs]
                count = len([a for a in given if a.arg not in ("self", "cls")])
                count += (args.vararg is not None) + (args.kwarg is not None)
                if count >= MAX_PARAMETERS:
                    found.append((name, count))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def test_a_function_with_many_parameters_is_found() -> None:
    names = ", ".join(f"a{i}" for i in range(MAX_PARAMETERS - 1))
    source = (
        f"class A:\n    def many(self, {names}, *rest):\n        pass\n\ndef few(a):\n    pass\n"
    )
    assert many_parameters(source) == [("A.many", MAX_PARAMETERS)]
    assert many_parameters(source.replace(", *rest", "")) == []


def test_no_function_in_the_package_takes_too_many_parameters() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}: {name} takes {count}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, count in many_parameters(path.read_text())
    ]
    left = [o for o in offenders if o.rsplit(" takes ", 1)[0] not in KNOWN]
    assert not left, f"functions of {MAX_PARAMETERS}+ parameters:\n" + "\n".join(left)
