"""A `--worktree` run killed while starting (SIGKILL at exact system calls, by strace): the
next `run` with its id, or a `resume` of it, removes the empty worktree and branch it left."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import llproc
from support.doc_blocks import all_blocks
from support.gitrepo import branches, loops_project
from support.slowdown import scaled

from little_loops.fsm.runs.locks import acquire_scope

LOOP = """\
name: fix
initial: check
states:
  check:
    action: "true"
    terminal: true
"""
RUNNING = Path(".loops/.running")
# Where to kill ll-loop: (the path, the system calls on it). Only ll-loop itself is traced,
# not the git it runs.
KILL_POINTS = {
    "marker written": (Path(".loops/.worktrees"), "mkdir,mkdirat"),
    "worktree made": (Path(".loops/.worktrees/fix@ab12"), "mkdir,mkdirat"),
    "first event opened": (RUNNING / "fix@ab12.events.jsonl", "open,openat"),
}
pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")


def killed_at(root: Path, point: str) -> subprocess.CompletedProcess[str]:
    """`ll-loop run fix --worktree --run-id ab12`, SIGKILLed at *point*."""
    path, calls = KILL_POINTS[point]
    argv = ["strace", "-qq", "-o", "/dev/null", "-P", str(root / path), "-e", f"trace={calls}"]
    argv += ["-e", f"inject={calls}:signal=KILL", sys.executable, "-m", "little_loops.cli"]
    argv += ["run", "fix", "--worktree", "--run-id", "ab12"]
    return subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=scaled(60))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return loops_project(tmp_path, {".loops/fix.yaml": LOOP})


@pytest.mark.parametrize("point", sorted(KILL_POINTS))
def test_the_same_run_id_starts_again_after_a_kill(root: Path, point: str) -> None:
    done = killed_at(root, point)
    assert done.returncode in (-9, 137), done.stderr  # killed where it was meant to be
    again = llproc.console(root, "run", "fix", "--worktree", "--run-id", "ab12", timeout=60)
    assert again.returncode == 0, again.stderr
    undone = (
        "it had made no worktree yet"
        if point == "marker written"
        else "removed its worktree .loops/.worktrees/fix@ab12 and branch ll/fix/ab12"
    )
    assert (
        f"ll-loop: note: run fix@ab12 was killed while starting, before its first step: {undone}"
    ) in again.stderr
    assert "removed worktree .loops/.worktrees/fix@ab12" in again.stderr  # changed nothing
    assert branches(root) == ["main"]
    assert not (root / ".loops" / ".worktrees" / "fix@ab12").exists()
    assert not (root / RUNNING / "fix@ab12.starting.json").exists()


def test_a_resume_of_a_run_killed_while_starting_removes_what_it_left(root: Path) -> None:
    assert killed_at(root, "worktree made").returncode in (-9, 137)
    assert branches(root) == ["ll/fix/ab12", "main"]  # left by the kill, and known:
    done = llproc.console(root, "resume", "fix@ab12", timeout=60)
    assert done.returncode != 0
    note, error = done.stderr.splitlines()
    (shown,) = [b for b in all_blocks() if b.starts("docs/worktrees.md", "ll-loop: note: run fix")]
    assert note == shown.text.strip()  # docs/worktrees.md shows this line
    assert note == (
        "ll-loop: note: run fix@ab12 was killed while starting, before its first step:"
        " removed its worktree .loops/.worktrees/fix@ab12 and branch ll/fix/ab12"
    )
    assert error.startswith("ll-loop: error: ")
    assert branches(root) == ["main"]
    assert not (root / ".loops" / ".worktrees" / "fix@ab12").exists()


def test_a_run_refused_after_its_worktree_was_made_leaves_none(root: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"  # outside the checkout: a worktree run's scope meets others
    shared.mkdir()
    (root / ".loops" / "fix.yaml").write_text(LOOP + f"scope: [{shared}]\n")
    held = acquire_scope("other", [str(shared)], root / ".loops")
    try:
        done = llproc.console(root, "run", "fix", "--worktree", timeout=60)
    finally:
        held.release()
    assert done.returncode != 0
    assert "overlaps" in done.stderr.splitlines()[-1], done.stderr
    assert branches(root) == ["main"]
    assert list((root / ".loops" / ".worktrees").iterdir()) == [
        root / ".loops" / ".worktrees" / ".gitignore"
    ]
    assert not list((root / RUNNING).glob("fix@*"))
