"""Name lengths: a loop's and its states' names checked against the file names runs make of them."""

from __future__ import annotations

from collections.abc import Iterable

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.definition.reading.loop_files import loop_file_stem
from little_loops.fsm.facts.errors import LoopDefinitionError, ValidationError

# `layout` is imported where it is used: its patterns are compiled at import, and `validate`
# compiles none it does not need (cli/test_init.py).


def run_names(fsm: FSMLoop, source: str | None) -> list[str]:
    """The names runs of *fsm* may go by: the loop file's name without its suffix (as `run`
    names them), when it can name files, and the loop's own `name:` (as a sub-loop)."""
    from little_loops.fsm.facts.layout import validate_loop_name

    names = [fsm.name] if isinstance(fsm.name, str) and fsm.name else []
    if source:
        try:
            stem = validate_loop_name(loop_file_stem(source))
        except LoopDefinitionError:
            return names
        names = [stem, *(name for name in names if name != stem)]
    return names


def _longest(names: Iterable[str]) -> tuple[str, int]:
    from little_loops.fsm.facts.layout import name_bytes

    name = max(names, key=name_bytes)
    return name, name_bytes(name)


def name_length_problems(fsm: FSMLoop, loop_names: Iterable[str]) -> list[ValidationError]:
    """An error for each name that would make a file name longer than FILE_NAME_MAX bytes
    (the runs' files of a loop going by one of *loop_names*, the output files of each of its
    states): every run of it, or every pass through that state, would fail to write it."""
    from little_loops.fsm.facts.layout import (
        FILE_NAME_MAX,
        run_file_names,
        state_file_names,
    )

    problems: list[ValidationError] = []
    for loop in loop_names:
        file, size = _longest(run_file_names(loop))
        if size > FILE_NAME_MAX:
            message = (
                f"a run of it makes a file name {size} bytes long ({_cut(file)}), over the"
                f" {FILE_NAME_MAX} a file name may have: shorten the loop's name by"
                f" {size - FILE_NAME_MAX} bytes"
            )
            problems.append(ValidationError.at(loop, ("name",), message))
            continue
        # The longest any state's files can be (a name past the cap, changed): when that
        # fits, every state's does, and a 20,000-state loop is not measured name by name.
        if _longest(state_file_names(loop))[1] <= FILE_NAME_MAX:
            continue
        for state in fsm.states:
            file, size = _longest(state_file_names(loop, str(state)))
            if size > FILE_NAME_MAX:
                message = (
                    f"its action's output file name would be {size} bytes long"
                    f" ({_cut(file)}), over the {FILE_NAME_MAX} a file name may have: shorten"
                    f" the state's name, or the loop's by {size - FILE_NAME_MAX} bytes"
                )
                problems.append(ValidationError.at(loop, ("states", str(state)), message))
    return problems


def _cut(file: str) -> str:
    """A long file name as messages show it: its start and end."""
    return file if len(file) <= 40 else f"{file[:16]}...{file[-20:]}"
