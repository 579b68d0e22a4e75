"""Which run a NAME on the command line means: a run's state file, else a loop file's name."""

from __future__ import annotations

from pathlib import Path

from little_loops.fsm.errors import LoopDefinitionError
from little_loops.fsm.runs.layout import run_files, validate_loop_name


def has_state(name: str, loops_dir: Path) -> bool:
    """A state file exists for the loop called `name`."""
    try:
        validate_loop_name(name)
    except LoopDefinitionError:
        return False
    return run_files(name, loops_dir).state.is_file()


def run_name(name_or_path: str, loops_dir: Path) -> str:
    """The loop name whose run files `name_or_path` refers to.

    A name with a state file is taken as it is; otherwise it is resolved like `ll-loop run`
    does (a path, `.loops/NAME.fsm.yaml`, `.loops/NAME.yaml`) and the loop that file
    defines is used (`loop_name_of`).
    An unknown name raises the resolver's message, which lists the loops there are.
    """
    if has_state(name_or_path, loops_dir):
        return name_or_path
    from little_loops.cli.resolve import resolve_loop_path

    return loop_name_of(resolve_loop_path(name_or_path, loops_dir, stale_ok=True))


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
