"""`ll-loop list [--running]`: the loops of this project, or the runs with saved state."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from little_loops.cli.resolve import LOOPS_DIR
from little_loops.fsm.runs.outcomes import ExitCode, Status


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "list",
        help="list the loops in .loops/ (or, with --running, the runs)",
        description="List the loops in .loops/ with their paradigm and last status.",
    )
    parser.add_argument(
        "--running",
        action="store_true",
        help="list only runs that have a state file (status, pid, alive)",
    )
    parser.add_argument(
        "--json", action="store_true", dest="as_json", help="print a JSON list on stdout"
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    return list_command(running=args.running, as_json=args.as_json)


def loop_rows(loops_dir: Path) -> list[dict[str, Any]]:
    """One dict per loop file in `loops_dir`: name, path, paradigm, status (or error)."""
    from little_loops.cli.resolve import available_loops, resolve_loop_path
    from little_loops.fsm.definition.loader import load_file
    from little_loops.fsm.errors import LoopError
    from little_loops.fsm.runs.layout import validate_loop_name
    from little_loops.fsm.runs.store import StatePersistence, display_path

    rows = []
    for name in available_loops(loops_dir):
        path = resolve_loop_path(name, loops_dir)
        row: dict[str, Any] = {"name": name, "path": display_path(path.resolve())}
        try:
            data = load_file(path).data
            paradigm = data.get("paradigm")
            row["paradigm"] = paradigm if isinstance(paradigm, str) else "fsm"
            loop = data.get("name")
            row["loop"] = loop if isinstance(loop, str) and loop else name
        except LoopError as exc:
            row.update(paradigm=None, loop=name, error=str(exc))
        try:
            state = StatePersistence(validate_loop_name(row["loop"]), loops_dir).load_state()
            row["status"] = None if state is None else state.status
        except LoopError:
            row["status"] = "corrupt"
        rows.append(row)
    return rows


def run_rows(loops_dir: Path) -> list[dict[str, Any]]:
    """One dict per state file: loop, status, alive, crashed, state, iteration, pid, ..."""
    from little_loops.fsm.runs.store import display_path, list_running_loops

    rows = []
    for info in list_running_loops(loops_dir):
        state = info.state
        row: dict[str, Any] = {
            "loop": info.loop_name,
            "status": None if state is None else state.status,
            "alive": info.alive,
            "crashed": info.crashed,
            "current_state": None if state is None else state.current_state,
            "iteration": None if state is None else state.iteration,
            "pid": None if state is None else state.pid,
            "started_at": None if state is None else state.started_at,
            "updated_at": None if state is None else state.updated_at,
            "state_file": display_path(info.state_file.resolve()),
        }
        if info.error:
            row["error"] = info.error
        rows.append(row)
    return rows


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def list_command(
    *, running: bool = False, as_json: bool = False, loops_dir: Path = LOOPS_DIR
) -> int:
    """Print the loops (or runs); 0 always, even when there are none."""
    import sys

    rows = run_rows(loops_dir) if running else loop_rows(loops_dir)
    if as_json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return ExitCode.OK
    if not rows:
        what = "no runs with saved state" if running else "no loops"
        where = f"{loops_dir}/" if loops_dir.is_dir() else f"{loops_dir}/ (it does not exist)"
        print(f"ll-loop: {what} in {where}", file=sys.stderr)
        return ExitCode.OK
    if running:
        table = [["LOOP", "STATUS", "STATE", "ITER", "PID"]]
        for row in rows:
            if row.get("error"):
                table.append([row["loop"], "corrupt", "-", "-", "-"])
                continue
            status = "crashed" if row["crashed"] else row["status"]
            pid = row["pid"]
            if pid is None or row["status"] != Status.RUNNING:
                pid_text = "-"
            else:
                pid_text = f"{pid} ({'alive' if row['alive'] else 'dead'})"
            table.append(
                [row["loop"], status, row["current_state"], str(row["iteration"]), pid_text]
            )
    else:
        table = [["NAME", "PARADIGM", "STATUS", "PATH"]]
        for row in rows:
            paradigm = row["paradigm"] or "invalid"
            table.append([row["name"], paradigm, row["status"] or "-", row["path"]])
    print(_table(table))
    return ExitCode.OK
