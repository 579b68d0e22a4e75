"""What `status` tells of a saved run: how it stands (crashed, running, ended), what it awaits."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from little_loops.fsm.engine.attempts import pending_wait
from little_loops.fsm.facts.layout import run_files, split_run_key
from little_loops.fsm.facts.outcomes import Outcome, Status, outcome_label
from little_loops.fsm.processes.pids import pid_alive
from little_loops.fsm.runs.control import iteration_limit
from little_loops.fsm.runs.liveness import LiveStatus, live_status, low_space
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.which import keys_of


@dataclass(frozen=True)
class RunDescription:
    """A saved run as `status` shows it: the decisions made, the words left to the CLI."""

    state: LoopState
    live: LiveStatus
    status: str  # `running (pid N)`, `crashed: ...`, `succeeded: ended in done`, ...
    limit: int | None  # the iteration limit the run goes by (None: unknown)
    waiting: str | None  # what a live run is waiting for (a rate limit, a retry), if anything
    disk: str | None  # a crashed run's folder is short of space: maybe why it crashed
    other_runs: int  # the loop's other runs, when it was named without an id


def describe(
    state: LoopState, key: str, loops_dir: Path, *, named: str, count_others: bool = True
) -> RunDescription:
    """The description of *state*, the saved run *key*, which the user *named* (NAME or
    NAME@ID: only a bare NAME counts the loop's other runs, unless not *count_others*: a
    list of every run, which would look through the folder once for each)."""
    live = live_status(state, loops_dir)
    running = state.status == Status.RUNNING and not live.crashed
    others = 0
    if count_others and split_run_key(named)[1] is None:
        others = max(len(keys_of(loops_dir, split_run_key(key)[0])) - 1, 0)
    return RunDescription(
        state=state,
        live=live,
        status=status_line(state, live, key),
        limit=iteration_limit(state, loops_dir),
        waiting=pending_wait(state.attempt) if running else None,
        disk=low_space(run_files(key, loops_dir).running_dir) if live.crashed else None,
        other_runs=others,
    )


def status_line(state: LoopState, live: LiveStatus, key: str) -> str:
    """How the run stands, in one line: crashed (and why it counts as crashed), running,
    ended in a terminal state (by name, and whether that is a success), or how it ended."""
    if live.crashed:
        gone = "is gone"
        if pid_alive(state.pid, state.pid_start):  # alive, but it does not write this run
            gone = "runs but is not this run's ll-loop (it does not hold the run's log)"
        return f"crashed: its process (pid {state.pid}) {gone}; resume with ll-loop resume {key}"
    if state.status == Status.RUNNING:
        return f"running (pid {state.pid})"
    if state.terminated_by in (Outcome.TERMINAL, Outcome.TERMINAL_FAILURE):
        return f"{state.status}: ended in {outcome_label(state.terminated_by, state.current_state)}"
    how = state.terminated_by
    return state.status + (f" ({how})" if how and how != state.status else "")
