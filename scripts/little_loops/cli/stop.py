"""`ll-loop stop NAME`: end a running loop (foreground or background) and its action."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from little_loops.cli.resolve import LOOPS_DIR

GRACE_SECONDS = 3.0  # how long the loop gets to stop its action and save its state
KILL_WAIT_SECONDS = 1.0
_POLL = 0.05


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "stop",
        help="stop a running loop (it can be resumed)",
        description="Send SIGTERM to the loop's process, wait up to 3 s for it to stop its "
        "action and save its state, then SIGKILL it and its action's process group.",
    )
    parser.add_argument("loop", metavar="NAME", help="loop name")
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    return stop_command(args.loop)


def _wait_gone(pid: int, pid_start: int | None, seconds: float) -> bool:
    from little_loops.fsm.runs.pids import pid_alive

    deadline = time.monotonic() + seconds
    while pid_alive(pid, pid_start):
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL)
    return True


def stop_command(
    name: str,
    *,
    loops_dir: Path = LOOPS_DIR,
    grace: float = GRACE_SECONDS,
) -> int:
    """Stop the run of NAME; 0 when it is gone, 1 when there was nothing running to stop.

    A recorded pid whose process is gone (or is now another program) is reported, never
    signalled, and the state file is left as it is (a crashed run stays resumable).
    """
    from little_loops.cli.runref import run_name
    from little_loops.fsm.runs.outcomes import ExitCode, Outcome, Status
    from little_loops.fsm.runs.pids import pid_alive
    from little_loops.fsm.runs.proctree import signal_children
    from little_loops.fsm.runs.store import StatePersistence

    loop_name = run_name(name, loops_dir)
    persistence = StatePersistence(loop_name, loops_dir)
    state = persistence.load_state()
    if state is None:
        print(f"ll-loop: loop '{loop_name}' is not running (it has no saved run)", file=sys.stderr)
        return ExitCode.FAILED
    pid = state.pid
    if state.status != Status.RUNNING or pid is None or not pid_alive(pid, state.pid_start):
        stale = f"stale pid {pid}; " if pid is not None and state.status == Status.RUNNING else ""
        hint = (
            f"; resume it with 'll-loop resume {loop_name}'"
            if state.status == Status.RUNNING
            else ""
        )
        print(
            f"ll-loop: loop '{loop_name}' is not running ({stale}last status: {state.status})"
            f"{hint}",
            file=sys.stderr,
        )
        if stale and pid is not None:
            from little_loops.fsm.runs.orphans import kill_orphaned_actions

            ended = kill_orphaned_actions(loop_name, pid)
            if ended:
                print(
                    f"ll-loop: ended {len(ended)} process(es) its action left running "
                    f"(pids {', '.join(map(str, ended))})",
                    file=sys.stderr,
                )
        return ExitCode.FAILED
    if pid == os.getpid():
        print(f"ll-loop: loop '{loop_name}' is this process; not stopping it", file=sys.stderr)
        return ExitCode.FAILED

    started = time.monotonic()
    print(f"stopping loop '{loop_name}' (pid {pid})...", file=sys.stderr)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    how: str = Outcome.STOPPED
    if not _wait_gone(pid, state.pid_start, grace):
        # Children first: once the loop is gone its action is reparented and harder to find.
        signal_children(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        _wait_gone(pid, state.pid_start, KILL_WAIT_SECONDS)
        how = f"killed (it did not stop within {grace:g}s)"
    after = persistence.load_state()
    if after is not None and after.status == Status.RUNNING and after.pid == pid:
        # The loop could not record its own end (killed): record it for it.
        after.status = Outcome.STOPPED.status
        after.terminated_by = Outcome.STOPPED
        persistence.save_state(after)
    elapsed = time.monotonic() - started
    print(
        f"loop '{loop_name}' {how} in {elapsed:.1f}s in state "
        f"'{(after or state).current_state}'; continue with: ll-loop resume {loop_name}",
        file=sys.stderr,
    )
    return ExitCode.OK
