"""Resuming a saved run: where it ran, the loop it goes on with, the flags it keeps."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TypeVar

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import LoopDefinitionError, LoopRuntimeError
from little_loops.fsm.facts.runfile import display_path
from little_loops.fsm.runs.overridden import apply_overrides
from little_loops.fsm.runs.overrides import RunFlags, resumed_flags
from little_loops.fsm.runs.place import RunPlace
from little_loops.fsm.runs.state import LoopState

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
