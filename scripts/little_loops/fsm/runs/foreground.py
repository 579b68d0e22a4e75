"""Run or resume a loop in this process: claim its scope, handle signals, persist as it goes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.engine.executor import EventCallback, ExecutorConfig
from little_loops.fsm.engine.records import ExecutionResult
from little_loops.fsm.facts.outcomes import Outcome
from little_loops.fsm.processes.gitcmd import forget_git_location
from little_loops.fsm.runs.locks import LockHandle, acquire_scope, project_root
from little_loops.fsm.runs.overrides import RunFlags, save_overrides
from little_loops.fsm.runs.persistent import PersistentExecutor
from little_loops.fsm.runs.place import RunPlace
from little_loops.fsm.runs.signals import ShutdownSignals
from little_loops.fsm.runs.state import LoopState


@dataclass(frozen=True)
class ForegroundRun:
    """A run (or, with *resume*, a resume) of *fsm* in this process: its file, its
    `.loops/`, the run flags (*overrides*, recorded for a later resume; `queue` waits for
    the scope), its *place* (id and worktree: its actions run in the worktree, the scope is
    its), and *unready*: agents of fallback lists the preflight found unable to run here
    (never started by this run)."""

    fsm: FSMLoop
    loop_path: str
    loops_dir: Path
    overrides: RunFlags
    resume: bool = False
    place: RunPlace | None = None
    unready: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Told:
    """What the caller of a foreground run hears and is asked: its *events*, its *notes*
    (the wait for the scope, stale claims reclaimed), the saved run a resume goes on from
    (*restored*), and *stop_pending*: a run or resume asks it once its signal handlers are
    in place, and a `stop` that came while it was starting ends it, stopped, before its
    next step."""

    events: EventCallback
    note: Callable[[str], None]
    restored: Callable[[LoopState], None] | None = None
    stop_pending: Callable[[], bool] | None = None
    under_way: Callable[[], None] | None = None  # told once its handlers are in place


def run_in_foreground(run: ForegroundRun, told: Told) -> ExecutionResult:
    """Run (or resume) *run*'s loop with its state under its `.loops/`; returns how it ended.

    Claims the loop's scope first, records the flags for a later resume, and runs with the
    handlers of `ShutdownSignals`. The lock is released and the previous signal handlers are
    back however the run ends.
    """
    fsm, loops_dir, place, overrides = run.fsm, run.loops_dir, run.place, run.overrides
    on_note, on_restored, stop_pending = told.note, told.restored, told.stop_pending
    under_way = told.under_way
    key = fsm.name if place is None else place.key(fsm.name)
    workdir = project_root(loops_dir) if place is None or place.workdir is None else place.workdir
    root = None if place is None or not place.in_worktree else workdir
    if root is not None:  # a hook's GIT_DIR or GIT_INDEX_FILE would make git in the
        forget_git_location()  # worktree read and write the main checkout's repository
    scope = fsm.effective_scope()
    lock = acquire_scope(
        key,
        scope,
        loops_dir,
        # Queued, a SIGTERM (a `stop`, `timeout`) ends the wait: it kept it for the run.
        queue=overrides.queue and (stop_pending or True),
        on_wait=on_note,
        root=root,
        singleton=fsm.singleton,
        own_branches=run.resume,  # a fan-out's branches still running, from before a crash
    )
    try:
        for note in lock.reclaimed:
            on_note(note)
        runner = DefaultActionRunner(cwd=workdir)
        executor = PersistentExecutor(
            fsm,
            loops_dir=loops_dir,
            place=place,  # its files are named by it; commit: and rollback: work in its tree
            loop_path=run.loop_path,
            event_callback=told.events,
            action_runner=runner,
            on_note=on_note,
            on_files_lost=lambda: _restore_lock(lock, on_note),
            config=_config(overrides, workdir, loops_dir, run.unready),
        )
        try:
            with ShutdownSignals(executor.request_shutdown):
                if under_way is not None:
                    under_way()
                if not run.resume:
                    save_overrides(key, loops_dir, overrides)
                    if stop_pending is not None and stop_pending():
                        executor.request_shutdown(Outcome.STOPPED)  # before its first step
                    result = executor.run()
                else:

                    def restored(saved: LoopState) -> None:
                        # The flags in force (the saved ones, with any given again on top),
                        # so a later resume goes on with the same limits.
                        save_overrides(key, loops_dir, overrides)
                        if on_restored is not None:
                            on_restored(saved)
                        if stop_pending is not None and stop_pending():
                            executor.request_shutdown(Outcome.STOPPED)

                    result = executor.resume(restored)
        finally:
            runner.close()
        if place is not None and place.in_worktree:
            _finish_worktree(loops_dir, fsm.name, place, result, on_note)
        return result
    finally:
        lock.release()


def _finish_worktree(
    loops_dir: Path,
    loop_name: str,
    place: RunPlace,
    result: ExecutionResult,
    on_note: Callable[[str], None],
) -> None:
    """A run that ended leaves its worktree if it made changes, else removes it; one that
    can go on (stopped, interrupted, awaiting approval, a limit reached) keeps it for
    `resume`."""
    from little_loops.fsm.facts.outcomes import can_resume, outcome_of

    if can_resume(outcome_of(result.terminated_by).status, result.terminated_by):
        return
    from little_loops.fsm.facts.errors import LoopError
    from little_loops.fsm.runs.worktrees import finish_worktree

    try:
        on_note(finish_worktree(loops_dir, loop_name, place))
    except LoopError as exc:  # the run's outcome stands; the worktree is left as it is
        on_note(f"the worktree was left as it is: {exc}")


def _restore_lock(lock: LockHandle, on_note: Callable[[str], None]) -> None:
    problem = lock.restore()
    if problem is not None:
        on_note(problem)


def _config(
    overrides: RunFlags, workdir: Path, loops_dir: Path, unready: Mapping[str, str] | None
) -> ExecutorConfig:
    """The executor's options of a run whose actions run in *workdir*: no_change_passes
    looks at that tree (a sandboxed step writes it and only reads `.loops/`); *unready*
    agents are never started."""
    return ExecutorConfig(
        wait_approval=overrides.wait_approval,
        stall_cwd=workdir,
        workdir=workdir,
        loops_dir=loops_dir,
        unready=dict(unready or {}),
    )
