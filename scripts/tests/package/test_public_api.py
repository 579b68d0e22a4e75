"""The public API of `little_loops.fsm`: typed for mypy, lazy at run time, one path per name."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import REPO

import little_loops.fsm as fsm

INIT = Path(fsm.__file__)
SEED_PATHS = {
    "little_loops.fsm.schema": ["FSMLoop", "StateConfig", "EvaluateConfig", "RouteConfig"],
    "little_loops.fsm.executor": ["FSMExecutor", "ExecutionResult", "ActionResult"],
    "little_loops.fsm.evaluators": [
        "evaluate",
        "EvaluationResult",
        "evaluate_convergence",
        "evaluate_exit_code",
        "evaluate_llm_structured",
        "evaluate_output_contains",
        "evaluate_output_json",
        "evaluate_output_numeric",
    ],
    "little_loops.fsm.persistence": ["StatePersistence", "PersistentExecutor"],
    "little_loops.fsm.validation": ["validate_fsm", "load_and_validate", "ValidationError"],
    "little_loops.fsm.interpolation": ["InterpolationContext", "interpolate", "InterpolationError"],
    "little_loops.fsm.compilers": ["compile_paradigm"],
}


def _type_checking_imports() -> dict[str, str]:
    """Name -> module of the imports the package shows type checkers."""
    tree = ast.parse(INIT.read_text())
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom)
                assert imp.module
                for alias in imp.names:
                    found[alias.asname or alias.name] = imp.module
    return found


def test_all_names_the_typed_imports_and_the_lazy_table_agree() -> None:
    typed = _type_checking_imports()
    lazy = {name: f"little_loops.fsm.{module}" for name, module in fsm._EXPORTS.items()}
    assert typed == lazy
    assert sorted(fsm.__all__) == sorted(typed)


@pytest.mark.parametrize("name", sorted(fsm.__all__))
def test_every_public_name_loads_from_its_one_home(name: str) -> None:
    value = getattr(fsm, name)
    home = importlib.import_module(f"little_loops.fsm.{fsm._EXPORTS[name]}")
    assert getattr(home, name) is value


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        fsm.__getattr__("nope")


@pytest.mark.parametrize(("path", "names"), sorted(SEED_PATHS.items()))
def test_seed_paths_stay_importable(path: str, names: list[str]) -> None:
    module = importlib.import_module(path)
    for name in names:
        assert getattr(module, name) is getattr(fsm, name, getattr(module, name))


def test_importing_the_package_loads_no_submodule() -> None:
    code = (
        "import sys, little_loops.fsm\n"
        "print(sorted(m for m in sys.modules if m.startswith('little_loops.fsm.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_mypy_sees_the_real_signatures(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from little_loops.fsm import FSMExecutor, load_and_validate\n"
        "reveal_type(load_and_validate)\n"
        "reveal_type(FSMExecutor.run)\n"
        "x: int = load_and_validate('a.yaml')\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--config-file",
            str(REPO / "pyproject.toml"),
            str(probe),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    lines = done.stdout.splitlines()
    assert any(
        'Revealed type is "def (path: str | pathlib.Path, *, compat: bool =) -> '
        'little_loops.fsm.definition.model.typed.FSMLoop"' in line
        for line in lines
    ), done.stdout
    assert any(
        'Revealed type is "def (self: little_loops.fsm.engine.executor.FSMExecutor) -> ' in line
        and "ExecutionResult" in line
        for line in lines
    ), done.stdout
    assert any(
        'Incompatible types in assignment (expression has type "FSMLoop", variable has '
        'type "int")' in line
        for line in lines
    ), done.stdout


def test_mypy_sees_how_a_run_ended_as_the_outcome_type(tmp_path: Path) -> None:
    # `terminated_by` is an Outcome, so a typo such as `== "max_iteration"` is caught.
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from little_loops.fsm import ExecutionResult\n"
        "def ended(result: ExecutionResult) -> None:\n"
        "    reveal_type(result.terminated_by)\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--config-file"]
        + [str(REPO / "pyproject.toml"), str(probe)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert 'Revealed type is "little_loops.fsm.facts.outcomes.Outcome"' in done.stdout, done.stdout
