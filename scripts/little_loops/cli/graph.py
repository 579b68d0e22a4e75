"""`ll-loop graph NAME [--format mermaid|dot]`: print a loop's state machine as a diagram."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from little_loops.cli.resolve import project_loops_dir, resolve_loop_path
from little_loops.fsm.definition.writing.diagram import FORMATS, render
from little_loops.fsm.facts.outcomes import ExitCode


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "graph",
        help=summary,
        description=(
            "Print every state and transition of a loop. Mermaid (the default) renders in "
            "GitHub Markdown inside a ```mermaid block; dot is for Graphviz (dot -Tsvg)."
        ),
    )
    parser.add_argument("loop", metavar="NAME|PATH", help="loop name or loop file path")
    parser.add_argument(
        "--format", choices=FORMATS, default="mermaid", help="diagram language (default: mermaid)"
    )
    parser.add_argument(
        "--expand",
        action="store_true",
        help="draw the child loop of each sub-loop state (loop:) inside it",
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    return graph_command(args.loop, fmt=args.format, expand=args.expand)


def graph_command(
    name_or_path: str,
    *,
    fmt: str = "mermaid",
    expand: bool = False,
    loops_dir: Path | None = None,
    out: TextIO | None = None,
) -> int:
    """Print the diagram of one loop on stdout; an invalid loop raises LoopDefinitionError."""
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    # Imported here so that `ll-loop --help` does not load YAML and the validators.
    from little_loops.fsm.validate.loopfile import load_and_validate

    fsm = load_and_validate(resolve_loop_path(name_or_path, loops_dir))
    (sys.stdout if out is None else out).write(render(fsm, fmt, expand))
    return ExitCode.OK
