"""Run control: stopping a run's process, its live status, the saved run to resume."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from support.fakerun import fake_run
from support.slowdown import scaled

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.outcomes import Outcome, Status
from little_loops.fsm.processes.pids import pid_alive, process_start_ticks
from little_loops.fsm.runs.control import (
    can_stop,
    check_same_loop,
    iteration_limit,
    saved_loop_file,
    saved_run,
    stale_pid,
    status_json,
    stop_process,
)
from little_loops.fsm.runs.liveness import LiveStatus, live_status, since_ms
from little_loops.fsm.runs.overrides import RunFlags, save_overrides
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.store import StatePersistence


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


def _running(pid: int) -> LoopState:
    return LoopState("x", "a", status=Status.RUNNING, pid=pid, pid_start=process_start_ticks(pid))


def test_a_live_run_is_stoppable_and_a_dead_one_is_crashed(
    sleeper: subprocess.Popen[bytes], dead_pid: int
) -> None:
    live = _running(sleeper.pid)
    assert can_stop(live)
    assert stale_pid(live) is None
    assert (live_status(live).alive, live_status(live).crashed) == (True, False)
    dead = LoopState("x", "a", status=Status.RUNNING, pid=dead_pid)
    assert not can_stop(dead)
    assert stale_pid(dead) == dead_pid
    assert live_status(dead) == LiveStatus(alive=False, crashed=True, in_state_ms=0)
    ended = LoopState("x", "a", status=Status.COMPLETED, pid=dead_pid)
    assert stale_pid(ended) is None
    assert not live_status(ended).crashed


def test_the_time_in_the_current_state_counts_for_a_live_run_only(
    sleeper: subprocess.Popen[bytes],
) -> None:
    ten_s_ago = (datetime.now(UTC) - timedelta(seconds=10)).isoformat()
    assert 9_000 <= since_ms(ten_s_ago) < 60_000
    assert since_ms("not a time") == 0
    live = _running(sleeper.pid)
    live.updated_at, live.elapsed_ms = ten_s_ago, 5
    status = live_status(live)
    assert status.in_state_ms >= 9_000
    data = status_json(live, status)
    assert list(data)[-3:] == ["alive", "crashed", "elapsed_now_ms"]
    assert data["elapsed_now_ms"] == 5 + status.in_state_ms
    live.status = Status.STOPPED
    assert "elapsed_now_ms" not in status_json(live, live_status(live))


def test_stop_process_terms_it_and_records_it_stopped(tmp_path: Path) -> None:
    writer = fake_run(tmp_path, "x")
    persistence = StatePersistence("x", tmp_path)
    state = _running(writer.pid)
    persistence.save_state(state)
    stopped = stop_process(persistence, state, grace=5)
    writer.wait()
    assert not stopped.killed
    assert not pid_alive(writer.pid)
    saved = persistence.load_state()
    assert saved is not None
    assert (saved.status, saved.terminated_by) == ("stopped", "stopped")
    assert (saved.status, saved.terminated_by) == (Outcome.STOPPED.status, Outcome.STOPPED)
    assert stopped.state == saved


def test_stop_process_kills_what_ignores_sigterm(tmp_path: Path) -> None:
    proc = fake_run(tmp_path, "x", ignore_term=True)
    try:
        persistence = StatePersistence("x", tmp_path)
        state = _running(proc.pid)
        persistence.save_state(state)
        stopped = stop_process(persistence, state, grace=0.3)
        proc.wait(timeout=scaled(5))
        assert stopped.killed
        assert stopped.state.status == Status.STOPPED
    finally:
        proc.kill()
        proc.wait()


def test_stop_never_signals_a_process_that_only_has_the_pid(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    """A state file naming a live unrelated process, its pid and its start time: that
    process does not write the run's log, so it is not the run, and nothing signals it."""
    persistence = StatePersistence("x", tmp_path)
    state = _running(sleeper.pid)
    persistence.save_state(state)
    assert not can_stop(state, tmp_path)
    assert stale_pid(state, tmp_path) == sleeper.pid
    with pytest.raises(LoopRuntimeError, match=rf"process {sleeper.pid} is not this run's ll-loop"):
        stop_process(persistence, state, grace=0.1)
    assert sleeper.poll() is None  # still running, never signalled


def test_stop_process_needs_a_pid(tmp_path: Path) -> None:
    state = LoopState("x", "a", status=Status.RUNNING)
    with pytest.raises(LoopRuntimeError, match="loop 'x' has no process to stop"):
        stop_process(StatePersistence("x", tmp_path), state)


def test_the_saved_run_to_resume_and_its_file(tmp_path: Path) -> None:
    with pytest.raises(LoopRuntimeError) as info:
        saved_run("x", tmp_path)
    assert str(info.value) == ("loop 'x' has no saved run to resume; start it with 'll-loop run x'")
    loop_file = tmp_path / "x.yaml"
    StatePersistence("x", tmp_path).save_state(LoopState("x", "a", loop_path=str(loop_file)))
    saved = saved_run("x", tmp_path)
    assert saved_loop_file(saved) is None  # the file is gone
    loop_file.write_text("name: x\n")
    assert saved_loop_file(saved) == loop_file
    check_same_loop("x", "x", loop_file)
    with pytest.raises(LoopRuntimeError) as other:
        check_same_loop("x", "y", loop_file)
    assert str(other.value) == f"cannot resume: {loop_file} now defines loop 'y', not 'x'"


def test_the_iteration_limit_is_the_runs_flag_else_its_files(tmp_path: Path) -> None:
    loop_file = tmp_path / "x.yaml"
    loop_file.write_text(
        "name: x\ninitial: a\nmax_iterations: 7\nstates:\n  a:\n    terminal: true\n"
    )
    state = LoopState("x", "a", loop_path=str(loop_file))
    assert iteration_limit(state, tmp_path) == 7
    save_overrides("x", tmp_path, RunFlags(max_iterations=3))
    assert iteration_limit(state, tmp_path) == 3
    assert iteration_limit(LoopState("y", "a"), tmp_path) is None
