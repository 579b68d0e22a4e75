"""docs/architecture.md lists every module of the package with the line it opens with."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from support.paths import REPO

import little_loops
from little_loops.fsm.engine.kinds.action import POINTS, RULES

DOC = REPO / "docs" / "architecture.md"
PACKAGE = Path(little_loops.__file__).parent
NAME_WIDTH = 26


def _job(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return doc.splitlines()[0] if doc else ""


def _tree(folder: Path, depth: int) -> list[str]:
    lines = []
    indent = "  " * depth
    for path in sorted(folder.iterdir(), key=lambda p: (p.is_dir(), p.name)):
        if path.suffix == ".py" and path.name != "__init__.py":
            lines.append(f"{indent}{path.name:<{NAME_WIDTH - len(indent)}} {_job(path)}".rstrip())
        elif path.is_dir() and (path / "__init__.py").is_file():
            name = f"{path.name}/"
            job = _job(path / "__init__.py")
            lines.append(f"{indent}{name:<{NAME_WIDTH - len(indent)}} {job}".rstrip())
            lines.extend(_tree(path, depth + 1))
    return lines


def expected_tree() -> str:
    """The block the doc must hold: `little_loops/` and, indented, each module and folder."""
    return "\n".join(
        [f"{'little_loops/':<{NAME_WIDTH}} {_job(PACKAGE / '__init__.py')}", *_tree(PACKAGE, 1)]
    )


def _documented_tree() -> str:
    match = re.search(r"<!-- tree -->\n```text\n(.*?)\n```", DOC.read_text(), re.DOTALL)
    assert match is not None, "docs/architecture.md has no <!-- tree --> block"
    return match.group(1)


def test_the_tree_in_the_doc_is_the_package() -> None:
    # On failure, paste the expected block (print(expected_tree())) into the doc.
    assert _documented_tree() == expected_tree()


def test_every_module_is_in_the_tree() -> None:
    tree = _documented_tree()
    for path in PACKAGE.rglob("*.py"):
        if path.name != "__init__.py":
            assert re.search(rf"^\s+{re.escape(path.name)}\s", tree, re.MULTILINE), path


def test_the_doc_says_where_to_add_each_kind_of_extension() -> None:
    text = DOC.read_text()
    for heading in ("an evaluator", "an action kind", "a paradigm", "a loop key", "a CLI command"):
        assert re.search(rf"^### Adding {heading}$", text, re.MULTILINE), heading


def test_the_rule_order_in_the_doc_is_the_action_kinds() -> None:
    """The table of the action kind's rules names each rule of `RULES`, in its order, with
    the points it acts at."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("### The rules of an action state, in their order", 1)[1]
    section = section.split("\n#", 1)[0]
    rows = [line.split("|")[1:5] for line in section.splitlines() if line.startswith("| ")]
    documented = [
        (int(order), rule.strip().strip("`"), [p.strip() for p in points.split(",")])
        for order, rule, points, _ in rows[2:]
    ]
    declared = [
        (n, rule.name, [p for p in POINTS if p in rule.hooks])
        for n, rule in enumerate(RULES, start=1)
    ]
    assert documented == declared
