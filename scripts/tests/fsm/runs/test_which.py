"""Which saved run a NAME or NAME@ID means, among real state files under `.loops/.running/`."""

from __future__ import annotations

from pathlib import Path

import pytest

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.layout import run_files, worktree_path
from little_loops.fsm.facts.outcomes import Outcome, Status
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.store import StatePersistence
from little_loops.fsm.runs.which import (
    AmbiguousRunError,
    SavedRun,
    forget_finished,
    keys_of,
    pick_run,
    runs_of,
)


@pytest.fixture
def loops_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "project" / ".loops"
    folder.mkdir(parents=True)
    return folder


def save(
    loops_dir: Path,
    name: str,
    run_id: str | None,
    started: str,
    status: Status = Status.RUNNING,
    terminated_by: str | None = None,
) -> LoopState:
    """A saved run of *name* (in its worktree when it has an id) started at minute *started*."""
    worktree = None
    if run_id is not None:
        path = worktree_path(loops_dir, name, run_id)
        worktree = {"path": str(path), "workdir": str(path), "branch": f"ll/{name}/{run_id}"}
    state = LoopState(
        loop_name=name,
        current_state="check",
        started_at=f"2026-01-15T10:{started}:00+00:00",
        status=status,
        terminated_by=terminated_by,
        run_id=run_id,
        worktree=worktree,
    )
    StatePersistence(state.key, loops_dir).save_state(state)
    return state


def test_keys_are_the_runs_of_that_loop_only(loops_dir: Path) -> None:
    save(loops_dir, "fix", None, "00")
    save(loops_dir, "fix", "ab12", "01")
    save(loops_dir, "fixer", "cd34", "02")  # a loop whose name starts with `fix`
    save(loops_dir, "fixer", None, "03")
    assert keys_of(loops_dir, "fix") == ["fix", "fix@ab12"]
    assert keys_of(loops_dir, "fixer") == ["fixer", "fixer@cd34"]
    assert keys_of(loops_dir, "nothing") == []
    assert keys_of(loops_dir, "../fix") == []  # not a loop name: no runs, no error


def test_runs_are_oldest_first_with_unreadable_ones_before(loops_dir: Path) -> None:
    save(loops_dir, "fix", "late", "09")
    save(loops_dir, "fix", "erly", "01")
    run_files("fix@bad1", loops_dir).state.write_text("{not json")
    runs = runs_of(loops_dir, "fix")
    assert [run.key for run in runs] == ["fix@bad1", "fix@erly", "fix@late"]
    assert runs[0].state is None
    assert [run.ref for run in runs] == ["fix@bad1", "fix@erly", "fix@late"]
    assert [run.key for run in runs_of(loops_dir, "fix", ["fix@late"])] == ["fix@late"]


@pytest.mark.parametrize(
    ("status", "terminated_by", "going"),
    [
        (Status.RUNNING, None, True),
        (Status.STOPPED, Outcome.STOPPED, True),
        (Status.FAILED, Outcome.MAX_ITERATIONS, True),  # a limit can be raised
        (Status.FAILED, Outcome.ERROR, False),
        (Status.COMPLETED, Outcome.TERMINAL, False),
    ],
)
def test_a_run_is_going_while_it_runs_or_can_be_resumed(
    status: Status, terminated_by: str | None, going: bool
) -> None:
    state = LoopState(loop_name="fix", current_state="x", status=status)
    state.terminated_by = terminated_by
    assert SavedRun("fix", state).going is going
    assert SavedRun("fix", None).going is False


def test_without_an_id_the_only_or_latest_run_is_picked(loops_dir: Path) -> None:
    assert pick_run(loops_dir, "fix", None) == "fix"  # no runs: the name itself
    save(loops_dir, "fix", "ab12", "05")
    assert pick_run(loops_dir, "fix", None) == "fix@ab12"
    save(loops_dir, "fix", "cd34", "07", Status.COMPLETED, Outcome.TERMINAL)
    save(loops_dir, "fix", "ef56", "06")
    assert pick_run(loops_dir, "fix", None) == "fix@cd34"


def test_an_id_picks_that_run_or_lists_the_runs(loops_dir: Path) -> None:
    save(loops_dir, "fix", "ab12", "05")
    save(loops_dir, "fix", "cd34", "06")
    assert pick_run(loops_dir, "fix", "cd34") == "fix@cd34"
    message = "loop 'fix' has no run 'zz99' (its runs: fix@ab12, fix@cd34; see ll-loop list)"
    with pytest.raises(LoopRuntimeError) as raised:
        pick_run(loops_dir, "fix", "zz99")
    assert str(raised.value) == message
    with pytest.raises(LoopRuntimeError, match=r"its runs: none"):
        pick_run(loops_dir, "other", "ab12")


def test_for_a_command_on_live_runs_the_one_going_is_picked(loops_dir: Path) -> None:
    save(loops_dir, "fix", "ab12", "05")
    save(loops_dir, "fix", "cd34", "06", Status.COMPLETED, Outcome.TERMINAL)
    assert pick_run(loops_dir, "fix", None, active="stop") == "fix@ab12"
    assert pick_run(loops_dir, "fix", None) == "fix@cd34"  # the latest, otherwise
    save(loops_dir, "fix", "ef56", "07", Status.INTERRUPTED, Outcome.INTERRUPTED)
    with pytest.raises(AmbiguousRunError) as raised:
        pick_run(loops_dir, "fix", None, active="stop")
    assert str(raised.value) == (
        "loop 'fix' has 2 runs going (fix@ab12, fix@ef56); name one, e.g. 'll-loop stop fix@ef56'"
    )
    assert [run.key for run in raised.value.runs] == ["fix@ab12", "fix@ef56"]
    assert isinstance(raised.value, LoopRuntimeError)


def test_finished_runs_whose_worktree_is_gone_are_forgotten(loops_dir: Path) -> None:
    save(loops_dir, "fix", "done", "01", Status.COMPLETED, Outcome.TERMINAL)
    save(loops_dir, "fix", "kept", "02", Status.COMPLETED, Outcome.TERMINAL)
    worktree_path(loops_dir, "fix", "kept").mkdir(parents=True)  # its worktree is still there
    save(loops_dir, "fix", "live", "03")  # still going
    save(loops_dir, "fix", None, "04", Status.COMPLETED, Outcome.TERMINAL)  # the main checkout
    gone = run_files("fix@done", loops_dir)
    gone.log.write_text("log")
    assert forget_finished(loops_dir, "fix") == ["fix@done"]
    assert not gone.state.exists()
    assert not gone.log.exists()
    assert keys_of(loops_dir, "fix") == ["fix", "fix@kept", "fix@live"]
    assert forget_finished(loops_dir, "fix") == []
