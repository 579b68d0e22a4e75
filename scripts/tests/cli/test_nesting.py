"""Sub-loop events in the progress display (cli/nesting.py)."""

from __future__ import annotations

from little_loops.cli.nesting import INDENT, child_line, depth_of, indented, where_in_children
from little_loops.fsm.engine.events import DEPTH_KEY


def test_depth_of_an_event() -> None:
    assert depth_of({}) == 0
    assert depth_of({DEPTH_KEY: 2}) == 2
    assert depth_of({DEPTH_KEY: -1}) == 0
    assert depth_of({DEPTH_KEY: "2"}) == 0


def test_indented_moves_every_line_in() -> None:
    assert indented("a\nb\n", 1) == f"{INDENT}a\n{INDENT}b\n"
    assert indented("a", 2) == f"{INDENT * 2}a"
    assert indented("a\n", 0) == "a\n"
    assert indented("", 3) == ""


def test_child_lines_for_a_sub_loops_start_and_end() -> None:
    limits: dict[int, int] = {}
    start = {"event": "loop_start", "loop": "child", "max_iterations": 7, DEPTH_KEY: 1}
    assert child_line(start, limits) == "↳ loop child\n"
    assert limits == {1: 7}
    end = {
        "event": "loop_complete",
        "loop": "child",
        "final_state": "done",
        "terminated_by": "terminal",
    }
    assert child_line(end, limits) == "↳ loop child ended in done (terminal)\n"
    assert child_line({"event": "state_enter"}, limits) is None
    assert child_line({"event": "loop_start", "loop": "a\nb"}, limits) == "↳ loop a\\nb\n"


def test_where_in_children_follows_the_chain() -> None:
    child = {"loop": "a", "current_state": "s", "child": {"loop": "b", "current_state": "t"}}
    assert where_in_children(child) == " > a: s > b: t"
    assert where_in_children(None) == ""
    endless: dict[str, object] = {"loop": "x", "current_state": "y"}
    endless["child"] = endless
    assert where_in_children(endless).count(" > x: y") == 100
