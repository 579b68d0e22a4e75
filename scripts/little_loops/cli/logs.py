"""`ll-loop logs NAME [STATE]`: the output of a run's latest step, Claude sessions as text."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path
from typing import Any

from little_loops.cli.resolve import project_loops_dir
from little_loops.cli.runref import add_run_argument, add_run_option
from little_loops.fsm.facts.events import Event

FOLLOW_POLL_SECONDS = 0.2


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "logs",
        help=summary,
        description="Print the output of the latest step of a loop's current run (or of "
        "STATE's latest step): a shell action's stdout then stderr, a Claude session as a "
        "readable transcript.",
    )
    add_run_argument(parser)
    parser.add_argument("state", metavar="STATE", nargs="?", help="the state whose step to show")
    add_run_option(parser)
    parser.add_argument(
        "--branch",
        metavar="B",
        help="a fan-out branch of the run (its index, item, run NAME@ID or git branch, as "
        "`status` lists them): show that branch's own run's step instead",
    )
    parser.add_argument(
        "-f",
        "--follow",
        action="store_true",
        help="keep printing what the step writes while the run is live; end when it ends",
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    if args.run_id is not None and args.follow:
        from little_loops.fsm.facts.errors import LoopRuntimeError

        raise LoopRuntimeError("--follow shows a live run; an archived run (--run) has ended")
    if args.branch is not None:
        loops_dir = project_loops_dir()
        key = branch_run(args.loop, args.branch, loops_dir, args.run_id)
        return logs_command(key, args.state, follow=args.follow, loops_dir=loops_dir)
    return logs_command(args.loop, args.state, follow=args.follow, run_id=args.run_id)


def branch_run(name: str, wanted: str, loops_dir: Path, run_id: str | None = None) -> str:
    """The run key of the fan-out branch *wanted* of run NAME (its archived run *run_id*);
    LoopRuntimeError, listing the branches there are, when none is so named."""
    from little_loops.cli.runref import shown_run
    from little_loops.fsm.facts.errors import LoopRuntimeError
    from little_loops.fsm.facts.safetext import one_line
    from little_loops.fsm.runs.fanned import from_events, pick
    from little_loops.fsm.runs.store import StatePersistence

    loop_name, folder = shown_run(name, run_id, loops_dir)
    views = from_events(
        StatePersistence(loop_name, loops_dir, folder=folder).iter_events(), loop_name
    )
    found = pick(views, wanted)
    if found is not None:
        return found.key
    listed = ", ".join(f"{v.index} {v.item} ({v.key})" if v.item else v.key for v in views)
    there = f"its branches: {listed}" if views else "it ran no fan-out state"
    raise LoopRuntimeError(f"run '{loop_name}' has no branch '{one_line(wanted)}'; {there}")


def latest_step(
    loop_name: str, state: str | None, loops_dir: Path, folder: Path | None = None
) -> dict[str, Any] | None:
    """The `action_start` event of the run's latest step (of *state*, when given), or None;
    the run archived in *folder* when given."""
    from little_loops.fsm.runs.store import StatePersistence

    found = None
    for event in StatePersistence(loop_name, loops_dir, folder=folder).iter_events():
        if event.get("event") == Event.ACTION_START and state in (None, event.get("state")):
            found = event
    return found


def logs_command(
    name: str,
    state: str | None = None,
    *,
    follow: bool = False,
    loops_dir: Path | None = None,
    run_id: str | None = None,
) -> int:
    """Print the output of NAME's latest step (of STATE's) in its current run (its archived
    run *run_id*); 1 when there is none."""
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    from little_loops.cli.outputtail import OutputTail
    from little_loops.cli.runref import shown_run
    from little_loops.fsm.actions.registry import DEFAULT_KIND, recorded
    from little_loops.fsm.facts.outcomes import ExitCode
    from little_loops.fsm.facts.runfile import display_path, open_run_stream

    loop_name, folder = shown_run(name, run_id, loops_dir)
    start = latest_step(loop_name, state, loops_dir, folder)
    path = start.get("output_path") if start is not None else None
    if folder is None:  # an event is data: only an output file of the run is read
        from little_loops.fsm.facts.owned import run_output

        path = run_output(path, loop_name, loops_dir)
    from little_loops.fsm.facts.safetext import one_line

    if start is None or not isinstance(path, str):
        of = f" of state '{one_line(state)}'" if state is not None else ""
        print(f"ll-loop: loop '{loop_name}' has no step output{of} yet", file=sys.stderr)
        return ExitCode.FAILED
    if folder is not None:  # the archive keeps the output under the same file name
        path = str(folder / Path(path).name)
    kind = recorded(start.get("action_type"), start.get("agent"))
    tail = OutputTail(path, kind.readable if kind else None, from_start=True)
    for planted in tail.paths:  # a link or a FIFO at an output file's name: one line, exit 1
        with contextlib.suppress(FileNotFoundError), open_run_stream(planted):
            pass
    agent = start.get("agent")
    # A loop's own agent is no kind of the registry: named as its kind names a call of it.
    label = f"{agent} call" if kind is None and isinstance(agent, str) else None
    step = f"state {start.get('state')}, {label or (kind or DEFAULT_KIND).label}"
    print(f"==> {one_line(display_path(path))} ({one_line(step)}) <==")
    if not follow:
        out, err = tail.poll_each(final=True)
        _print(out)
        if err:
            _print([f"==> {one_line(display_path(tail.paths[1]))} (stderr) <==", *err])
        return ExitCode.OK
    while _live(loop_name, loops_dir):
        _print(tail.poll())
        time.sleep(FOLLOW_POLL_SECONDS)
    _print(tail.poll(final=True))
    return ExitCode.OK


def _print(lines: list[str]) -> None:
    """*lines* of a step's output, their controls escaped (colours kept on a terminal)."""
    if lines:
        from little_loops.cli.display import use_color
        from little_loops.fsm.facts.safetext import output_line

        colors = use_color(sys.stdout)
        sys.stdout.write("".join(f"{output_line(line, colors)}\n" for line in lines))
        sys.stdout.flush()


def _live(loop_name: str, loops_dir: Path) -> bool:
    from little_loops.fsm.facts.outcomes import Status
    from little_loops.fsm.runs.liveness import run_alive
    from little_loops.fsm.runs.store import StatePersistence

    with StatePersistence(loop_name, loops_dir) as store:
        saved = store.load_state()
    return saved is not None and saved.status == Status.RUNNING and run_alive(saved, loops_dir)
