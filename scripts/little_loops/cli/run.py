"""`ll-loop run NAME|PATH`: run a loop in the foreground, in the background, or as a plan."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from little_loops.cli.options import (
    RunOptions,
    add_background_flag,
    add_run_flags,
    options_from_args,
)
from little_loops.cli.parameters import (
    add_help_flag,
    add_parameter_flags,
    arguments_from,
    for_background,
    with_arguments,
)
from little_loops.cli.resolve import project_loops_dir
from little_loops.cli.where import Where, add_worktree_flags, where_from_args
from little_loops.fsm.runs.outcomes import ExitCode


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "run",
        help=summary,
        description="Run a loop. NAME means .loops/NAME.fsm.yaml or .loops/NAME.yaml; "
        "a PATH is used as given. VALUEs, --set and --context-file give the loop's parameters "
        "(`ll-loop run NAME --help` lists them).",
        add_help=False,
    )
    add_help_flag(parser)
    parser.add_argument("loop", metavar="NAME|PATH", help="loop name or loop file path")
    add_background_flag(parser)
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the execution plan (states, actions, evaluators, routes, limits); run nothing",
    )
    add_run_flags(parser)
    add_worktree_flags(parser)
    add_parameter_flags(parser)
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    arguments = arguments_from(args.values, args.sets, args.context_file)
    return run_command(
        args.loop,
        dataclasses.replace(options_from_args(args), arguments=arguments),
        dry_run=args.dry_run,
        background=args.background,
        where=where_from_args(args),
    )


def run_command(
    name_or_path: str,
    options: RunOptions,
    *,
    dry_run: bool = False,
    background: bool = False,
    loops_dir: Path | None = None,
    where: Where | None = None,
) -> int:
    """Run the loop NAME|PATH (in a new worktree, *where* says so); returns the exit code of
    its outcome (0 for a dry run)."""
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    # Imported here so `ll-loop --help` does not load the executor.
    from little_loops.cli.resolve import resolve_loop_path, stale_compiled_note
    from little_loops.cli.runref import named_as_run
    from little_loops.cli.session import apply_overrides, run_session
    from little_loops.fsm.definition.validation import load_and_validate
    from little_loops.fsm.runs.runfile import display_path

    path = resolve_loop_path(name_or_path, loops_dir)
    note = stale_compiled_note(path)
    if note is not None:
        print(f"ll-loop: note: {note}", file=sys.stderr)
    # Its runs go by the file's name: a copy of a loop file runs apart from the original.
    loaded = apply_overrides(named_as_run(load_and_validate(path), path), options)
    # The values are checked before anything runs, also before a detached run starts.
    fsm = with_arguments(loaded, options.arguments, missing_ok=dry_run)
    if dry_run:
        from little_loops.cli.plan import format_plan

        print(format_plan(fsm, display_path(path.resolve())), end="")
        return ExitCode.OK
    loops_dir = loops_dir.resolve()
    where = (where or Where()).for_loop(fsm, loops_dir)
    from little_loops.fsm.runs.place import refuse_inside_live_worktree

    refuse_inside_live_worktree(loops_dir)
    from little_loops.fsm.runs.which import forget_finished

    forget_finished(loops_dir, fsm.name)  # earlier worktree runs whose worktree is gone
    if background:
        from little_loops.cli.background import start_background

        target = str(path.resolve())
        arguments = for_background(fsm, options.arguments)
        options = dataclasses.replace(options, arguments=arguments)
        return start_background(
            target, where.key(fsm.name), fsm.effective_scope(), options, loops_dir, where=where
        )
    place = where.make_place(fsm.name, loops_dir)
    note = None if options.quiet else where.left_out(loops_dir)
    if note is not None:
        print(f"ll-loop: note: {note}", file=sys.stderr)
    return run_session(fsm, path, options, loops_dir, place=place)
