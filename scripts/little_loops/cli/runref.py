"""Which run a NAME (and `--run ID`) on the command line means: its state file or archive.

A run's state file, else a loop file's name; with `--run ID`, a finished run kept in
`.loops/.history/`.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from little_loops.fsm.definition.reading.loop_files import loop_file_stem
from little_loops.fsm.facts.errors import LoopDefinitionError, LoopError
from little_loops.fsm.facts.layout import run_files, split_run_key, validate_loop_name

if TYPE_CHECKING:
    from little_loops.fsm.definition.model.typed import FSMLoop


def add_run_argument(parser: argparse.ArgumentParser) -> None:
    """The NAME[@ID] every command about a run takes (`run_name` says what it means)."""
    parser.add_argument(
        "loop", metavar="NAME[@ID]", help="loop name (or loop file path), or NAME@ID for one run"
    )


def add_run_option(parser: argparse.ArgumentParser) -> None:
    """The `--run ID` option of the commands that can show an archived run."""
    parser.add_argument(
        "--run",
        metavar="ID",
        dest="run_id",
        help="a finished run kept in .loops/.history/ (an id from `ll-loop runs`, its start, "
        "or `last`) instead of the current one",
    )


def archived_name(name: str, loops_dir: Path) -> str:
    """The loop whose archive NAME means: a loop with an archive folder by that name, else
    the loop a NAME or PATH names as other commands resolve it."""
    from little_loops.fsm.runs.archive import archived_loops

    if name in archived_loops(loops_dir):
        return name
    return split_run_key(run_name(name, loops_dir))[0]  # NAME@ID: NAME's archive


def shown_run(name: str, run_ref: str | None, loops_dir: Path) -> tuple[str, Path | None]:
    """What NAME and `--run` *run_ref* show: (the run key NAME means, None) for the current
    run; with *run_ref*, (the loop's name, the folder of its archived run), and
    LoopRuntimeError when it has no such run."""
    if run_ref is None:
        return run_name(name, loops_dir), None
    from little_loops.fsm.runs.archive import find_run

    loop = archived_name(name, loops_dir)
    _, files = find_run(loops_dir, loop, run_ref)
    return loop, files.running_dir


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

        path = resolve_loop_path(name_or_path, loops_dir, stale_ok=True)
        name = loop_name_of(path, loops_dir)
    return pick_run(loops_dir, name, None, active=active)


def runs_as(path: Path) -> str | None:
    """The name runs of the loop file at *path* go by: the file's name without suffixes
    (`tut2` for `.loops/tut2.yaml`, whatever its `name:` says, so that a copy of a loop
    runs apart from the original). None when that cannot name run files."""
    try:
        return validate_loop_name(loop_file_stem(path))
    except LoopDefinitionError:
        return None


def named_as_run(fsm: FSMLoop, path: Path) -> FSMLoop:
    """*fsm*, loaded from *path*, with the name its run goes by (`runs_as`); its own name
    where the file name cannot be one."""
    name = runs_as(path) or fsm.name
    return fsm if name == fsm.name else dataclasses.replace(fsm, name=name)


def loop_name_of(path: Path, loops_dir: Path | None = None) -> str:
    """The name the loop file at `path` runs under, which names its run files (`runs_as`).

    Runs started before runs went by the file name went by the name the file declares;
    given *loops_dir*, a file with no runs under its file name but some under that name
    means those, unless a loop file beside it has that name (they are that file's runs).
    Raises LoopError for a file that cannot be read when its name is needed.
    """
    from little_loops.cli.resolve import available_loops
    from little_loops.fsm.runs.which import keys_of

    name = runs_as(path)
    if name is None:
        return declared_run_name(path)
    if loops_dir is not None and not keys_of(loops_dir, name):
        older = declared_run_name(path, fallback=name)
        theirs = older in available_loops(path.parent)  # runs of the file named so
        if older != name and keys_of(loops_dir, older) and not theirs:
            return older
    return name


def declared_run_name(path: Path, *, fallback: str | None = None) -> str:
    """The name the loop file at *path* declares: its `name:`, else the name its paradigm
    gives it (a `goal` file without `name:` is `goal-<words of the goal>`), else (a file
    that does not compile) *fallback* or its file name without suffixes."""
    from little_loops.fsm.definition.reading.loop_files import declared_name
    from little_loops.fsm.definition.reading.loopdoc import load_loop
    from little_loops.fsm.paradigms.registry import compile_paradigm

    try:
        data = load_loop(path).data
    except LoopError:
        if fallback is None:
            raise
        return fallback
    name = declared_name(data)
    if name is None:
        try:
            name = compile_paradigm(data).name
        except LoopDefinitionError:
            name = fallback or loop_file_stem(path)
    try:
        return validate_loop_name(name)
    except LoopDefinitionError:
        if fallback is None:
            raise
        return fallback
