"""`ll-loop stop NAME`: end a running loop (foreground or background) and its action."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from little_loops.cli.resolve import project_loops_dir
from little_loops.cli.runref import add_run_argument


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "stop",
        help=summary,
        description="Send SIGTERM to the loop's process, wait up to 5 s for it to stop its "
        "action and save its state, then SIGKILL it, its action's process group and what "
        "the action left running.",
    )
    add_run_argument(parser)
    parser.add_argument(
        "--all", action="store_true", help="stop every running run of NAME (it has several)"
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    return stop_command(args.loop, every=args.all)


def stop_command(
    name: str,
    *,
    loops_dir: Path | None = None,
    grace: float | None = None,
    every: bool = False,
) -> int:
    """Stop the run of NAME (NAME@ID); 0 when it is gone, 1 when there was nothing running
    to stop. A NAME with several runs going is refused unless *every* (`--all`) is given.

    A recorded pid whose process is gone (or is now another program) is reported, never
    signalled, and the state file is left as it is (a crashed run stays resumable). The
    loop gets `grace` seconds (GRACE_SECONDS by default) to stop before it is killed.
    """
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    from little_loops.cli.runref import run_name
    from little_loops.fsm.facts.outcomes import Status
    from little_loops.fsm.runs.which import AmbiguousRunError

    try:
        keys = [run_name(name, loops_dir, active="stop")]
    except AmbiguousRunError as exc:
        if not every:
            raise AmbiguousRunError(f"{exc} (or --all)", exc.runs) from None
        running = [r.key for r in exc.runs if r.state and r.state.status == Status.RUNNING]
        keys = running or [run.key for run in exc.runs]
    codes = [_stop_one(key, loops_dir, grace) for key in keys]
    return max(codes)


def _stop_one(loop_name: str, loops_dir: Path, grace: float | None) -> int:
    """Stop the run whose files are named *loop_name* (its key)."""
    from little_loops.fsm.facts.outcomes import ExitCode, Outcome, Status
    from little_loops.fsm.facts.safetext import one_line
    from little_loops.fsm.runs.control import GRACE_SECONDS, can_stop, stale_pid, stop_process
    from little_loops.fsm.runs.orphans import kill_orphaned_actions
    from little_loops.fsm.runs.store import StatePersistence

    shown = one_line(loop_name)  # C1 controls are not refused in names: escape them
    persistence = StatePersistence(loop_name, loops_dir)
    state = persistence.load_state()
    if state is None:
        print(f"ll-loop: loop '{shown}' is not running (it has no saved run)", file=sys.stderr)
        return ExitCode.FAILED
    pid = state.pid
    if not can_stop(state, loops_dir) or pid is None:
        dead = stale_pid(state, loops_dir)
        stale = f"stale pid {pid}; " if pid is not None and state.status == Status.RUNNING else ""
        hint = (
            f"; resume it with 'll-loop resume {shown}'" if state.status == Status.RUNNING else ""
        )
        print(
            f"ll-loop: loop '{shown}' is not running ({stale}last status: {state.status}){hint}",
            file=sys.stderr,
        )
        if dead is not None:
            ended = kill_orphaned_actions(loop_name, dead)
            if ended:
                print(
                    f"ll-loop: ended {len(ended)} process(es) its action left running "
                    f"(pids {', '.join(map(str, ended))})",
                    file=sys.stderr,
                )
        return ExitCode.FAILED
    if pid == os.getpid():
        print(f"ll-loop: loop '{shown}' is this process; not stopping it", file=sys.stderr)
        return ExitCode.FAILED

    grace = GRACE_SECONDS if grace is None else grace
    started = time.monotonic()
    print(f"stopping loop '{shown}' (pid {pid})...", file=sys.stderr)
    stopped = stop_process(persistence, state, grace=grace)
    how = f"killed (it did not stop within {grace:g}s)" if stopped.killed else Outcome.STOPPED
    elapsed = time.monotonic() - started
    print(
        f"loop '{shown}' {how} in {elapsed:.1f}s in state "
        f"'{one_line(stopped.state.current_state)}'; continue with: ll-loop resume {shown}",
        file=sys.stderr,
    )
    return ExitCode.OK
