"""Resuming a saved run: its worktree must be there, the loop renamed, the flags merged."""

from __future__ import annotations

from pathlib import Path

import pytest

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import LoopDefinitionError, LoopRuntimeError
from little_loops.fsm.runs.overrides import RunFlags, save_overrides
from little_loops.fsm.runs.place import RunPlace
from little_loops.fsm.runs.resuming import resumed_loop, saved_place
from little_loops.fsm.runs.state import LoopState


def _loop(name: str = "file-name", **state: object) -> FSMLoop:
    return FSMLoop.from_dict(
        {"name": name, "initial": "a", "states": {"a": {"terminal": True, **state}}}
    )


def test_a_run_in_the_main_checkout_resumes_there(tmp_path: Path) -> None:
    saved = LoopState("fix", "a", run_id="ab12")
    assert saved_place(saved, tmp_path) == RunPlace("ab12")


def test_a_worktree_that_is_gone_is_one_line(tmp_path: Path) -> None:
    loops = tmp_path / ".loops"
    path = loops / ".worktrees" / "fix@ab12"
    worktree = {"path": str(path), "workdir": str(path), "branch": "ll/fix/ab12", "base": "0"}
    saved = LoopState("fix", "a", run_id="ab12", worktree=worktree)
    with pytest.raises(LoopRuntimeError) as caught:
        saved_place(saved, loops)
    assert "ran in worktree" in str(caught.value)
    assert str(caught.value).endswith(
        ", which is gone; start it again with 'll-loop run fix --worktree'"
    )


def test_the_loop_goes_on_under_the_saved_name_with_the_flags_merged(tmp_path: Path) -> None:
    save_overrides("fix", tmp_path, RunFlags(max_iterations=3, max_cost=2.0))
    saved = LoopState("fix", "a")
    fsm, flags = resumed_loop(
        _loop(), saved, RunPlace(None), RunFlags(max_cost=5.0, quiet=True), tmp_path, "fix"
    )
    assert flags == RunFlags(max_iterations=3, max_cost=5.0, quiet=True)
    assert (fsm.name, fsm.max_iterations, fsm.max_cost_usd) == ("fix", 3, 5.0)


def test_checkpoints_are_checked_again_for_where_the_run_is(tmp_path: Path) -> None:
    fsm = FSMLoop.from_dict(
        {
            "name": "fix",
            "initial": "a",
            "states": {
                "a": {"action": "true", "commit": True, "next": "b"},
                "b": {"terminal": True},
            },
        }
    )
    with pytest.raises(LoopDefinitionError, match="checkpoints need a worktree"):
        resumed_loop(fsm, LoopState("fix", "a"), RunPlace(None), RunFlags(), tmp_path, "fix")
