"""The kinds of file a `.loops/` folder holds, each checked as what it is, and a project's all.

A `.loops/` folder holds loop files, the project's custom agents (`.loops/agents.yaml`) and
fragment libraries (a top-level `fragments:` or `import:`, no loop of their own, usually in
`.loops/lib/`). `FILE_KINDS` lists them in the order a file is matched against them: the
first whose `is_one` says yes checks it (a loop takes every file the others do not).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from little_loops.fsm.definition.checks.key_tables import STATE_KEYS
from little_loops.fsm.definition.model.agents import check_project_agents
from little_loops.fsm.definition.model.reuse_keys import FRAGMENTS_KEY, IMPORT_KEY
from little_loops.fsm.definition.reading.loader import (
    LoadedDocument,
    load_file,
    no_cycle_collection,
)
from little_loops.fsm.definition.reading.loop_files import (
    AGENTS_FILE_NAME,
    LOOPS_FOLDER,
    SOURCE_SUFFIXES,
    FolderNames,
)
from little_loops.fsm.facts.errors import LoopFileError, ValidationError
from little_loops.fsm.facts.layout import THEIR_RUN_DIRS
from little_loops.fsm.facts.suggest import did_you_mean
from little_loops.fsm.validate.loopfile import FileReport, check_file, file_problem

# The keys of a fragment library, and what a fragment may hold besides a state's keys.
LIBRARY_KEYS: tuple[str, ...] = (IMPORT_KEY, FRAGMENTS_KEY)
FRAGMENT_ONLY_KEYS: tuple[str, ...] = ("description", "parameters")
# A file with one of these is a loop (a base loop may import libraries), never a library.
_LOOP_MARKS: tuple[str, ...] = ("name", "initial", "states", "flow", "state_defs", "from")


@dataclass(frozen=True)
class FileKind:
    """One kind of file of `.loops/`: how to tell one (by its path and its data, None when
    it cannot be read) and how to check it."""

    name: str
    is_one: Callable[[Path, LoadedDocument | None], bool]
    check: Callable[[Path, LoadedDocument | None, FolderNames, bool], FileReport]


def _is_agents_file(path: Path, doc: LoadedDocument | None) -> bool:
    return path.name == AGENTS_FILE_NAME and path.absolute().parent.name == LOOPS_FOLDER


def _check_agents_file(
    path: Path, doc: LoadedDocument | None, folder: FolderNames, compat: bool
) -> FileReport:
    return FileReport(str(path), errors=check_project_agents(path)[1])


def _is_library(path: Path, doc: LoadedDocument | None) -> bool:
    """No key of a loop, and `fragments:` or `import:` (or a key misspelling one)."""
    data = doc.data if doc is not None else {}
    if any(key in data for key in _LOOP_MARKS):
        return False
    return any(key in LIBRARY_KEYS or did_you_mean(str(key), LIBRARY_KEYS) for key in data)


def _check_library(
    path: Path, doc: LoadedDocument | None, folder: FolderNames, compat: bool
) -> FileReport:
    """The top-level keys, each fragment a mapping of state keys, every import found. A
    fragment's values are checked in the loops that use it, once its parameters are bound."""
    if doc is None:  # not read: as a loop file, which says why
        return check_file(path, folder, compat)
    problems: list[ValidationError] = []
    lines = doc

    def add(path_: tuple[str, ...], message: str) -> None:
        problem = ValidationError.at(None, path_, message)
        problem.line = lines.line_of(path_)
        problems.append(problem)

    for key in doc.data:
        if key not in LIBRARY_KEYS:
            add((str(key),), f"unknown key{_hint(str(key), LIBRARY_KEYS)}")
    fragments = doc.data.get(FRAGMENTS_KEY)
    if fragments is not None and not isinstance(fragments, Mapping):
        add((FRAGMENTS_KEY,), "expected a mapping of fragment names to state settings")
    allowed = (*STATE_KEYS, *FRAGMENT_ONLY_KEYS)
    for name, body in (fragments if isinstance(fragments, Mapping) else {}).items():
        where = (FRAGMENTS_KEY, str(name))
        if not isinstance(body, Mapping):
            add(where, "expected a mapping of state settings")
            continue
        for key in body:
            if key not in allowed:
                add((*where, str(key)), f"unknown key{_hint(str(key), allowed)}")
    if not problems:
        # Here, not at the top: a loop without reuse keys is checked without these modules.
        from little_loops.fsm.definition.reading.reuse import library_fragments

        try:
            library_fragments(path)
        except LoopFileError as exc:
            problems.append(file_problem(exc, path))
    return FileReport(str(path), errors=sorted(problems, key=lambda p: p.line or 0))


def _hint(key: str, allowed: tuple[str, ...]) -> str:
    return did_you_mean(key, allowed) or f" (allowed: {', '.join(allowed)})"


def _is_loop(path: Path, doc: LoadedDocument | None) -> bool:
    return True


def _check_loop(
    path: Path, doc: LoadedDocument | None, folder: FolderNames, compat: bool
) -> FileReport:
    return check_file(path, folder, compat, loaded=doc)


FILE_KINDS: dict[str, FileKind] = {
    kind.name: kind
    for kind in (
        FileKind("agents", _is_agents_file, _check_agents_file),
        FileKind("fragment library", _is_library, _check_library),
        FileKind("loop", _is_loop, _check_loop),
    )
}


def _read(path: Path) -> LoadedDocument | None:
    """The file's data, None when it cannot be read (the kind it is checked as says why)."""
    if _is_agents_file(path, None):
        return None  # its own check reads it
    try:
        return load_file(path)
    except LoopFileError:
        return None


def _kind(path: Path, doc: LoadedDocument | None) -> FileKind:
    return next(kind for kind in FILE_KINDS.values() if kind.is_one(path, doc))


def kind_of_file(path: Path) -> FileKind:
    """The kind of file of `.loops/` the file at *path* is."""
    return _kind(path, _read(path))


def check_project_file(path: Path, folder: FolderNames, compat: bool = False) -> FileReport:
    """Check the file at *path* as the kind of file of `.loops/` it is."""
    with no_cycle_collection():  # from its reading on (see there)
        doc = _read(path)
        return _kind(path, doc).check(path, doc, folder, compat)


def project_files(loops_dir: Path) -> list[Path]:
    """Every YAML file of the project's *loops_dir*, its subfolders too, in name order; not
    the run files (`.running/`, `.history/`, `.worktrees/`: any dot folder; `runs/`, where a
    `--compat` run keeps its files) nor dot files. A linked folder is not followed (it may
    lead out of the project, or back into it)."""
    found: list[Path] = []
    for top, folders, files in os.walk(loops_dir):
        left_out = {THEIR_RUN_DIRS} if Path(top) == Path(loops_dir) else set()
        folders[:] = sorted(n for n in folders if not n.startswith(".") and n not in left_out)
        found.extend(
            Path(top) / name
            for name in sorted(files)
            if not name.startswith(".") and name.endswith(SOURCE_SUFFIXES)
        )
    return found
