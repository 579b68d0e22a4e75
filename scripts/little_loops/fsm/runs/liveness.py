"""Is a saved run's process alive, did the run crash, how long has it been in its state."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from little_loops.fsm.facts.layout import run_files
from little_loops.fsm.facts.outcomes import Status
from little_loops.fsm.facts.runfile import display_path
from little_loops.fsm.processes.pids import pid_alive
from little_loops.fsm.runs.eventlog import writer_pids
from little_loops.fsm.runs.state import LoopState

LOW_SPACE_BYTES = 1024 * 1024  # less than this free where the run files are: a likely cause


@dataclass(frozen=True)
class LiveStatus:
    """A saved run as it is now: does its process live, did it crash, how long in this state."""

    alive: bool
    crashed: bool
    in_state_ms: int  # time since the state file was written, for a live run (else 0)


def run_alive(state: LoopState, loops_dir: Path | None = None) -> bool:
    """Whether the process the state file names is alive and is this run's ll-loop.

    A pid and its start time can be copied into a state file by hand or by a hostile
    project; with *loops_dir* the process must also hold the writer's lock on the run's
    event log (Linux /proc/locks; where that cannot be read, the pid check alone decides).
    """
    if not pid_alive(state.pid, state.pid_start):
        return False
    if loops_dir is None:
        return True
    holders = writer_pids(run_files(state.key, loops_dir).events)
    return holders is None or state.pid in holders


def live_status(state: LoopState, loops_dir: Path | None = None) -> LiveStatus:
    """Whether the run's process lives, whether it crashed, and its time in the current state."""
    alive = run_alive(state, loops_dir)
    running = state.status == Status.RUNNING
    # The state file is written when a state is entered; for a live run, add the time
    # since then, so a long Claude step does not read as 0ms.
    in_state_ms = since_ms(state.updated_at) if alive and running else 0
    return LiveStatus(alive=alive, crashed=running and not alive, in_state_ms=in_state_ms)


def since_ms(timestamp: str) -> int:
    """Milliseconds from the ISO *timestamp* until now (0 when it cannot be read)."""
    try:
        then = datetime.fromisoformat(timestamp)
    except ValueError:
        return 0
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    return max(0, int((datetime.now(UTC) - then).total_seconds() * 1000))


def low_space(folder: Path) -> str | None:
    """A word on the disk holding *folder* when it is (nearly) full, else None.

    A run that crashed there most likely could not write its log: that is what to fix
    before resuming it.
    """
    try:
        stats = os.statvfs(folder)
    except OSError:
        return None
    free = stats.f_bavail * stats.f_frsize
    if free >= LOW_SPACE_BYTES:
        return None
    return (
        f"the disk holding {display_path(folder)} is full ({free // 1024} KiB free):"
        " free some space before resuming"
    )
