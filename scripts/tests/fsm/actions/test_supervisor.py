"""ProcessSupervisor: one child at a time, its output read, its limits kept, its tree ended."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from support.llproc import wait_for

from little_loops.fsm.actions.supervisor import ProcessSupervisor, failed
from little_loops.fsm.processes.pids import pid_alive


def _spawn(supervisor: ProcessSupervisor, script: str, out: Path, **limits: float | None):
    with open(out, "wb") as handle:
        return supervisor.spawn(
            ["bash", "-c", script],
            None,
            None,
            (limits.get("timeout"), limits.get("idle")),
            handle.fileno(),
            out,
            time.monotonic(),
        )


def test_output_exit_code_and_stderr_of_a_child(tmp_path: Path) -> None:
    supervisor = ProcessSupervisor()
    result = _spawn(supervisor, "echo out; echo err >&2; exit 3", tmp_path / "a.out")
    supervisor.close()
    assert result.exit_code == 3
    assert result.output.strip() == "out"
    assert "err" in result.stderr
    assert (tmp_path / "a.out").read_text().strip() == "out"


def test_only_the_tail_stays_in_memory_but_the_file_gets_everything(tmp_path: Path) -> None:
    supervisor = ProcessSupervisor(tail_bytes=100)
    result = _spawn(supervisor, "head -c 100000 /dev/zero | tr '\\0' x", tmp_path / "b.out")
    supervisor.close()
    assert len(result.output.encode()) <= 200
    assert (tmp_path / "b.out").stat().st_size == 100000


def test_a_timeout_ends_the_child_and_what_it_started(tmp_path: Path) -> None:
    supervisor = ProcessSupervisor(grace_seconds=0.5)
    pidfile = tmp_path / "pid"
    result = _spawn(
        supervisor, f"sleep 1000 & echo $! > {pidfile}; wait", tmp_path / "c.out", timeout=1.0
    )
    supervisor.close()
    assert result.exit_code != 0
    assert result.error is not None
    assert "timed out" in result.error
    grandchild = int(pidfile.read_text())
    wait_for(lambda: not pid_alive(grandchild), 5, "the grandchild to be ended")


def test_cancel_from_another_thread_stops_the_action_with_its_exit_code(tmp_path: Path) -> None:
    supervisor = ProcessSupervisor(grace_seconds=0.5)
    started = tmp_path / "started"
    timer = threading.Thread(
        target=lambda: (
            wait_for(started.exists, 10, "the action to start"),
            supervisor.cancel("interrupted"),
        )
    )
    timer.start()
    result = _spawn(supervisor, f"touch {started}; sleep 1000", tmp_path / "d.out")
    timer.join()
    assert supervisor.cancelled == "interrupted"
    assert result.exit_code == 130
    # Refused until reset: a new action is not started.
    assert supervisor.stopped(time.monotonic()).exit_code == 130
    supervisor.reset()
    assert supervisor.cancelled is None
    assert _spawn(supervisor, "exit 0", tmp_path / "e.out").exit_code == 0
    supervisor.close()


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="tail_bytes"):
        ProcessSupervisor(tail_bytes=0)
    supervisor = ProcessSupervisor()
    with pytest.raises(ValueError, match="null byte"):
        supervisor.spawn(["bash", "-c", "a\0b"], None, None, (None, None), -1, None, 0.0)
    supervisor.close()


def test_failed_is_a_result_with_the_message_as_its_error() -> None:
    result = failed(127, "bash: not found", time.monotonic())
    assert result.exit_code == 127
    assert result.error == "bash: not found"
