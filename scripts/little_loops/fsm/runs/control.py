"""Run control: stop a run's process, tell where a run is now, find a saved run to resume."""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass
from pathlib import Path

from little_loops.fsm.definition.model.loop_keys import DEFAULT_MAX_ITERATIONS
from little_loops.fsm.definition.reading.loopdoc import load_loop
from little_loops.fsm.facts.errors import LoopError, LoopRuntimeError
from little_loops.fsm.facts.outcomes import Outcome, Status
from little_loops.fsm.processes.containment import CONTAINMENT
from little_loops.fsm.processes.pids import pid_alive
from little_loops.fsm.runs.liveness import LiveStatus, run_alive
from little_loops.fsm.runs.locks import project_root
from little_loops.fsm.runs.orphans import kill_orphaned_actions
from little_loops.fsm.runs.overrides import load_overrides
from little_loops.fsm.runs.state import LoopState, StateFile
from little_loops.fsm.runs.store import StatePersistence

GRACE_SECONDS = 5.0  # how long the loop gets to stop its action (2 s + a 1 s sweep) and save
KILL_WAIT_SECONDS = 1.0
_POLL = 0.05


class StatusJson(StateFile):
    """`ll-loop status --json`: the state file's fields, then whether the process lives."""

    alive: bool
    crashed: bool


class LiveStatusJson(StatusJson):
    """`ll-loop status --json` of a run under way: with the elapsed time up to now."""

    elapsed_now_ms: int  # elapsed_ms plus the time since the current state was entered


def status_json(state: LoopState, live: LiveStatus) -> StatusJson | LiveStatusJson:
    """The `status --json` object of a saved run."""
    data = StatusJson(**state.to_dict(), alive=live.alive, crashed=live.crashed)
    if live.in_state_ms:
        return LiveStatusJson(**data, elapsed_now_ms=state.elapsed_ms + live.in_state_ms)
    return data


def iteration_limit(state: LoopState, loops_dir: Path) -> int | None:
    """The iteration limit the run goes by: its -n if it had one, else its loop file's."""
    saved = load_overrides(state.key, loops_dir)
    if saved is not None and saved.max_iterations is not None:
        return saved.max_iterations
    # Its file found as `resume` finds it: from here, else from the project's folder (a
    # viewer such as `watch` may look from elsewhere).
    path = saved_loop_file(state, project_root(loops_dir))
    if path is None:
        return None
    try:
        value = load_loop(path).data.get("max_iterations", DEFAULT_MAX_ITERATIONS)
    except LoopError:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def stale_pid(state: LoopState, loops_dir: Path | None = None) -> int | None:
    """The pid of a run marked running whose process is gone (it crashed), else None."""
    if state.status != Status.RUNNING or state.pid is None:
        return None
    return None if run_alive(state, loops_dir) else state.pid


def can_stop(state: LoopState, loops_dir: Path | None = None) -> bool:
    """The run is marked running and its recorded process still runs and is this run's
    ll-loop (liveness.run_alive): never a process that merely has the pid."""
    return state.status == Status.RUNNING and state.pid is not None and run_alive(state, loops_dir)


def wait_gone(pid: int, pid_start: int | None, seconds: float) -> bool:
    """Wait up to `seconds` for process `pid` to end; True once it has."""
    deadline = time.monotonic() + seconds
    while pid_alive(pid, pid_start):
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL)
    return True


@dataclass(frozen=True)
class Stopped:
    """How `stop_process` ended a run and the run's state afterwards."""

    killed: bool  # it did not stop within the grace period: SIGKILL
    state: LoopState  # the saved run after it ended (the one before if it vanished)


def stop_process(
    persistence: StatePersistence,
    state: LoopState,
    *,
    grace: float = GRACE_SECONDS,
    kill_wait: float = KILL_WAIT_SECONDS,
) -> Stopped:
    """SIGTERM the run's process, wait `grace` seconds, then SIGKILL it and its action.

    A run that could not record its own end (it was killed) is recorded as stopped.
    """
    pid = state.pid
    if pid is None:
        raise LoopRuntimeError(f"loop '{state.loop_name}' has no process to stop")
    if not run_alive(state, persistence.loops_dir):
        raise LoopRuntimeError(
            f"loop '{state.loop_name}': process {pid} is not this run's ll-loop (it does not"
            " hold the run's event log); not stopping it"
        )
    CONTAINMENT.signal_recorded(pid, signal.SIGTERM)
    killed = False
    if not wait_gone(pid, state.pid_start, grace):
        CONTAINMENT.signal_recorded(pid, signal.SIGKILL, children=True)
        wait_gone(pid, state.pid_start, kill_wait)
        # What the action detached (and ll-loop did not get to sweep) still has the marker.
        kill_orphaned_actions(state.loop_name, pid)
        killed = True
    after = persistence.load_state()
    if after is not None and after.status == Status.RUNNING and after.pid == pid:
        after.status = Outcome.STOPPED.status
        after.terminated_by = Outcome.STOPPED
        persistence.save_state(after)
    return Stopped(killed=killed, state=after or state)


def saved_run(loop_name: str, loops_dir: Path, store: StatePersistence | None = None) -> LoopState:
    """The saved run of `loop_name` (read through *store*, if given: its `replay_error`
    then says whether the log after the snapshot could be applied); LoopRuntimeError when
    it has none to resume."""
    saved = (store or StatePersistence(loop_name, loops_dir)).load_state()
    if saved is None:
        raise LoopRuntimeError(
            f"loop '{loop_name}' has no saved run to resume; start it with "
            f"'ll-loop run {loop_name}'"
        )
    return saved


def saved_loop_file(saved: LoopState, root: Path | None = None) -> Path | None:
    """The loop file the saved run came from, if it is still there.

    A relative path is relative to the folder the run was started in: the current folder,
    else (a run started in another folder of the project) the project `root`, if given.
    """
    if not saved.loop_path:
        return None
    for path in (Path(saved.loop_path), None if root is None else root / saved.loop_path):
        if path is not None and path.is_file():
            return path
    return None


def check_same_loop(loop_name: str, defined: str, path: Path) -> None:
    """Refuse to resume a run with a file that now defines another loop."""
    if defined != loop_name:
        raise LoopRuntimeError(
            f"cannot resume: {path} now defines loop '{defined}', not '{loop_name}'"
        )
