"""Real git repositories for tests: made in a temp folder, read back byte for byte."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from little_loops.fsm.runs.layout import LOOPS_DIR_NAME, WORKTREES_DIR

# A git that reads no user or system configuration: the tests see the same git everywhere.
ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}


def git(root: Path, *args: str) -> str:
    """`git -C root ARGS...`; its stdout (a failure fails the test)."""
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env=ENV, check=False
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def make_repo(root: Path, files: dict[str, str] | None = None) -> Path:
    """A git repository in *root* with *files* (and `.loops/`) in a first commit on `main`;
    the committer is set in the repository's own config."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "--quiet", "--initial-branch=main")
    git(root, "config", "user.name", "Test User")
    git(root, "config", "user.email", "test@example.com")
    git(root, "config", "commit.gpgsign", "false")
    for name, text in {".loops/fix.yaml": FIX_LOOP, **(files or {})}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "first")
    return root


FIX_LOOP = """\
name: fix
initial: fix
states:
  fix:
    action: echo fixed >> notes.txt
    next: done
  done:
    terminal: true
"""


def commit_all(root: Path, message: str) -> str:
    """Commit every change in the checkout *root*; the new commit's sha."""
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", message)
    return head(root)


def head(root: Path, ref: str = "HEAD") -> str:
    """The sha *ref* names in the checkout *root*."""
    return git(root, "rev-parse", ref).strip()


def branches(root: Path) -> list[str]:
    """The local branches of the repository of *root*, sorted."""
    return sorted(git(root, "for-each-ref", "--format=%(refname:short)", "refs/heads").split())


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the checkout *root* (not `.git`, not the run worktrees) with its bytes,
    plus the index's entries, HEAD and `git status`."""
    skip = {root / ".git", root / LOOPS_DIR_NAME / WORKTREES_DIR}
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if Path(folder) / d not in skip]
        for name in files:
            path = Path(folder) / name
            found[str(path.relative_to(root))] = path.read_bytes()
    found["<index>"] = git(root, "ls-files", "--stage").encode()
    found["<HEAD>"] = head(root).encode()
    found["<status>"] = git(root, "status", "--porcelain", "--untracked-files=all").encode()
    return found
