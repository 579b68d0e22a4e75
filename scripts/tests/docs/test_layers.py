"""The folders import only downwards, in the order docs/architecture.md writes down.

Every import counts: at the top of a module, inside a function, under TYPE_CHECKING.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from support.paths import REPO

import little_loops

DOC = REPO / "docs" / "architecture.md"
PACKAGE = Path(little_loops.__file__).parent


def documented_layers() -> list[str]:
    """The layers, bottom first, from the doc's `<!-- layers -->` block (one folder a line)."""
    match = re.search(r"<!-- layers -->\n```text\n(.*?)\n```", DOC.read_text(), re.DOTALL)
    assert match is not None, "docs/architecture.md has no <!-- layers --> block"
    return [line.split()[0].rstrip("/") for line in match.group(1).splitlines() if line.strip()]


def layer_of(module: str, layers: list[str]) -> str:
    """The deepest documented folder holding *module* (`little_loops.fsm.facts.errors`);
    the package's own top-level modules are the layer written as `little_loops`."""
    path = module.split(".")[1:]
    best: list[str] = []
    for layer in layers:
        parts = [] if layer == "little_loops" else layer.split("/")
        if path[: len(parts)] == parts and len(parts) >= len(best):
            best = parts
    return "/".join(best) or "little_loops"


def imports_of(path: Path, package_root: Path) -> set[str]:
    """Every little_loops module or name *path* imports, wherever the import statement is."""
    module = ".".join(path.relative_to(package_root.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    package = package.removesuffix(".__init__")
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {name for name in found if name.split(".")[0] == "little_loops"}


def upward_imports(package_root: Path, layers: list[str]) -> list[str]:
    """Each import from a layer above the importer's, as `file (layer) imports name (layer)`."""
    rank = {layer: i for i, layer in enumerate(layers)}
    wrong = []
    for path in sorted(package_root.rglob("*.py")):
        module = ".".join(path.relative_to(package_root.parent).with_suffix("").parts)
        here = layer_of(module.removesuffix(".__init__"), layers)
        for name in sorted(imports_of(path, package_root)):
            there = layer_of(name, layers)
            if rank[there] > rank[here]:
                wrong.append(f"{path.relative_to(package_root)} ({here}) imports {name} ({there})")
    return wrong


def test_every_stage_folder_is_a_documented_layer() -> None:
    # The folders of little_loops/, little_loops/fsm/ and fsm/definition/ (a layer each: what
    # happens to a loop file); a folder inside another (such as the engine's rules) belongs
    # to that layer.
    layers = set(documented_layers())
    for init in PACKAGE.rglob("__init__.py"):
        folder = "/".join(init.parent.relative_to(PACKAGE).parts)
        if folder.startswith("fsm/definition/"):
            assert folder.count("/") == 2, f"{folder}/: definition's sub-folders are one deep"
        elif folder.count("/") > 1 or (folder.count("/") == 1 and not folder.startswith("fsm/")):
            continue
        assert (folder or "little_loops") in layers, f"{folder}/ is not in the layers of the doc"


def test_definition_s_sub_folders_are_layers_in_the_order_a_file_goes_through() -> None:
    layers = documented_layers()
    inside = [layer for layer in layers if layer.startswith("fsm/definition/")]
    assert inside == [
        f"fsm/definition/{name}" for name in ("reading", "model", "graph", "checks", "writing")
    ]
    # and an import from a later one into an earlier one is refused
    wrong = upward_imports(PACKAGE, [*layers[: layers.index(inside[0])], *reversed(inside)])
    assert any(line.endswith("(fsm/definition/reading)") for line in wrong)


def test_no_folder_imports_a_folder_above_it() -> None:
    assert upward_imports(PACKAGE, documented_layers()) == []


def test_an_import_inside_a_function_from_above_is_caught(tmp_path: Path) -> None:
    root = tmp_path / "little_loops"
    for folder in ("fsm/facts", "fsm/engine"):
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "fsm/__init__.py").write_text("")
    (root / "fsm/engine/step.py").write_text("from little_loops.fsm.facts import errors\n")
    (root / "fsm/facts/errors.py").write_text("def f():\n    from ..engine import step\n")
    layers = ["fsm/facts", "fsm/engine", "fsm", "little_loops"]
    assert upward_imports(root, layers) == [
        "fsm/facts/errors.py (fsm/facts) imports little_loops.fsm.engine (fsm/engine)",
        "fsm/facts/errors.py (fsm/facts) imports little_loops.fsm.engine.step (fsm/engine)",
    ]
