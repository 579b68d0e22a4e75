"""`ll-loop new NAME [--from EXAMPLE]`: start a loop file from a skeleton or a shipped loop."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

SKELETON = """\
# A new loop of shell commands (it needs neither Claude nor an API key). It starts in
# `check`; a command that exits 0 is a success, anything else a failure, and the `on_*`
# keys say where each leads. Actions run in the project root (the folder holding .loops/).
#   ll-loop validate {name}    check this file
#   ll-loop run {name}         run it
# Make it yours: put your check (tests, lint, a build) in `check` and what repairs it in
# `fix`. ll-loop's docs/loop-files.md lists every key, Claude prompts included.
{schema_hint}
name: {yaml_name}
initial: check
states:
  check:
    action: echo "replace this with the command that checks your project"
    on_success: done
    on_failure: fix
  fix:
    action: echo "replace this with the command that fixes what check found"
    next: check
  done:
    terminal: true
# A safety limit: the run stops (exit code 3) after this many iterations, finished or not.
max_iterations: 10
"""


def register(subparsers: Any, summary: str) -> None:
    from little_loops.loops import library_loops

    parser = subparsers.add_parser(
        "new",
        help=summary,
        description=(
            "Write .loops/NAME.yaml: a commented skeleton of shell commands to fill in, or, "
            "with --from, a copy of a loop shipped with ll-loop, named NAME. It is written "
            "in the nearest .loops/ (this folder or a parent; created here when there is "
            "none) and never overwrites a loop file."
        ),
    )
    parser.add_argument("name", nargs="?", metavar="NAME", help="the new loop's name")
    parser.add_argument(
        "--from",
        dest="source",
        metavar="EXAMPLE",
        choices=library_loops(),
        help="copy this shipped loop (see --list) instead of writing the skeleton",
    )
    parser.add_argument(
        "--list", action="store_true", help="list the shipped loops, one line each, and exit"
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    from little_loops.fsm.facts.errors import LoopDefinitionError

    if args.list:
        if args.name is not None or args.source is not None:
            raise LoopDefinitionError("new --list takes no NAME and no --from")
        return list_command()
    if args.name is None:
        raise LoopDefinitionError("new needs the NAME of the loop to write (or --list)")
    return new_command(args.name, source=args.source)


def list_command() -> int:
    """Print each shipped loop's name and what it does."""
    from little_loops.loops import library_loops, library_summary

    names = library_loops()
    width = max(map(len, names), default=0)
    for name in names:
        print(f"{name:<{width}}  {library_summary(name)}")
    return 0


def loop_text(name: str, source: str | None = None) -> str:
    """The text of loop *name*: the skeleton, or the shipped loop *source* renamed."""
    from little_loops.cli.scaffold import SCHEMA_HINT
    from little_loops.loops import MODELINE_PREFIX, library_loop_path

    if source is None:
        return SKELETON.format(schema_hint=SCHEMA_HINT, name=name, yaml_name=_yaml_name(name))
    lines = library_loop_path(source).read_text(encoding="utf-8").splitlines(keepends=True)
    if lines and lines[0].startswith(MODELINE_PREFIX):  # its path is the package's own
        lines[0] = SCHEMA_HINT + "\n"
    return re.sub(r"^name:.*$", f"name: {_yaml_name(name)}", "".join(lines), count=1, flags=re.M)


def _yaml_name(name: str) -> str:
    """*name* as a YAML string: plain unless a loop file would read it as a number (`1e3`)."""
    from little_loops.fsm.definition.reading.loader import load_text

    return name if load_text(f"name: {name}").data["name"] == name else f"'{name}'"


def _check_name(name: str) -> None:
    from little_loops.fsm.definition.checks.key_tables import LOOP_KEYS
    from little_loops.fsm.facts.errors import LoopDefinitionError

    problem = LOOP_KEYS["name"](name)
    if problem is None and name.endswith(".fsm"):  # NAME.fsm.yaml is a compiled loop's file
        problem = "a name ending in '.fsm' makes a file that looks like `compile` output"
    if problem is not None:
        raise LoopDefinitionError(f"cannot name a loop {name!r}: {problem}")


def new_command(name: str, *, source: str | None = None) -> int:
    """Write `.loops/NAME.yaml` (creating `.loops/` here when no folder up has one)."""
    from little_loops.cli.resolve import LOOP_SUFFIXES, project_loops_dir
    from little_loops.cli.scaffold import create_loops_dir, write_new
    from little_loops.fsm.facts.errors import LoopError
    from little_loops.fsm.facts.layout import LOOPS_DIR_NAME, find_loops_dir
    from little_loops.fsm.facts.outcomes import ExitCode

    _check_name(name)
    text = loop_text(name, source)
    created: list[Path] = []
    if find_loops_dir() is None:
        loops_dir = Path(LOOPS_DIR_NAME)
        created = create_loops_dir(loops_dir)
    else:
        loops_dir = project_loops_dir()
    for suffix in LOOP_SUFFIXES:
        if (loops_dir / f"{name}{suffix}").exists():
            raise LoopError(f"{loops_dir / (name + suffix)} exists already; new overwrites nothing")
    target = loops_dir / f"{name}.yaml"
    if not write_new(target, text):
        raise LoopError(f"{target} exists already; new overwrites nothing")
    for path in created:
        print(f"created {path}{'/' if path == loops_dir else ''}")
    origin = f" (a copy of the shipped loop {source})" if source else ""
    print(f"created {target}{origin}")
    print(
        "\nNext:\n"
        f"  ll-loop validate {name}   check it\n"
        f"  ll-loop run {name}        run it (from this folder or any folder below)"
    )
    return ExitCode.OK
