"""What under `.loops/` is ll-loop's own: the folders it writes into, never links; run output."""

from __future__ import annotations

import os
from pathlib import Path

from little_loops.fsm.facts.layout import (
    HISTORY_DIR,
    MEMORY_DIR,
    OUTPUT_SUFFIX,
    RUNNING_DIR,
    WORKTREES_DIR,
    make_running_dir,
    running_dir,
)

# Every folder right under `.loops/` that ll-loop makes or writes into; a folder under one of
# them is ll-loop's too (`.running/runs/<run>/`, `.history/<loop>/`). Each, and each folder
# on the way down to where a file is written, is refused when it is a symbolic link: a run's
# files are never written wherever a planted link points (make_own_folder).
OWN_FOLDERS = (RUNNING_DIR, HISTORY_DIR, WORKTREES_DIR, MEMORY_DIR)


def own_parts(folder: Path | str, loops_dir: Path) -> tuple[str, ...] | None:
    """The names on the way from *loops_dir* down to *folder* when *folder* is in one of
    OWN_FOLDERS (said with *loops_dir* as given, or as its real path), else None."""
    for base in (os.path.abspath(loops_dir), os.path.realpath(loops_dir)):
        relative = os.path.relpath(os.path.abspath(folder), base)
        parts = Path(relative).parts
        if parts and parts[0] in OWN_FOLDERS:
            return parts
    return None


def make_own_folder(folder: Path | str, loops_dir: Path) -> Path:
    """Make *folder*, inside one of OWN_FOLDERS of *loops_dir*, and the folders on the way;
    the first ignored by git (make_running_dir). NotOurFile when any of them is a symbolic
    link: nothing is made or written wherever it points."""
    from little_loops.fsm.facts.runfile import refused

    parts = own_parts(folder, loops_dir)
    if parts is None or ".." in parts:
        raise ValueError(f"{folder} is in no folder of ll-loop's under {loops_dir}")
    here = make_running_dir(Path(loops_dir) / parts[0])
    for part in parts[1:]:
        here = here / part
        if here.is_symlink():  # its files would be written wherever it points
            raise refused(here, "a symbolic link")
        here.mkdir(exist_ok=True)
    return here


def make_history_dir(loops_dir: Path, loop_name: str) -> Path:
    """`<loops_dir>/.history/<loop_name>/`, created if needed; `.history/` ignored by git (a
    `.gitignore` holding `*`) and refused when it, or the loop's folder, is a symbolic link."""
    return make_own_folder(Path(loops_dir) / HISTORY_DIR / loop_name, loops_dir)


def run_output(path: object, key: str, loops_dir: Path) -> str | None:
    """*path* (an event's `output_path`: data, which may name any file) when it is an output
    file of the run *key* (`<key>.<state>.out` in its `.running/`), else None: nothing
    else is ever opened as the output of a run."""
    if not isinstance(path, str) or not path:
        return None
    given, prefix = Path(path), f"{key}."
    middle = given.name[len(prefix) :].removesuffix(OUTPUT_SUFFIX)
    if not (given.name.startswith(prefix) and given.name.endswith(OUTPUT_SUFFIX)):
        return None
    if not middle or "." in middle:  # `x.a.b.out` is loop `x.a`'s, not loop `x`'s
        return None
    here = os.path.realpath(running_dir(loops_dir))
    return path if os.path.realpath(given.parent) == here else None
