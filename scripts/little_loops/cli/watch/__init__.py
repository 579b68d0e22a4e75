"""`ll-loop watch [NAME[@ID]]`: a live full-screen view of every run, with keys to steer them.

Textual (the optional `tui` extra) is imported only when `watch` runs: no other command
loads it, and without it `watch` says the one command that installs it.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

from little_loops.cli.resolve import project_loops_dir

INSTALL = "pip install 'little-loops[tui]'"


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "watch",
        help=summary,
        description="A live full-screen view of the project's runs (foreground, background, "
        "worktree runs, sub-loops), read from their files as they change, with keys to stop, "
        "approve, reject and resume them. Needs the tui extra: " + INSTALL,
    )
    parser.add_argument(
        "loop", metavar="NAME[@ID]", nargs="?", help="open this run's screen at once"
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    return watch_command(args.loop)


def watch_command(name: str | None = None, *, loops_dir: Path | None = None) -> int:
    """Show the view until `q`; 1 when Textual is not installed (the command to run said)
    or there is no terminal to show it on."""
    from little_loops.fsm.facts.outcomes import ExitCode

    if importlib.util.find_spec("textual") is None:
        print(f"ll-loop: watch needs Textual; install it with: {INSTALL}", file=sys.stderr)
        return ExitCode.FAILED
    if not (sys.stdin.isatty() and sys.stdout.isatty()):  # a script would wait forever
        print("ll-loop: watch needs a terminal; for a script: ll-loop list --running --json",
              file=sys.stderr)  # fmt: skip
        return ExitCode.FAILED
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    key = None
    if name is not None:
        from little_loops.cli.runref import run_name

        key = run_name(name, loops_dir)
    from little_loops.cli.watch.app import WatchApp

    WatchApp(loops_dir, key).run()
    return ExitCode.OK
