"""`ll-loop history NAME`: the events of a loop's last run, one line each."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from little_loops.cli.options import positive_int
from little_loops.cli.resolve import LOOPS_DIR


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "history",
        help=summary,
        description="Show the events of a loop's last run (resumes included), oldest first.",
    )
    parser.add_argument("loop", metavar="NAME", help="loop name")
    parser.add_argument("--tail", type=positive_int, metavar="N", help="only the last N events")
    parser.add_argument(
        "--json", action="store_true", dest="as_json", help="print the events as a JSON list"
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    return history_command(args.loop, tail=args.tail, as_json=args.as_json)


def format_event(event: dict[str, Any], loop: str = "NAME") -> str:
    """One event as `ts event state → ...`; fields of unexpected types are shown as JSON."""
    try:
        return _format_known(event, loop)
    except (TypeError, ValueError, OverflowError):
        # Not what ll-loop writes (a file edited by hand, a newer version): show it raw
        # rather than fail the whole history.
        rest = {k: v for k, v in event.items() if k not in ("ts", "event")}
        return f"{event.get('ts', '-')} {str(event.get('event', '?')):<15} {_raw(rest)}"


def _raw(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except ValueError:  # an integer too long to print
        return "(unprintable event)"


def _format_known(event: dict[str, Any], loop: str) -> str:
    from little_loops.cli.display import outcome_line, shorten, verdict_detail
    from little_loops.fsm.timefmt import format_duration

    kind = str(event.get("event", "?"))
    state = event.get("state")
    head = f"{event.get('ts', '-')} {kind:<15}"
    if kind == "loop_start":
        resumed = " (resumed)" if event.get("resumed") else ""
        return f"{head} {event.get('loop', '')} at {state}{resumed}"
    if kind == "state_enter":
        return f"{head} {state} (iteration {event.get('iteration', '?')})"
    if kind == "action_start":
        return f"{head} {state} → {shorten(str(event.get('action', '')))}"
    if kind == "action_complete":
        took = format_duration(event.get("duration_ms", 0))
        return f"{head} {state} → exit {event.get('exit_code')} in {took}"
    if kind == "evaluate":
        detail = verdict_detail(event)
        return f"{head} {state} → {event.get('verdict')}" + (f" {detail}" if detail else "")
    if kind == "route":
        why = event.get("verdict") or event.get("reason") or ""
        return f"{head} {event.get('from')} → {event.get('to')}" + (f" ({why})" if why else "")
    if kind == "loop_complete":
        line = outcome_line(event)
        return f"{head} {line.replace('ll-loop resume NAME', f'll-loop resume {loop}')}"
    rest = {k: v for k, v in event.items() if k not in ("ts", "event")}
    return f"{head} {_raw(rest)}"


def history_command(
    name: str, *, tail: int | None = None, as_json: bool = False, loops_dir: Path = LOOPS_DIR
) -> int:
    """Print the events of NAME's last run; 1 when it has none."""
    from little_loops.cli.runref import run_name
    from little_loops.fsm.runs.outcomes import ExitCode
    from little_loops.fsm.runs.store import get_loop_history

    loop_name = run_name(name, loops_dir)
    events = get_loop_history(loop_name, loops_dir)
    if tail is not None:
        events = events[-tail:]
    if as_json:
        print(json.dumps(events, ensure_ascii=False, indent=2))
    elif not events:
        print(f"ll-loop: loop '{loop_name}' has no events yet", file=sys.stderr)
    for event in events if not as_json else ():
        print(format_event(event, loop_name))
    return ExitCode.OK if events else ExitCode.FAILED
