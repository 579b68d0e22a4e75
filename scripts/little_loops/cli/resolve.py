"""Turn a loop NAME or PATH from the command line into a loop file path."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from little_loops.fsm.definition.reading.loop_files import (
    COMPILED_SUFFIX,
    SOURCE_SUFFIXES,
    is_loop_file,
    loop_file_stem,
)
from little_loops.fsm.definition.reading.loop_files import LOOP_SUFFIXES as LOOP_SUFFIXES
from little_loops.fsm.facts.errors import LoopDefinitionError, LoopFileError
from little_loops.fsm.facts.runfile import kind_of
from little_loops.fsm.facts.suggest import did_you_mean


def project_loops_dir() -> Path:
    """The `.loops` a command uses (`default_loops_dir`): `.loops` when it is the current
    folder's; when it is a parent's, its absolute path, with a note on stderr saying so."""
    from little_loops.fsm.facts.layout import LOOPS_DIR_NAME, default_loops_dir

    found = default_loops_dir()
    _note_worktree(found)
    if found.parent == Path.cwd():
        return Path(LOOPS_DIR_NAME)
    print(f"ll-loop: using {found}", file=sys.stderr)
    return found


def _note_worktree(loops_dir: Path) -> None:
    """Tell a person working in a run's worktree that the runs are seen from the main
    checkout (not said to a run's own actions: they carry its LL_LOOP_RUN marker)."""
    from little_loops.fsm.facts.layout import WORKTREES_DIR

    if WORKTREES_DIR not in loops_dir.absolute().parts:  # the usual case: nothing to import
        return
    from little_loops.fsm.runs.orphans import RUN_MARKER_ENV
    from little_loops.fsm.runs.place import enclosing_worktree

    found = enclosing_worktree(loops_dir)
    if found is None or os.environ.get(RUN_MARKER_ENV):
        return
    main, key = found
    print(
        f"ll-loop: note: this folder is the worktree of run {key}; run ll-loop in"
        f" {main.parent} to see its runs",
        file=sys.stderr,
    )


def _looks_like_path(text: str) -> bool:
    return "/" in text or "\\" in text or text.endswith(SOURCE_SUFFIXES)


def _in_a_folder(name: str, loops_dir: Path) -> Path | None:
    """The loop a name with folders (`oracles/x`, as little-loops names a loop in a folder
    of `.loops/`) names there, or None: a relative name without a suffix or `..` only."""
    parts = Path(name).parts
    if Path(name).is_absolute() or ".." in parts or name.endswith(SOURCE_SUFFIXES):
        return None
    for suffix in LOOP_SUFFIXES:
        candidate = loops_dir / f"{name}{suffix}"
        if _is_file(candidate):
            return candidate
    return None


def available_loops(loops_dir: Path) -> list[str]:
    """The loop names in *loops_dir* (`x` for x.yaml, x.yml and x.fsm.yaml), sorted."""
    if not loops_dir.is_dir():
        return []
    names: set[str] = set()
    for entry in loops_dir.iterdir():
        if is_loop_file(entry) and entry.is_file():
            names.add(loop_file_stem(entry))
    return sorted(names)


def resolve_loop_path(name_or_path: str, loops_dir: Path, *, stale_ok: bool = False) -> Path:
    """The loop file for *name_or_path*: `library:NAME` (a shipped loop), an existing file,
    else `.loops/NAME.fsm.yaml`, `.loops/NAME.yaml` or `.loops/NAME.yml`.

    Raises LoopFileError for a PATH that is not a file, and LoopDefinitionError naming
    what was looked for and the loops there are for a NAME that is not found, or (unless
    `stale_ok`) for a NAME whose `NAME.fsm.yaml` is older than its source.
    """
    from little_loops.loops import LIBRARY_PREFIX

    if name_or_path.startswith(LIBRARY_PREFIX):  # a shipped loop, used where it is installed
        from little_loops.loops import library_loop_path

        return library_loop_path(name_or_path[len(LIBRARY_PREFIX) :])
    given = Path(name_or_path)
    if _is_file(given):
        return given
    if _looks_like_path(name_or_path):
        folder_name = _in_a_folder(name_or_path, loops_dir)  # `oracles/x`: .loops/oracles/x.yaml
        if folder_name is not None:
            return folder_name
        if given.is_dir():
            raise LoopFileError(name_or_path, "is a directory, not a loop file")
        if given.exists():  # a FIFO, a socket, a device: never opened (it may never answer)
            kind = kind_of(given.stat().st_mode)
            raise LoopFileError(name_or_path, f"is {kind}, not a loop file")
        raise LoopFileError(name_or_path, "no such file")
    candidates = [loops_dir / f"{name_or_path}{suffix}" for suffix in LOOP_SUFFIXES]
    for candidate in candidates:
        if _is_file(candidate):
            if not stale_ok:
                _refuse_stale(candidate)
            return candidate
    names = available_loops(loops_dir)
    looked = ", ".join(str(c) for c in candidates)
    hint = did_you_mean(name_or_path, names) or _shipped_hint(name_or_path)
    if names:
        known = f"available: {', '.join(names)}"
    elif loops_dir.is_dir():
        known = f"{loops_dir}/ has no loops"
    else:
        known = f"there is no {loops_dir}/ folder here or above ('ll-loop init' makes one)"
    raise LoopDefinitionError(f"no loop named '{name_or_path}'{hint}; looked for {looked}; {known}")


def _shipped_hint(name: str) -> str:
    """` (did you mean library:X?)` when *name* is close to a shipped loop's name X."""
    from little_loops.fsm.facts.suggest import closest
    from little_loops.loops import LIBRARY_PREFIX, library_loops

    close = closest(name, library_loops())
    return f" (did you mean {LIBRARY_PREFIX}{close}?)" if close else ""


def compiled_sources(path: Path) -> list[Path]:
    """The `X.yaml`/`X.yml` beside *path* when it is a compiled `X.fsm.yaml` (which a NAME
    means first), that exist."""
    name = path.name
    if not name.endswith(COMPILED_SUFFIX) or len(name) == len(COMPILED_SUFFIX):
        return []
    stem = name[: -len(COMPILED_SUFFIX)]
    return [p for p in (path.with_name(stem + s) for s in SOURCE_SUFFIXES) if _is_file(p)]


def _stale_source(path: Path) -> Path | None:
    """The source `X.yaml`/`X.yml` edited after *path*, a compiled `X.fsm.yaml`, if any."""
    for source in compiled_sources(path):
        try:
            if source.stat().st_mtime > path.stat().st_mtime:
                return source
        except OSError:
            continue
    return None


def _refuse_stale(path: Path) -> None:
    """A NAME must not silently mean a compiled file older than the source beside it."""
    source = _stale_source(path)
    if source is not None:
        raise LoopDefinitionError(
            f"{path} is older than {source}, which was edited after it was compiled; "
            f"re-compile it with 'll-loop compile {source} -o {path}' or delete {path}"
        )


def stale_compiled_note(path: Path) -> str | None:
    """A note when *path*, given as a path, is a compiled `X.fsm.yaml` older than its source."""
    source = _stale_source(path)
    if source is None:
        return None
    return (
        f"{path} is older than {source}: it runs as compiled before that edit; "
        f"refresh it with 'll-loop compile {source} -o {path}' (or delete it)"
    )


def _is_file(path: Path) -> bool:
    """Whether *path* is a file; a name too long for the file system is none (not an error)."""
    try:
        return path.is_file()
    except OSError:  # ENAMETOOLONG: `NAME.fsm.yaml` of a 250-letter NAME.yaml
        return False
