"""The loops shipped in the package, and this repo's own in .loops/, validate cleanly and run
to a terminal state without Claude.

Each run happens in a temporary copy of the project, so scratch files never touch the repo.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.paths import REPO, SHIPPED_LOOPS
from support.slowdown import scaled

from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.engine.executor import FSMExecutor
from little_loops.fsm.engine.records import ExecutionResult
from little_loops.fsm.validate.json_schema import SCHEMA_FILE
from little_loops.fsm.validate.loopfile import check_file, load_and_validate
from little_loops.loops import LIBRARY_DIR, MODELINE_PREFIX, library_loops

SHIPPED = [LIBRARY_DIR / f"{name}.yaml" for name in library_loops()]
EXAMPLES = SHIPPED_LOOPS
# The loops that run shell commands only: run here. Those that call Claude run end to end in
# e2e/test_library_e2e.py, with the real Claude Code CLI.
NEEDS_CLAUDE = {"fix-tests", "lint-fix", "type-fix", "coverage-up", "ralph", "review-and-fix"}
# Asks an agent and a forge: run in loops/test_fix_ci.py, on a custom agent and the GitHub
# stand-in.
NEEDS_A_FORGE = {"fix-ci"}
# Fan out to agents, each child a run of its own: run in loops/test_best_of.py and
# loops/test_fix_each.py on custom agents, and e2e with the real Claude Code and Codex.
FANS_OUT = {"best-of", "fix-each"}
SHELL_ONLY = [p for p in EXAMPLES if p.stem not in NEEDS_CLAUDE | NEEDS_A_FORGE | FANS_OUT]


@dataclass
class Run:
    result: ExecutionResult
    states: list[str]
    seconds: float


def copy_project(dest: Path) -> Path:
    """The parts of the project the example loops read: .loops/ and the package."""
    ignore = shutil.ignore_patterns("__pycache__", ".running")
    shutil.copytree(REPO / ".loops", dest / ".loops", ignore=ignore)
    shutil.copytree(
        REPO / "scripts" / "little_loops", dest / "scripts" / "little_loops", ignore=ignore
    )
    return dest


def loop_file(project: Path, name: str) -> Path:
    """The copy in *project* of the loop *name*: this repo's in .loops/, or a shipped one."""
    own = project / ".loops" / f"{name}.yaml"
    return own if own.is_file() else project / "scripts/little_loops/loops" / f"{name}.yaml"


def run_loop(project: Path, name: str) -> Run:
    fsm = load_and_validate(loop_file(project, name))
    events: list[dict[str, Any]] = []
    executor = FSMExecutor(
        fsm, event_callback=events.append, action_runner=DefaultActionRunner(cwd=project)
    )
    started = time.monotonic()
    result = executor.run()
    seconds = time.monotonic() - started
    # The states entered, then the one the run ended in (a terminal state without an
    # action ends the run without being entered).
    states = [e["state"] for e in events if e["event"] == "state_enter"]
    if not states or states[-1] != result.final_state:
        states.append(result.final_state)
    return Run(result, states, seconds)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_project(tmp_path)


def test_the_examples_are_there() -> None:
    assert {"hello", "count-down", "invariants-demo", "whitespace-fix"} <= set(library_loops())
    assert set(library_loops()) >= NEEDS_CLAUDE
    assert (REPO / ".loops" / "ci-checks.yaml").is_file()


def test_the_shipped_loops_have_one_copy() -> None:
    # This repo's .loops/ holds only its own loops: a shipped loop there would drift.
    assert not {p.stem for p in (REPO / ".loops").glob("*.y*ml")} & set(library_loops())


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_validates_without_warnings(path: Path) -> None:
    report = check_file(path)
    assert report.errors == []
    assert report.warnings == []
    assert report.fsm is not None
    assert report.fsm.name == path.stem


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_starts_with_the_modeline_and_a_comment(path: Path) -> None:
    lines = path.read_text().splitlines()
    assert lines[0].startswith(MODELINE_PREFIX)
    assert (path.parent / lines[0].removeprefix(MODELINE_PREFIX)).resolve() == SCHEMA_FILE
    assert lines[1].startswith("# ")
    assert len(lines[1]) > 20


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_a_shipped_loops_first_comment_line_is_a_sentence(path: Path) -> None:
    # `ll-loop new --list` shows it as the loop's one-line description.
    assert path.read_text().splitlines()[1].endswith(".")


@pytest.mark.parametrize("path", SHELL_ONLY, ids=[p.stem for p in SHELL_ONLY])
def test_example_needs_no_claude(path: Path) -> None:
    fsm = load_and_validate(path)
    for name, state in fsm.states.items():
        assert not state.is_prompt(), name
        assert state.evaluate is None or state.evaluate.type != "llm_structured", name


@pytest.mark.parametrize("path", SHELL_ONLY, ids=[p.stem for p in SHELL_ONLY])
def test_example_runs_to_a_terminal_state(project: Path, path: Path) -> None:
    run = run_loop(project, path.stem)
    assert run.result.terminated_by == "terminal", run.result.error
    assert run.result.error is None
    # Measured well under 1 s each; the bound leaves room for a busy machine.
    assert run.seconds < scaled(5)


def test_count_down_counts_three_two_one_zero_and_resets(project: Path) -> None:
    run = run_loop(project, "count-down")
    assert run.states == ["measure", "apply"] * 3 + ["measure", "done"]
    assert run.result.iterations == 4
    assert run.result.captured["current_value"]["output"] == "0"
    assert not (project / ".loops/.running/count-down.n").exists()

    again = run_loop(project, "count-down")
    assert again.states == run.states


def test_invariants_demo_fixes_both_constraints_then_holds(project: Path) -> None:
    first = run_loop(project, "invariants-demo")
    assert first.states == [
        "check_settings_exist",
        "fix_settings_exist",
        "check_settings_exist",
        "check_debug_off",
        "fix_debug_off",
        "check_debug_off",
        "all_valid",
    ]
    settings = project / ".loops/.running/invariants-demo/settings.ini"
    assert settings.read_text() == "debug = false\n"

    second = run_loop(project, "invariants-demo")
    assert second.states == ["check_settings_exist", "check_debug_off", "all_valid"]
    assert second.result.terminated_by == "terminal"


def test_whitespace_fix_strips_the_whitespace_it_finds(project: Path) -> None:
    run = run_loop(project, "whitespace-fix")
    assert run.states == ["evaluate", "fix", "evaluate", "done"]
    sample = project / ".loops/.running/whitespace-fix/sample.txt"
    assert sample.read_text() == "alpha\nbeta\ngamma\n"

    again = run_loop(project, "whitespace-fix")
    assert again.states == ["evaluate", "done"]


def test_ci_checks_passes_on_this_project(project: Path) -> None:
    run = run_loop(project, "ci-checks")
    assert run.states == ["lint", "typecheck", "test", "done"]


def test_ci_checks_fixes_trailing_whitespace_in_loop_files(project: Path) -> None:
    hello = project / "scripts/little_loops/loops/hello.yaml"
    original = hello.read_text()
    hello.write_text(original.replace("max_iterations: 5", "max_iterations: 5   "))
    run = run_loop(project, "ci-checks")
    assert run.states == ["lint", "fix_lint", "lint", "typecheck", "test", "done"]
    assert run.result.terminated_by == "terminal"
    assert hello.read_text() == original


def test_ci_checks_fails_the_run_when_a_module_does_not_compile(project: Path) -> None:
    (project / "scripts/little_loops/broken.py").write_text("def broken(:\n")
    run = run_loop(project, "ci-checks")
    assert run.result.terminated_by == "error"
    assert run.result.final_state == "typecheck"
    assert run.result.error == "no valid transition from 'typecheck' for verdict 'failure'"
