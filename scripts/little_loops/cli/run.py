"""`ll-loop run NAME|PATH`: run a loop in the foreground, in the background, or as a plan."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from little_loops.cli.where import add_worktree_flags, where_from_args
from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.runs.new_run import Where

if TYPE_CHECKING:
    from little_loops.fsm.definition.model.typed import FSMLoop


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
    arguments = arguments_from(
        args.values, args.sets, args.context_file, background=args.background
    )
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
    from little_loops.cli.session import run_session
    from little_loops.fsm.runs.overrides import apply_overrides
    from little_loops.fsm.runs.preflight import require
    from little_loops.fsm.runs.spend_check import require_counted
    from little_loops.fsm.validate.loopfile import load_and_validate

    path = resolve_loop_path(name_or_path, loops_dir)
    stale = stale_compiled_note(path)
    if stale is not None:
        print(f"ll-loop: note: {stale}", file=sys.stderr)
    # Its runs go by the file's name: a copy of a loop file runs apart from the original.
    loaded = load_and_validate(path, compat=options.compat)
    loaded = apply_overrides(named_as_run(loaded, path), options)
    # The values are checked before anything runs, also before a detached run starts.
    fsm = with_arguments(loaded, options.arguments, missing_ok=dry_run)
    if dry_run:
        return print_plan(fsm, path)
    # A missing agent CLI (or one that refuses to run here) stops it before a step; an agent
    # of a fallback list that is not ready is named and skipped.
    found = require(fsm)
    for skipped in found.warnings:
        print(f"ll-loop: warning: {skipped}", file=sys.stderr)
    # An agent whose spend cannot be counted: refused under a budget, else said once.
    for uncounted in require_counted(fsm, skipped=found.skipped):
        print(f"ll-loop: warning: {uncounted}", file=sys.stderr)
    if not options.quiet:
        for warning in prose_warnings(fsm):
            print(f"ll-loop: warning: {warning}", file=sys.stderr)
    if options.compat:
        for pasted in pasted_as_code(fsm):
            print(f"ll-loop: warning: --compat pastes as code: {pasted}", file=sys.stderr)
    loops_dir = loops_dir.resolve()
    from little_loops.fsm.runs.new_run import ready_to_start

    def note(message: str) -> None:
        print(f"ll-loop: note: {message}", file=sys.stderr)

    where = ready_to_start(fsm, where or Where(), loops_dir, note)
    if background:
        from little_loops.cli.background import start_background

        target = str(path.resolve())
        arguments = for_background(fsm, options.arguments)
        options = dataclasses.replace(options, arguments=arguments)
        return start_background(
            target, where.key(fsm.name), fsm.effective_scope(), options, loops_dir, where=where
        )
    from little_loops.fsm.runs.scratch import with_run_dir

    fsm = with_run_dir(fsm, loops_dir, where.run_id)  # ${context.run_dir}: this run's folder
    with where.claim_place(fsm.name, loops_dir, note) as (place, claim):
        left = None if options.quiet else where.left_out(loops_dir)
        if left is not None:
            note(left)
        return run_session(
            fsm,
            path,
            options,
            loops_dir,
            place=place,
            stop_pending=claim.stop_pending,  # a `stop` while it started: it ends stopped
            under_way=claim.under_way,
            unready=found.skipped,
        )


def print_plan(fsm: FSMLoop, path: Path) -> int:
    """`--dry-run`: the plan on stdout; what would stop a run before its first step (a tool
    it needs, missing here) is a note on stderr, not a failure: the plan is right anyway."""
    from little_loops.cli.plan import format_plan
    from little_loops.fsm.facts.runfile import display_path
    from little_loops.fsm.runs.preflight import readiness
    from little_loops.fsm.runs.spend_check import uncounted

    print(format_plan(fsm, display_path(path.resolve())), end="")
    found = readiness(fsm)
    for problem in found.errors.values():
        print(f"ll-loop: note: a run would stop before its first step: {problem}", file=sys.stderr)
    for line in uncounted(fsm, skipped=found.skipped):
        stop = "a run would stop before its first step: " if fsm.max_cost_usd is not None else ""
        print(f"ll-loop: note: {stop}{line}", file=sys.stderr)
    return ExitCode.OK


def pasted_as_code(fsm: FSMLoop) -> list[str]:
    """Each reference of a shell action that `--compat` pastes into it as code (where the
    quoting refuses it, as `validate --compat` warns), by state: said when the run starts."""
    from little_loops.fsm.actions.spec import Interpolation
    from little_loops.fsm.values.shellquote import unquotable

    out = []
    for name, state in fsm.states.items():
        shell = state.action_kind().interpolation is Interpolation.SHELL
        if state.action and shell and not state.is_approval():
            out += [f"state '{name}': {problem}" for problem in unquotable(state.action)]
    return out


def prose_warnings(fsm: FSMLoop) -> list[str]:
    """validate's warning for each action that reads like a sentence for Claude but runs in
    bash: `run` says it once before the first step, where it would fail with exit 127."""
    from little_loops.fsm.definition.checks.prose import sentence_warning
    from little_loops.fsm.facts.errors import ValidationError

    out = []
    for name, state in fsm.states.items():
        warning = sentence_warning(state)
        if warning is not None:
            where = ("states", name, "action")
            out.append(str(ValidationError.at(fsm.name, where, warning, "warning")))
    return out
