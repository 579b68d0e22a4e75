"""Run or resume a loop in this process: claim its scope, handle signals, persist as it goes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.definition.model import FSMLoop
from little_loops.fsm.engine.executor import EventCallback
from little_loops.fsm.engine.records import ExecutionResult
from little_loops.fsm.runs.locks import LockHandle, acquire_scope, project_root
from little_loops.fsm.runs.overrides import Overrides, save_overrides
from little_loops.fsm.runs.resumable import PersistentExecutor
from little_loops.fsm.runs.signals import ShutdownSignals
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.store import StatePersistence


def run_in_foreground(
    fsm: FSMLoop,
    loop_path: str,
    loops_dir: Path,
    *,
    overrides: Overrides,
    event_callback: EventCallback,
    on_note: Callable[[str], None],
    queue: bool = False,
    resume: bool = False,
    on_restored: Callable[[LoopState], None] | None = None,
) -> ExecutionResult:
    """Run (or resume) `fsm` with its state under `loops_dir`; returns how it ended.

    Claims the loop's scope first (waiting under `queue`; `on_note` hears of the wait and of
    stale claims reclaimed), records `overrides` for a later resume, and runs with the
    handlers of `ShutdownSignals`. The lock is released and the previous signal handlers are
    back however the run ends. `on_restored` hears of the saved run a resume goes on from.
    """
    lock = acquire_scope(fsm.name, fsm.effective_scope(), loops_dir, queue=queue, on_wait=on_note)
    try:
        for note in lock.reclaimed:
            on_note(note)
        runner = DefaultActionRunner(cwd=project_root(loops_dir))
        executor = PersistentExecutor(
            fsm,
            StatePersistence(fsm.name, loops_dir),
            loop_path=loop_path,
            event_callback=event_callback,
            action_runner=runner,
            on_note=on_note,
            on_files_lost=lambda: _restore_lock(lock, on_note),
        )
        executor.executor.wait_approval = overrides.wait_approval
        executor.executor.stall.cwd = project_root(loops_dir)  # no_change_passes looks here
        try:
            with ShutdownSignals(executor.request_shutdown):
                if not resume:
                    save_overrides(fsm.name, loops_dir, overrides)
                    return executor.run()

                def restored(saved: LoopState) -> None:
                    # The flags in force (the saved ones, with any given again on top), so a
                    # later resume goes on with the same limits.
                    save_overrides(fsm.name, loops_dir, overrides)
                    if on_restored is not None:
                        on_restored(saved)

                return executor.resume(restored)
        finally:
            runner.close()
    finally:
        lock.release()


def _restore_lock(lock: LockHandle, on_note: Callable[[str], None]) -> None:
    problem = lock.restore()
    if problem is not None:
        on_note(problem)
