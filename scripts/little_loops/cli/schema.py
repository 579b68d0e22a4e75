"""`ll-loop schema [--content]`: where the installed JSON Schema of loop files is, for editors."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "schema",
        help=summary,
        description=(
            "Print the path of the JSON Schema of loop files that came with this ll-loop; start "
            "a loop file with '# yaml-language-server: $schema=PATH' to have editors check it."
        ),
    )
    parser.add_argument(
        "--content", action="store_true", help="print the schema itself instead of its path"
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    return schema_command(content=args.content)


def schema_command(*, content: bool = False) -> int:
    """Print the schema's path (or, with `content`, its text) on stdout."""
    from little_loops.fsm.facts.outcomes import ExitCode
    from little_loops.fsm.validate.json_schema import SCHEMA_FILE

    if content:
        sys.stdout.write(SCHEMA_FILE.read_text(encoding="utf-8"))
    else:
        print(SCHEMA_FILE)
    return ExitCode.OK
