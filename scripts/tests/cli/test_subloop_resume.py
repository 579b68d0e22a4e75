"""Resuming a run inside a sub-loop: the child's own timeout, a child file that changed."""

from __future__ import annotations

import os
import signal

from support import llproc
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.runs.store import StatePersistence

CHILD = """\
name: slow
timeout: {timeout}
initial: one
states:
  one:
    action: 'sleep {one:.2f}; echo one >> side.txt'
    next: two
  two:
    action: 'echo two-start >> side.txt; sleep {two:.2f}; echo two >> side.txt'
    next: done
  done:
    terminal: true
"""


def child(timeout: float, one: float = 0, two: float = 1) -> str:
    """Loop `slow`, its states `one` and `two` taking *one* and *two* seconds (longer on a
    slower machine, where starting processes takes longer too), within *timeout* seconds."""
    return CHILD.format(timeout=timeout, one=scaled(one), two=scaled(two))


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


def crash_in_two(project: LoopProject) -> None:
    """Run boss and kill -9 it while its child runs state `two`."""
    proc = llproc.start(project.root, "run", "boss")
    try:
        llproc.wait_for(
            lambda: "two-start" in llproc.side_effects(project.root), timeout=15, what="two"
        )
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_a_resumed_child_does_not_get_its_whole_timeout_again(
    loop_project: LoopProject,
) -> None:
    # `two` starts with 2 "seconds" of the 4 to spare, and at most 2 are left after the
    # crash (they go on counting across it): `two` (3) cannot finish within them.
    loop_project.write("slow", child(timeout=scaled(4), one=2, two=3))
    loop_project.write("boss", PARENT)
    crash_in_two(loop_project)
    resumed = llproc.console(loop_project.root, "resume", "boss", timeout=30)
    assert resumed.returncode == ExitCode.TERMINAL_FAILURE, resumed.stderr
    assert llproc.side_effects(loop_project.root).count("two") == 0
    assert llproc.state(loop_project.root, "boss")["current_state"] == "late"


def test_a_child_file_without_the_saved_state_is_refused_and_the_run_kept(
    loop_project: LoopProject,
) -> None:
    loop_project.write("slow", child(timeout=30))
    loop_project.write("boss", PARENT)
    crash_in_two(loop_project)
    # Was: the child failed at once, its `error` verdict was routed and the run ended.
    loop_project.write("slow", child(timeout=30).replace("two", "deux"))
    refused = llproc.console(loop_project.root, "resume", "boss")
    assert refused.returncode == ExitCode.FAILED
    assert refused.stderr.strip().splitlines()[-1] == (
        "ll-loop: error: cannot resume: saved state 'two' is not a state of loop 'slow'"
        " (the loop file changed?)"
    )
    loop_project.write("slow", child(timeout=30).replace("name: slow", "name: other"))
    refused = llproc.console(loop_project.root, "resume", "boss")
    assert "state 'work' of loop 'boss' no longer runs loop 'slow'" in refused.stderr
    # The run as resume reads it (the state file may lag its log by a few hundredths).
    with StatePersistence("boss", loop_project.loops) as store:
        saved = store.load_state()
    assert saved is not None
    assert saved.child is not None
    assert (saved.child["loop"], saved.child["current_state"]) == ("slow", "two")
    loop_project.write("slow", child(timeout=30))
    resumed = llproc.console(loop_project.root, "resume", "boss", timeout=30)
    assert resumed.returncode == ExitCode.OK, resumed.stderr
    assert llproc.side_effects(loop_project.root).count("two") == 1
