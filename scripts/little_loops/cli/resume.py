"""`ll-loop resume NAME`: continue a stopped, interrupted, crashed or handed-off run."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from little_loops.cli.options import (
    RunOptions,
    add_background_flag,
    add_run_flags,
    options_from_args,
)
from little_loops.cli.resolve import project_loops_dir
from little_loops.cli.runref import add_run_argument


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "resume",
        help=summary,
        description="Continue the saved run of a loop: captures, prev, iteration count, "
        "elapsed time and context intact. The state it was in runs again from its start. "
        "Run flags not given again keep the values the run was started with, and the "
        "loop's parameters keep theirs (resume takes no new ones).",
    )
    add_run_argument(parser)
    add_background_flag(parser)
    add_run_flags(parser)
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    return resume_command(args.loop, options_from_args(args), background=args.background)


def resume_command(
    name: str, options: RunOptions, *, background: bool = False, loops_dir: Path | None = None
) -> int:
    """Resume the saved run of NAME in the foreground (or detached); returns the exit code."""
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    from little_loops.cli.runref import run_name
    from little_loops.fsm.facts.layout import split_run_key
    from little_loops.fsm.runs.start_marker import forget_dead_starts

    loop, run_id = split_run_key(name)
    for note in forget_dead_starts(loops_dir, loop, name if run_id is not None else None):
        print(f"ll-loop: note: {note}", file=sys.stderr)
    loop_name = run_name(name, loops_dir, active="resume")
    if background:
        return _resume(name, loop_name, options, loops_dir, background=True)
    from little_loops.fsm.runs.start_marker import RESUME, starting

    # Before anything else: a `stop` from now on finds this resume, and is honoured.
    with starting(loop_name, loops_dir, RESUME) as claim:
        return _resume(name, loop_name, options, loops_dir, stop_pending=claim.stop_pending)


def _resume(
    name: str,
    loop_name: str,
    options: RunOptions,
    loops_dir: Path,
    *,
    background: bool = False,
    stop_pending: Callable[[], bool] | None = None,
) -> int:
    """resume_command's work once the run *loop_name* is known."""
    from little_loops.cli.parameters import resumed_context
    from little_loops.cli.resolve import resolve_loop_path
    from little_loops.cli.runref import named_as_run
    from little_loops.cli.session import run_session
    from little_loops.fsm.facts.safetext import one_line
    from little_loops.fsm.runs.control import check_same_loop, saved_loop_file, saved_run
    from little_loops.fsm.runs.locks import project_root
    from little_loops.fsm.runs.resuming import resumed_loop, saved_place
    from little_loops.fsm.runs.store import StatePersistence
    from little_loops.fsm.validate.loopfile import load_and_validate

    store = StatePersistence(loop_name, loops_dir)
    saved = saved_run(loop_name, loops_dir, store)
    place = saved_place(saved, loops_dir)
    if store.replay_error:  # going on from the snapshot may run its last steps again
        why = one_line(store.replay_error)
        warning = f"ll-loop: warning: resuming from the last snapshot: {why}"
        print(warning, file=sys.stderr)
    # The file the run came from, if it is still there; else look the name up again.
    root = project_root(loops_dir)
    path = saved_loop_file(saved, root) or resolve_loop_path(name, loops_dir)
    from little_loops.fsm.runs.overrides import load_overrides

    recorded = load_overrides(loop_name, loops_dir)  # a run started with --compat goes on so
    fsm = load_and_validate(path, compat=options.compat or bool(recorded and recorded.compat))
    # A run goes by its file's name (`runs_as`); one saved before that, by the file's name:.
    runs_as = named_as_run(fsm, path).name
    check_same_loop(saved.loop_name, fsm.name if saved.loop_name == fsm.name else runs_as, path)
    given = options
    fsm, options = resumed_loop(fsm, saved, place, given, loops_dir, loop_name)
    fsm = dataclasses.replace(fsm, context=resumed_context(fsm, saved.context))
    from little_loops.fsm.runs.preflight import require

    found = require(fsm, start=saved.current_state)  # before its next step, as for `run`
    for skipped in found.warnings:
        print(f"ll-loop: warning: {skipped}", file=sys.stderr)
    from little_loops.fsm.runs.spend_check import require_counted

    for uncounted in require_counted(fsm, start=saved.current_state, skipped=found.skipped):
        print(f"ll-loop: warning: {uncounted}", file=sys.stderr)
    if background:
        from little_loops.cli.background import start_background
        from little_loops.fsm.runs.resuming import resumable_state

        resumable_state(fsm, store)  # refused here, not in the log, when it cannot go on

        # The detached resume merges the saved flags itself: it gets only those given here.
        scope = fsm.effective_scope()
        return start_background(
            loop_name,
            loop_name,
            scope,
            given,
            loops_dir.resolve(),
            command="resume",
            root=place.workdir if place.in_worktree else None,
        )
    return run_session(
        fsm,
        path,
        options,
        loops_dir.resolve(),
        resume=True,
        place=place,
        stop_pending=stop_pending,
        unready=found.skipped,
    )
