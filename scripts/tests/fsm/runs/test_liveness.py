"""Liveness of a saved run: alive, crashed, time in the current state; RunInfo says the same."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from support.fakerun import fake_run

from little_loops.fsm.facts.outcomes import Status
from little_loops.fsm.processes.pids import process_start_ticks
from little_loops.fsm.runs.liveness import LiveStatus, live_status, since_ms
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.store import StatePersistence, list_running_loops


@pytest.fixture
def sleeper(marker: str) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", marker])
    yield proc
    proc.kill()
    proc.wait()


def test_since_ms_reads_iso_times() -> None:
    naive = (datetime.now(UTC) - timedelta(seconds=2)).replace(tzinfo=None).isoformat()
    assert 1_900 <= since_ms(naive) < 60_000
    future = (datetime.now(UTC) + timedelta(seconds=60)).isoformat()
    assert since_ms(future) == 0
    assert since_ms("") == 0


def test_run_info_and_live_status_agree(tmp_path: Path) -> None:
    writer = fake_run(tmp_path, "live")
    try:
        start = process_start_ticks(writer.pid)
        live = LoopState("live", "a", status=Status.RUNNING, pid=writer.pid, pid_start=start)
        gone = LoopState("gone", "a", status=Status.RUNNING, pid=writer.pid, pid_start=-1)
        # The same live process, but it does not write this run's log: not this run.
        other = LoopState("other", "a", status=Status.RUNNING, pid=writer.pid, pid_start=start)
        for state in (live, gone, other):
            StatePersistence(state.loop_name, tmp_path).save_state(state)
        infos = {info.loop_name: info for info in list_running_loops(tmp_path)}
        for name, state in (("live", live), ("gone", gone), ("other", other)):
            status = live_status(state, tmp_path)
            assert (infos[name].alive, infos[name].crashed) == (status.alive, status.crashed)
        assert live_status(gone, tmp_path) == LiveStatus(alive=False, crashed=True, in_state_ms=0)
        assert live_status(live, tmp_path).alive
        assert live_status(other, tmp_path).crashed
        assert live_status(other).alive  # without the run's folder: the pid check alone
    finally:
        writer.kill()
        writer.wait()
