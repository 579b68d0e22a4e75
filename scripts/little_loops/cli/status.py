"""`ll-loop status NAME`: where a run is, whether its process lives, how it ended."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from little_loops.cli.nesting import where_in_children
from little_loops.cli.resolve import project_loops_dir
from little_loops.cli.runref import add_run_argument
from little_loops.fsm.facts.safetext import one_line, shown
from little_loops.fsm.runs.fanned import BranchView, from_captured, read_runs

if TYPE_CHECKING:
    from little_loops.fsm.definition.model.typed import FSMLoop
    from little_loops.fsm.runs.describe import RunDescription


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "status",
        help=summary,
        description="Show the saved state of a loop's last or current run.",
    )
    add_run_argument(parser)
    parser.add_argument(
        "--json",
        action="store_true",
        dest="as_json",
        help="print the state file's fields plus alive and crashed as JSON",
    )
    parser.add_argument(
        "-f",
        "--follow",
        action="store_true",
        help="show the run's progress as `run` does until it ends; exit with its exit code",
    )
    parser.add_argument("--no-color", action="store_true", help="no colours with --follow")
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    if args.follow:
        return status_command(args.loop, follow=True, no_color=args.no_color)
    return status_command(args.loop, as_json=args.as_json)


def status_command(
    name: str,
    *,
    as_json: bool = False,
    follow: bool = False,
    no_color: bool = False,
    loops_dir: Path | None = None,
) -> int:
    """Print the run of NAME; 0 if it has one, 1 if it never ran (or its file is corrupt).

    With `follow`, show its progress until it ends and return the run's exit code."""
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    from little_loops.cli.runref import run_name
    from little_loops.fsm.facts.outcomes import ExitCode
    from little_loops.fsm.facts.runfile import display_path
    from little_loops.fsm.runs.control import status_json
    from little_loops.fsm.runs.describe import describe
    from little_loops.fsm.runs.store import StatePersistence

    loop_name = run_name(name, loops_dir)
    persistence = StatePersistence(loop_name, loops_dir)
    state = persistence.load_state()
    if state is None:
        print(
            f"ll-loop: loop '{loop_name}' has not run yet"
            f" (no {display_path(persistence.state_file)});"
            f" start it with 'll-loop run {loop_name}'",
            file=sys.stderr,
        )
        return ExitCode.FAILED
    if follow:
        from little_loops.cli.follow import follow_command

        return follow_command(loop_name, loops_dir, no_color=no_color)
    if persistence.replay_error:
        print(
            f"ll-loop: warning: showing the last snapshot: {one_line(persistence.replay_error)}",
            file=sys.stderr,
        )
    described = describe(state, loop_name, loops_dir, named=name)
    branches = read_runs(from_captured(state.captured, loop_name), loops_dir)
    if as_json:
        data: dict[str, Any] = dict(status_json(state, described.live))
        if branches:
            data["branches"] = [view.to_dict() for view in branches]
        print(json.dumps(data, indent=2))
        return ExitCode.OK
    rows = status_rows(described, loop_name, loops_dir)
    if branches:
        rows.append(("branches", f"{len(branches)} (ll-loop logs {loop_name} --branch N)"))
    width = max(len(key) for key, _ in rows) + 1
    for key, value in rows:
        print(f"{key + ':':<{width}} {one_line(value)}")
    for view in branches:
        print(f"  {one_line(branch_line(view))}")
    return ExitCode.OK


def branch_line(view: BranchView) -> str:
    """One branch of a fan-out under its run: `fan #0 parser: success (terminal, merged) ·
    fix@ab12 · branch ll/fix/ab12 · worktree PATH · $0.0100`."""
    from little_loops.fsm.facts.runfile import display_path
    from little_loops.fsm.facts.spend import format_cost

    said = view.standing
    if view.verdict:
        how = ", ".join(x for x in (view.outcome, view.merged) if x)
        said += f" ({how})" if how else ""
    elif view.status:
        said += f" (pass {view.iteration})"
    parts = [f"{view.state} {view.label}: {said}", view.key]
    if view.branch:
        parts.append(f"branch {view.branch}")
    if view.worktree:
        parts.append(f"worktree {display_path(view.worktree)}")
    parts.append(format_cost(view.cost_usd))
    return " · ".join(parts)


def status_rows(
    described: RunDescription, loop_name: str, loops_dir: Path
) -> list[tuple[str, str]]:
    """The `key: value` lines of `status` for the run *loop_name* (its key), in order."""
    from little_loops.cli.parameters import loop_now, saved_values
    from little_loops.fsm.facts.outcomes import Status, how_to_go_on
    from little_loops.fsm.facts.runfile import display_path
    from little_loops.fsm.facts.spend import format_cost, is_unkept
    from little_loops.fsm.facts.timefmt import format_duration
    from little_loops.fsm.runs.approvals import how_to_answer, pending_question
    from little_loops.fsm.runs.control import saved_loop_file
    from little_loops.fsm.runs.locks import project_root

    state, limit, in_state_ms = described.state, described.limit, described.live.in_state_ms
    elapsed = format_duration(state.elapsed_ms + in_state_ms)
    if in_state_ms:
        elapsed += f" ({format_duration(in_state_ms)} in this state)"
    rows = [
        ("loop", state.ref if state.worktree is not None else loop_name),
        ("status", described.status),
        ("state", state.current_state + where_in_children(state.child)),
        ("iteration", f"{state.iteration}/{limit}" if limit else str(state.iteration)),
        ("elapsed", elapsed),
        ("started", state.started_at),
        ("updated", state.updated_at),
    ]
    if described.waiting is not None:
        rows.append(("waiting", described.waiting))
    if state.cost_usd > 0:
        rows.append(("cost", format_cost(state.cost_usd)))
    if state.last_result and state.last_result.get("verdict") is not None:
        rows.append(("last verdict", str(state.last_result["verdict"])))
    if state.error:
        rows.append(("error", shown(state.error)))
    if described.disk:
        rows.append(("disk", described.disk))
    hint = how_to_go_on(state.terminated_by, loop_name)
    if is_unkept(state.error):  # a step's spend not counted: a higher budget changes nothing
        hint = f"ll-loop resume {loop_name} (until the next step whose spend cannot be counted)"
    if state.status == Status.FAILED and hint is not None:
        rows.append(("to go on", hint))
    if state.continuation:
        rows.append(("handoff", state.continuation))
    question = pending_question(state)
    if question is not None:
        rows.append(("question", str(question.get("question", ""))))
        rows.append(("answer", how_to_answer(loop_name)))
    if state.worktree is not None:
        where = display_path(state.worktree.get("path", ""))
        rows.append(("worktree", f"{where} (branch {state.worktree.get('branch', '?')})"))
    if described.other_runs:
        more = f"{described.other_runs} more"
        rows.append(("other runs", f"{more} (ll-loop list --running; name one as NAME@ID)"))
    if state.loop_path:
        rows.append(("file", state.loop_path))
    fsm = loop_now(saved_loop_file(state, project_root(loops_dir)))  # read once for both
    values = saved_values(state.context, fsm)
    if values is not None:
        rows.append(("parameters", values))
    confined = sandboxes(fsm, loop_name, loops_dir)
    if confined is not None:
        rows.append(("sandbox", confined))
    return rows


def sandboxes(fsm: FSMLoop | None, run_key: str, loops_dir: Path) -> str | None:
    """`bwrap (test, fix); none (report)`: the sandbox each state of the run's loop (as its
    file reads now) runs in, with the run's `--sandbox`/`--no-sandbox`; None when no state
    is confined (or the file is gone or invalid)."""
    if fsm is None:
        return None
    from little_loops.fsm.runs.overrides import RunFlags, apply_overrides, load_overrides

    fsm = apply_overrides(fsm, load_overrides(run_key, loops_dir) or RunFlags())
    by_sandbox: dict[str, list[str]] = {}
    for name, each in fsm.states.items():
        if each.action and not each.is_approval():
            confined = fsm.sandbox_for(each)
            how = "none" if confined is None else confined.describe()
            by_sandbox.setdefault(how, []).append(name)
    if set(by_sandbox) <= {"none"}:
        return None
    return "; ".join(f"{how} ({', '.join(names)})" for how, names in by_sandbox.items())
