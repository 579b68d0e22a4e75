"""`ll-loop init`: create `.loops/` with its `.gitignore` and an example loop, never overwriting."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXAMPLE_NAME = "example"
# Files written here carry no `# yaml-language-server: $schema=` line: the schema's path
# differs from machine to machine, and the file is committed. SCHEMA_HINT says where it is.
SCHEMA_HINT = "# An editor can check this file against the JSON Schema `ll-loop schema` points to."
EXAMPLE_LOOP = """\
# An example loop written by `ll-loop init`; it needs neither Claude nor an API key.
# Each constraint is checked in order and, when it does not hold, fixed by its shell
# command; then the checks run again. Actions run in the project root (the folder
# holding .loops/), wherever you start the loop from.
#   ll-loop validate {name}    check this file
#   ll-loop run {name}         run it: it writes hello.txt, then fixes its text
# Make it yours: replace the checks and fixes with your own (tests, lint, formatting).
# Unattended agents or commands you do not fully trust: add `sandbox: bwrap` (or run with
# --sandbox) so each step may write only this project (docs/sandbox.md).
{schema_hint}
paradigm: invariants
name: {name}
constraints:
  - name: hello-file-exists
    check: test -f hello.txt
    fix: echo "hello" > hello.txt
  - name: it-greets-the-world
    check: grep -qx 'hello, world' hello.txt
    fix: echo 'hello, world' > hello.txt
max_iterations: 5
"""


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "init",
        help=summary,
        description=(
            "Create .loops/ in the current folder with a .gitignore for its run files "
            f"and an example loop, .loops/{EXAMPLE_NAME}.yaml. Existing files are kept: "
            "only the missing ones are written."
        ),
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    return init_command()


def init_files(loops_dir: Path) -> dict[Path, str]:
    """The files `init` writes under `loops_dir`, with their text."""
    from little_loops.fsm.facts.layout import GITIGNORE, LOOPS_GITIGNORE

    example = EXAMPLE_LOOP.format(schema_hint=SCHEMA_HINT, name=EXAMPLE_NAME)
    return {loops_dir / GITIGNORE: LOOPS_GITIGNORE, loops_dir / f"{EXAMPLE_NAME}.yaml": example}


def write_new(path: Path, text: str) -> bool:
    """Write *text* to *path* unless the file exists (then False: it is never changed)."""
    try:
        with open(path, "x", encoding="utf-8") as out:
            out.write(text)
    except FileExistsError:
        return False
    return True


def create_loops_dir(loops_dir: Path) -> list[Path]:
    """Create `loops_dir` with its `.gitignore` when they are missing; the ones written."""
    from little_loops.fsm.facts.layout import GITIGNORE, LOOPS_GITIGNORE

    written = [] if loops_dir.is_dir() else [loops_dir]
    loops_dir.mkdir(exist_ok=True)
    if write_new(loops_dir / GITIGNORE, LOOPS_GITIGNORE):
        written.append(loops_dir / GITIGNORE)
    return written


def init_command(root: Path | None = None) -> int:
    """Write the missing files of `.loops/` in `root` (the current folder) and say what next.

    Refuses (exit 1) when every file is there already; a file that exists is never changed.
    """
    from little_loops.fsm.facts.layout import LOOPS_DIR_NAME
    from little_loops.fsm.facts.outcomes import ExitCode

    loops_dir = Path(LOOPS_DIR_NAME) if root is None else root / LOOPS_DIR_NAME
    loops_dir.mkdir(exist_ok=True)
    written: list[Path] = []
    kept: list[Path] = []
    for path, text in init_files(loops_dir).items():
        (written if write_new(path, text) else kept).append(path)
    if not written:
        print(
            f"ll-loop: error: {loops_dir}/ is set up already: "
            f"{' and '.join(str(p) for p in kept)} exist, and init overwrites nothing",
            file=sys.stderr,
        )
        return ExitCode.FAILED
    for path in written:
        print(f"created {path}")
    for path in kept:
        print(f"kept {path} as it was")
    print(
        "\nNext:\n"
        f"  ll-loop validate {EXAMPLE_NAME}   check the example loop file\n"
        f"  ll-loop run {EXAMPLE_NAME}        run it (from this folder or any folder below)\n"
        "  ll-loop list               the loops in .loops/\n"
        "  ll-loop schema             the JSON Schema path, for editor set-up\n"
        f"  ll-loop run {EXAMPLE_NAME} --sandbox  each step confined to this project "
        "(bubblewrap; docs/sandbox.md)"
    )
    return ExitCode.OK
