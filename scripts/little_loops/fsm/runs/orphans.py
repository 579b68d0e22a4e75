"""Find and end the actions a crashed run left behind.

Every action of a persisted run carries `LL_LOOP_RUN=<loop>:<pid of ll-loop>` in its
environment. An action runs in a session of its own (so a timeout can kill its whole
tree), which also means `kill -9` of ll-loop does not take the action with it. Before a
crashed run is resumed, run again or reported by `stop`, the processes that still carry
its marker are ended, so two agents never work on the same files.
"""

from __future__ import annotations

import os
from pathlib import Path

from little_loops.fsm.facts.layout import PARENT_MARKER_ENV, RUN_MARKER_ENV
from little_loops.fsm.processes.containment import CONTAINMENT

__all__ = ["RUN_MARKER_ENV", "kill_orphaned_actions", "marked_processes", "run_marker"]


def run_marker(loop_name: str, pid: int) -> str:
    """The value of LL_LOOP_RUN for the actions of run *pid* of *loop_name*."""
    return f"{loop_name}:{pid}"


def marked_processes(marker: str, variable: str = RUN_MARKER_ENV) -> list[int]:
    """The pids whose environment has *variable*=*marker* (LL_LOOP_RUN; Linux /proc; []
    elsewhere)."""
    wanted = f"{variable}={marker}".encode()
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if wanted in environ.split(b"\0"):
            found.append(int(entry.name))
    return sorted(found)


def kill_orphaned_actions(
    loop_name: str, dead_pid: int, grace: float = 2.0, *, fan_out: bool = False
) -> list[int]:
    """End every process left by the actions of the dead run *dead_pid* (and, *fan_out*,
    by the child runs its fan-out started): SIGTERM to their process groups, SIGKILL to what
    is left after *grace* seconds. Returns the pids found."""
    marker = run_marker(loop_name, dead_pid)
    found = marked_processes(marker)
    if fan_out:
        found = sorted({*found, *marked_processes(marker, PARENT_MARKER_ENV)})
    pids = [p for p in found if p != os.getpid()]
    if not pids:
        return []
    CONTAINMENT.end_recorded(pids, grace)
    return pids
