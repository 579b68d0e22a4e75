"""`ll-loop list` (cli/listing.py): the loops of a project and the runs going on."""

from __future__ import annotations

from support.loops import ONE_STEP
from support.project import LoopProject

from little_loops.cli.listing import loop_rows, run_rows, text_table


def test_text_table_lines_up_columns() -> None:
    assert text_table([["NAME", "STATUS"], ["a-long-name", "ok"], ["b", "x\ny"]]) == (
        "NAME         STATUS\na-long-name  ok\nb            x\\ny"
    )


def test_loop_rows_name_status_and_errors(loop_project: LoopProject) -> None:
    loop_project.write("one", ONE_STEP)
    (loop_project.loops / "bad.yaml").write_text("a: [")
    rows = {row["name"]: row for row in loop_rows(loop_project.loops)}
    assert rows["one"]["paradigm"] == "fsm"
    assert rows["one"]["status"] is None
    assert rows["bad"]["paradigm"] is None
    assert "error" in rows["bad"]
    assert loop_project.run("run", "one").code == 0
    assert {row["name"]: row for row in loop_rows(loop_project.loops)}["one"]["status"] == (
        "completed"
    )


def test_run_rows_list_only_runs_going_on(loop_project: LoopProject) -> None:
    loop_project.write("one", ONE_STEP)
    assert loop_project.run("run", "one").code == 0
    assert run_rows(loop_project.loops) == []
