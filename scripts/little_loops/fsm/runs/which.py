"""Which run a NAME or NAME@ID means, among the saved runs of a loop under `.loops/.running/`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from little_loops.fsm.facts.errors import LoopDefinitionError, LoopError, LoopRuntimeError
from little_loops.fsm.facts.layout import (
    RUN_KEY_SEPARATOR,
    running_dir,
    split_run_key,
    state_files,
    validate_loop_name,
)
from little_loops.fsm.facts.outcomes import can_resume
from little_loops.fsm.runs.state import LoopState


class AmbiguousRunError(LoopRuntimeError):
    """A NAME with several runs going, where a command needs one: they are in `runs`."""

    def __init__(self, message: str, runs: list[SavedRun]) -> None:
        super().__init__(message)
        self.runs = runs


@dataclass(frozen=True)
class SavedRun:
    """One run of a loop with a state file: its key, and its state (None: unreadable)."""

    key: str
    state: LoopState | None

    @property
    def ref(self) -> str:
        """How to name it on the command line: `NAME@ID` (its key if it has no id)."""
        return self.key if self.state is None else self.state.ref

    @property
    def going(self) -> bool:
        """It runs, or `resume` can continue it (a limit reached counts: it can be raised)."""
        state = self.state
        return state is not None and can_resume(state.status, state.terminated_by)


def keys_of(loops_dir: Path, name: str) -> list[str]:
    """The keys of the runs of loop *name* with a state file: `NAME` and `NAME@ID`s."""
    try:
        validate_loop_name(name)
    except LoopDefinitionError:
        return []
    return [
        key
        for key, _ in state_files(running_dir(loops_dir))
        if key == name
        or (key.startswith(name + RUN_KEY_SEPARATOR) and split_run_key(key)[0] == name)
    ]


def runs_of(loops_dir: Path, name: str, keys: list[str] | None = None) -> list[SavedRun]:
    """The runs of loop *name* with a state file (those of *keys*), oldest first
    (unreadable ones first)."""
    from little_loops.fsm.runs.store import StatePersistence

    found = []
    for key in keys_of(loops_dir, name) if keys is None else keys:
        try:
            state = StatePersistence(key, loops_dir).load_state()
        except LoopError:
            state = None
        found.append(SavedRun(key, state))
    found.sort(key=lambda run: "" if run.state is None else run.state.started_at)
    return found


def pick_run(
    loops_dir: Path,
    name: str,
    run_id: str | None,
    *,
    active: str | None = None,
) -> str:
    """The key of the run of *name* with *run_id*; without one, of its only run or latest
    run, or (for the command *active*, e.g. `stop`) of its one run still going. *name* itself
    when it has no runs and no id is asked for. LoopRuntimeError when none or several match.
    The state files are read only when there is a choice to make."""
    keys = keys_of(loops_dir, name)
    if run_id is None and len(keys) < 2:
        return keys[0] if keys else name
    runs = runs_of(loops_dir, name, keys)
    if run_id is not None:
        for run in runs:
            if split_run_key(run.key)[1] == run_id or (
                run.state is not None and run.state.run_id == run_id
            ):
                return run.key
        known = ", ".join(run.ref for run in runs) or "none"
        raise LoopRuntimeError(
            f"loop '{name}' has no run '{run_id}' (its runs: {known}; see ll-loop list)"
        )
    if active is not None:
        going = [run for run in runs if run.going]
        if len(going) > 1:
            refs = ", ".join(run.ref for run in going)
            raise AmbiguousRunError(
                f"loop '{name}' has {len(going)} runs going ({refs}); name one,"
                f" e.g. 'll-loop {active} {going[-1].ref}'",
                going,
            )
        if going:
            return going[0].key
    return runs[-1].key


def forget_finished(loops_dir: Path, name: str) -> list[str]:
    """Delete the run files of *name*'s worktree runs that ended and whose worktree is gone
    (merged, discarded, or removed as it changed nothing): the archive keeps them. The refs
    of the runs forgotten."""
    from little_loops.fsm.facts.layout import output_files, run_files
    from little_loops.fsm.runs.store import StatePersistence

    forgotten = []
    in_worktrees = [key for key in keys_of(loops_dir, name) if key != name]
    for run in runs_of(loops_dir, name, in_worktrees) if in_worktrees else []:
        state = run.state
        if state is None or state.worktree is None or run.going:
            continue
        if Path(state.worktree.get("path", "")).exists():
            continue
        files = run_files(run.key, loops_dir)
        StatePersistence(run.key, loops_dir).clear_all()
        for path in (
            files.options,
            files.stop_request,
            files.log,
            files.approval,
            files.approval_taken,
            files.definition,
            *output_files(files.running_dir, run.key),
        ):
            path.unlink(missing_ok=True)
        forgotten.append(run.ref)
    return forgotten
