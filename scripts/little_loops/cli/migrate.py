"""`ll-loop migrate NAME|PATH...`: rewrite loop files into the spelling our docs recommend.

What changed is this command's data, so it goes to stdout: one line per change,
`path:line: on_yes -> on_success in state 'check'`, and `path:line: note: ...` for what
it left as it was. Only the keys change, in place: comments and layout stay. Exit 0 when
done (or nothing needed changing), 2 when a file is not a loop file or may not be
rewritten, 1 when it cannot be written.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from little_loops.cli.resolve import project_loops_dir, resolve_loop_path
from little_loops.fsm.facts.errors import LoopFileError
from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.facts.safetext import one_line

if TYPE_CHECKING:
    from little_loops.fsm.definition.writing.migrate import Migration


def register(subparsers: Any, summary: str) -> None:
    parser = subparsers.add_parser(
        "migrate",
        help=summary,
        description=(
            "Rewrite loop files into the spelling the docs recommend (on_yes -> on_success, "
            "failure: true -> outcome: failure, ...), keeping comments and layout, and print "
            "each change. NAME means .loops/NAME.yaml."
        ),
    )
    parser.add_argument(
        "loops", nargs="+", metavar="NAME|PATH", help="loop names or loop file paths"
    )
    show = parser.add_mutually_exclusive_group()
    show.add_argument("--dry-run", action="store_true", help="print the changes but write nothing")
    show.add_argument(
        "--diff", action="store_true", help="print the changes as a unified diff; write nothing"
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    return migrate_command(args.loops, dry_run=args.dry_run, diff=args.diff)


def migration_lines(path: str, migration: Migration) -> list[str]:
    """The lines `migrate` prints for one file."""
    shown = one_line(path)
    lines = [f"{shown}:{c.line}: {one_line(c.what)}" for c in migration.changes]
    lines.extend(f"{shown}:{n.line}: note: {one_line(n.what)}" for n in migration.notes)
    if not migration.changes:
        lines.append(f"{shown}: nothing to change")
    return lines


def diff_text(path: str, migration: Migration) -> str:
    """A unified diff from the file as it is to the file as migrate would write it."""
    import difflib

    return "".join(
        difflib.unified_diff(
            migration.before.splitlines(keepends=True),
            migration.after.splitlines(keepends=True),
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
        )
    )


def file_to_migrate(name_or_path: str, loops_dir: Path) -> Path:
    """The loop file to rewrite; LoopFileError for a shipped loop or a symbolic link,
    which would make migrate write somewhere else than the file named."""
    from little_loops.loops import LIBRARY_PREFIX

    if name_or_path.startswith(LIBRARY_PREFIX):
        raise LoopFileError(
            name_or_path, "a shipped loop is not rewritten; copy it with 'll-loop new' first"
        )
    path = resolve_loop_path(name_or_path, loops_dir, stale_ok=True)
    if path.is_symlink():
        raise LoopFileError(str(path), "is a symbolic link; migrate the file it points to instead")
    link = link_out_of_project(path, loops_dir)
    if link is not None:  # e.g. a linked `.loops/lib`: the file lies wherever it points
        raise LoopFileError(
            str(path),
            f"is reached through the symbolic link {link}, which leads outside the project; "
            "migrate it where it lies",
        )
    return path


def link_out_of_project(path: Path, loops_dir: Path) -> Path | None:
    """The first folder on the way to *path* that is a symbolic link kept in the project
    (the folder holding *loops_dir*) and leading outside it; None when there is none (a
    path named outside the project, or through links outside it, is the user's own choice)."""
    root = loops_dir.resolve().parent
    named = path.absolute()
    here = Path(named.anchor)
    for part in named.parts[1:-1]:
        here = here / part
        if (
            here.is_symlink()
            and here.parent.resolve().is_relative_to(root)
            and not here.resolve().is_relative_to(root)
        ):
            return here
    return None


def migrate_file(path: Path, *, write: bool) -> Migration:
    """Migrate the loop file at *path*, replacing it atomically when *write* and it changes."""
    from little_loops.fsm.definition.reading.loader import read_file
    from little_loops.fsm.definition.writing.migrate import migrate_text
    from little_loops.fsm.runs.atomic import write_atomic

    migration = migrate_text(read_file(path), str(path))
    if write and migration.after != migration.before:
        mode = path.stat().st_mode & 0o7777
        write_atomic(path, migration.after, private=False)
        path.chmod(mode)  # the file keeps its permissions
    return migration


def migrate_command(
    loops: Sequence[str],
    *,
    dry_run: bool = False,
    diff: bool = False,
    loops_dir: Path | None = None,
    out: TextIO | None = None,
) -> int:
    """Migrate each of *loops* (names or paths); every file is checked before any is written."""
    loops_dir = project_loops_dir() if loops_dir is None else loops_dir
    stream = sys.stdout if out is None else out
    paths = [file_to_migrate(item, loops_dir) for item in loops]
    plans = [migrate_file(path, write=False) for path in paths]  # all read before one changes
    for path, plan in zip(paths, plans, strict=True):
        if diff:
            stream.write(diff_text(str(path), plan))
            continue
        if not dry_run:
            plan = migrate_file(path, write=True)
        for line in migration_lines(str(path), plan):
            print(line, file=stream)
    return ExitCode.OK
