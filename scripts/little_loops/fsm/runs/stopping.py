"""Stopping a run by its key: what there was to stop, and how it ended (the CLI says it)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum, auto
from pathlib import Path

from little_loops.fsm.facts.layout import running_dir, split_run_key, starting_files
from little_loops.fsm.facts.outcomes import Outcome, Status
from little_loops.fsm.processes.containment import CONTAINMENT
from little_loops.fsm.runs.control import (
    GRACE_SECONDS,
    KILL_WAIT_SECONDS,
    can_stop,
    stale_pid,
    stop_process,
    wait_gone,
)
from little_loops.fsm.runs.orphans import kill_orphaned_actions
from little_loops.fsm.runs.start_marker import (
    RUN,
    forget_dead_starts,
    ll_loop_alive,
    read_marker,
    request_stop,
    withdraw_stop,
)
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.store import StatePersistence
from little_loops.fsm.runs.which import SavedRun

CHAIN_HOPS = 4  # the processes of a chain one stop follows, at most (two are expected)


class Stop(Enum):
    """What `stop_run` found."""

    NO_RUN = auto()
    NOT_RUNNING = auto()  # ended, or crashed (its process is gone)
    THIS_PROCESS = auto()
    STOPPED = auto()  # signalled, and ended (killed when it outlived the grace period)


@dataclass(frozen=True)
class StopReport:
    """How stopping one run went."""

    what: Stop
    # The run's state (after it stopped, when it did); None: it stopped before it saved one.
    state: LoopState | None = None
    stale_pid: int | None = None  # a run marked running whose process is gone
    orphans_ended: list[int] = field(default_factory=list)  # what a crashed run's action left
    killed: bool = False  # it did not stop within the grace period
    grace: float = GRACE_SECONDS
    seconds: float = 0.0  # how long stopping it took
    pid: int | None = None  # the process that was stopped
    at_handoff: bool = False  # between two processes of an `on_handoff: spawn` chain


def runs_to_stop(runs: Sequence[SavedRun]) -> list[str]:
    """The keys `stop --all` stops among a loop's runs: those running, else every one (each
    then says it is not running)."""
    running = [run.key for run in runs if run.state and run.state.status == Status.RUNNING]
    return running or [run.key for run in runs]


def starting_runs(loops_dir: Path, name: str) -> list[str]:
    """The keys of loop *name*'s runs (`NAME`, `NAME@ID`s) with a start-up marker whose
    `ll-loop` process lives, by key: on their way up, queued, or (a run holds its marker
    until it ends) running. A run starting or queued has no state of its own yet: `stop
    NAME` finds it only so."""
    keys = []
    for key, _ in starting_files(running_dir(loops_dir)):
        if split_run_key(key)[0] != name:
            continue
        marker = read_marker(key, loops_dir)
        if marker is not None and marker.holder() is not None:
            keys.append(key)
    return keys


def stop_run(
    key: str,
    loops_dir: Path,
    grace: float | None = None,
    on_stopping: Callable[[int], None] | None = None,
) -> StopReport:
    """Stop the run whose files are named *key*: SIGTERM, *grace* seconds (GRACE_SECONDS by
    default), then SIGKILL; *on_stopping* hears the pid before the wait begins.

    A run or resume still starting (no state of its own saved yet) is found by its start-up
    marker and stopped the same way. A recorded pid whose process is gone (or is now another
    program) is never signalled; the state file is left as it is (a crashed run stays
    resumable) and what its action left running is ended."""
    persistence = StatePersistence(key, loops_dir)
    state = persistence.load_state()
    if state is None or not can_stop(state, loops_dir) or state.pid is None:
        starting = _stop_starting(key, persistence, state, grace, on_stopping)
        if starting is not None:
            return starting
        # Its marker gone since it was read: the run has saved its state by now.
        state = persistence.load_state()
        if state is None:
            return StopReport(Stop.NO_RUN)
    pid = state.pid
    if not can_stop(state, loops_dir) or pid is None:
        dead = stale_pid(state, loops_dir)
        ended = kill_orphaned_actions(key, dead, fan_out=True) if dead is not None else []
        return StopReport(Stop.NOT_RUNNING, state, stale_pid=dead, orphans_ended=ended)
    if pid == os.getpid():
        return StopReport(Stop.THIS_PROCESS, state)
    grace = GRACE_SECONDS if grace is None else grace
    started = time.monotonic()
    if on_stopping is not None:
        on_stopping(pid)
    stopped = stop_process(persistence, state, grace=grace)
    return StopReport(
        Stop.STOPPED,
        stopped.state,
        killed=stopped.killed,
        grace=grace,
        seconds=time.monotonic() - started,
        pid=pid,
    )


def _stop_starting(
    key: str,
    persistence: StatePersistence,
    state: LoopState | None,
    grace: float | None,
    on_stopping: Callable[[int], None] | None,
) -> StopReport | None:
    """Stop a run or resume of *key* on its way up (its marker written, its run not yet
    marked running by it): SIGTERM, which it keeps until it can stop its run, ending it
    stopped. Between two processes of an `on_handoff: spawn` chain, the one that ended the
    run at the handoff is stopped before it starts the next, and the next (its marker names
    it) before it goes on. None when there is none; a stop request is left then, for the
    `ll-loop run` and `resume` processes that have not written their marker yet (the one of
    this run honours it; `request_stop` says why no later run can take it for itself)."""
    loops_dir = persistence.loops_dir
    ended = (
        state is not None
        and state.terminated_by == Outcome.HANDOFF
        and ll_loop_alive(state.pid, state.pid_start)
    )
    at_handoff = (state.pid, state.pid_start) if ended and state and state.pid else None
    # First: a run or resume writes its marker, then reads this; the process at the handoff
    # reads it before it starts the next.
    request_stop(key, loops_dir, also=[at_handoff[0]] if at_handoff else [])
    marker = read_marker(key, loops_dir)
    holder = (marker.holder() if marker is not None else None) or at_handoff
    if holder is None:
        return None
    # A new run (not a resume): a state saved before it is an earlier run's, not its own.
    fresh = marker is not None and marker.command == RUN and holder != at_handoff
    grace = GRACE_SECONDS if grace is None else grace
    started, killed, first = time.monotonic(), False, holder[0]
    if on_stopping is not None:
        on_stopping(first)
    stopped: list[int] = []
    while holder is not None and len(stopped) < CHAIN_HOPS:
        pid, pid_start = holder
        stopped.append(pid)
        CONTAINMENT.signal_recorded(pid, signal.SIGTERM)
        if not wait_gone(pid, pid_start, grace):
            killed = True
            CONTAINMENT.signal_recorded(pid, signal.SIGKILL, children=True)
            wait_gone(pid, pid_start, KILL_WAIT_SECONDS)
        marker = read_marker(key, loops_dir)  # the next of a chain, if it was started meanwhile
        holder = marker.holder() if marker is not None else None
        if holder is not None and holder[0] in stopped:
            holder = None
    withdraw_stop(key, loops_dir)
    # The marker of a process stopped before it wrote its own state: no start to roll back.
    forget_dead_starts(loops_dir, split_run_key(key)[0], key)
    after = persistence.load_state() or state
    if after is not None and after.status == Status.RUNNING and after.pid in stopped:
        after.status = Outcome.STOPPED.status  # killed: it could not say
        after.terminated_by = Outcome.STOPPED
        persistence.save_state(after)
    if fresh and after is not None and after.pid not in stopped:
        after = None  # it ended before it saved a state of its own: nothing to resume
    seconds = time.monotonic() - started
    return StopReport(
        Stop.STOPPED,
        after,
        killed=killed,
        grace=grace,
        seconds=seconds,
        pid=first,
        at_handoff=state is not None and state.terminated_by == Outcome.HANDOFF,
    )
