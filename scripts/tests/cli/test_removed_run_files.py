"""`.loops/.running/` removed while a run goes on: it says so, saves its whole state again,
claims its scope again, and stays resumable."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

from support import llproc
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.runs.store import StatePersistence

STEPS = """\
name: steps
initial: a
max_iterations: 12
states:
  a:
    # From pass 6 on, each pass waits for `go`: the test acts while the run is still going.
    action: >-
      [ ${state.iteration} -lt 6 ] || until [ -e go ]; do sleep 0.02; done;
      sleep 0.2; echo step
    capture: last
    on_success: $current
  done:
    terminal: true
"""

NOTE = (
    "ll-loop: .loops/.running/steps.events.jsonl was removed or replaced while the run went"
    " on: its earlier events are gone; the run goes on and its state is saved again"
)


def iteration(loop_project: LoopProject) -> int:
    return int(llproc.state(loop_project.root, "steps").get("iteration", 0))


def run_and_remove_its_files(loop_project: LoopProject) -> subprocess.Popen[str]:
    """A run of STEPS whose .running/ is removed after three passes, now two passes on (and
    waiting for `go` from pass 6)."""
    loop_project.write("steps", STEPS)
    proc = llproc.start(loop_project.root, "run", "steps")
    llproc.wait_for(lambda: iteration(loop_project) >= 3, 10, "three passes")
    shutil.rmtree(loop_project.loops / ".running")
    llproc.wait_for(lambda: iteration(loop_project) >= 5, 10, "the state saved again")
    return proc


def test_a_run_whose_files_are_removed_says_so_and_keeps_its_state(
    loop_project: LoopProject,
) -> None:
    proc = run_and_remove_its_files(loop_project)
    again = llproc.ll_loop(loop_project.root, "run", "steps")
    assert again.returncode == ExitCode.FAILED  # the scope lock was claimed again
    assert "loop 'steps' is already running" in again.stderr
    (loop_project.root / "go").touch()
    _, err = proc.communicate(timeout=scaled(20))
    assert proc.returncode == ExitCode.MAX_ITERATIONS, err
    assert err.count(NOTE) == 1
    state = llproc.state(loop_project.root, "steps")
    assert (state["status"], state["iteration"]) == ("failed", 12)
    events = llproc.events(loop_project.root, "steps")
    assert events[-1]["event"] == "loop_complete"


def test_a_run_killed_after_its_files_were_removed_resumes_where_it_was(
    loop_project: LoopProject,
) -> None:
    proc = run_and_remove_its_files(loop_project)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    (loop_project.root / "go").touch()  # the killed run's action (its own session) ends
    with StatePersistence("steps", loop_project.loops) as store:
        saved = store.load_state()  # the record: the snapshot and the new log after it
    assert saved is not None
    assert saved.iteration >= 5
    resumed = llproc.ll_loop(loop_project.root, "resume", "steps")
    assert resumed.returncode == ExitCode.MAX_ITERATIONS, resumed.stderr
    assert f"resuming loop 'steps' at state 'a' (iteration {saved.iteration}, " in resumed.stderr
    state = llproc.state(loop_project.root, "steps")
    assert (state["status"], state["iteration"]) == ("failed", 12)
