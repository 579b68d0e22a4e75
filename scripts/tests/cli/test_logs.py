"""`ll-loop logs` (cli/logs.py): the output of a run's latest step."""

from __future__ import annotations

import pytest
from support.project import LoopProject

from little_loops.cli.logs import latest_step, logs_command

LOOP = """\
    name: two
    initial: first
    states:
      first:
        action: echo one; echo oops >&2
        next: second
      second:
        action: echo two
        next: done
      done:
        terminal: true
"""


def test_latest_step_of_the_run_or_of_a_state(loop_project: LoopProject) -> None:
    loop_project.write("two", LOOP)
    assert latest_step("two", None, loop_project.loops) is None
    assert loop_project.run("run", "two").code == 0
    last = latest_step("two", None, loop_project.loops)
    assert last is not None
    assert (last["event"], last["state"]) == ("action_start", "second")
    first = latest_step("two", "first", loop_project.loops)
    assert first is not None
    assert first["state"] == "first"
    assert latest_step("two", "done", loop_project.loops) is None


def test_logs_prints_stdout_then_stderr(
    loop_project: LoopProject, capsys: pytest.CaptureFixture[str]
) -> None:
    loop_project.write("two", LOOP)
    assert loop_project.run("run", "two").code == 0
    assert logs_command("two", "first", loops_dir=loop_project.loops) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("(state first, shell action) <==")
    assert out[1] == "one"
    assert out[2].endswith("(stderr) <==")
    assert out[3] == "oops"
    assert logs_command("two", "done", loops_dir=loop_project.loops) == 1
    assert capsys.readouterr().err == "ll-loop: loop 'two' has no step output of state 'done' yet\n"
