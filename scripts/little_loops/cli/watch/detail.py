"""One run as `watch` shows it: its graph, live step, recent steps, captures, costs, stalls."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from little_loops.cli.watch.board import clean
from little_loops.fsm.actions.registry import recorded
from little_loops.fsm.engine.kinds.fanout import progress_of
from little_loops.fsm.facts.errors import LoopError
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Status
from little_loops.fsm.facts.owned import run_output
from little_loops.fsm.facts.runfile import NotOurFile, open_run_stream
from little_loops.fsm.facts.spend import format_cost
from little_loops.fsm.facts.timefmt import format_duration
from little_loops.fsm.runs.describe import RunDescription, describe
from little_loops.fsm.runs.fanned import from_captured, read_runs
from little_loops.fsm.runs.report import Report, build_report
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.store import StatePersistence

TAIL_EVENTS = 3000  # the events a view reads, from the end of the log: never the whole log
OUTPUT_WINDOW = 64 * 1024  # the end of the live step's output file read at each change
OUTPUT_LINES = 200  # the most lines of the live step's output kept
LINE_CHARS = 500  # the most of one output line shown (a 10 MB line is cut, then escaped)
RECENT_STEPS = 8

CURRENT, VISITED, OTHER = "current", "visited", "other"


@dataclass(frozen=True)
class GraphLine:
    """One state of the loop's graph: how it is marked, and its way out."""

    mark: str  # CURRENT, VISITED (on the path taken in the events read) or OTHER
    text: str


@dataclass
class RunView:
    """What the detail screen shows of one run, every string safe to print."""

    key: str
    header: str
    status: str
    waiting: str
    question: str | None
    graph: list[GraphLine] = field(default_factory=list)
    live: list[str] = field(default_factory=list)  # the step under way: what runs, its output
    steps: list[str] = field(default_factory=list)
    branches: list[str] = field(default_factory=list)  # a fan-out's, where each one is
    captured: list[str] = field(default_factory=list)
    costs: list[str] = field(default_factory=list)
    stalls: list[str] = field(default_factory=list)
    output_path: str | None = None
    resumable: bool = False
    running: bool = False


def load_view(key: str, loops_dir: Path) -> RunView | None:
    """The run whose files are named *key*, read from its state file and its log's last
    TAIL_EVENTS events; None when it has no saved run. Reading changes nothing."""
    from little_loops.fsm.facts.outcomes import can_resume

    with StatePersistence(key, loops_dir) as store:
        state = store.load_state()
        if state is None:
            return None
        events = store.tail_events(TAIL_EVENTS)
    described = describe(state, key, loops_dir, named=key)
    report = build_report(state.loop_name, state.run_id, events)
    partial = len(events) >= TAIL_EVENTS  # the figures count the events read, not the run
    running = state.status == Status.RUNNING and described.live.alive
    view = RunView(
        key=key,
        header=_header(state, described),
        status=clean(described.status),
        waiting=clean(described.waiting or ""),
        question=_question(state),
        graph=graph_lines(state, report, loops_dir),
        steps=step_lines(report),
        branches=branch_lines(state, loops_dir),
        captured=captured_lines(state),
        costs=cost_lines(state, report, partial),
        stalls=[f"{clean(k)}: {clean(v)}" for k, v in sorted(state.stall_watch.items())],
        resumable=described.live.crashed or can_resume(state.status, state.terminated_by),
        running=running,
    )
    start = _latest_start(events)
    if start is not None and running:
        view.output_path = run_output(start.get("output_path"), key, loops_dir)
        view.live = _live_lines(start, view.output_path)
    return view


def _header(state: LoopState, described: RunDescription) -> str:
    from little_loops.cli.watch.board import row_of

    row = row_of(state.key, described)
    cells = row.cells()
    return f"{cells[0]}  run {cells[1]}  pass {cells[4]}  {cells[5]}  cost {cells[6]}"


def _question(state: LoopState) -> str | None:
    from little_loops.fsm.runs.approvals import pending_question

    question = pending_question(state)
    return None if question is None else clean(question.get("question", ""))


def _latest_start(events: list[dict[str, object]]) -> dict[str, object] | None:
    for event in reversed(events):
        if event.get("event") == Event.ACTION_START and not event.get("depth"):
            return event
    return None


def graph_lines(state: LoopState, report: Report, loops_dir: Path) -> list[GraphLine]:
    """Each state of the run's loop file with its ways out, the current one and those on
    the path taken marked; the states the events name when the file cannot be read."""
    from little_loops.fsm.runs.control import saved_loop_file
    from little_loops.fsm.runs.locks import project_root

    visited = {s for pair in report.edges for s in pair} | {s.state for s in report.steps}
    try:
        names, ways = _loop_edges(saved_loop_file(state, project_root(loops_dir)))
    except (LoopError, OSError):
        names, ways = sorted(visited | {state.current_state}), {}
    lines, taken = [], report.edges
    for name in names:
        mark = CURRENT if name == state.current_state else VISITED if name in visited else OTHER
        out = ", ".join(
            f"{clean(target, 40)}{'*' if (name, target) in taken else ''} ({clean(label, 40)})"
            for target, label in ways.get(name, [])
        )
        lines.append(GraphLine(mark, f"{clean(name, 60)}" + (f" → {out}" if out else "")))
    return lines


_GRAPHS: dict[tuple[str, int], tuple[list[str], dict[str, list[tuple[str, str]]]]] = {}


def _loop_edges(path: Path | None) -> tuple[list[str], dict[str, list[tuple[str, str]]]]:
    """The states of the loop file at *path* and each one's drawn edges (target, label),
    from the one graph module; kept while the file is unchanged."""
    from little_loops.fsm.definition.writing.diagram import edges
    from little_loops.fsm.validate.loopfile import load_and_validate

    if path is None:
        raise OSError("no loop file")
    stamp = (str(path.resolve()), os.stat(path).st_mtime_ns)
    if stamp not in _GRAPHS:
        fsm = load_and_validate(path)
        ways: dict[str, list[tuple[str, str]]] = {name: [] for name in fsm.states}
        for edge in edges(fsm):
            ways[edge.source].append((edge.target, edge.label))
        _GRAPHS[stamp] = (list(fsm.states), ways)
    return _GRAPHS[stamp]


def step_lines(report: Report) -> list[str]:
    """The last steps: number, state, verdict, time, where it went."""
    lines = []
    for step in list(report.steps)[-RECENT_STEPS:]:
        verdict = clean(step.verdict or ("…" if step.to is None else "-"), 20)
        to = f" → {clean(step.to, 40)}" if step.to else ""
        took = format_duration(step.duration_ms)
        lines.append(f"#{step.number} {clean(step.state, 40)} {verdict} {took}{to}")
    return lines


def branch_lines(state: LoopState, loops_dir: Path) -> list[str]:
    """A fan-out's branches: `fan #0 parser  fix@ab12  running at fix (pass 1)  $0.0100`
    (Enter on its row in the list opens its own screen)."""
    lines = []
    for view in read_runs(from_captured(state.captured, state.key), loops_dir):
        said = view.standing
        if view.status and not view.verdict:
            said += f" (pass {view.iteration})"
        label = f"{clean(view.state, 40)} {clean(view.label, 60)}"
        lines.append(
            f"{label}  {clean(view.key, 60)}  {clean(said, 60)}  {format_cost(view.cost_usd)}"
        )
    return lines


def captured_lines(state: LoopState) -> list[str]:
    """The values the run captured, one line each, cut; a fan-out under way is said as
    such (its branches have their own section)."""
    lines = []
    for name, value in sorted(state.captured.items()):
        if progress_of(value) is not None:
            lines.append(f"{clean(name, 40)} = (a fan-out under way: see branches)")
            continue
        shown = value.get("output", value) if isinstance(value, dict) else value
        text = shown if isinstance(shown, str) else json.dumps(shown, default=str)
        lines.append(f"{clean(name, 40)} = {clean(text.strip(), 120)}")
    return lines


def cost_lines(state: LoopState, report: Report, partial: bool) -> list[str]:
    """The run's cost, and by state and by model as far as the events read tell."""
    lines = [f"total {format_cost(state.cost_usd)}"]
    of = f" (last {TAIL_EVENTS} events)" if partial else ""
    spent = [(f.cost_usd, name) for name, f in report.states.items() if f.cost_usd > 0]
    lines += [f"state {clean(name, 40)}: {format_cost(cost)}{of}" for cost, name in sorted(spent)]
    for agent, row in sorted(report.agents.rows.items()):
        for model, cost in sorted(row.models.items()):
            lines.append(f"model {clean(model, 40)} ({clean(agent, 20)}): {format_cost(cost)}{of}")
    return lines


def _live_lines(start: dict[str, object], path: str | None) -> list[str]:
    """The step under way: its state and action, then the end of its output (an agent's
    transcript as text: its words and tool calls)."""
    action = clean(start.get("action") or "", 200)
    lines = [f"{clean(start.get('state', '?'), 60)}: {action}"]
    if path:
        kind = recorded(start.get("action_type"), start.get("agent"))
        lines += output_tail(path, kind.readable if kind is not None else None)
    return lines


def output_tail(
    path: str, readable: object = None, most: int = OUTPUT_LINES, window: int = OUTPUT_WINDOW
) -> list[str]:
    """The last lines of an output file (its last *window* bytes), each cut and escaped;
    *readable* turns a transcript line into the lines a person reads."""
    data = b""
    with contextlib.suppress(OSError, NotOurFile), open_run_stream(path) as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - window))
        data = handle.read(window)
    raws = data.split(b"\n")
    if len(data) == window:
        raws = raws[1:]  # the window began inside its first line
    shown: list[str] = []
    for raw in raws:
        if callable(readable) and len(raw) <= OUTPUT_WINDOW:
            whole = raw.decode("utf-8", errors="replace")
            shown += [clean(line, LINE_CHARS) for line in readable(whole)]
            continue
        text = raw[: LINE_CHARS * 4].decode("utf-8", errors="replace")
        if text.strip():
            shown.append(clean(text, LINE_CHARS))
    return shown[-most:]
