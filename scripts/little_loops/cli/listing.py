"""`ll-loop list [--running]`: the loops of this project, or the runs going on."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from little_loops.cli.resolve import project_loops_dir
from little_loops.fsm.definition.model.metadata import PUBLIC, metadata_of
from little_loops.fsm.facts.outcomes import ExitCode, Status
from little_loops.fsm.facts.safetext import one_line


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "list",
        help=summary,
        description="List the loops in .loops/ with their paradigm, last status, category "
        "and description (public loops; --all for internal and example ones too).",
    )
    parser.add_argument(
        "--running",
        action="store_true",
        help="list the runs going on (status running, live or crashed) instead of the loops",
    )
    parser.add_argument(
        "--json", action="store_true", dest="as_json", help="print a JSON list on stdout"
    )
    parser.add_argument("--category", "-c", help="only loops of this category")
    parser.add_argument(
        "--label", action="append", default=[], help="only loops with this label (repeatable)"
    )
    parser.add_argument(
        "--all",
        "-a",
        action="store_true",
        dest="show_all",
        help="also internal loops (sub-loops) and examples (visibility:)",
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    wanted = Wanted(args.category, tuple(args.label), args.show_all)
    return list_command(running=args.running, as_json=args.as_json, wanted=wanted)


@dataclass(frozen=True)
class Wanted:
    """Which loops `list` shows: a category, labels (all of them), other visibilities."""

    category: str | None = None
    labels: tuple[str, ...] = ()
    show_all: bool = False

    def __call__(self, row: LoopRow) -> bool:
        if self.category is not None and row["category"] != self.category:
            return False
        if any(label not in row["labels"] for label in self.labels):
            return False
        return self.show_all or row["visibility"] == PUBLIC


class LoopRow(TypedDict):
    """`ll-loop list --json`: one loop file (with `error` when it does not load)."""

    name: str
    path: str
    paradigm: str | None
    loop: str
    error: NotRequired[str]
    status: str | None
    description: str  # its first line ("" for none), then the other metadata (metadata.py)
    category: str
    labels: list[str]
    visibility: str


class RunRow(TypedDict):
    """`ll-loop list --running --json`: one run with a state file (`error`: it is corrupt)."""

    loop: str
    status: str | None
    alive: bool
    crashed: bool
    current_state: str | None
    iteration: int | None
    pid: int | None
    started_at: str | None
    updated_at: str | None
    state_file: str
    error: NotRequired[str]
    run: NotRequired[str]  # a worktree run: NAME@ID, its branch and its worktree folder
    branch: NotRequired[str]
    worktree: NotRequired[str]
    branches: NotRequired[list[dict[str, Any]]]  # a fan-out's, as `status --json` lists them


def loop_rows(loops_dir: Path) -> list[LoopRow]:
    """One row per loop file in `loops_dir`: name, path, paradigm, status (or error)."""
    from little_loops.cli.resolve import available_loops, resolve_loop_path
    from little_loops.cli.runref import loop_name_of
    from little_loops.fsm.definition.reading.loopdoc import load_loop
    from little_loops.fsm.facts.errors import LoopError
    from little_loops.fsm.facts.runfile import display_path

    rows = []
    for name in available_loops(loops_dir):
        path = resolve_loop_path(name, loops_dir, stale_ok=True)
        shown = display_path(path.resolve())
        error = None
        about = metadata_of({})
        try:
            data = load_loop(path).data
            about = metadata_of(data)
            paradigm = data.get("paradigm")
            paradigm = paradigm if isinstance(paradigm, str) else "fsm"
            loop = loop_name_of(path, loops_dir)
        except LoopError as exc:
            paradigm, loop, error = None, name, str(exc)
        status = _latest_status(loops_dir, loop)
        row: LoopRow
        if error is None:
            row = {
                "name": name,
                "path": shown,
                "paradigm": paradigm,
                "loop": loop,
                "status": status,
                "description": about["description"],
                "category": about["category"],
                "labels": about["labels"],
                "visibility": about["visibility"],
            }
        else:  # the keys in the order the JSON has always had them
            row = {
                "name": name,
                "path": shown,
                "paradigm": paradigm,
                "loop": loop,
                "error": error,
                "status": status,
                "description": about["description"],
                "category": about["category"],
                "labels": about["labels"],
                "visibility": about["visibility"],
            }
        rows.append(row)
    return rows


def _latest_status(loops_dir: Path, loop: str) -> str | None:
    """The status of the loop's latest run (`"corrupt"`: unreadable), with how many runs it
    has when they are several (worktree runs): `running (3 runs)`."""
    from little_loops.fsm.facts.errors import LoopError
    from little_loops.fsm.facts.layout import validate_loop_name
    from little_loops.fsm.runs.store import StatePersistence
    from little_loops.fsm.runs.which import keys_of, runs_of

    keys = keys_of(loops_dir, loop)
    if len(keys) > 1:
        runs = runs_of(loops_dir, loop, keys)
        latest = runs[-1].state
        return f"{'corrupt' if latest is None else latest.status} ({len(runs)} runs)"
    try:
        state = StatePersistence(validate_loop_name(loop), loops_dir).load_state()
    except LoopError:
        return "corrupt"
    return None if state is None else str(state.status)


def run_rows(loops_dir: Path) -> list[RunRow]:
    """One row per run going on: loop, status, alive, crashed, state, iteration, pid, ...

    That is a state file whose status is `running` (live, or crashed: its process is gone
    and `resume` goes on), or whose process still runs; and one that cannot be read, as
    nothing tells it has ended. Ended runs are `list`'s and `runs`'s to show.
    """
    from little_loops.fsm.facts.runfile import display_path
    from little_loops.fsm.runs.fanned import from_captured
    from little_loops.fsm.runs.store import list_running_loops

    rows = []
    for info in list_running_loops(loops_dir):
        state = info.state
        if state is not None and state.status != Status.RUNNING and not info.alive:
            continue
        row: RunRow = {
            "loop": info.loop_name,
            "status": None if state is None else str(state.status),
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
        if state is not None and state.worktree is not None:
            row["run"] = state.ref
            row["branch"] = state.worktree.get("branch", "")
            row["worktree"] = display_path(state.worktree.get("path", ""))
        views = [] if state is None else from_captured(state.captured, state.key)
        if views:
            row["branches"] = [view.to_dict() for view in views]
        rows.append(row)
    return rows


def text_table(rows: list[list[str]]) -> str:
    rows = [[one_line(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _run_table(rows: list[RunRow]) -> list[list[str]]:
    """LOOP (NAME@ID for a worktree run), STATUS, STATE, ITER, PID, and BRANCH when a run
    has one."""
    branches = any(row.get("branch") for row in rows)
    table = [["LOOP", "STATUS", "STATE", "ITER", "PID"] + (["BRANCH"] if branches else [])]
    for row in rows:
        tail = [row.get("branch") or "-"] if branches else []
        if row.get("error"):
            table.append([row["loop"], "corrupt", "-", "-", "-", *tail])
            continue
        status = "crashed" if row["crashed"] else str(row["status"])
        pid = row["pid"]
        if pid is None or row["status"] != Status.RUNNING:
            pid_text = "-"
        else:
            pid_text = f"{pid} ({_pid_word(pid, row['alive'])})"
        name = row.get("run") or row["loop"]
        table.append(
            [name, status, str(row["current_state"]), str(row["iteration"]), pid_text, *tail]
        )
    return table


def _pid_word(pid: int, alive: bool) -> str:
    """`alive` (the run's ll-loop), `not this run` (a live process that is not it) or `dead`."""
    from little_loops.fsm.processes.pids import pid_alive

    if alive:
        return "alive"
    return "not this run" if pid_alive(pid) else "dead"


def _loop_table(rows: list[LoopRow]) -> list[list[str]]:
    """NAME, PARADIGM, STATUS, PATH, and CATEGORY and DESCRIPTION when a loop has one."""
    about = any(row["category"] or row["description"] for row in rows)
    table = [["NAME", "PARADIGM", "STATUS", "PATH"] + (["CATEGORY", "DESCRIPTION"] * about)]
    for row in rows:
        paradigm = row["paradigm"] or "invalid"
        tail = [row["category"] or "-", _short(row["description"]) or "-"] if about else []
        table.append([row["name"], paradigm, row["status"] or "-", row["path"], *tail])
    return table


def _short(text: str, most: int = 60) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def list_command(
    *,
    running: bool = False,
    as_json: bool = False,
    loops_dir: Path | None = None,
    wanted: Wanted | None = None,
) -> int:
    """Print the loops (or runs); 0 always, even when there are none."""
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    import sys

    rows: list[RunRow] | list[LoopRow]
    if running:
        rows = runs = run_rows(loops_dir)
        table = _run_table(runs)
    else:
        every, wanted = loop_rows(loops_dir), wanted or Wanted()
        rows = loops = [row for row in every if wanted(row)]
        hidden = 0 if wanted.show_all else sum(row["visibility"] != PUBLIC for row in every)
        if hidden and not as_json:
            print(
                f"ll-loop: {hidden} internal or example loop(s) not listed (--all)", file=sys.stderr
            )
        table = _loop_table(loops)
    if as_json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return ExitCode.OK
    if not rows:
        what = "no runs going on" if running else "no loops"
        where = f"{loops_dir}/" if loops_dir.is_dir() else f"{loops_dir}/ (it does not exist)"
        print(f"ll-loop: {what} in {where}", file=sys.stderr)
        return ExitCode.OK
    print(text_table(table))
    return ExitCode.OK
