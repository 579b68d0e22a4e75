"""No function or method in the package is longer than MAX_LINES, counted from its `def`
line to the last line of its body (docstring included, decorators not)."""

from __future__ import annotations

import ast
from pathlib import Path

import little_loops

PACKAGE = Path(little_loops.__file__).parent
MAX_LINES = 80


def long_functions(source: str) -> list[tuple[str, int, int]]:
    """(qualified name, line of its `def`, length in lines) of each function in *source*
    longer than MAX_LINES, nested ones and methods included."""
    found: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                length = (child.end_lineno or child.lineno) - child.lineno + 1
                if length > MAX_LINES:
                    found.append((name, child.lineno, length))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def test_a_long_function_is_found_with_its_length() -> None:
    body = "".join(f"        x{i} = {i}\n" for i in range(MAX_LINES))
    source = f"class A:\n    @staticmethod\n    def long():\n{body}\n\ndef short():\n    pass\n"
    assert long_functions(source) == [("A.long", 3, MAX_LINES + 1)]
    assert long_functions(source.replace("        x0 = 0\n", "", 1)) == []


def test_no_function_in_the_package_is_over_the_limit() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {name} is {length} lines"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, line, length in long_functions(path.read_text())
    ]
    assert not offenders, f"functions over {MAX_LINES} lines:\n" + "\n".join(offenders)
