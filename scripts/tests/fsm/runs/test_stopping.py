"""Stopping a run by its key: nothing saved, not running (a crash), stopped; which `--all` stops."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.fakerun import fake_run

from little_loops.fsm.facts.outcomes import Outcome, Status
from little_loops.fsm.processes.pids import pid_alive, process_start_ticks
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.stopping import Stop, runs_to_stop, stop_run
from little_loops.fsm.runs.store import StatePersistence
from little_loops.fsm.runs.which import SavedRun


@pytest.fixture
def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_loop_with_no_saved_run_has_nothing_to_stop(tmp_path: Path) -> None:
    assert stop_run("x", tmp_path).what is Stop.NO_RUN


def test_a_crashed_run_is_not_signalled_and_stays_as_it_was(tmp_path: Path, dead_pid: int) -> None:
    state = LoopState("x", "a", status=Status.RUNNING, pid=dead_pid)
    StatePersistence("x", tmp_path).save_state(state)
    heard: list[int] = []
    report = stop_run("x", tmp_path, on_stopping=heard.append)
    assert (report.what, report.stale_pid, report.orphans_ended) == (
        Stop.NOT_RUNNING,
        dead_pid,
        [],
    )
    assert heard == []
    saved = StatePersistence("x", tmp_path).load_state()
    assert saved is not None
    assert saved.status == Status.RUNNING  # still resumable


def test_an_ended_run_is_not_running_with_no_stale_pid(tmp_path: Path, dead_pid: int) -> None:
    state = LoopState("x", "a", status=Status.COMPLETED, pid=dead_pid)
    StatePersistence("x", tmp_path).save_state(state)
    report = stop_run("x", tmp_path)
    assert (report.what, report.stale_pid) == (Stop.NOT_RUNNING, None)


def test_a_live_run_is_stopped_and_the_caller_hears_it_first(tmp_path: Path) -> None:
    writer = fake_run(tmp_path, "x")
    pid = writer.pid
    state = LoopState("x", "a", status=Status.RUNNING, pid=pid, pid_start=process_start_ticks(pid))
    StatePersistence("x", tmp_path).save_state(state)
    heard: list[int] = []
    report = stop_run("x", tmp_path, grace=5, on_stopping=heard.append)
    writer.wait()
    assert heard == [pid]
    assert (report.what, report.killed, report.pid) == (Stop.STOPPED, False, pid)
    assert not pid_alive(pid)
    assert report.state is not None
    assert report.state.terminated_by == Outcome.STOPPED


def test_stop_all_takes_the_running_runs_else_every_one() -> None:
    running = SavedRun("x@ab12", LoopState("x", "a", status=Status.RUNNING))
    ended = SavedRun("x", LoopState("x", "a", status=Status.COMPLETED))
    unreadable = SavedRun("x@cd34", None)
    assert runs_to_stop([ended, running, unreadable]) == ["x@ab12"]
    assert runs_to_stop([ended, unreadable]) == ["x", "x@cd34"]
