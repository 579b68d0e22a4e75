"""A loop or state name too long for the file names runs make of it: refused by `validate`
and before a run makes anything (no worktree, no branch left behind)."""

from __future__ import annotations

from pathlib import Path

from support import llproc
from support.gitrepo import branches, loops_project

LOOP = "a" * 200
STATE = "s" * 100
LOOP_FILE = f"""\
name: {LOOP}
initial: {STATE}
states:
  {STATE}:
    action: echo ran >> side.txt
    terminal: true
"""
MESSAGE = (
    f"loop '{LOOP}' > states > {STATE}: its action's output file name would be 299 bytes"
    " long (aaaaaaaaaaaaaaaa...sssssss~8c747af1.out), over the 255 a file name may have:"
    " shorten the state's name, or the loop's by 44 bytes"
)


def test_validate_measures_names_against_the_file_names_they_make(tmp_path: Path) -> None:
    root = loops_project(tmp_path, {f".loops/{LOOP}.yaml": LOOP_FILE})
    done = llproc.console(root, "validate", LOOP)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == f".loops/{LOOP}.yaml:4: error: {MESSAGE}\n"


def test_a_run_in_a_worktree_is_refused_before_it_makes_one(tmp_path: Path) -> None:
    root = loops_project(tmp_path, {f".loops/{LOOP}.yaml": LOOP_FILE})
    done = llproc.console(root, "run", LOOP, "--worktree")
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line == f"ll-loop: error: .loops/{LOOP}.yaml:4: {MESSAGE}"
    assert branches(root) == ["main"]
    assert not (root / ".loops" / ".worktrees").exists()
    assert llproc.side_effects(root) == []
