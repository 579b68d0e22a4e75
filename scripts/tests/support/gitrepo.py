"""Real git repositories for tests: make one, run git in it, and take a byte-exact picture."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# git must not read the tester's own settings (a global hook, signing, a default branch).
GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
}
# Not part of the main checkout's picture: the run files ll-loop keeps there.
_RUN_FOLDERS = (".git", ".loops/.running", ".loops/.history", ".loops/.worktrees")


def run_env(**extra: str) -> dict[str, str]:
    """The environment an `ll-loop` under test runs with: this one, no system git config,
    and *extra*."""
    return {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", **extra}


def git(root: Path, *args: str) -> str:
    """`git ARGS` in *root*; its stdout. A failing command fails the test with its stderr."""
    done = subprocess.run(
        ["git", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def make_repo(root: Path, files: dict[str, str], message: str = "first") -> str:
    """A repository in *root* on branch `main` with *files* in its first commit (*message*);
    its sha."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Test User")
    git(root, "config", "user.email", "test@example.com")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def loops_project(tmp_path: Path, files: dict[str, str]) -> Path:
    """`tmp_path/project`: a repository with `.loops/.gitignore` as `ll-loop init` writes it
    and *files*, committed."""
    from little_loops.fsm.facts.layout import LOOPS_GITIGNORE

    root = tmp_path / "project"
    make_repo(root, {".loops/.gitignore": LOOPS_GITIGNORE, **files})
    return root


def linked_worktree(main: Path, path: Path, branch: str = "ll/fix/ab12") -> Path:
    """A worktree of the repository *main* at *path* on a new *branch*, as a run gets; *path*."""
    git(main, "worktree", "add", "-q", "-b", branch, str(path))
    return path


def picture(root: Path) -> dict[str, object]:
    """Every file of the checkout in *root* (bytes; run folders left out), `git status`, HEAD
    and the user's branches: equal pictures mean the checkout was not touched."""
    files: dict[str, bytes] = {}
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        relative = here.relative_to(root).as_posix()
        dirs[:] = [
            d for d in dirs if (f"{relative}/{d}" if relative != "." else d) not in _RUN_FOLDERS
        ]
        for name in names:
            files[(here / name).relative_to(root).as_posix()] = (here / name).read_bytes()
    branches = git(root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads")
    mine = [line for line in branches.splitlines() if not line.startswith("refs/heads/ll/")]
    return {
        "files": files,
        "status": git(root, "status", "--porcelain", "--untracked-files=all"),
        "head": git(root, "rev-parse", "HEAD"),
        "branches": mine,
    }


def head(root: Path, ref: str = "HEAD") -> str:
    """The sha *ref* names in the checkout *root*."""
    return git(root, "rev-parse", ref).strip()


def commit_all(root: Path, message: str) -> str:
    """Commit every change in the checkout *root* (new files too); the new commit's sha."""
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return head(root)


def branches(root: Path) -> list[str]:
    """The local branches of the repository of *root*, sorted."""
    return sorted(git(root, "for-each-ref", "--format=%(refname:short)", "refs/heads").split())


def untouched(root: Path) -> dict[str, object]:
    """picture() and the index's entries: equal means neither the files nor the index moved."""
    return {**picture(root), "index": git(root, "ls-files", "--stage")}
