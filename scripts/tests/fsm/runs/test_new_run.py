"""A new run: the loop's own `worktree:` taken in, checks, the run id, the worktree made."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gitrepo import branches, loops_project

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import LoopDefinitionError
from little_loops.fsm.facts.layout import RUN_ID_PATTERN
from little_loops.fsm.facts.outcomes import Status
from little_loops.fsm.facts.runfile import display_path
from little_loops.fsm.runs.new_run import Where, ready_to_start
from little_loops.fsm.runs.place import RunPlace
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.store import StatePersistence


def _loop(**keys: object) -> FSMLoop:
    return FSMLoop.from_dict(
        {"name": "fix", "initial": "a", "states": {"a": {"terminal": True}}, **keys}
    )


def test_a_run_id_is_chosen_and_the_loops_worktree_key_taken_in(tmp_path: Path) -> None:
    where = Where().for_loop(_loop(), tmp_path)
    assert where.worktree is False
    assert where.run_id is not None
    assert RUN_ID_PATTERN.fullmatch(where.run_id)
    assert where.key("fix") == "fix"
    with where.make_place("fix", tmp_path) as place:
        assert place == RunPlace(where.run_id)
    assert where.left_out(tmp_path) is None
    assert Where().for_loop(_loop(worktree=True), tmp_path).worktree is True


def test_base_needs_a_worktree_and_a_taken_id_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LoopDefinitionError) as caught:
        Where(base="main").for_loop(_loop(), tmp_path)
    assert str(caught.value) == "--base REF needs --worktree (or worktree: true)"
    StatePersistence("fix@ab12", tmp_path).save_state(LoopState("fix", "a", run_id="ab12"))
    with pytest.raises(LoopDefinitionError) as caught:
        Where(worktree=True, run_id="ab12").for_loop(_loop(), tmp_path)
    assert str(caught.value) == (
        "loop 'fix' already has a run or a worktree with id 'ab12'"
        " (see ll-loop list --running and ll-loop worktree list)"
    )


def test_checkpoints_outside_a_worktree_are_refused(tmp_path: Path) -> None:
    fsm = _loop(
        states={"a": {"action": "true", "commit": True, "next": "b"}, "b": {"terminal": True}}
    )
    with pytest.raises(LoopDefinitionError, match="checkpoints need a worktree"):
        Where().for_loop(fsm, tmp_path)
    assert Where(worktree=True).for_loop(fsm, tmp_path).worktree


def test_the_flags_a_background_run_is_started_with() -> None:
    assert Where().argv() == []
    assert Where(True, "-x", "ab12").argv() == ["--worktree", "--base=-x", "--run-id", "ab12"]


def test_a_worktree_is_made_and_changes_left_here_are_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = loops_project(tmp_path, {"src/app.py": "print('hi')\n"})
    monkeypatch.chdir(root)
    loops = root / ".loops"
    where = Where(worktree=True).for_loop(_loop(), loops)
    assert where.left_out(loops) is None
    (root / "src/app.py").write_text("changed\n")
    assert where.left_out(loops) == (
        "1 uncommitted change(s) in this checkout are not in the worktree (it starts from"
        " HEAD); they stay here, untouched"
    )
    heard: list[str] = []
    with where.make_place("fix", loops, heard.append) as place:
        assert place.in_worktree
        assert place.run_id == where.run_id
        assert place.path is not None
        assert (place.path / "src/app.py").read_text() == "print('hi')\n"
        assert place.branch == f"ll/fix/{where.run_id}"
        assert (loops / ".running" / f"fix@{where.run_id}.starting.json").is_file()
    # No first event was written in the block: the start-up is undone, all of it.
    assert heard == [f"removed its worktree {display_path(place.path)} and branch {place.branch}"]
    assert not place.path.exists()
    assert branches(root) == ["main"]
    assert not (loops / ".running" / f"fix@{where.run_id}.starting.json").exists()


def test_ready_to_start_decides_where_and_forgets_runs_whose_worktree_is_gone(
    tmp_path: Path,
) -> None:
    gone = {"path": str(tmp_path / "gone"), "workdir": str(tmp_path / "gone"), "branch": "b"}
    ended = LoopState("fix", "a", status=Status.COMPLETED, run_id="ab12", worktree=gone)
    StatePersistence("fix@ab12", tmp_path).save_state(ended)
    assert StatePersistence("fix@ab12", tmp_path).load_state() is not None
    where = ready_to_start(_loop(), Where(run_id="cd34"), tmp_path)
    assert where == Where(False, None, "cd34")
    assert StatePersistence("fix@ab12", tmp_path).load_state() is None
