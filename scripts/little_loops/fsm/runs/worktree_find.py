"""The kept worktrees of runs, found from git alone: listed, and a NAME or NAME@ID resolved."""

from __future__ import annotations

import re
from pathlib import Path

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.layout import (
    RUN_ID_PATTERN,
    WORKTREE_BRANCH,
    run_key,
    split_run_key,
    worktree_branch,
    worktree_path,
    worktrees_dir,
)
from little_loops.fsm.facts.runfile import display_path
from little_loops.fsm.facts.suggest import did_you_mean
from little_loops.fsm.processes.gitcmd import git, repo_lock
from little_loops.fsm.runs.worktrees import BASE_KEY, Worktree, branch_exists, main_repo

# A run's branch, read back: WORKTREE_BRANCH with its two fields as groups.
_BRANCH = re.compile(
    re.escape(WORKTREE_BRANCH)
    .replace(re.escape("{name}"), "([^/]+)")
    .replace(re.escape("{run_id}"), f"({RUN_ID_PATTERN.pattern})")
)


def worktree_entries(top: Path) -> list[dict[str, str]]:
    """`git worktree list --porcelain` as one dict per worktree (`worktree`, `branch` ...)."""
    entries: list[dict[str, str]] = []
    with repo_lock(top):
        done = git(top, "worktree", "list", "--porcelain", "-z", check=False)
        if done.ok:
            blocks, separator = done.out.split("\0\0"), "\0"
        else:  # git before 2.36 has no -z: a line each (a path with a newline is not found)
            listed = git(top, "worktree", "list", "--porcelain").out
            blocks, separator = listed.split("\n\n"), "\n"
    for block in blocks:
        entry: dict[str, str] = {}
        for line in block.split(separator):
            if line:
                field, _, value = line.partition(" ")
                entry[field] = value
        if "worktree" in entry:
            entries.append(entry)
    return entries


def _bases(top: Path) -> dict[str, str]:
    """{branch: base sha} of every branch with an `llbase` recorded."""
    done = git(top, "config", "--null", "--get-regexp", rf"^branch\..*\.{BASE_KEY}$", check=False)
    found = {}
    for item in done.out.split("\0"):
        key, _, value = item.partition("\n")
        if key.startswith("branch.") and key.endswith(f".{BASE_KEY}"):
            found[key[len("branch.") : -len(BASE_KEY) - 1]] = value.strip()
    return found


def find_worktrees(loops_dir: Path, loop_name: str | None = None) -> list[Worktree]:
    """The kept worktrees of runs (of *loop_name* only, when given), by NAME@ID: the folders
    `<loops_dir>/.worktrees/NAME@ID/` git knows as worktrees, and the branches `ll/NAME/ID`
    made for them whose folder was deleted by hand."""
    loops_dir = Path(loops_dir).absolute()
    top = main_repo(loops_dir)
    bases = _bases(top)
    folder = worktrees_dir(loops_dir).resolve()
    found: dict[str, Worktree] = {}
    for entry in worktree_entries(top):
        path = Path(entry["worktree"])
        if path.parent.resolve() != folder:
            continue
        name, run_id = split_run_key(path.name)
        if run_id is None:
            continue
        branch = worktree_branch(name, run_id)
        head = entry.get("branch", "").removeprefix("refs/heads/") or None
        present = "prunable" not in entry and path.is_dir() and not path.is_symlink()
        base = bases.get(branch) or _fallback_base(top, branch, head)
        if base:
            found[path.name] = Worktree(path, branch, base, name, run_id, present, head)
    for branch, base in bases.items():
        match = _BRANCH.fullmatch(branch)
        if match is None or not branch_exists(top, branch):
            continue
        name, run_id = match.groups()
        key = run_key(name, run_id)
        if key not in found:
            path = worktree_path(loops_dir, name, run_id)
            found[key] = Worktree(path, branch, base, name, run_id, False, None)
    return [
        found[key] for key in sorted(found) if loop_name is None or found[key].loop == loop_name
    ]


def _fallback_base(top: Path, branch: str, head: str | None) -> str:
    """A base for a branch whose `llbase` is gone: where it meets the main checkout's HEAD."""
    tip = branch if branch_exists(top, branch) else head
    if tip is None:
        return ""
    return git(top, "merge-base", "HEAD", tip, check=False).out.strip()


def resolve(loops_dir: Path, name: str) -> Worktree:
    """The kept worktree *name* means: `NAME@ID` that one, `NAME` the only one of loop NAME.
    One-line LoopRuntimeError when there is none, or several (naming them)."""
    found = _resolve(loops_dir, name)
    if found.path.is_symlink():  # git would work in wherever it points (the main checkout)
        raise LoopRuntimeError(
            f"{display_path(found.path)} is a symbolic link, not the worktree of run"
            f" {found.key}: remove the link; nothing was done"
        )
    return found


def _resolve(loops_dir: Path, name: str) -> Worktree:
    loop, run_id = split_run_key(name)
    every = find_worktrees(loops_dir)
    mine = [wt for wt in every if wt.loop == loop]
    if run_id is not None:
        for wt in mine:
            if wt.run_id == run_id:
                return wt
        others = f": loop {loop!r} has {_keys(mine)}" if mine else ""
        raise LoopRuntimeError(f"no kept worktree {name!r}{others}")
    if len(mine) == 1:
        return mine[0]
    if not mine:
        hint = did_you_mean(loop, sorted({wt.loop for wt in every}))
        raise LoopRuntimeError(f"loop {loop!r} has no kept worktree{hint}")
    raise LoopRuntimeError(
        f"loop {loop!r} has {len(mine)} kept worktrees: {_keys(mine)}; name one as NAME@ID"
    )


def _keys(worktrees: list[Worktree]) -> str:
    return ", ".join(wt.key for wt in worktrees)
