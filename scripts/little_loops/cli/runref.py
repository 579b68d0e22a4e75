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
    does (a path, `.loops/NAME.fsm.yaml`, `.loops/NAME.yaml`) and the file's `name:` is used.
    An unknown name raises the resolver's message, which lists the loops there are.
    """
    if has_state(name_or_path, loops_dir):
        return name_or_path
    from little_loops.cli.resolve import resolve_loop_path
    from little_loops.fsm.definition.loader import load_file

    path = resolve_loop_path(name_or_path, loops_dir)
    name = load_file(path).data.get("name")
    if isinstance(name, str) and name:
        return validate_loop_name(name)
    return validate_loop_name(path.name.split(".")[0])
