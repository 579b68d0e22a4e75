"""`ll-loop stop NAME`: end a running loop (foreground or background) and its action."""

from __future__ import annotations

import argparse
import sys
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
    from little_loops.fsm.facts.errors import LoopError
    from little_loops.fsm.facts.layout import split_run_key
    from little_loops.fsm.runs.stopping import runs_to_stop, starting_runs
    from little_loops.fsm.runs.which import AmbiguousRunError

    try:
        keys = [run_name(name, loops_dir, active="stop")]
    except AmbiguousRunError as exc:
        if not every:
            raise AmbiguousRunError(f"{exc} (or --all)", exc.runs) from None
        keys = runs_to_stop(exc.runs)
    except LoopError:  # no state, nor (for a PATH's run) a loop file: it may be starting
        loop, run_id = split_run_key(name)
        starting = starting_runs(loops_dir, loop)
        if not starting or (run_id is not None and name not in starting):
            raise
        keys = [name] if run_id is not None else starting[:1]
    if split_run_key(name)[1] is None:  # a bare NAME: it may mean a run with no state yet
        keys = with_starting(keys, loops_dir, every)
    codes = [_stop_one(key, loops_dir, grace) for key in keys]
    return max(codes)


def with_starting(keys: list[str], loops_dir: Path, every: bool) -> list[str]:
    """The runs a bare NAME stops once its runs still starting are counted in (*keys*: what
    its saved runs say NAME means). A NAME with no run running and one starting means that
    one; a run running and one starting, or several starting, are several runs going:
    refused unless *every* (`--all`), which stops them all. A key in both is one run (a new
    run of `NAME` starting where an ended one's state still is)."""
    from little_loops.fsm.facts.layout import split_run_key
    from little_loops.fsm.runs.control import can_stop
    from little_loops.fsm.runs.stopping import starting_runs
    from little_loops.fsm.runs.which import AmbiguousRunError, SavedRun, runs_of

    loop = split_run_key(keys[0])[0]
    starting = starting_runs(loops_dir, loop)
    if all(key in keys for key in starting):
        return keys
    saved = runs_of(loops_dir, loop, [key for key in keys if key not in starting])
    running = [run for run in saved if run.state and can_stop(run.state, loops_dir)]
    if every:
        return [run.key for run in running] + starting
    if not running and len(starting) == 1:
        return starting
    going = [*running, *(SavedRun(key, None) for key in starting)]
    refs = ", ".join(run.ref for run in going)
    raise AmbiguousRunError(
        f"loop '{loop}' has {len(going)} runs going ({refs}); name one,"
        f" e.g. 'll-loop stop {going[-1].ref}' (or --all)",
        going,
    )


def _stop_one(loop_name: str, loops_dir: Path, grace: float | None) -> int:
    """Stop the run whose files are named *loop_name* (its key), and say how it went."""
    from little_loops.fsm.facts.outcomes import ExitCode, Outcome, Status
    from little_loops.fsm.facts.safetext import one_line
    from little_loops.fsm.runs.stopping import Stop, stop_run

    shown = one_line(loop_name)  # C1 controls are not refused in names: escape them

    def stopping(pid: int) -> None:
        print(f"stopping loop '{shown}' (pid {pid})...", file=sys.stderr)

    report = stop_run(loop_name, loops_dir, grace, on_stopping=stopping)
    state = report.state
    if report.what is Stop.NO_RUN:
        # A stop request may be left for an ll-loop starting right now (runs/stopping.py).
        print(f"ll-loop: loop '{shown}' is not running (it has no saved run)", file=sys.stderr)
        return ExitCode.FAILED
    if state is None:  # stopped (or killed) while starting: it had saved nothing yet
        how = f"killed (it did not stop within {report.grace:g}s)" if report.killed else "stopped"
        print(
            f"loop '{shown}' {how} in {report.seconds:.1f}s while starting, before its first"
            f" step (nothing to resume; start it again with 'll-loop run {shown}')",
            file=sys.stderr,
        )
        return ExitCode.OK
    if report.what is Stop.NOT_RUNNING:
        pid, running = state.pid, state.status == Status.RUNNING
        stale = f"stale pid {pid}; " if pid is not None and running else ""
        hint = f"; resume it with 'll-loop resume {shown}'" if running else ""
        print(
            f"ll-loop: loop '{shown}' is not running ({stale}last status: {state.status}){hint}",
            file=sys.stderr,
        )
        if report.orphans_ended:
            print(
                f"ll-loop: ended {len(report.orphans_ended)} process(es) its action left running "
                f"(pids {', '.join(map(str, report.orphans_ended))})",
                file=sys.stderr,
            )
        return ExitCode.FAILED
    if report.what is Stop.THIS_PROCESS:
        print(f"ll-loop: loop '{shown}' is this process; not stopping it", file=sys.stderr)
        return ExitCode.FAILED
    how = f"killed (it did not stop within {report.grace:g}s)" if report.killed else Outcome.STOPPED
    if report.at_handoff:  # its next process not started, or stopped before it went on
        how = f"{how} at a context handoff (its on_handoff: spawn chain goes no further)"
    print(
        f"loop '{shown}' {how} in {report.seconds:.1f}s in state "
        f"'{one_line(state.current_state)}'; continue with: ll-loop resume {shown}",
        file=sys.stderr,
    )
    return ExitCode.OK
