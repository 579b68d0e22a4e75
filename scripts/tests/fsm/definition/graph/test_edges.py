"""The one graph of a loop (definition/graph/edges.py): its edges and views, the traversals, and
the checks, analysis, diagram and HTML report all reading it."""

from __future__ import annotations

import re
from typing import Any

import pytest

import little_loops.fsm.definition.graph.edges as graph_module
from little_loops.cli.report_html import _loop_shape
from little_loops.cli.report_svg import graph_svg
from little_loops.fsm.definition.checks.analysis import successors
from little_loops.fsm.definition.checks.graph_checks import _GraphChecker
from little_loops.fsm.definition.graph.edges import (
    LOOP_STALL,
    LOOP_STALL_KEY,
    RESTART,
    WRITTEN,
    Edge,
    LoopGraph,
    breadth_first,
    closure,
    depths,
    loop_graph,
    reverse,
)
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.definition.writing.diagram import edges, render_mermaid
from little_loops.fsm.runs.report import build_report
from little_loops.fsm.validate.loopfile import check_document

# A loop with every kind of edge the four readers agree on: next, a route table, `$current`,
# on_success/on_failure, and the restart of a `maintain: true` loop.
SAMPLE: dict[str, Any] = {
    "name": "sample",
    "initial": "plan",
    "maintain": True,
    "states": {
        "plan": {"action": "echo plan", "next": "check"},
        "check": {
            "action": "pytest",
            "route": {"success": "done", "failure": "fix", "error": "$current"},
        },
        "fix": {"action": "echo fix", "on_success": "check", "on_failure": "plan"},
        "done": {"terminal": True, "on_maintain": "plan"},
    },
}


def _loop(data: dict[str, Any]) -> FSMLoop:
    return FSMLoop.from_dict(data)


def test_an_edge_resolves_current_and_knows_a_run_time_target() -> None:
    here = Edge("a", "failure", "$current", ("on_failure",), WRITTEN)
    later = Edge("a", "next", "${context.next}", ("next",), WRITTEN)
    assert (here.target, here.dynamic) == ("a", False)
    assert (later.target, later.dynamic) == ("${context.next}", True)


def test_out_lists_every_edge_as_written_then_the_restart_then_the_loop_stall() -> None:
    fsm = _loop(
        {
            "name": "x",
            "initial": "a",
            "maintain": True,
            "stall": {"on_stall": "b"},
            "states": {
                "a": {"action": "x", "next": "b", "on_success": "a"},
                "b": {"terminal": True, "on_maintain": "a"},
            },
        }
    )
    graph = loop_graph(fsm)
    assert graph.nodes == ["a", "b"]
    assert graph.out["a"] == [
        Edge("a", "next", "b", ("next",), WRITTEN),
        Edge("a", "success", "a", ("on_success",), WRITTEN),
        Edge("a", "stall", "b", LOOP_STALL_KEY, LOOP_STALL),
    ]
    assert graph.out["b"] == [
        Edge("b", "maintain", "a", ("on_maintain",), WRITTEN),
        Edge("b", "maintain", "a", ("on_maintain",), RESTART),
    ]
    # Drawn: only what a run can take (on_success beside next is never used).
    assert graph.drawn["a"] == [graph.out["a"][0], graph.out["a"][2]]
    assert graph.drawn["b"] == [graph.out["b"][1]]


def test_drawn_keeps_the_executors_order_and_one_stall_edge_per_state() -> None:
    fsm = _loop(
        {
            "name": "x",
            "initial": "a",
            "stall": {"on_stall": "c"},
            "states": {
                "a": {
                    "action": "x",
                    "route": {"ok": "b"},
                    "on_retry_exhausted": "c",
                    "retry": {"max": 2},
                    "stall": {"same_output": 3, "on_stall": "b"},
                },
                "b": {"action": "y", "next": "c"},
                "c": {"terminal": True},
            },
        }
    )
    graph = loop_graph(fsm)
    assert [e.label for e in graph.drawn["a"]] == ["ok", "retry_exhausted", "stall"]
    assert graph.drawn["a"][-1].raw == "b"  # the state's own breaker, not the loop's
    assert [e.label for e in graph.out["a"]] == ["ok", "stall", "retry_exhausted", "stall"]
    assert [(e.label, e.raw) for e in graph.drawn["b"]] == [("next", "c"), ("stall", "c")]


def test_successor_sets_and_reachability_follow_every_written_edge() -> None:
    fsm = _loop(
        {
            "name": "x",
            "initial": "a",
            "states": {
                "a": {"action": "x", "next": "b", "on_success": "c"},
                "b": {"terminal": True},
                "c": {"terminal": True},
                "d": {"terminal": True},
            },
        }
    )
    graph = loop_graph(fsm)
    assert graph.successor_sets() == ({"a": {"b", "c"}, "b": set(), "c": set(), "d": set()}, False)
    assert graph.reachable() == {"a", "b", "c"}
    assert graph.reachable("b") == {"b"}
    assert graph.reachable("nowhere") == {"a", "b", "c", "d"}
    fsm.states["a"].next = "${context.where}"
    assert loop_graph(fsm).successor_sets()[1] is True
    assert loop_graph(fsm).reachable() == {"a", "b", "c", "d"}


def test_pairs_are_the_drawn_edges_between_states() -> None:
    fsm = _loop(
        {
            "name": "x",
            "initial": "a",
            "states": {
                "a": {"action": "x", "route": {"ok": "$current", "no": "${context.t}"}},
                "b": {"terminal": True},
            },
        }
    )
    assert loop_graph(fsm).pairs() == {("a", "a")}


RING = {"a": ["b", "c"], "b": ["d"], "c": ["d", "a"], "d": []}


def test_closure_and_reverse() -> None:
    assert closure(["b"], RING) == {"b", "d"}
    assert closure(["a"], RING) == {"a", "b", "c", "d"}
    assert closure(["d"], reverse(RING)) == {"a", "b", "c", "d"}
    assert reverse(RING) == {"a": {"c"}, "b": {"a"}, "c": {"a"}, "d": {"b", "c"}}


def test_breadth_first_reaches_in_order_and_stops_where_told() -> None:
    assert breadth_first("a", RING) == {"a": None, "b": "a", "c": "a", "d": "b"}
    assert breadth_first("a", RING, lambda here: here != "b") == {
        "a": None,
        "b": "a",
        "c": "a",
        "d": "c",
    }
    assert depths("a", RING) == {"a": 0, "b": 1, "c": 1, "d": 2}
    assert list(depths("c", RING)) == ["c", "d", "a", "b"]


def _checked_pairs(fsm: FSMLoop) -> set[tuple[str, str]]:
    sets, _dynamic = _GraphChecker(fsm).graph.successor_sets()
    return {(source, target) for source, targets in sets.items() for target in targets}


def test_checks_analysis_diagram_and_report_read_the_same_edges() -> None:
    fsm = _loop(SAMPLE)
    expected = {
        ("plan", "check"),
        ("check", "done"),
        ("check", "fix"),
        ("check", "check"),
        ("fix", "check"),
        ("fix", "plan"),
        ("done", "plan"),
    }
    assert _checked_pairs(fsm) == expected
    analysed = successors(fsm)
    assert {(s, t) for s, targets in analysed.items() for t in targets} == expected
    assert {(e.source, e.target) for e in edges(fsm)} == expected
    report = build_report("sample", None, [])
    report.definition = SAMPLE
    states, initial, transitions, terminals = _loop_shape(report)
    assert transitions == expected
    assert (states, initial, terminals) == (list(SAMPLE["states"]), "plan", {"done"})
    svg = graph_svg(report, states, initial, transitions, terminals)
    assert len(re.findall(r'<path d="[^"]*" class="edge"', svg)) == len(expected)


def test_validating_a_loop_builds_its_graph_once(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[FSMLoop] = []
    original = LoopGraph.__init__

    def counting(self: LoopGraph, fsm: FSMLoop) -> None:
        built.append(fsm)
        original(self, fsm)

    monkeypatch.setattr(graph_module.LoopGraph, "__init__", counting)
    text = "name: x\ninitial: a\nstates:\n  a: {action: x, next: b}\n  b: {terminal: true}\n"
    report = check_document(load_text(text, "x.yaml"))
    assert report.fsm is not None
    assert [fsm.name for fsm in built] == ["x"]


def test_the_diagram_draws_the_graphs_drawn_edges_merged() -> None:
    fsm = _loop(SAMPLE)
    text = render_mermaid(fsm)
    assert '    s1 -->|"success"| s3\n' in text
    assert '    s2 -->|"success"| s1\n' in text
    assert '    s3 ==>|"maintain"| s0\n' in text
