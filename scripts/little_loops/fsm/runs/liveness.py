"""Is a saved run's process alive, did the run crash, how long has it been in its state."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from little_loops.fsm.runs.outcomes import Status
from little_loops.fsm.runs.pids import pid_alive
from little_loops.fsm.runs.state import LoopState


@dataclass(frozen=True)
class LiveStatus:
    """A saved run as it is now: does its process live, did it crash, how long in this state."""

    alive: bool
    crashed: bool
    in_state_ms: int  # time since the state file was written, for a live run (else 0)


def live_status(state: LoopState) -> LiveStatus:
    """Whether the run's process lives, whether it crashed, and its time in the current state."""
    alive = pid_alive(state.pid, state.pid_start)
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
