"""Which run a NAME on the command line means: a run's state file, else a loop file's name."""

from __future__ import annotations

import argparse
from pathlib import Path

from little_loops.fsm.errors import LoopDefinitionError
from little_loops.fsm.runs.layout import run_files, split_run_key, validate_loop_name


def add_run_argument(parser: argparse.ArgumentParser) -> None:
    """The NAME[@ID] every command about a run takes (`run_name` says what it means)."""
    parser.add_argument(
        "loop", metavar="NAME[@ID]", help="loop name (or loop file path), or NAME@ID for one run"
    )


def has_state(name: str, loops_dir: Path) -> bool:
    """A state file exists for the loop called `name`."""
    try:
        validate_loop_name(name)
    except LoopDefinitionError:
        return False
    return run_files(name, loops_dir).state.is_file()


def run_name(name_or_path: str, loops_dir: Path, *, active: str | None = None) -> str:
    """The run key (`NAME`, or `NAME@ID` for a worktree run) whose run files `name_or_path`
    refers to.

    A key with a state file is taken as it is. `NAME@ID` is the run of NAME with that id.
    A NAME with several runs means the latest one; with *active* (the command, e.g. `stop`)
    the one run still going or resumable, and several of those are an error listing them.
    Otherwise NAME is resolved like `ll-loop run` does (a path, `.loops/NAME.fsm.yaml`,
    `.loops/NAME.yaml`) and the loop that file defines is used (`loop_name_of`).
    An unknown name raises the resolver's message, which lists the loops there are.
    """
    from little_loops.fsm.runs.which import keys_of, pick_run

    if "@" in name_or_path and has_state(name_or_path, loops_dir):
        return name_or_path  # an exact run key (or an old loop with `@` in its name)
    name, run_id = split_run_key(name_or_path)
    if run_id is not None:
        return pick_run(loops_dir, name, run_id)
    if not keys_of(loops_dir, name_or_path):
        from little_loops.cli.resolve import resolve_loop_path

        name = loop_name_of(resolve_loop_path(name_or_path, loops_dir, stale_ok=True))
    return pick_run(loops_dir, name, None, active=active)


def loop_name_of(path: Path) -> str:
    """The name the loop file at `path` runs under, which names its run files.

    That is its `name:`, else the name its paradigm gives it (a `goal` file without `name:`
    runs as `goal-<words of the goal>`), else, for a file that does not compile, its file
    name without suffixes. Raises LoopError for a file that cannot be read.
    """
    from little_loops.fsm.definition.loader import load_file
    from little_loops.fsm.paradigms.registry import compile_paradigm

    data = load_file(path).data
    name = data.get("name") if isinstance(data, dict) else None
    if not (isinstance(name, str) and name):
        try:
            name = compile_paradigm(data).name
        except LoopDefinitionError:
            name = path.name.split(".")[0]
    return validate_loop_name(name)
