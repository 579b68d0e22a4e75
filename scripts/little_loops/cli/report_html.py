"""`ll-loop report --html FILE`: one self-contained page of inline CSS and SVG, no script."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from little_loops.cli.report_svg import (
    cost_bars_svg,
    graph_svg,
    step_verdict,
    timeline_svg,
    verdict_class,
)
from little_loops.fsm.actions.registry import DEFAULT_KIND, recorded
from little_loops.fsm.facts.spend import format_cost
from little_loops.fsm.facts.timefmt import format_duration

if TYPE_CHECKING:
    from little_loops.fsm.runs.report import Report, Step

T = TypeVar("T")

MAX_STEPS_LISTED = 500  # a longer run lists its last this many steps, each with its output
MAX_PASSES_LISTED = 200

CSS = """
:root{--bg:#f6f7f9;--card:#fff;--ink:#1d2330;--muted:#6b7385;--line:#e3e6ec;--accent:#3b5bdb;
--ok:#2f9e44;--bad:#e03131;--err:#f08c00;--other:#7950f2;--none:#adb5bd}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--ink);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1100px;margin:0 auto;padding:28px 20px 60px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:17px;margin:0 0 12px}
.sub{color:var(--muted);margin:0 0 6px}.muted{color:var(--muted)}
.ending{margin:0 0 18px}.ending .why{display:block;margin-top:4px}
.badge{display:inline-block;padding:2px 10px;border-radius:999px;color:#fff;font-size:13px;
font-weight:600;vertical-align:middle;background:var(--other)}
.badge.ok{background:var(--ok)}.badge.bad{background:var(--bad)}
.badge.none{background:var(--none)}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px;
margin:0 0 18px}
.card,section{background:var(--card);border:1px solid var(--line);border-radius:12px;
padding:14px 16px}
section{margin:0 0 18px;overflow-x:auto}.card b{display:block;font-size:22px}
.card span{color:var(--muted);font-size:13px}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{text-align:left;padding:6px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600;font-size:12px;text-transform:uppercase;letter-spacing:.03em}
td.num{text-align:right;font-variant-numeric:tabular-nums}
svg text{font:12px system-ui,sans-serif;fill:var(--ink)}
svg.graph{display:block;margin:0 auto;max-width:100%;height:auto}
.node rect{fill:#f1f3f5;stroke:#ced4da;stroke-width:1.5}
.node.visited rect{fill:#edf2ff;stroke:var(--accent);stroke-width:2}
.node.terminal rect{stroke-width:3.5}.node.initial rect{stroke-dasharray:6 3}
.node.fanout rect{stroke-width:3;stroke:var(--other)}
.node text{text-anchor:middle}.node .name{font-weight:600}.node .visits{fill:var(--muted)}
.edge{fill:none;stroke:#ced4da;stroke-width:1.2;stroke-dasharray:4 4}
.edge.taken{stroke:var(--accent);stroke-width:2.4;stroke-dasharray:none}
.arrowhead{fill:#868e96}.count{fill:var(--accent);font-weight:700}
svg.timeline,svg.costs{width:100%;height:auto}
.lane{text-anchor:end;fill:var(--muted)}.tick{fill:var(--muted);font-size:11px}
.grid{stroke:var(--line)}
.bar.ok{fill:var(--ok)}.bar.bad{fill:var(--bad)}.bar.err{fill:var(--err)}
.bar.other{fill:var(--other)}.bar.none{fill:var(--none)}.bar.cost{fill:var(--accent)}
.legend span{display:inline-block;margin-right:14px;font-size:13px;color:var(--muted)}
.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px}
details{border-bottom:1px solid var(--line);padding:6px 0}
summary{cursor:pointer;list-style-position:outside}
summary .v{font-weight:600}.v.ok{color:var(--ok)}.v.bad{color:var(--bad)}
.v.err{color:var(--err)}.v.other{color:var(--other)}.v.none{color:var(--muted)}
pre{background:#0f1320;color:#e9ecef;border-radius:8px;padding:10px 12px;overflow-x:auto;
font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;white-space:pre-wrap;
word-break:break-word;max-height:420px}
pre.err{background:#2b1216}
footer{color:var(--muted);font-size:12px;margin-top:24px}
.lanes{display:grid;gap:8px}.lanes .lane-row{display:grid;gap:10px;align-items:center;
grid-template-columns:minmax(120px,1.2fr) 110px minmax(200px,3fr) 70px 70px minmax(120px,1.4fr);
border-left:5px solid var(--none);padding:6px 10px;background:#fafbfc;border-radius:6px}
.lane-row.ok{border-left-color:var(--ok)}.lane-row.bad{border-left-color:var(--bad)}
.lane-row.other{border-left-color:var(--other)}
.chip{display:inline-block;padding:1px 8px;margin:2px 2px 2px 0;border-radius:6px;
background:#edf2ff;border:1px solid #bac8ff;font-size:12.5px}
.lane-row .who b{display:block}.lane-row .who span,.lane-row .git{color:var(--muted);
font-size:12.5px;word-break:break-all}
"""

_LEGEND = (
    '<p class="legend"><span><i style="background:var(--ok)"></i>success</span>'
    '<span><i style="background:var(--bad)"></i>failure</span>'
    '<span><i style="background:var(--err)"></i>error</span>'
    '<span><i style="background:var(--other)"></i>other verdict</span>'
    '<span><i style="background:var(--none)"></i>not judged (next:)</span></p>'
)


def _money(value: float) -> str:
    return format_cost(value) if value else "–"


def badge_class(report: Report) -> str:
    """The colour of a run's outcome: ok for a success, bad for a failure, none while it has
    not ended, other for a run that can go on (stopped, interrupted, awaiting an answer)."""
    if report.outcome is None:
        return "none"
    return {True: "ok", False: "bad", None: "other"}[report.success]


def _ending(report: Report) -> str:
    """The state the run ended in, whether that is a success, and why it ended so."""
    if report.outcome is None:
        return '<p class="ending muted">Not ended: still running, or its process died.</p>'
    state = escape(report.final_state or "?")
    said = escape(report.outcome)
    if report.success is not None:
        colour, word = ("ok", "a success") if report.success else ("bad", "a failure")
        said = f'<span class="v {colour}">{word}</span>'
    why = escape(report.error or "")
    stall = report.stall
    if stall is not None:  # which breaker, and its counts
        counts = ", ".join(
            f"{key} {escape(str(stall[key]))}"
            for key in ("detector", "state", "count", "limit")
            if key in stall
        )
        why += f' <span class="muted">({counts})</span>'
    why = f'<span class="why"><b>Why:</b> {why}</span>' if why else ""
    return f'<p class="ending">Ended in <b>{state}</b>: {said}.{why}</p>'


def _loop_shape(report: Report) -> tuple[list[str], str | None, set[tuple[str, str]], set[str]]:
    """States, initial state, declared transitions and terminal states: from the loop the run
    kept (its definition), else only what the run's events show."""
    states = list(report.states)
    initial, transitions, terminals = (states[0] if states else None), set(), set()
    definition = report.definition
    if definition is not None:
        from little_loops.fsm.definition.graph.edges import loop_graph
        from little_loops.fsm.definition.model.typed import FSMLoop

        try:
            fsm = FSMLoop.from_dict(definition)
            transitions = loop_graph(fsm).pairs()
            states = list(fsm.states) + [s for s in states if s not in fsm.states]
            initial, terminals = fsm.initial, set(fsm.terminal_states())
        except (TypeError, ValueError, KeyError, AttributeError):
            pass  # a damaged definition: draw what the events show
    for source, target in report.edges:
        states += [s for s in (source, target) if s not in states]
    return states, initial, transitions, terminals


def run_section(report: Report) -> str:
    """Everything about one run: its cards, graph, timeline, costs, tables and steps."""
    outcome = report.outcome or "not ended"
    run = f" · run {escape(report.run_id)}" if report.run_id else ""
    started = escape((report.started_at or "")[:19].replace("T", " "))
    tokens = sum(report.tokens.values())
    cards = [
        (f"{report.pass_count:,}", "passes"),
        (f"{report.step_count:,}", "steps"),
        (format_duration(report.duration_ms), "duration"),
        (_money(report.cost_usd), "cost"),
        (f"{tokens:,}" if tokens else "–", "tokens"),
    ]
    if report.slowest:
        cards.append((escape(report.slowest), "slowest state"))
    if report.costliest:
        cards.append((escape(report.costliest), "costliest state"))
    states, initial, transitions, terminals = _loop_shape(report)
    badge = f'<span class="badge {badge_class(report)}">{escape(outcome)}</span>'
    return "".join(
        [
            f"<h1>{escape(report.loop)} {badge}</h1>",
            f'<p class="sub">started {started}{run}'
            + (f" · resumed {report.resumed}×" if report.resumed else "")
            + "</p>",
            _about(report),
            _ending(report),
            '<div class="cards">',
            *(
                f'<div class="card"><b>{value}</b><span>{label}</span></div>'
                for value, label in cards
            ),
            "</div>",
            '<section><h2>State graph</h2><p class="muted">Bold arrows: the path taken, with how '
            "many times; dashed: transitions never taken. Each state shows its visits.</p>",
            graph_svg(report, states, initial, transitions, terminals),
            "</section>",
            "<section><h2>Timeline</h2>",
            _LEGEND,
            timeline_svg(report),
            "</section>",
            "<section><h2>Cost per state</h2>",
            cost_bars_svg(report),
            "</section>",
            _lanes(report),
            _states_table(report),
            _agents_table(report),
            _passes_table(report),
            _steps(report),
        ]
    )


_LANE_CLASS = {"success": "ok", "failure": "bad", "stopped": "other"}


def _lanes(report: Report) -> str:
    """A lane per fan-out branch: its item and run, verdict, the states its own run went
    through, time, cost, and its git branch with what the merge did."""
    if not report.branches:
        return ""
    rows = []
    for view in report.branches:
        said = escape(view.standing)
        badge = f'<span class="badge {verdict_class(view.verdict or None)}">{said}</span>'
        chips = "".join(f'<span class="chip">{escape(s)}</span>' for s in view.states) or "–"
        merged = f"<br>{escape(view.merged)}" if view.merged else ""
        rows.append(
            f'<div class="lane-row {_LANE_CLASS.get(view.verdict, "none")}">'
            f'<div class="who"><b>{escape(view.state)} {escape(view.label)}</b>'
            f"<span>{escape(view.key)}</span></div><div>{badge}</div><div>{chips}</div>"
            f"<div class=num>{format_duration(view.duration_ms)}</div>"
            f"<div class=num>{_money(view.cost_usd)}</div>"
            f'<div class="git">{escape(view.branch or "no git branch")}{merged}</div></div>'
        )
    return (
        '<section><h2>Branches</h2><p class="muted">A lane per branch of a fan-out state: its'
        " own run's verdict, the states it went through, its time and cost, its git"
        f' branch.</p><div class="lanes">{"".join(rows)}</div></section>'
    )


def _about(report: Report) -> str:
    """The loop's metadata (description, category, labels) from its kept definition."""
    loop = report.definition or {}
    text = loop.get("description")
    parts = [f"<p>{escape(text.strip())}</p>"] if isinstance(text, str) and text.strip() else []
    tags = [str(loop["category"])] if isinstance(loop.get("category"), str) else []
    labels = loop.get("labels")
    tags += [str(label) for label in labels] if isinstance(labels, list) else []
    if tags:
        shown = " ".join(f'<span class="badge">{escape(tag)}</span>' for tag in tags)
        parts.append(f'<p class="sub">{shown}</p>')
    return f'<div class="about">{"".join(parts)}</div>' if parts else ""


def _state_about(report: Report, name: str) -> str:
    """A state's description, as the tooltip of its name in the states table."""
    states = (report.definition or {}).get("states")
    state = states.get(name) if isinstance(states, dict) else None
    text = state.get("description") if isinstance(state, dict) else None
    return f' title="{escape(text)}"' if isinstance(text, str) else ""


def _states_table(report: Report) -> str:
    rows = []
    for name, f in report.states.items():
        verdicts = ", ".join(
            f'<span class="v {verdict_class(v)}">{escape(v)}</span> {n}'
            for v, n in f.verdicts.items()
        )
        rows.append(
            f"<tr><td{_state_about(report, name)}>{escape(name)}</td>"
            f"<td class=num>{f.visits}</td><td>{verdicts or '–'}</td>"
            f"<td class=num>{format_duration(f.total_ms)}</td>"
            f"<td class=num>{format_duration(f.median_ms)}</td>"
            f"<td class=num>{_money(f.cost_usd)}</td>"
            f"<td class=num>{f'{f.tokens:,}' if f.tokens else '–'}</td></tr>"
        )
    head = "".join(
        f"<th>{h}</th>" for h in ("state", "visits", "verdicts", "time", "median", "cost", "tokens")
    )
    return f"<section><h2>States</h2><table><tr>{head}</tr>{''.join(rows)}</table></section>"


def _agents_table(report: Report) -> str:
    """Cost per agent and model (a row per model under its agent's), and the switches."""
    from little_loops.fsm.engine.rules.fallback import switch_text

    book = report.agents
    if not book.rows and not book.switches:
        return ""
    rows = []
    for name, row in book.rows.items():
        tokens = sum(row.tokens.values())
        rows.append(
            f'<tr class="agent"><td>{escape(name)}</td><td></td><td class=num>{row.actions}</td>'
            f"<td class=num>{_money(row.cost_usd)}</td>"
            f"<td class=num>{f'{tokens:,}' if tokens else '–'}</td></tr>"
        )
        rows += [
            f'<tr class="model"><td></td><td>{escape(model)}</td><td></td>'
            f"<td class=num>{_money(cost)}</td><td></td></tr>"
            for model, cost in row.models.items()
        ]
    head = "".join(f"<th>{h}</th>" for h in ("agent", "model", "actions", "cost", "tokens"))
    switches = "".join(
        f'<li class="switch">{escape(str(item.get("state")))}: {escape(switch_text(item))}</li>'
        for item in book.switches
    )
    listed = f'<h3>Agent switches</h3><ul class="switches">{switches}</ul>' if switches else ""
    return (
        f'<section class="agents"><h2>Cost per agent</h2>'
        f"<table><tr>{head}</tr>{''.join(rows)}</table>{listed}</section>"
    )


def _last(items: Iterable[T], most: int, count: int, what: str) -> tuple[list[T], str]:
    """The last *most* of *items* (of *count* in all), and a note saying so when cut."""
    shown = list(items)[-most:]
    cut = len(shown) < count
    return shown, f'<p class="muted">The last {len(shown)} of {count:,} {what}.</p>' if cut else ""


def _passes_table(report: Report) -> str:
    shown, note = _last(report.passes, MAX_PASSES_LISTED, report.pass_count, "passes")
    rows = "".join(
        f"<tr><td class=num>{item['pass']}</td><td>{escape(' → '.join(item['path']))}</td>"
        f"<td class=num>{format_duration(item['duration_ms'])}</td></tr>"
        for item in shown
    )
    return (
        f"<section><h2>Passes</h2>{note}<table><tr><th>pass</th><th>path</th><th>time</th></tr>"
        f"{rows}</table></section>"
    )


def _steps(report: Report) -> str:
    shown, note = _last(report.steps, MAX_STEPS_LISTED, report.step_count, "steps")
    items = []
    for step in shown:
        label, colour = step_verdict(step)
        head = (
            f"#{step.number} <b>{escape(step.state)}</b> · "
            f'<span class="v {colour}">{escape(label)}</span>'
            f" · {format_duration(step.duration_ms)}"
            + (f" · exit {step.exit_code}" if step.exit_code is not None else "")
            + (f" · {_money(step.cost_usd)}" if step.cost_usd else "")
            + (" · resumed" if step.resumed else "")
            + (f" · sandbox {escape(step.sandbox)}" if step.sandbox else "")
            + (' · <span class="v bad">stall</span>' if step.stall else "")
            + (f" → {escape(step.to)}" if step.to else "")
        )
        body = _step_body(step)
        items.append(f"<details><summary>{head}</summary>{''.join(body)}</details>")
    return f"<section><h2>Steps</h2>{note}{''.join(items)}</section>"


def _step_body(step: Step) -> list[str]:
    """What a step did, each text from the run escaped: its action, the judge's verdict
    and reason, Claude's tool calls, the end of its output and stderr, a stall."""
    body = []
    if step.action:
        kind = recorded(step.action_type, step.agent)
        # A loop's own agent (`agents:`) is no kind of the registry: its name says whose.
        whose = kind.shown_as if kind else escape(step.agent or DEFAULT_KIND.shown_as)
        body.append(f'<p class="muted">{whose} action:</p><pre>{escape(step.action)}</pre>')
    if step.evaluator is not None:
        sure = f" (confidence {step.confidence:.2f})" if step.confidence is not None else ""
        said = f"{escape(step.verdict or '?')}{sure}"
        body.append(f'<p class="muted">verdict of {escape(step.evaluator)}: {said}</p>')
        if step.reason and step.reason != step.error:
            body.append(f"<pre>{escape(step.reason)}</pre>")
    if step.error:
        body.append(f'<p class="muted">error:</p><pre class="err">{escape(step.error)}</pre>')
    if step.tool_calls:
        calls = escape("\n".join(step.tool_calls))
        body.append(
            '<p class="muted">Claude\'s tool calls (as ll-loop logs shows them):</p>'
            f'<pre class="tools">{calls}</pre>'
        )
    if step.output:
        body.append(f'<p class="muted">output (its end):</p><pre>{escape(step.output)}</pre>')
    if step.stderr:
        body.append(f'<p class="muted">stderr:</p><pre class="err">{escape(step.stderr)}</pre>')
    if step.stall:
        body.append(f'<p class="muted">stall:</p><pre class="err">{escape(step.stall)}</pre>')
    if not body:
        body.append('<p class="muted">No action and no output.</p>')
    return body


def _summary(reports: list[Report]) -> str:
    """A table of the runs of a combined report (several exported files)."""
    rows = "".join(
        f"<tr><td>{escape(r.loop)}</td><td>{escape(r.run_id or '–')}</td>"
        f'<td><span class="badge {badge_class(r)}">'
        f"{escape(r.outcome or 'not ended')}</span></td><td class=num>{r.pass_count}</td>"
        f"<td class=num>{format_duration(r.duration_ms)}</td>"
        f"<td class=num>{_money(r.cost_usd)}</td></tr>"
        for r in reports
    )
    total = sum(r.cost_usd for r in reports)
    return (
        f"<h1>{len(reports)} runs</h1><p class=sub>total cost {_money(total)}</p><section>"
        "<table><tr><th>loop</th><th>run</th><th>outcome</th><th>passes</th><th>duration</th>"
        f"<th>cost</th></tr>{rows}</table></section>"
    )


def render_html(reports: list[Report]) -> str:
    """The page: one run, or a summary of several followed by each run."""
    from little_loops import __version__

    title = escape(reports[0].loop if len(reports) == 1 else f"{len(reports)} runs")
    body: list[Any] = [_summary(reports)] if len(reports) > 1 else []
    body += [f'<article id="run-{i}">{run_section(r)}</article>' for i, r in enumerate(reports)]
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>ll-loop report: {title}</title><style>{CSS}</style></head><body><main>"
        + "<hr>".join(body)
        + f"<footer>Made by ll-loop {escape(__version__)} · one file, nothing loaded from the"
        " network.</footer></main></body></html>\n"
    )


def write_html(reports: list[Report], path: Path) -> None:
    """Write the page to *path* atomically (a reader never sees half of it)."""
    from little_loops.fsm.runs.atomic import write_user_file

    write_user_file(path, render_html(reports).encode("utf-8"))
