"""`ll-loop list` (cli/listing.py): the loops of a project and the runs going on."""

from __future__ import annotations

import json

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


META = """\
name: {name}
description: |
  {about}
  More lines.
category: {category}
labels: [{labels}]
visibility: {visibility}
initial: done
states:
  done:
    terminal: true
"""


def test_list_shows_category_and_description_and_filters(loop_project: LoopProject) -> None:
    """little-loops' metadata: shown by `list`, filtered by --category/--label, and
    internal or example loops only with --all."""
    for name, category, labels, visibility in (
        ("gate-a", "gate", "ci, fast", "public"),
        ("gate-b", "gate", "slow", "public"),
        ("helper", "lib", "ci", "internal"),
    ):
        about = f"The {name} loop."
        text = META.format(
            name=name, about=about, category=category, labels=labels, visibility=visibility
        )
        loop_project.write(name, text)
    listed = loop_project.run("list")
    assert listed.out.splitlines() == [
        "NAME    PARADIGM  STATUS  PATH                CATEGORY  DESCRIPTION",
        "gate-a  fsm       -       .loops/gate-a.yaml  gate      The gate-a loop.",
        "gate-b  fsm       -       .loops/gate-b.yaml  gate      The gate-b loop.",
    ]
    assert listed.err == "ll-loop: 1 internal or example loop(s) not listed (--all)\n"
    assert "helper" in loop_project.run("list", "--all").out
    ci = loop_project.run("list", "--all", "--label", "ci", "--json")
    assert [(r["name"], r["labels"]) for r in json.loads(ci.out)] == [
        ("gate-a", ["ci", "fast"]),
        ("helper", ["ci"]),
    ]
    lib = loop_project.run("list", "--all", "--category", "lib", "--json")
    assert [(r["name"], r["visibility"]) for r in json.loads(lib.out)] == [("helper", "internal")]
