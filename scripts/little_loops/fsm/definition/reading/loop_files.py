"""Loop files of a `.loops/` folder: their suffixes, the name one runs under, its `name:` checked.

A file's `name:` should be its file name, and no other file's there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from little_loops.fsm.facts.errors import LoopFileError, ValidationError

# Looked for in this order: a compiled FSM first, then the file as written.
COMPILED_SUFFIX = ".fsm.yaml"  # `ll-loop compile X.yaml -o X.fsm.yaml`
SOURCE_SUFFIXES: tuple[str, ...] = (".yaml", ".yml")  # a loop file as written
LOOP_SUFFIXES: tuple[str, ...] = (COMPILED_SUFFIX, *SOURCE_SUFFIXES)
LOOPS_FOLDER = ".loops"  # the folder whose files are checked against each other
LOOP_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$"  # what a `name:` may be
# `.loops/agents.yaml` declares the custom agents every loop of the project sees: no loop.
AGENTS_FILE_NAME = "agents.yaml"


def is_loop_file(path: Path) -> bool:
    """Whether *path*, an entry of a `.loops/` folder, is a loop file: a loop suffix, not a
    hidden file, not the project's agents file."""
    name = path.name
    return not name.startswith(".") and loop_file_stem(path) != name and name != AGENTS_FILE_NAME


def loop_file_stem(path: Path | str) -> str:
    """The loop name a file stands for: its name without `.fsm.yaml`, `.yaml` or `.yml`
    (`tut2` for `.loops/tut2.yaml`). A loop's runs are named by it, whatever its `name:`."""
    name = Path(path).name
    for suffix in LOOP_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def declared_name(data: Any) -> str | None:
    """The `name:` a loop file's data declares, if it is a non-empty string."""
    name = data.get("name") if isinstance(data, Mapping) else None
    return name if isinstance(name, str) and name else None


class FolderNames:
    """The `name:` each loop file of a `.loops/` folder declares, read once per folder."""

    def __init__(self) -> None:
        self._folders: dict[Path, dict[str, list[Path]]] = {}

    def files_named(self, folder: Path, name: str) -> list[Path]:
        """The loop files in *folder* that declare `name: NAME`, by file name."""
        key = folder.resolve()
        if key not in self._folders:
            self._folders[key] = _read_names(folder)
        return self._folders[key].get(name, [])


def _read_names(folder: Path) -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {}
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return found
    for path in entries:
        if not is_loop_file(path) or not path.is_file():
            continue  # run files, dot files, files that are not loop files
        name = name_in_file(path)
        if name is not None:
            found.setdefault(name, []).append(path)
    return found


def name_in_file(path: Path) -> str | None:
    """The top-level `name:` of the loop file at *path*, read from the start of its YAML
    event stream (nothing is built, and reading stops at the name); None when it has none or
    cannot be read or parsed: its own validation says what is wrong with it."""
    import yaml

    from little_loops.fsm.definition.reading.loader import read_file

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        events = yaml.parse(read_file(path), Loader=loader)
        return _top_level_name(events)
    except (LoopFileError, yaml.YAMLError):
        return None


def _top_level_name(events: Iterator[Any]) -> str | None:
    """The scalar after the key `name` of the first document's top mapping, if any."""
    import yaml

    depth, is_key, after_name = 0, True, False
    for event in events:
        if isinstance(event, yaml.DocumentEndEvent):
            return None
        if depth == 1 and after_name:  # the value of `name:`
            return _string(event) if isinstance(event, yaml.ScalarEvent) else None
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            if depth == 0 and isinstance(event, yaml.SequenceStartEvent):
                return None  # not a mapping of loop settings
            if depth == 1:
                is_key = True  # a collection is a value; the next event at depth 1 is a key
            depth += 1
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1
        elif depth == 1 and isinstance(event, yaml.ScalarEvent | yaml.AliasEvent):
            after_name = is_key and isinstance(event, yaml.ScalarEvent) and event.value == "name"
            is_key = not is_key
    return None


def _string(event: Any) -> str | None:
    """A scalar event's text when YAML reads it as a non-empty string (`name: 12` is a
    number, as the loader reads it)."""
    import yaml

    resolver: Any = yaml.resolver.Resolver()
    tag = event.tag or resolver.resolve(yaml.ScalarNode, event.value, event.implicit)
    return event.value if tag == "tag:yaml.org,2002:str" and event.value else None


def folder_problems(path: Path, data: Any, names: FolderNames) -> list[ValidationError]:
    """A loop file in a `.loops/` folder whose `name:` is not its file name (a warning: its
    runs go by the file name), or is also another loop file's there (an error)."""
    name = declared_name(data)
    if name is None or path.parent.name != LOOPS_FOLDER:
        return []
    stem = loop_file_stem(path)
    problems = []
    others = [p for p in names.files_named(path.parent, name) if loop_file_stem(p) != stem]
    if others:
        shown = ", ".join(str(path.parent / p.name) for p in others)
        message = (
            f"'{name}' is also the name of {shown}: two loop files with one name; name each"
            f" after its file (this one: {_how_to_name(stem).removeprefix('write ')})"
        )
        problems.append(ValidationError.at(name, ("name",), message))
    if name != stem and not path.name.endswith(COMPILED_SUFFIX):
        message = (
            f"'{name}' is not the file name '{stem}': the loop runs as '{stem}' (its run files"
            f" and `ll-loop status {stem}`); {_how_to_name(stem)}"
        )
        problems.append(ValidationError.at(name, ("name",), message, "warning"))
    return problems


def _how_to_name(stem: str) -> str:
    """`name: STEM`, or, when STEM cannot be a `name:` (a space, a leading dash, ...), the
    advice to rename the file: validate must never suggest a name it refuses."""
    if re.fullmatch(LOOP_NAME_PATTERN, stem):
        return f"write name: {stem}"
    return (
        f"rename the file: '{stem}' cannot be a name: (letters, digits, '.', '_' and '-',"
        " starting with a letter or digit)"
    )
