"""A sub-loop's own timeout counts its time before a resume, as a run's own timeout does."""

from __future__ import annotations

import os
import signal

from support import llproc
from support.project import LoopProject

from little_loops.fsm.runs.outcomes import ExitCode

CHILD = """\
name: slow
timeout: 3
initial: one
states:
  one:
    action: 'sleep 2; echo one >> side.txt'
    next: two
  two:
    action: 'echo two-start >> side.txt; sleep 2; echo two >> side.txt'
    next: done
  done:
    terminal: true
"""
PARENT = """\
name: boss
initial: work
states:
  work:
    loop: slow
    on_success: done
    on_error: late
  late:
    terminal: true
    outcome: failure
  done:
    terminal: true
"""


def side(project: LoopProject) -> list[str]:
    path = project.root / "side.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_a_resumed_child_does_not_get_its_whole_timeout_again(
    loop_project: LoopProject,
) -> None:
    loop_project.write("slow", CHILD)
    loop_project.write("boss", PARENT)
    proc = llproc.start(loop_project.root, "run", "boss")
    try:
        llproc.wait_for(lambda: "two-start" in side(loop_project), timeout=15, what="two")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    # About 2 of the child's 3 seconds are used: `two` (2 s) cannot finish within the rest.
    resumed = llproc.console(loop_project.root, "resume", "boss", timeout=30)
    assert resumed.returncode == ExitCode.TERMINAL_FAILURE, resumed.stderr
    assert side(loop_project).count("two") == 0
    assert llproc.state(loop_project.root, "boss")["current_state"] == "late"
