"""The pictures of an HTML report (cli/report_svg.py): state graph, timeline, cost bars."""

from __future__ import annotations

import re

from little_loops.cli.report_svg import (
    MAX_GRAPH_STATES,
    cost_bars_svg,
    graph_svg,
    step_verdict,
    timeline_svg,
    verdict_class,
)
from little_loops.fsm.runs.report import Report, Step, build_report


def _report() -> Report:
    return build_report("demo", None, [])


def test_verdict_classes() -> None:
    assert [verdict_class(v) for v in ("success", "failure_uncertain", "error", "odd", None)] == [
        "ok",
        "bad",
        "err",
        "other",
        "none",
    ]


def test_a_steps_label_and_colour() -> None:
    assert step_verdict(Step("a", 1, 1, "t", verdict="failure")) == ("failure", "bad")
    assert step_verdict(Step("a", 1, 1, "t")) == ("no verdict", "none")
    claude = Step("a", 1, 1, "t", exit_code=0, action_type="prompt")
    assert step_verdict(claude) == ("claude: success", "ok")
    assert step_verdict(Step("a", 1, 1, "t", exit_code=3)) == ("exit 3", "none")


def test_the_graph_lays_states_out_from_the_initial_one() -> None:
    report = _report()
    report.edges = {("a", "b"): 2}
    svg = graph_svg(report, ["a", "b", "c"], "a", {("a", "b"), ("b", "a")}, {"c"})
    rows = {
        name: float(y)
        for y, name in re.findall(r'<text x="[^"]*" y="([^"]*)" class="name">(\w)<', svg)
    }
    assert rows["a"] < rows["b"] < rows["c"]  # c is never reached: last
    assert len(re.findall(r'class="edge taken"', svg)) == 1
    assert len(re.findall(r'class="edge"', svg)) == 1
    assert '<g class="node terminal">' in svg
    assert '<g class="node initial">' in svg


def test_a_graph_with_nothing_or_too_much_to_draw() -> None:
    assert graph_svg(_report(), [], None, set(), set()) == '<p class="muted">No states to draw.</p>'
    many = [f"s{i}" for i in range(MAX_GRAPH_STATES + 1)]
    assert "is left out" in graph_svg(_report(), many, "s0", set(), set())


def test_timeline_and_cost_bars() -> None:
    report = _report()
    assert timeline_svg(report) == '<p class="muted">No steps yet.</p>'
    assert "No state spent anything" in cost_bars_svg(report)
    report.steps.append(Step("a", 1, 1, "2026-01-01T00:00:00", duration_ms=1500, verdict="success"))
    timeline = timeline_svg(report)
    assert 'class="bar ok"><title>#1 a: success in 1500 ms</title>' in timeline
