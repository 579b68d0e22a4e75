"""Where a run happens: its short id, and the git worktree it runs in (None: the main checkout)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.layout import (
    LOOPS_DIR_NAME,
    RUN_ID_ALPHABET,
    RUN_ID_LENGTH,
    WORKTREES_DIR,
    files_key,
    run_files,
    run_key,
    split_run_key,
    worktree_branch,
    worktree_path,
)
from little_loops.fsm.facts.runfile import display_path

# The keys of a worktree run's `worktree` in its state file.
_WORKTREE_KEYS = ("path", "workdir", "branch", "base")


@dataclass(frozen=True)
class RunPlace:
    """A run's id, and for a `--worktree` run its worktree, the loop's folder in it (its
    cwd), its branch and the commit it started from."""

    run_id: str | None  # None: a run saved by a version before run ids (resumed as it was)
    path: Path | None = None  # the worktree's top folder; None: the main checkout
    workdir: Path | None = None  # the loop's cwd inside the worktree
    branch: str | None = None
    base: str | None = None  # the sha the branch started from

    @property
    def in_worktree(self) -> bool:
        return self.path is not None

    def key(self, loop_name: str) -> str:
        """What the run's files are named by (LoopState.key says the same of a saved run)."""
        return files_key(loop_name, self.run_id, self.in_worktree)

    def to_state(self) -> dict[str, str] | None:
        """The state file's `worktree` (None in the main checkout)."""
        if self.path is None:
            return None
        values = (self.path, self.workdir or self.path, self.branch or "", self.base or "")
        return {key: str(value) for key, value in zip(_WORKTREE_KEYS, values, strict=True)}

    @classmethod
    def of_state(
        cls,
        run_id: str | None,
        worktree: dict[str, str] | None,
        loops_dir: Path,
        loop_name: str,
    ) -> RunPlace:
        """The place a saved run ran in (its state file's `run_id` and `worktree`).

        A state file is not trusted to say where to work: the worktree must be the one
        ll-loop makes for this run (`.loops/.worktrees/NAME@ID`), the folder the loop ran
        in must lie inside it, and the branch must be `ll/NAME/ID`; else LoopRuntimeError."""
        if not worktree:
            return cls(run_id)
        if run_id is None:
            raise LoopRuntimeError("the run's state file names a worktree but no run id")
        expected = worktree_path(Path(loops_dir).resolve(), loop_name, run_id)
        path = Path(worktree.get("path") or "")
        workdir = Path(worktree.get("workdir") or path)
        branch = worktree.get("branch") or ""
        inside = workdir.resolve() == path.resolve() or path.resolve() in workdir.resolve().parents
        if path == expected and path.resolve() != expected:  # a symbolic link put there
            raise LoopRuntimeError(
                f"{display_path(path)} is a symbolic link to {path.resolve()}, not the worktree"
                f" of run {run_key(loop_name, run_id)}; not going on there"
            )
        if path != expected or not inside or branch != worktree_branch(loop_name, run_id):
            raise LoopRuntimeError(
                f"the state file of run {run_key(loop_name, run_id)} names a worktree other"
                f" than its own ({expected}, branch {worktree_branch(loop_name, run_id)});"
                " not going on there"
            )
        return cls(run_id, path, workdir, branch, worktree.get("base") or None)


def id_taken(loops_dir: Path, loop_name: str, run_id: str) -> bool:
    """A run of *loop_name* with *run_id* has files or a worktree (its branch is checked
    when the worktree is made)."""
    files = run_files(run_key(loop_name, run_id), loops_dir)
    taken = (files.state, files.lock, worktree_path(loops_dir, loop_name, run_id))
    return any(os.path.lexists(path) for path in taken)


def new_run_id(loops_dir: Path, loop_name: str) -> str:
    """A fresh short id for a run of *loop_name* (`id_taken` by none)."""
    for _ in range(100):
        raw = os.urandom(RUN_ID_LENGTH)
        run_id = "".join(RUN_ID_ALPHABET[byte % len(RUN_ID_ALPHABET)] for byte in raw)
        if not id_taken(loops_dir, loop_name, run_id):
            return run_id
    raise LoopRuntimeError(f"no free run id for loop '{loop_name}' after 100 tries")


def describe(place: RunPlace | None) -> dict[str, Any]:
    """The place as the `loop_start` event records it."""
    if place is None:
        return {}
    data: dict[str, Any] = {} if place.run_id is None else {"run_id": place.run_id}
    worktree = place.to_state()
    if worktree is not None:
        data["worktree"] = worktree
    return data


def enclosing_worktree(loops_dir: Path) -> tuple[Path, str] | None:
    """(the main checkout's `.loops`, the run key) when *loops_dir* lies in the worktree of
    a `--worktree` run (`<main>/.loops/.worktrees/NAME@ID/...`), else None."""
    here = Path(loops_dir).resolve()
    for folder in here.parents:
        parent = folder.parent
        if parent.name == WORKTREES_DIR and parent.parent.name == LOOPS_DIR_NAME:
            return parent.parent, folder.name
    return None


def refuse_inside_live_worktree(loops_dir: Path) -> None:
    """A run started in the folder of a live worktree run would edit its files beside it,
    unseen by its scope lock (the lock lives in the main checkout): refused, unless the run
    is started by that run's own actions (they carry its `LL_LOOP_RUN` marker)."""
    from little_loops.fsm.facts.errors import ScopeConflictError
    from little_loops.fsm.runs.locks import live_claim
    from little_loops.fsm.runs.orphans import RUN_MARKER_ENV, run_marker

    found = enclosing_worktree(loops_dir)
    if found is None:
        return
    main, key = found
    try:
        holder = live_claim(key, main)
    except LoopRuntimeError:  # an unreadable lock: its run cannot be told live
        return
    name = split_run_key(key)[0]
    if holder is None or os.environ.get(RUN_MARKER_ENV) == run_marker(name, holder.pid):
        return
    raise ScopeConflictError(
        f"this folder is the worktree of run {key}, which is running (pid {holder.pid});"
        f" wait for it to end, or stop it with 'll-loop stop {key}' from the main checkout"
    )
