"""The package's runtime dependencies are exactly the third-party modules it imports."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

from support.paths import REPO

import little_loops

PACKAGE = Path(little_loops.__file__).parent
# Distribution name -> the module it installs, where they differ.
MODULE_OF = {"pyyaml": "yaml"}


def _imported_top_levels() -> set[str]:
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    return {name for name in found if name not in sys.stdlib_module_names} - {"little_loops"}


def test_runtime_dependencies_are_what_the_package_imports() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {re.split(r"[<>=!~\[ ]", dep)[0].lower() for dep in project["dependencies"]}
    assert {MODULE_OF.get(d, d) for d in declared} == _imported_top_levels()
