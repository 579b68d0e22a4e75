"""Which run a NAME on the command line means (cli/runref.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from support.project import LoopProject

from little_loops.cli.runref import (
    add_run_argument,
    declared_run_name,
    has_state,
    loop_name_of,
    named_as_run,
    run_name,
    runs_as,
    shown_run,
)
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import LoopError

LOOP = """\
    name: declared
    initial: a
    states:
      a:
        action: "true"
        next: done
      done:
        terminal: true
"""


def test_runs_go_by_the_file_name() -> None:
    assert runs_as(Path(".loops/tut2.yaml")) == "tut2"
    assert runs_as(Path(".loops/tut2.fsm.yaml")) == "tut2"
    assert runs_as(Path(".loops/.hidden.yaml")) is None
    assert runs_as(Path(".loops/" + "x" * 300 + ".yaml")) is None
    fsm = FSMLoop.from_dict({"name": "declared", "initial": "a", "states": {"a": {}}})
    assert named_as_run(fsm, Path("copy.yaml")).name == "copy"
    assert named_as_run(fsm, Path("declared.yaml")) is fsm


def test_declared_run_name(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("name: mine\ninitial: a\nstates: {a: {terminal: true}}\n")
    assert declared_run_name(path) == "mine"
    goal = tmp_path / "g.yaml"
    goal.write_text("paradigm: goal\ngoal: All tests pass\ntools: [pytest]\n")
    assert declared_run_name(goal) == "goal-all-tests-pass"
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [")
    assert declared_run_name(broken, fallback="fb") == "fb"
    with pytest.raises(LoopError):
        declared_run_name(broken)


def test_a_name_means_the_run_of_its_loop_file(loop_project: LoopProject) -> None:
    path = loop_project.write("copy", LOOP)
    assert loop_name_of(path, loop_project.loops) == "copy"
    assert not has_state("copy", loop_project.loops)
    assert loop_project.run("run", "copy").code == 0
    assert has_state("copy", loop_project.loops)
    assert not has_state(".hidden", loop_project.loops)
    assert run_name("copy", loop_project.loops) == "copy"
    assert run_name(str(path), loop_project.loops) == "copy"


def test_the_run_argument() -> None:
    parser = argparse.ArgumentParser()
    add_run_argument(parser)
    assert parser.parse_args(["fix@20260101-000000"]).loop == "fix@20260101-000000"


def test_what_a_name_and_its_run_option_show(loop_project: LoopProject) -> None:
    """`history` and `logs` read the same run for NAME and `--run ID`: the current run's
    files without one, the archived run's folder with one, one error for an unknown id."""
    path = loop_project.write("copy", LOOP)
    assert loop_project.run("run", "copy").code == 0
    assert shown_run("copy", None, loop_project.loops) == ("copy", None)
    assert shown_run(str(path), None, loop_project.loops) == ("copy", None)
    loop, folder = shown_run(str(path), "last", loop_project.loops)
    assert loop == "copy"
    assert folder is not None
    assert folder.parent == loop_project.loops / ".history" / "copy"
    assert (folder / "copy.events.jsonl").is_file()
    with pytest.raises(LoopError, match="no run '1999'"):
        shown_run("copy", "1999", loop_project.loops)
