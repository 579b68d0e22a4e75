"""Merging a fan-out (fsm/fanout/merge.py): which branches each `merge:` takes, and each one
merged by `ll-loop worktree merge`; a conflict or a refusal is reported and nothing is lost."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import fanout
from support.gitrepo import branches, git

from little_loops.fsm.fanout.branches import Branch, BranchRecord
from little_loops.fsm.fanout.merge import merge, tidy, to_merge


def _record(index: int, verdict: str) -> BranchRecord:
    record = BranchRecord(Branch(index, "fix"), "ab12", "fix@ab12", None, None)
    record.verdict = verdict
    return record


def test_what_each_merge_takes() -> None:
    records = [_record(0, "success"), _record(1, "failure"), _record(2, "success")]
    assert to_merge("green", records, records[2:]) == [records[0], records[2]]
    assert to_merge("best", records, records[2:]) == [records[2]]
    assert to_merge("best", records, []) == []
    assert to_merge("none", records, records) == []
    with pytest.raises(ValueError, match="not one of green, best, none"):
        to_merge("all", records, [])


def test_a_refused_merge_and_a_conflict_are_reported_and_the_work_kept(tmp_path: Path) -> None:
    root = fanout.project(tmp_path)
    ending, _ = fanout.run_in_process(root, fanout.plan_data(["c", "d", "a"]))
    c, d, a = ending.records
    base = git(root, "rev-parse", "HEAD").strip()
    assert ending.merged == ()
    assert all(r.verdict == "success" for r in ending.records)

    (root / "README.md").write_text("edited by hand, not committed\n")
    refused = merge([a], root, base)
    assert refused.merged == ()
    assert refused.refused[0][0] is a
    assert "uncommitted" in refused.refused[0][1]
    assert "\n" not in refused.refused[0][1]
    assert (root / "README.md").read_text() == "edited by hand, not committed\n"
    git(root, "checkout", "README.md")

    done = merge([c, d, a], root, base)
    assert done.merged == (c, a)
    assert [r for r, _ in done.refused] == [d]
    assert d.merged is not None
    assert d.merged.startswith("not merged: merging ll/fix/")
    assert git(root, "show", f"{d.git_branch}:shared.txt") == "d\n"
    assert d.worktree is not None
    assert (d.worktree / "shared.txt").read_text() == "d\n"
    assert d.git_branch in branches(root)
    assert git(root, "status", "--porcelain") == ""

    # Merged, but its worktree and branch kept until tidy: merged again is merged already.
    assert c.git_branch in branches(root)
    again = merge([c], root, base)
    assert again.merged == (c,)
    tidy([c.key, a.key], [c, d, a], root)
    assert c.git_branch not in branches(root)
    assert a.git_branch not in branches(root)
    assert d.git_branch in branches(root)
    again = merge([c], root, base)  # its branch is gone: nothing to do
    assert again.merged == ()
    assert again.refused == ()
    assert c.merged is not None
    assert c.merged.startswith("nothing to merge")


def test_outside_a_repository_there_is_nothing_to_merge(tmp_path: Path) -> None:
    record = _record(0, "success")
    assert merge([record], tmp_path, None) == merge([], tmp_path, None)
