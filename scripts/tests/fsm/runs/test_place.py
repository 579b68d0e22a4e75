"""Where a run happens: its RunPlace, the worktree a state file may name, fresh run ids."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from little_loops.fsm.facts.errors import LoopRuntimeError, ScopeConflictError
from little_loops.fsm.facts.layout import RUN_ID_PATTERN, run_files, worktree_path
from little_loops.fsm.runs import place
from little_loops.fsm.runs.locks import acquire_scope
from little_loops.fsm.runs.orphans import RUN_MARKER_ENV, run_marker
from little_loops.fsm.runs.place import (
    RunPlace,
    describe,
    enclosing_worktree,
    id_taken,
    new_run_id,
    refuse_inside_live_worktree,
)


@pytest.fixture
def loops_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "project" / ".loops"
    folder.mkdir(parents=True)
    return folder.resolve()


def worktree_place(loops_dir: Path, sub: str = "") -> RunPlace:
    path = worktree_path(loops_dir, "fix", "ab12")
    return RunPlace("ab12", path, path / sub if sub else path, "ll/fix/ab12", "c0ffee")


def test_the_main_checkout_is_a_place_without_a_worktree() -> None:
    here = RunPlace("ab12")
    assert not here.in_worktree
    assert here.key("fix") == "fix"  # the files keep the `<name>.*` names of before run ids
    assert here.to_state() is None
    assert describe(here) == {"run_id": "ab12"}
    assert describe(RunPlace(None)) == {}
    assert describe(None) == {}


def test_a_worktree_place_names_its_files_by_name_and_id(loops_dir: Path) -> None:
    there = worktree_place(loops_dir, "src")
    assert there.in_worktree
    assert there.key("fix") == "fix@ab12"
    path = worktree_path(loops_dir, "fix", "ab12")
    expected = {
        "path": str(path),
        "workdir": str(path / "src"),
        "branch": "ll/fix/ab12",
        "base": "c0ffee",
    }
    assert there.to_state() == expected
    assert describe(there) == {"run_id": "ab12", "worktree": expected}
    # With no workdir, the worktree's top is its cwd.
    assert RunPlace("ab12", path).to_state() == {
        "path": str(path),
        "workdir": str(path),
        "branch": "",
        "base": "",
    }


def test_a_saved_place_is_read_back_as_it_was(loops_dir: Path) -> None:
    assert RunPlace.of_state("ab12", None, loops_dir, "fix") == RunPlace("ab12")
    there = worktree_place(loops_dir, "src")
    assert RunPlace.of_state("ab12", there.to_state(), loops_dir, "fix") == there


@pytest.mark.parametrize(
    "change",
    [
        {"path": "/tmp/elsewhere"},
        {"branch": "main"},
        {"workdir": "/etc"},
    ],
)
def test_a_state_file_naming_another_worktree_is_not_trusted(
    loops_dir: Path, change: dict[str, str]
) -> None:
    saved = {**(worktree_place(loops_dir).to_state() or {}), **change}
    with pytest.raises(LoopRuntimeError, match=r"names a worktree other than its own"):
        RunPlace.of_state("ab12", saved, loops_dir, "fix")


def test_a_worktree_without_a_run_id_is_refused(loops_dir: Path) -> None:
    saved = worktree_place(loops_dir).to_state()
    with pytest.raises(LoopRuntimeError, match="names a worktree but no run id"):
        RunPlace.of_state(None, saved, loops_dir, "fix")


def test_a_link_at_the_worktree_path_is_refused(loops_dir: Path, tmp_path: Path) -> None:
    path = worktree_path(loops_dir, "fix", "ab12")
    path.parent.mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    path.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(LoopRuntimeError, match="is a symbolic link to"):
        RunPlace.of_state("ab12", worktree_place(loops_dir).to_state(), loops_dir, "fix")


def test_an_id_is_taken_by_a_state_file_a_lock_or_a_worktree(loops_dir: Path) -> None:
    assert not id_taken(loops_dir, "fix", "ab12")
    files = run_files("fix@ab12", loops_dir)
    files.running_dir.mkdir()
    files.lock.symlink_to(loops_dir / "gone")  # even a dangling link takes it
    assert id_taken(loops_dir, "fix", "ab12")
    assert not id_taken(loops_dir, "fix", "cd34")
    run_files("fix@cd34", loops_dir).state.write_text("{}")
    assert id_taken(loops_dir, "fix", "cd34")
    worktree_path(loops_dir, "fix", "ef56").mkdir(parents=True)
    assert id_taken(loops_dir, "fix", "ef56")
    assert not id_taken(loops_dir, "other", "ef56")


def test_a_new_run_id_is_short_and_free(loops_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert RUN_ID_PATTERN.fullmatch(new_run_id(loops_dir, "fix"))
    draws = iter([b"\x00\x00\x00\x00", b"\x01\x02\x03\x1a"])
    monkeypatch.setattr(place.os, "urandom", lambda _n: next(draws))
    worktree_path(loops_dir, "fix", "aaaa").mkdir(parents=True)
    assert new_run_id(loops_dir, "fix") == "bcd0"  # "aaaa" is taken: drawn again


def test_no_free_run_id_is_one_line(loops_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(place.os, "urandom", lambda n: b"\x00" * n)
    worktree_path(loops_dir, "fix", "aaaa").mkdir(parents=True)
    with pytest.raises(LoopRuntimeError, match="no free run id for loop 'fix' after 100 tries"):
        new_run_id(loops_dir, "fix")


def test_the_enclosing_worktree_of_a_folder(loops_dir: Path) -> None:
    inside = worktree_path(loops_dir, "fix", "ab12") / "src" / ".loops"
    inside.mkdir(parents=True)
    assert enclosing_worktree(inside) == (loops_dir, "fix@ab12")
    assert enclosing_worktree(loops_dir) is None
    assert enclosing_worktree(loops_dir.parent / "other" / ".loops") is None


def test_a_run_inside_a_live_worktree_run_is_refused_unless_it_is_that_runs_own(
    loops_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(RUN_MARKER_ENV, raising=False)
    inside = worktree_path(loops_dir, "fix", "ab12") / ".loops"
    inside.mkdir(parents=True)
    refuse_inside_live_worktree(inside)  # no lock: the run is not live
    refuse_inside_live_worktree(loops_dir)  # the main checkout
    held = acquire_scope("fix@ab12", ["."], loops_dir)
    try:
        with pytest.raises(ScopeConflictError, match=r"worktree of run fix@ab12, which is running"):
            refuse_inside_live_worktree(inside)
        monkeypatch.setenv(RUN_MARKER_ENV, run_marker("fix", os.getpid()))
        refuse_inside_live_worktree(inside)  # started by the run's own action
        monkeypatch.setenv(RUN_MARKER_ENV, run_marker("fix", os.getpid() + 1))
        with pytest.raises(ScopeConflictError):
            refuse_inside_live_worktree(inside)
    finally:
        held.release()
    refuse_inside_live_worktree(inside)  # ended: fine again
