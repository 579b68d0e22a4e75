"""`library:NAME` through the console script: a shipped loop used in place, never written to."""

from __future__ import annotations

from support import llproc
from support.project import LoopProject

from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.loops import LIBRARY_DIR


def _package_files() -> list[str]:
    return sorted(path.name for path in LIBRARY_DIR.iterdir())


def test_run_validate_graph_and_compile_a_shipped_loop(loop_project: LoopProject) -> None:
    before = _package_files()
    root = loop_project.root
    run = llproc.console(root, "run", "library:hello")
    assert run.returncode == ExitCode.OK, run.stderr
    assert "Loop completed: done" in run.stderr
    assert llproc.console(root, "status", "hello").stdout.splitlines()[0].split() == [
        "loop:",
        "hello",
    ]
    assert llproc.console(root, "validate", "--strict", "library:hello").returncode == 0
    graph = llproc.console(root, "graph", "library:count-down")
    assert graph.returncode == 0
    assert graph.stdout.startswith("flowchart TD")
    compiled = llproc.console(root, "compile", "library:whitespace-fix")
    assert compiled.returncode == 0, compiled.stderr
    assert "from library:whitespace-fix (paradigm: goal)" in compiled.stdout
    assert not (loop_project.loops / "whitespace-fix.fsm.yaml").exists()  # printed, not written
    assert _package_files() == before  # nothing written into the installed package


def test_an_unknown_shipped_loop_names_the_others(loop_project: LoopProject) -> None:
    result = llproc.console(loop_project.root, "run", "library:helo")
    assert result.returncode == ExitCode.USAGE
    assert result.stderr.startswith("ll-loop: error: no shipped loop named 'helo' (did you mean")
    assert result.stderr.count("\n") == 1
