"""Resuming a saved run: whether it can go on, where it ran, the loop and flags it goes on with."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TypeVar

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import LoopDefinitionError, LoopRuntimeError
from little_loops.fsm.facts.outcomes import Outcome, Status, can_resume, how_to_go_on
from little_loops.fsm.facts.runfile import display_path
from little_loops.fsm.facts.safetext import shown
from little_loops.fsm.facts.spend import Spend, dollars, format_cost
from little_loops.fsm.runs.liveness import run_alive
from little_loops.fsm.runs.overrides import RunFlags, apply_overrides, resumed_flags
from little_loops.fsm.runs.place import RunPlace
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.store import StatePersistence

_Flags = TypeVar("_Flags", bound=RunFlags)


def saved_place(saved: LoopState, loops_dir: Path) -> RunPlace:
    """Where the saved run ran: its worktree must still be there to go on in it."""
    place = RunPlace.of_state(saved.run_id, saved.worktree, loops_dir, saved.loop_name)
    if place.path is not None and not (place.workdir or place.path).is_dir():
        raise LoopRuntimeError(
            f"run {saved.ref} ran in worktree {display_path(place.path)}, which is gone;"
            f" start it again with 'll-loop run {saved.loop_name} --worktree'"
        )
    return place


def resumed_loop(
    fsm: FSMLoop, saved: LoopState, place: RunPlace, given: _Flags, loops_dir: Path, key: str
) -> tuple[FSMLoop, _Flags]:
    """The loop a resume of the run *key* goes on with and the flags it runs with.

    The loop (as its file reads now) takes the saved run's name, its checkpoints are checked
    again for where the run is (the file may have changed since), and the flags the run was
    started with apply, with those *given* again on top (each merged as its row says)."""
    from little_loops.fsm.engine.commits import checkpoint_problem

    fsm = dataclasses.replace(fsm, name=saved.loop_name)
    problem = checkpoint_problem(fsm, place.in_worktree)
    if problem is not None:
        raise LoopDefinitionError(problem)
    flags = resumed_flags(key, loops_dir, given)
    return apply_overrides(fsm, flags), flags


def resumable_state(fsm: FSMLoop, persistence: StatePersistence) -> LoopState:
    """The saved run of *fsm*, if it can be resumed now; else LoopRuntimeError says why not."""
    persistence.initialize()
    saved = persistence.load_state()
    name = fsm.name
    if saved is None:
        raise LoopRuntimeError(
            f"loop '{name}' has no saved run to resume; start it with 'll-loop run {name}'"
        )
    if not can_resume(saved.status, saved.terminated_by):
        how = "completed" if saved.status == Status.COMPLETED else f"ended ({saved.status})"
        why = f": {shown(saved.error)}" if saved.error else ""
        raise LoopRuntimeError(
            f"loop '{name}' {how}{why}; nothing to resume, start it again with 'll-loop run {name}'"
        )
    if saved.status == Status.FAILED:
        reached = limit_still_reached(fsm, saved)
        if reached is not None:
            raise LoopRuntimeError(reached)
    if (
        saved.status == Status.RUNNING
        and saved.pid != os.getpid()
        and run_alive(saved, persistence.loops_dir)
    ):
        raise LoopRuntimeError(
            f"loop '{name}' is still running (pid {saved.pid}); stop it first with "
            f"'ll-loop stop {name}'"
        )
    return saved


def limit_still_reached(fsm: FSMLoop, saved: LoopState) -> str | None:
    """Why a run that ended at a limit cannot go on yet, or None once the limit is raised."""
    name = fsm.name
    hint = how_to_go_on(saved.terminated_by, name)
    if saved.terminated_by == Outcome.BUDGET:
        limit = fsm.max_cost_usd
        if limit is not None and Spend(cost_usd=saved.cost_usd).reached(limit):
            return (
                f"loop '{name}' has spent {format_cost(saved.cost_usd)} of its"
                f" {dollars(limit)} budget; "
                f"to go on: {hint}"
            )
    elif saved.terminated_by == Outcome.MAX_ITERATIONS:
        if saved.iteration >= fsm.max_iterations:
            return (
                f"loop '{name}' has run {saved.iteration} of its {fsm.max_iterations} "
                f"iterations; to go on: {hint}"
            )
    elif saved.terminated_by == Outcome.MAX_STEPS:
        steps = int(saved.caps.get("steps") or 0)
        if fsm.max_steps is not None and steps >= fsm.max_steps:
            return f"loop '{name}' has run {steps} of its {fsm.max_steps} steps; to go on: {hint}"
    elif fsm.timeout is not None and saved.elapsed_ms >= fsm.timeout * 1000:
        return (
            f"loop '{name}' has run {saved.elapsed_ms / 1000:g}s of its {fsm.timeout:g}s "
            f"timeout; to go on: {hint}"
        )
    return None
