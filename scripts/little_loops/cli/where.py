"""`run --worktree [--base REF] [--run-id ID]`: the flags of where a run happens."""

from __future__ import annotations

import argparse

from little_loops.fsm.facts.layout import RUN_ID_PATTERN
from little_loops.fsm.runs.new_run import Where


def add_worktree_flags(parser: argparse.ArgumentParser) -> None:
    """`--worktree`, `--base REF`, and the run id a background run is started with."""
    parser.add_argument(
        "--worktree",
        action="store_true",
        help="run in a new git worktree on a new branch ll/NAME/ID (as `worktree: true` does);"
        " see ll-loop worktree",
    )
    parser.add_argument(
        "--base",
        metavar="REF",
        help="with --worktree: start the branch from REF (default: HEAD of this checkout)",
    )
    parser.add_argument(
        "--run-id",
        type=_run_id,
        metavar="ID",
        help="give the run this id (4 lowercase letters or digits) instead of a random one",
    )


def _run_id(text: str) -> str:
    if not RUN_ID_PATTERN.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a run id")
    return text


def where_from_args(args: argparse.Namespace) -> Where:
    """The Where the parsed flags stand for."""
    return Where(args.worktree, args.base, args.run_id)
