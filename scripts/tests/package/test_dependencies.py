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
MODULE_OF = {
    "pyyaml": "yaml",
    "tree-sitter": "tree_sitter",
    "tree-sitter-bash": "tree_sitter_bash",
    "opentelemetry-sdk": "opentelemetry",
    "opentelemetry-exporter-otlp-proto-http": "opentelemetry",
}
# Extras of the package for its users (dev is for working on it): imported only when used.
USER_EXTRAS = ("otel", "tui")


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
    extras = [dep for name in USER_EXTRAS for dep in project["optional-dependencies"][name]]
    deps = [*project["dependencies"], *extras]
    declared = {re.split(r"[<>=!~\[ ]", dep)[0].lower() for dep in deps}
    assert {MODULE_OF.get(d, d) for d in declared} == _imported_top_levels()
