"""The list of `watch`: every run, its running sub-loops under it, a corrupt file as such."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from support import llproc

from little_loops.cli.watch.board import board_rows, clean, signature
from little_loops.fsm.facts.outcomes import ExitCode

PARENT = """\
    name: parent
    initial: prep
    max_iterations: 7
    states:
      prep:
        action: echo ready
        next: inner
      inner:
        loop: child
        on_success: done
        on_failure: done
      done:
        terminal: true
"""
CHILD = """\
    name: child
    initial: nap
    states:
      nap:
        action: sleep {marker}
        next: done
      done:
        terminal: true
"""


def test_a_sub_loop_is_listed_under_its_parent(tmp_path: Path, marker: str) -> None:
    loops = tmp_path / ".loops"
    loops.mkdir()
    (loops / "parent.yaml").write_text(textwrap.dedent(PARENT))
    (loops / "child.yaml").write_text(textwrap.dedent(CHILD.format(marker=marker)))
    started = llproc.console(tmp_path, "run", "parent", "--background")
    assert started.returncode == ExitCode.OK, started.stderr
    try:
        llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 1, timeout=30, what="the child")
        llproc.wait_for(lambda: len(board_rows(loops)) == 2, timeout=30, what="the child's row")
        parent, child = (row.cells() for row in board_rows(loops))
        assert parent[0] == "parent"
        assert parent[2:5] == ("running", "inner", "1/7")
        assert child[0] == "  └ child"
        assert child[3] == "nap"
    finally:
        llproc.console(tmp_path, "stop", "parent")


def test_a_corrupt_state_file_is_a_row_saying_so(tmp_path: Path) -> None:
    running = tmp_path / ".loops" / ".running"
    running.mkdir(parents=True)
    (running / "broken.state.json").write_text("{not json")
    (row,) = board_rows(tmp_path / ".loops")
    assert row.cells()[:3] == ("broken", "-", "corrupt")
    assert signature(tmp_path / ".loops")[0][0] == "broken.state.json"


def test_a_cell_is_cut_before_it_is_escaped() -> None:
    assert clean("\x1b" * 1000, 3) == "\\x1b\\x1b\\x1b…"


def test_two_worktree_runs_of_a_loop_are_two_rows_named_by_id(tmp_path: Path, marker: str) -> None:
    from support.gitrepo import loops_project, run_env

    slow = textwrap.dedent(CHILD.format(marker=marker)).replace("child", "slow")
    root = loops_project(tmp_path, {".loops/slow.yaml": slow})
    ids = []
    try:
        for _ in range(2):
            started = llproc.ll_loop(
                root, "run", "slow", "--worktree", "--background", env=run_env()
            )
            assert started.returncode == ExitCode.OK, started.stderr
        llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 2, timeout=60, what="two runs")
        rows = [row.cells() for row in board_rows(root / ".loops")]
        ids = sorted(cells[1] for cells in rows)
        assert sorted(cells[0] for cells in rows) == [f"slow@{run_id}" for run_id in ids]
        assert [cells[2:4] for cells in rows] == [("running", "nap")] * 2
    finally:
        for run_id in ids:
            llproc.console(root, "stop", f"slow@{run_id}")


def test_the_list_never_looks_through_the_folder_once_per_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from little_loops.fsm.runs import describe

    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "x.yaml").write_text(
        "name: x\ninitial: done\nstates:\n  done:\n    terminal: true\n"
    )
    assert llproc.console(tmp_path, "run", "x").returncode == ExitCode.OK
    running = tmp_path / ".loops" / ".running"
    saved = json.loads((running / "x.state.json").read_text())
    for number in range(40):  # 40 runs: a look through the folder per run is 40 x 40 names
        (running / f"r{number}.state.json").write_text(
            json.dumps({**saved, "loop_name": f"r{number}"})
        )

    def once_per_run(*args: object) -> list[str]:
        raise AssertionError("the loop's other runs counted for each row")

    monkeypatch.setattr(describe, "keys_of", once_per_run)
    rows = board_rows(tmp_path / ".loops")
    assert len(rows) == 41
    assert {row.status for row in rows} == {"completed"}
