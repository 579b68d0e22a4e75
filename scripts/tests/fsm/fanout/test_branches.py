"""A fan-out's branches (fsm/fanout/branches.py): the child's command line and its figures."""

from __future__ import annotations

import sys
from pathlib import Path

from little_loops.fsm.fanout.branches import Branch, BranchRecord, run_command


def test_a_branch_in_a_repository_runs_in_its_own_worktree_from_the_base() -> None:
    branch = Branch(2, "fix", {"item": "a b", "n": "-3"}, "a b")
    record = BranchRecord(
        branch, "ab12", "fix@ab12", "ll/fix/ab12", Path("/p/.loops/.worktrees/fix@ab12")
    )
    argv = run_command(record, "f" * 40)
    assert argv[:3] == [sys.executable, "-m", "little_loops.cli"]
    assert argv[3:] == [
        "run", "fix", "--run-id", "ab12", "--worktree", "--base", "f" * 40,
        "--set", "item=a b", "--set", "n=-3",
    ]  # fmt: skip
    figures = record.figures()
    assert figures["branch"] == "ll/fix/ab12"
    assert figures["item"] == "a b"
    assert figures["verdict"] == ""
    assert figures["index"] == 2


def test_outside_a_repository_a_branch_runs_in_the_project() -> None:
    record = BranchRecord(Branch(0, "fix"), "ab12", "fix", None, None)
    assert "--worktree" not in run_command(record, None)
    assert record.figures()["worktree"] == ""
    assert not record.ended
