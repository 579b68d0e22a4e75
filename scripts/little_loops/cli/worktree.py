"""`ll-loop worktree list|diff|merge|discard`: the kept git worktrees of `--worktree` runs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from little_loops.cli.resolve import project_loops_dir

ACTIONS = ("list", "diff", "merge", "discard")
# The flags each action takes (the parser is flat so every flag is listed in one place).
_ACTION_FLAGS = {"list": {"as_json"}, "diff": {"stat"}, "merge": {"keep"}, "discard": set()}
_FLAG_NAMES = {"as_json": "--json", "stat": "--stat", "keep": "--keep"}


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "worktree",
        help=summary,
        description="The git worktrees that `--worktree` runs kept (they had commits or "
        "changes): list them, show a run's diff against the commit it started from, merge "
        "its branch into the branch the main checkout is on, or discard the worktree and "
        "its branch. NAME is a loop with one kept worktree, or NAME@ID names one run.",
    )
    parser.add_argument("action", choices=ACTIONS, metavar="ACTION", help=", ".join(ACTIONS))
    parser.add_argument(
        "name", metavar="NAME[@ID]", nargs="?", help="the run (list: the loop, optional)"
    )
    parser.add_argument(
        "--stat", action="store_true", help="diff: a summary of changed files (git diff --stat)"
    )
    parser.add_argument(
        "--keep", action="store_true", help="merge: keep the worktree and branch afterwards"
    )
    parser.add_argument(
        "--json", action="store_true", dest="as_json", help="list: print a JSON list on stdout"
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    return worktree_command(
        args.action, args.name, stat=args.stat, keep=args.keep, as_json=args.as_json
    )


def _usage_problem(action: str, name: str | None, flags: dict[str, bool]) -> str | None:
    wrong = [_FLAG_NAMES[flag] for flag, on in flags.items() if on]
    wrong = [flag for flag in wrong if flag not in {_FLAG_NAMES[f] for f in _ACTION_FLAGS[action]}]
    if wrong:
        return f"worktree {action} does not take {', '.join(wrong)}"
    if action != "list" and name is None:
        return f"worktree {action} needs the run: NAME or NAME@ID (ll-loop worktree list)"
    return None


def worktree_command(
    action: str,
    name: str | None,
    *,
    stat: bool = False,
    keep: bool = False,
    as_json: bool = False,
    loops_dir: Path | None = None,
) -> int:
    """Run one `ll-loop worktree` action; the exit code (1 when git or a refusal says no)."""
    from little_loops.fsm.facts.outcomes import ExitCode

    problem = _usage_problem(action, name, {"stat": stat, "keep": keep, "as_json": as_json})
    if problem is not None:
        print(f"ll-loop: error: {problem}", file=sys.stderr)
        return ExitCode.USAGE
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    if action == "list":
        return _list(loops_dir, name, as_json=as_json)
    from little_loops.fsm.runs import worktree_merge
    from little_loops.fsm.runs.worktree_find import resolve

    assert name is not None  # _usage_problem
    worktree = resolve(loops_dir, name)
    if action == "diff":
        text = worktree_merge.diff_text(loops_dir, worktree, stat=stat)
        if not text:
            print(f"ll-loop: {worktree.key} changed nothing", file=sys.stderr)
        sys.stdout.write(text)
    elif action == "merge":
        worktree_merge.merge_worktree(loops_dir, worktree, keep=keep, on_note=print)
    else:
        print(worktree_merge.discard_worktree(loops_dir, worktree))
    return ExitCode.OK


def _status(loops_dir: Path, worktree: Any) -> str:
    from little_loops.fsm.facts.errors import CorruptStateError
    from little_loops.fsm.runs.worktree_merge import live_holder

    try:
        return "running" if live_holder(loops_dir, worktree) is not None else "-"
    except CorruptStateError:
        return "unknown"


def _list(loops_dir: Path, loop: str | None, *, as_json: bool) -> int:
    from little_loops.cli.listing import text_table
    from little_loops.fsm.facts.outcomes import ExitCode
    from little_loops.fsm.facts.runfile import display_path
    from little_loops.fsm.runs.worktree_find import find_worktrees
    from little_loops.fsm.runs.worktrees import changes

    found = find_worktrees(loops_dir, loop)
    rows: list[dict[str, Any]] = []
    for worktree in found:
        change = changes(worktree)
        rows.append(
            {
                "run": worktree.key,
                "loop": worktree.loop,
                "run_id": worktree.run_id,
                "branch": worktree.branch,
                "base": worktree.base_sha,
                "path": str(worktree.path),
                "present": worktree.present,
                "commits": change.commits,
                "files_changed": change.files,
                "uncommitted": change.uncommitted,
                "status": _status(loops_dir, worktree),
                "changes": change.summary(),
            }
        )
    if as_json:
        print(json.dumps([_json_row(row) for row in rows], ensure_ascii=False, indent=2))
        return ExitCode.OK
    if not rows:
        of = f" of loop '{loop}'" if loop is not None else ""
        print(f"ll-loop: no kept worktrees{of}", file=sys.stderr)
        return ExitCode.OK
    table = [["RUN", "BRANCH", "CHANGES", "STATUS", "PATH"]]
    for row in rows:
        path = display_path(row["path"]) if row["present"] else "(folder deleted)"
        table.append([row["run"], row["branch"], row["changes"], row["status"], path])
    print(text_table(table))
    return ExitCode.OK


def _json_row(row: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in row.items() if key != "changes"}
