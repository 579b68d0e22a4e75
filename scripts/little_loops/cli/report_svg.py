"""The pictures of an HTML report as inline SVG: the state graph, the step timeline, cost bars."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from little_loops.fsm.actions.registry import recorded
from little_loops.fsm.definition.graph.edges import depths
from little_loops.fsm.evaluators.judge_rules import UNCERTAIN_SUFFIX
from little_loops.fsm.facts.spend import format_cost

if TYPE_CHECKING:
    from little_loops.fsm.runs.report import Report, Step

MAX_GRAPH_STATES = 60  # more states than this: the graph is left out (the tables remain)
MAX_TIMELINE_STEPS = 2000  # a longer run's timeline shows its last this many steps
VERDICT_CLASS = {"success": "ok", "failure": "bad", "error": "err", "blocked": "err"}
_NODE_W, _NODE_H, _GAP_X, _GAP_Y, _PAD = 150, 44, 40, 70, 24


def verdict_class(verdict: str | None) -> str:
    """The CSS class of a verdict's colour: ok, bad, err, or other."""
    if verdict is None:
        return "none"
    return VERDICT_CLASS.get(verdict.removesuffix(UNCERTAIN_SUFFIX), "other")


def step_verdict(step: Step) -> tuple[str, str]:
    """A step's label and its colour's CSS class: its verdict; for a step no evaluator
    judged (its state goes on with `next:`), how its action ended: `claude: success` for a
    Claude session that reported success (Claude Code's own verdict), else `exit N`."""
    if step.verdict is not None:
        return step.verdict, verdict_class(step.verdict)
    if step.exit_code is None:
        return "no verdict", "none"
    kind = recorded(step.action_type, step.agent)
    if kind is not None and kind.agent is not None and step.exit_code == 0 and step.error is None:
        return f"{kind.name}: success", "ok"
    return f"exit {step.exit_code}", "none"


def _layers(
    states: list[str], initial: str | None, edges: dict[tuple[str, str], int]
) -> list[list[str]]:
    """States by their distance from *initial* along the edges (unreached ones last)."""
    following: dict[str, list[str]] = {}
    for source, target in edges:
        if target in states:
            following.setdefault(source, []).append(target)
    start = initial if initial in states else (states[0] if states else None)
    depth = depths(start, following) if start is not None else {}
    last = max(depth.values(), default=-1) + 1
    layers: list[list[str]] = [[] for _ in range(max(last + 1, 1))]
    for state in states:
        layers[depth.get(state, last)].append(state)
    return [layer for layer in layers if layer]


def graph_svg(
    report: Report,
    states: list[str],
    initial: str | None,
    transitions: set[tuple[str, str]],
    terminals: set[str],
) -> str:
    """The loop's states in layers from the initial one; taken edges drawn bold with how often
    they were taken, the others thin and dashed; each state with its visits."""
    if not states:
        return '<p class="muted">No states to draw.</p>'
    if len(states) > MAX_GRAPH_STATES:
        return f'<p class="muted">The graph of {len(states)} states is left out (over {MAX_GRAPH_STATES}); the tables below have every state.</p>'  # noqa: E501
    edges = dict.fromkeys(transitions, 0) | report.edges
    layers = _layers(states, initial, edges)
    width = max(len(layer) for layer in layers) * (_NODE_W + _GAP_X) + _GAP_X + 240
    height = len(layers) * (_NODE_H + _GAP_Y) - _GAP_Y + 2 * _PAD
    where: dict[str, tuple[float, float]] = {}
    for row, layer in enumerate(layers):
        span = len(layer) * (_NODE_W + _GAP_X) - _GAP_X
        left = (width - span) / 2
        for column, state in enumerate(layer):
            x = left + column * (_NODE_W + _GAP_X) + _NODE_W / 2
            where[state] = (x, _PAD + row * (_NODE_H + _GAP_Y) + _NODE_H / 2)
    parts = [
        f'<svg class="graph" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
        f'role="img" aria-label="state graph">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'class="arrowhead"/></marker></defs>',
    ]
    middle = width / 2
    for (source, target), count in sorted(edges.items(), key=lambda item: item[1]):
        if source in where and target in where:
            parts.append(_edge(where[source], where[target], count, middle))
    visits = {name: figures.visits for name, figures in report.states.items()}
    for (_, target), count in report.edges.items():  # a terminal state is reached, not run
        if target not in report.states:
            visits[target] = visits.get(target, 0) + count
    fanned: dict[str, int] = {}  # a fan-out state's branches (its lanes in the report)
    for branch in report.branches:
        fanned[branch.state] = fanned.get(branch.state, 0) + 1
    for state, (x, y) in where.items():
        seen = visits.get(state, 0)
        kind = "node visited" if seen else "node"
        kind += " terminal" if state in terminals else ""
        kind += " initial" if state == initial else ""
        kind += " fanout" if state in fanned else ""
        shown = f"{seen}×" + (f" · ⇉ {fanned[state]} branches" if state in fanned else "")
        label = escape(state if len(state) <= 18 else state[:17] + "…")
        parts.append(
            f'<g class="{kind}"><title>{escape(state)}: {seen} visit(s)</title>'
            f'<rect x="{x - _NODE_W / 2:.1f}" y="{y - _NODE_H / 2:.1f}" width="{_NODE_W}" '
            f'height="{_NODE_H}" rx="10"/>'
            f'<text x="{x:.1f}" y="{y - 3:.1f}" class="name">{label}</text>'
            f'<text x="{x:.1f}" y="{y + 13:.1f}" class="visits">{shown}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _edge(a: tuple[float, float], b: tuple[float, float], count: int, middle: float) -> str:
    """One transition: a straight arrow downwards; upwards or sideways, a curve around the
    outside (the left of the picture for a state left of its *middle*, else the right)."""
    (x1, y1), (x2, y2) = a, b
    kind = "edge taken" if count else "edge"
    if a == b:  # a state to itself: a loop on its right side
        right = x1 + _NODE_W / 2
        path = f"M{right:.1f},{y1 - 8:.1f} C{right + 45:.1f},{y1 - 30:.1f} {right + 45:.1f},{y1 + 30:.1f} {right:.1f},{y1 + 8:.1f}"  # noqa: E501
        label_at = (right + 40, y1)
    elif y2 == y1:  # across a layer: an arc under the two states
        sy = y1 + _NODE_H / 2
        dip = sy + min(_GAP_Y - 12, 18 + abs(x2 - x1) / 8)
        path = f"M{x1:.1f},{sy:.1f} Q{(x1 + x2) / 2:.1f},{dip:.1f} {x2:.1f},{sy:.1f}"
        label_at = ((x1 + x2) / 2, (sy + dip) / 2 + 12)
    elif y2 > y1:
        path = f"M{x1:.1f},{y1 + _NODE_H / 2:.1f} L{x2:.1f},{y2 - _NODE_H / 2:.1f}"
        label_at = ((x1 + x2) / 2 + 8, (y1 + y2) / 2)
    else:  # back to an earlier layer (or across one): around the outside
        side = -1 if x1 < middle else 1
        out = (min(x1, x2) if side < 0 else max(x1, x2)) + side * (_NODE_W / 2 + 40)
        sx, tx = x1 + side * _NODE_W / 2, x2 + side * _NODE_W / 2
        path = f"M{sx:.1f},{y1:.1f} C{out:.1f},{y1:.1f} {out:.1f},{y2:.1f} {tx:.1f},{y2:.1f}"
        label_at = (out - side * 14, (y1 + y2) / 2)
    label = f'<text x="{label_at[0]:.1f}" y="{label_at[1]:.1f}" class="count">{count}</text>'
    return f'<path d="{path}" class="{kind}" marker-end="url(#arrow)"/>' + (label if count else "")


def timeline_svg(report: Report) -> str:
    """A bar per step on its state's lane, from its start for its duration, in its verdict's
    colour; the last MAX_TIMELINE_STEPS steps of a longer run."""
    from datetime import datetime

    steps = list(report.steps)[-MAX_TIMELINE_STEPS:]
    if not steps:
        return '<p class="muted">No steps yet.</p>'
    lanes = list(dict.fromkeys(step.state for step in steps))
    try:
        origin = datetime.fromisoformat(steps[0].started_at)
        starts = [(datetime.fromisoformat(s.started_at) - origin).total_seconds() for s in steps]
    except ValueError:
        starts = [float(i) for i in range(len(steps))]
    end = max(start + step.duration_ms / 1000 for start, step in zip(starts, steps, strict=True))
    span = max(end, 1e-3)
    label_w, plot_w, lane_h = 140, 800, 22
    height = len(lanes) * lane_h + 30
    parts = [
        f'<svg class="timeline" viewBox="0 0 {label_w + plot_w + 10} {height}" '
        f'role="img" aria-label="timeline of steps">'
    ]
    for row, lane in enumerate(lanes):
        y = row * lane_h
        name = escape(lane if len(lane) <= 20 else lane[:19] + "…")
        parts.append(
            f'<text x="{label_w - 8}" y="{y + 15}" class="lane">{name}</text>'
            f'<line x1="{label_w}" x2="{label_w + plot_w}" y1="{y + lane_h}" y2="{y + lane_h}" '
            f'class="grid"/>'
        )
    rows = {lane: row for row, lane in enumerate(lanes)}
    for start, step in zip(starts, steps, strict=True):
        x = label_w + start / span * plot_w
        w = max(1.5, step.duration_ms / 1000 / span * plot_w)
        y = rows[step.state] * lane_h + 4
        label, colour = step_verdict(step)
        tip = f"#{step.number} {step.state}: {label} in {step.duration_ms} ms"
        parts.append(
            f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{lane_h - 8}" rx="2" '
            f'class="bar {colour}"><title>{escape(tip)}</title></rect>'
        )
    axis_y = len(lanes) * lane_h + 18
    for tick in range(5):
        seconds = span * tick / 4
        x = label_w + plot_w * tick / 4
        anchor = "start" if tick == 0 else "end" if tick == 4 else "middle"
        parts.append(
            f'<text x="{x:.1f}" y="{axis_y}" class="tick" text-anchor="{anchor}">'
            f"{_seconds(seconds)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _seconds(value: float) -> str:
    if value < 60:
        return f"{value:.1f}s" if value < 10 else f"{value:.0f}s"
    return f"{value / 60:.1f}m"


def cost_bars_svg(report: Report) -> str:
    """A bar per state that spent money, longest first; a note when nothing was spent."""
    spent = sorted(
        ((f.cost_usd, name) for name, f in report.states.items() if f.cost_usd), reverse=True
    )
    if not spent:
        return (
            '<p class="muted">No state spent anything (shell actions only, or no Claude steps).</p>'  # noqa: E501
        )
    top = spent[0][0]
    label_w, plot_w, row_h = 140, 600, 24
    parts = [
        f'<svg class="costs" viewBox="0 0 {label_w + plot_w + 90} {len(spent) * row_h + 6}" '
        f'role="img" aria-label="cost per state">'
    ]
    for row, (cost, name) in enumerate(spent):
        y = row * row_h
        w = max(2.0, cost / top * plot_w)
        parts.append(
            f'<text x="{label_w - 8}" y="{y + 16}" class="lane">{escape(name[:20])}</text>'
            f'<rect x="{label_w}" y="{y + 4}" width="{w:.1f}" height="{row_h - 8}" rx="3" '
            f'class="bar cost"/><text x="{label_w + w + 6:.1f}" y="{y + 16}" class="tick">'
            f"{escape(format_cost(cost))}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)
