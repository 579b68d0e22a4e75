"""A sub-loop's scratch worktree: made on an existing branch, removed with the branch kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gitrepo import git, make_repo

from little_loops.fsm.engine.branch_tree import attach, detach
from little_loops.fsm.facts.errors import LoopRuntimeError


def test_attach_and_detach(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, {"a.txt": "a\n"})
    git(root, "branch", "topic/x")
    tree = attach(root, "topic/x")
    assert git(tree, "rev-parse", "--abbrev-ref", "HEAD").strip() == "topic/x"
    assert "topic-x" in tree.name
    (tree / "scratch.txt").write_text("left behind\n")
    detach(root, tree)
    assert not tree.exists()
    assert git(root, "branch", "--list", "topic/x").strip() == "topic/x"


def test_a_missing_branch_is_one_line(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, {"a.txt": "a\n"})
    with pytest.raises(LoopRuntimeError, match="worktree: no branch 'gone'"):
        attach(root, "gone")
