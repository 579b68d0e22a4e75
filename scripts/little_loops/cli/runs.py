"""`ll-loop runs [NAME]`: the finished runs kept in `.loops/.history/`, oldest first."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from little_loops.cli.resolve import project_loops_dir
from little_loops.cli.runref import archived_name


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "runs",
        help=summary,
        description="List the finished runs of a loop (of every loop without NAME) that "
        ".loops/.history/ keeps: id, start, duration, outcome, passes, cost. An id (or its "
        "start) goes to `history` and `logs` as --run ID.",
    )
    parser.add_argument("loop", metavar="NAME", nargs="?", help="loop name")
    parser.add_argument(
        "--json", action="store_true", dest="as_json", help="print a JSON list on stdout"
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    return runs_command(args.loop, as_json=args.as_json)


def runs_command(name: str | None, *, as_json: bool = False, loops_dir: Path | None = None) -> int:
    """Print the archived runs of NAME (of every loop); 0 always, even when there are none."""
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    from little_loops.fsm.facts.outcomes import ExitCode
    from little_loops.fsm.runs.archive import archived_loops, list_runs

    loops = [archived_name(name, loops_dir)] if name is not None else archived_loops(loops_dir)
    runs = []
    for loop in loops:
        found, warnings = list_runs(loops_dir, loop)
        for warning in warnings:
            print(f"ll-loop: warning: {warning}", file=sys.stderr)
        runs += found
    if as_json:
        shown = [run.to_dict() | _branches(run, loops_dir) for run in runs]
        print(json.dumps(shown, ensure_ascii=False, indent=2))
        return ExitCode.OK
    if not runs:
        of = f" of loop '{loops[0]}'" if name is not None else ""
        print(f"ll-loop: no finished runs{of} in .loops/.history/ yet", file=sys.stderr)
        return ExitCode.OK
    print(_table(runs, with_loop=name is None))
    return ExitCode.OK


def _branches(run: Any, loops_dir: Path) -> dict[str, Any]:
    """`{"branches": [...]}` of an archived run that ran a fan-out (its saved state's), as
    `status --json` lists them; {} for any other (or an unreadable one)."""
    from little_loops.fsm.facts.errors import LoopError
    from little_loops.fsm.facts.layout import archive_dir
    from little_loops.fsm.runs.fanned import from_captured
    from little_loops.fsm.runs.store import StatePersistence

    folder = archive_dir(loops_dir, run.loop) / run.run_id  # as listed: no second listing
    try:
        state = StatePersistence(run.loop, loops_dir, folder=folder).load_state()
    except (LoopError, OSError, ValueError):
        return {}
    views = [] if state is None else from_captured(state.captured, state.key)
    return {"branches": [view.to_dict() for view in views]} if views else {}


def _table(runs: list[Any], *, with_loop: bool) -> str:
    from little_loops.cli.listing import text_table
    from little_loops.fsm.facts.outcomes import outcome_label
    from little_loops.fsm.facts.spend import format_cost
    from little_loops.fsm.facts.timefmt import format_duration

    head = ["RUN", "STARTED", "DURATION", "OUTCOME", "PASSES", "COST"]
    rows = [(["LOOP"] if with_loop else []) + head]
    for run in runs:
        started = run.started_at[:19].replace("T", " ")
        cost = format_cost(run.cost_usd) if run.cost_usd else "-"
        outcome = outcome_label(run.outcome, run.final_state)
        row = [run.run_id, started, format_duration(run.duration_ms), outcome]
        rows.append(([run.loop] if with_loop else []) + [*row, str(run.passes), cost])
    return text_table(rows)
