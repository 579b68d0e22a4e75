"""SIGKILL at every write of a fan-out run's event log (strace), then `ll-loop resume`: the
same three branches end, none of them runs twice, and the same merge is made.

The reference is the run uninterrupted: the writes it made to its log, each item's action
run once, the files merged into the checkout. Then for every K up to that count the run is
killed as its K-th write begins and resumed until it ends (support/killwrite.drive).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import fanout, killwrite
from support.gitrepo import git
from support.llproc import events, state

pytestmark = [
    pytest.mark.reliability,
    pytest.mark.skipif(killwrite.STRACE is None, reason="needs strace (scripts/dev setup)"),
]

ITEMS = ["a", "b", "f"]
# The writes of the uninterrupted run's log: loop_start, 3 branch_start, 3 branch_finish,
# fanout_join, fanout_merge and loop_complete (the others are held and written with these).
WRITES = 10


def _project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = fanout.project(tmp_path, fan=fanout.map_loop(ITEMS, max_concurrency=2, merge="green"))
    return root, {**os.environ, "LL_TEST_RUNS": str(tmp_path / "runs")}


def _check(root: Path, tmp_path: Path) -> None:
    assert sorted((tmp_path / "runs").read_text().split()) == ITEMS  # each branch ran once
    saved = state(root, "fan")
    assert saved["status"] == "completed"
    result = saved["captured"]["fan"]
    assert result["verdict"] == "success"
    assert sorted(b["item"] for b in result["branches"]) == ITEMS
    assert [b["verdict"] for b in result["branches"]] == ["success"] * 3
    # The same merge: each branch's one commit merged once, in branch order, its worktree
    # and branch removed after; nothing else merged, nothing left over.
    keys = [b["key"] for b in result["branches"]]
    assert result["merged"] == keys
    assert result["refused"] == []
    assert [b["merged"] for b in result["branches"]] == ["merged"] * 3
    made = git(root, "log", "--no-merges", "--format=%s", "HEAD~3..HEAD").splitlines()
    assert sorted(made) == sorted(
        f"ll-loop {key}: changes left at the end of the run" for key in keys
    )
    assert len(git(root, "log", "--merges", "--format=%h").split()) == 2  # the first: fast-forward
    assert sorted(p.name for p in root.glob("item-*.txt")) == [f"item-{i}.txt" for i in ITEMS]
    assert git(root, "status", "--porcelain") == ""
    assert git(root, "branch", "--list", "ll/*") == ""
    assert len(git(root, "worktree", "list").splitlines()) == 1
    assert not fanout.processes_in(root)


def test_the_reference_run_writes_its_log_so_many_times(tmp_path: Path) -> None:
    root, env = _project(tmp_path)
    done = killwrite.drive(root, "fan", env=env)
    assert done.kills == 0
    assert done.writes == WRITES
    # Every fan-out event of the parent is among the writes killed at (one write each).
    names = [e["event"] for e in events(root, "fan")]
    fanned = [n for n in names if n.startswith(("branch_", "fanout_"))]
    assert sorted(fanned) == sorted(
        ["branch_start"] * 3 + ["branch_finish"] * 3 + ["fanout_join", "fanout_merge"]
    )
    _check(root, tmp_path)


@pytest.mark.parametrize("kill_at", range(1, WRITES + 1))
def test_kill_9_at_a_write_then_resume(tmp_path: Path, kill_at: int) -> None:
    root, env = _project(tmp_path)
    done = killwrite.drive(root, "fan", kill_at=kill_at, env=env)
    assert done.kills == 1
    _check(root, tmp_path)


# Kills the fan-out's parent (the grandparent of git's `merge`: `ll-loop worktree merge` is
# its parent) right after the first branch is merged, once: between two merges, where the
# log is not written.
POST_MERGE = """\
#!/bin/sh
[ -e "$LL_TEST_KILLED" ] && exit 0
touch "$LL_TEST_KILLED"
merger=$(ps -o ppid= -p $PPID | tr -d ' ')
kill -9 "$(ps -o ppid= -p "$merger" | tr -d ' ')"
"""


def test_kill_9_between_two_merges_then_resume(tmp_path: Path) -> None:
    root, env = _project(tmp_path)
    hook = root / ".git" / "hooks" / "post-merge"
    hook.write_text(POST_MERGE)
    hook.chmod(0o755)
    env["LL_TEST_KILLED"] = str(tmp_path / "killed")
    done = killwrite.drive(root, "fan", env=env)
    assert (tmp_path / "killed").exists()
    assert done.kills == 1  # the hook's (strace was told to kill nothing)
    assert len(done.outputs) == 2  # the run, killed; the resume, to the end
    _check(root, tmp_path)
