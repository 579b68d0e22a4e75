"""What `status` tells of a saved run: crashed, running, ended; what it waits for; other runs."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from little_loops.fsm.facts.outcomes import Outcome, Status
from little_loops.fsm.processes.pids import process_start_ticks
from little_loops.fsm.runs.describe import describe, status_line
from little_loops.fsm.runs.liveness import LiveStatus, live_status
from little_loops.fsm.runs.overrides import RunFlags, save_overrides
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.store import StatePersistence

ALIVE = LiveStatus(alive=True, crashed=False, in_state_ms=0)
ENDED = LiveStatus(alive=False, crashed=False, in_state_ms=0)


@pytest.fixture
def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@pytest.fixture
def sleeper(marker: str) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", marker])
    yield proc
    proc.kill()
    proc.wait()


def test_a_run_whose_process_is_gone_is_crashed_and_says_how_to_go_on(
    tmp_path: Path, dead_pid: int
) -> None:
    state = LoopState("x", "a", status=Status.RUNNING, pid=dead_pid, attempt={"wait": 1})
    described = describe(state, "x", tmp_path, named="x")
    assert described.live.crashed
    assert described.status == (
        f"crashed: its process (pid {dead_pid}) is gone; resume with ll-loop resume x"
    )
    assert described.waiting is None  # a crashed run waits for nothing


def test_a_live_pid_that_is_not_the_runs_ll_loop_is_said_so(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    pid = sleeper.pid
    state = LoopState("x", "a", status=Status.RUNNING, pid=pid, pid_start=process_start_ticks(pid))
    line = status_line(state, live_status(state, tmp_path), "x")
    assert line == (
        f"crashed: its process (pid {pid}) runs but is not this run's ll-loop (it does not hold"
        " the run's log); resume with ll-loop resume x"
    )


def test_how_a_run_stands_in_one_line() -> None:
    running = LoopState("x", "a", status=Status.RUNNING, pid=42)
    assert status_line(running, ALIVE, "x") == "running (pid 42)"
    done = LoopState("x", "done", status=Status.COMPLETED, terminated_by=Outcome.TERMINAL)
    assert status_line(done, ENDED, "x").startswith("completed: ended in ")
    assert "done" in status_line(done, ENDED, "x")
    stopped = LoopState("x", "a", status=Status.STOPPED, terminated_by=Outcome.STOPPED)
    assert status_line(stopped, ENDED, "x") == "stopped"
    limit = LoopState("x", "a", status=Status.STOPPED, terminated_by=Outcome.MAX_ITERATIONS)
    assert status_line(limit, ENDED, "x") == f"stopped ({Outcome.MAX_ITERATIONS})"


def test_the_limit_and_the_other_runs_of_a_loop_named_without_an_id(tmp_path: Path) -> None:
    ended = LoopState("x", "a", status=Status.STOPPED, terminated_by=Outcome.STOPPED)
    for key, run_id in (("x", None), ("x@ab12", "ab12")):
        state = LoopState("x", "a", status=Status.STOPPED, run_id=run_id)
        StatePersistence(key, tmp_path).save_state(state)
    save_overrides("x", tmp_path, RunFlags(max_iterations=4))
    described = describe(ended, "x", tmp_path, named="x")
    assert (described.limit, described.other_runs, described.disk) == (4, 1, None)
    assert describe(ended, "x", tmp_path, named="x@ab12").other_runs == 0
