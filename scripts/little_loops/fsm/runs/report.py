"""A run's report, worked out from its events: steps, per-state and per-pass figures, totals."""

from __future__ import annotations

import math
import statistics
from array import array
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from little_loops.fsm.engine.events import nested
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import succeeded
from little_loops.fsm.runs.agent_figures import AgentBook, agent_of
from little_loops.fsm.runs.fanned import BranchView, from_events

KEEP_STEPS = 2000
KEEP_PASSES = 200


@dataclass
class Step:
    """One visit of a state: when it began, how long it took, what it gave and cost."""

    state: str
    number: int  # 1, 2, ... in the run
    iteration: int
    started_at: str
    duration_ms: int = 0
    action_ms: int | None = None
    exit_code: int | None = None
    verdict: str | None = None
    to: str | None = None
    cost_usd: float = 0.0
    tokens: dict[str, int] = field(default_factory=dict)
    output: str = ""  # the end of its stdout, as the event log keeps it
    stderr: str = ""
    output_path: str | None = None
    action_type: str | None = None
    agent: str | None = None  # the agent that ran it last (a fallback may try several)
    action: str | None = None
    error: str | None = None  # why its action could not run properly (then an error verdict)
    evaluator: str | None = None  # the evaluator that gave the verdict (None: not judged)
    confidence: float | None = None  # the judge's, for an LLM verdict
    reason: str | None = None  # the judge's reason for its verdict, or the evaluation's error
    tool_calls: list[str] = field(default_factory=list)  # a Claude session's, as `logs` shows
    stall: str | None = None  # a stall breaker fired on this step: what it says
    resumed: bool = False  # cut short (a stop, a crash) and taken up again by a resume
    sandbox: str | None = None  # the sandbox it ran in (`bwrap`, a wrapper's program); None: none


@dataclass
class StateFigures:
    """What one state added up to over the run."""

    visits: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    total_ms: int = 0
    median_ms: int = 0
    cost_usd: float = 0.0
    tokens: int = 0


@dataclass
class Report:
    """A run's figures; `to_dict` is `ll-loop report --json`."""

    loop: str
    run_id: str | None
    started_at: str | None = None
    outcome: str | None = None  # terminated_by, or None while running / after a crash
    final_state: str | None = None
    error: str | None = None  # why it ended, when it ended badly (a stall's message, ...)
    stall: dict[str, Any] | None = None  # the stall breaker that ended it: detector, counts
    duration_ms: int = 0
    cost_usd: float = 0.0
    tokens: dict[str, int] = field(default_factory=dict)
    step_count: int = 0
    pass_count: int = 0
    # The last KEEP_STEPS steps and KEEP_PASSES passes in detail (a long run's report stays
    # small); the figures per state and the totals count every one.
    steps: deque[Step] = field(default_factory=lambda: deque(maxlen=KEEP_STEPS))
    passes: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=KEEP_PASSES))
    states: dict[str, StateFigures] = field(default_factory=dict)
    edges: dict[tuple[str, str], int] = field(default_factory=dict)
    # Each agent's actions, cost and tokens, cost by model (runs/agent_figures), and the
    # last steps that went on with another agent of their list.
    agents: AgentBook = field(default_factory=AgentBook)
    resumed: int = 0  # how many times the run was resumed
    sandboxed: dict[str, int] = field(default_factory=dict)  # steps run in each sandbox
    events: int = 0
    definition: dict[str, Any] | None = None  # the loop as data, when known (for its graph)
    branches: list[BranchView] = field(default_factory=list)  # its fan-outs' branches, lanes

    @property
    def success(self) -> bool | None:
        """True when the run ended as a success (a terminal state that is one), False when
        it ended as a failure, None while it has not ended or when it can go on (stopped,
        interrupted, awaiting an answer): the status its outcome leaves says which."""
        return succeeded(self.outcome)

    @property
    def slowest(self) -> str | None:
        timed = [(f.total_ms, name) for name, f in self.states.items() if f.total_ms > 0]
        return max(timed)[1] if timed else None

    @property
    def costliest(self) -> str | None:
        spent = [(f.cost_usd, name) for name, f in self.states.items() if f.cost_usd > 0]
        return max(spent)[1] if spent else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "loop": self.loop,
            "run_id": self.run_id,
            "started_at": self.started_at,
            "outcome": self.outcome,
            "final_state": self.final_state,
            "success": self.success,
            "error": self.error,
            "stall": self.stall,
            "steps": self.step_count,
            "passes": self.pass_count,
            "duration_ms": self.duration_ms,
            "cost_usd": round(self.cost_usd, 6),
            "tokens": self.tokens,
            "agents": self.agents.to_dict(),
            "agent_switches": list(self.agents.switches),
            "resumed": self.resumed,
            **({"sandboxed_steps": dict(self.sandboxed)} if self.sandboxed else {}),
            "slowest_state": self.slowest,
            "costliest_state": self.costliest,
            "states": {
                name: {
                    "visits": f.visits,
                    "verdicts": f.verdicts,
                    "total_ms": f.total_ms,
                    "median_ms": f.median_ms,
                    "cost_usd": round(f.cost_usd, 6),
                    "tokens": f.tokens,
                }
                for name, f in self.states.items()
            },
            "last_passes": list(self.passes),
            "edges": [
                {"from": source, "to": target, "count": count}
                for (source, target), count in self.edges.items()
            ],
            **({"branches": [b.to_dict() for b in self.branches]} if self.branches else {}),
        }


def _ms_between(start: str, end: str) -> int:
    try:
        delta = datetime.fromisoformat(end) - datetime.fromisoformat(start)
    except (TypeError, ValueError):
        return 0
    return max(0, round(delta.total_seconds() * 1000))


def _number(value: Any) -> float:
    """A finite number of an event (an exported one may hold NaN, which --json cannot print)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    number = float(value)
    return number if math.isfinite(number) else 0.0


def _add_tokens(into: dict[str, int], usage: Any) -> None:
    if isinstance(usage, dict):
        for key, value in usage.items():
            if isinstance(key, str) and type(value) is int:
                into[key] = into.get(key, 0) + value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class _Builder:
    """Folds events, one at a time, into a Report (a long run is never held as events).

    A step lasts from its `state_enter` to its `route` (or the run's end); its time is
    only the stretches it ran. A step a stop or a crash cut short is held: a resume that
    takes it up (enters the same state in the same pass, or judges its finished action)
    goes on with the same step and pass, so a resumed run lists neither twice and never
    counts the pause."""

    def __init__(self, loop: str, run_id: str | None) -> None:
        self.report = Report(loop, run_id)
        self.step: Step | None = None
        self.since = ""  # when the open step's current stretch began
        self.cut: Step | None = None  # a step cut short that a resume may take up
        self.resumed_at = ""  # when the latest resume began
        self.pass_path: list[str] = []
        self.pass_ms = 0  # the time of the finished steps of the pass under way
        self.pass_number = 0
        self.last_ts = ""
        self.times: dict[str, array[int]] = {}  # every step's time, per state, for medians
        self.fanned: list[dict[str, Any]] = []  # the fan-out events (a few per branch)

    def add(self, event: dict[str, Any]) -> None:
        report, kind, ts = self.report, event.get("event"), event.get("ts")
        ts = ts if isinstance(ts, str) else ""
        report.events += 1
        if nested(event):  # a sub-loop's: its cost comes with its state's `evaluate`
            report.agents.add_nested(kind, event)
            return
        if kind == Event.STATE_ENTER:
            self._enter(_text(event.get("state")), event.get("iteration"), ts)
        elif kind == Event.ROUTE:
            source, target = _text(event.get("from")), _text(event.get("to"))
            report.edges[(source, target)] = report.edges.get((source, target), 0) + 1
            step = self._current(source, ts)
            if step is not None:
                step.to = target
                self._end_step(ts)
        elif kind in _STEP_EVENTS:
            step = self._current(event.get("state"), ts)
            if step is not None:
                _STEP_EVENTS[kind](step, event)
                report.agents.add(kind, event, step.agent)
                if kind == Event.ACTION_START and step.sandbox is not None:
                    report.sandboxed[step.sandbox] = report.sandboxed.get(step.sandbox, 0) + 1
        elif kind == Event.AGENT_SWITCH:
            report.agents.add(kind, event, None)
        elif kind in _FANOUT_EVENTS:
            self.fanned.append(event)
        elif kind == Event.LOOP_START:
            if report.started_at is None:
                report.started_at = ts
            else:  # a resume: a step cut short by a crash ended with the last event before it
                report.resumed += 1
                self._hold(self.last_ts)
                self.resumed_at = ts
        elif kind == Event.LOOP_COMPLETE:
            self._hold(ts)
            self._ended(event)
        self.last_ts = ts or self.last_ts

    def _ended(self, event: dict[str, Any]) -> None:
        report = self.report
        report.outcome = _text(event.get("terminated_by")) or None
        report.final_state = _text(event.get("final_state")) or None
        report.error = _text(event.get("error")) or None
        stall = event.get("stall")
        report.stall = stall if isinstance(stall, dict) else None
        duration = event.get("duration_ms")
        report.duration_ms = duration if type(duration) is int else report.duration_ms

    def _current(self, state: Any, ts: str) -> Step | None:
        """The step an event of *state* belongs to: the open one, or the one cut short that
        a resume takes up (its stretch began when the resume did)."""
        if self.step is not None:
            return self.step if self.step.state == state else None
        cut = self.cut
        if cut is None or cut.state != state:
            return None
        self.cut, self.step, self.since = None, cut, self.resumed_at or ts
        cut.resumed = True
        return cut

    def _enter(self, state: str, iteration: Any, ts: str) -> None:
        report = self.report
        self._end_step(ts)  # a state entered again without a route (a retry)
        iteration = iteration if type(iteration) is int else self.pass_number
        cut = self.cut
        if cut is not None and (cut.state, cut.iteration) == (state, iteration):
            self._current(state, ts)  # the resume runs the step cut short again
            self.since = ts
            return
        self._count_cut()
        if iteration != self.pass_number:
            self._end_pass()
            self.pass_number = iteration
        self.pass_path.append(state)
        report.step_count += 1
        self.step, self.since = Step(state, report.step_count, iteration, ts), ts
        report.steps.append(self.step)

    def _hold(self, ts: str) -> None:
        """The run stopped (or crashed) at *ts*: the open step is held for a resume."""
        step = self.step
        if step is not None:
            step.duration_ms += _ms_between(self.since, ts)
            self.step, self.cut = None, step

    def _end_step(self, ts: str) -> None:
        step = self.step
        if step is None:
            return
        step.duration_ms += _ms_between(self.since, ts)
        self.step = None
        self._count(step)

    def _count_cut(self) -> None:
        """The step cut short was not taken up again: it ended when it was cut."""
        if self.cut is not None:
            cut, self.cut = self.cut, None
            self._count(cut)

    def _count(self, step: Step) -> None:
        """Add an ended step to the figures of its state, its pass and the run."""
        figures = self.report.states.get(step.state)
        if figures is None:
            figures = self.report.states[step.state] = StateFigures()
        figures.visits += 1
        if step.verdict is not None:
            figures.verdicts[step.verdict] = figures.verdicts.get(step.verdict, 0) + 1
        figures.total_ms += step.duration_ms
        figures.cost_usd += step.cost_usd
        figures.tokens += sum(step.tokens.values())
        self.times.setdefault(step.state, array("q")).append(step.duration_ms)
        self.report.cost_usd += step.cost_usd
        _add_tokens(self.report.tokens, step.tokens)
        if step.iteration == self.pass_number:
            self.pass_ms += step.duration_ms

    def _end_pass(self) -> None:
        """The pass under way ended: its path, and its time (its steps' time, no pause)."""
        if self.pass_path:
            self.report.pass_count += 1
            self.report.passes.append(
                {"pass": self.pass_number, "path": self.pass_path, "duration_ms": self.pass_ms}
            )
        self.pass_path, self.pass_ms = [], 0

    def finish(self) -> Report:
        report = self.report
        # A live or crashed run: its last step has not ended; it counts as far as it got.
        self._end_step(self.last_ts)
        self._count_cut()
        self._end_pass()
        for name, spans in self.times.items():
            report.states[name].median_ms = round(statistics.median(spans))
        if not report.duration_ms and report.started_at:
            report.duration_ms = _ms_between(report.started_at, self.last_ts)
        report.branches = from_events(self.fanned, report.loop)
        return report


def _action_start(step: Step, event: dict[str, Any]) -> None:
    step.action_type, step.action = _text(event.get("action_type")), _text(event.get("action"))
    step.output_path = _text(event.get("output_path")) or None
    step.agent = agent_of(event)
    confined = event.get("sandbox")
    backend = confined.get("backend") if isinstance(confined, dict) else None
    step.sandbox = backend if isinstance(backend, str) and backend else None


def _action_complete(step: Step, event: dict[str, Any]) -> None:
    took, code = event.get("duration_ms"), event.get("exit_code")
    step.action_ms = took if type(took) is int else None
    step.exit_code = code if type(code) is int else None
    step.output, step.stderr = _text(event.get("output")), _text(event.get("stderr"))
    step.error = _text(event.get("error")) or None
    calls = event.get("tool_calls")
    step.tool_calls = [c for c in calls if isinstance(c, str)] if isinstance(calls, list) else []
    step.cost_usd += _number(event.get("cost_usd"))
    _add_tokens(step.tokens, event.get("usage"))


def _evaluate(step: Step, event: dict[str, Any]) -> None:
    step.verdict = _text(event.get("verdict")) or None
    step.evaluator = _text(event.get("type")) or None
    confidence = event.get("confidence")
    step.confidence = _number(confidence) if confidence is not None else None
    step.reason = _text(event.get("reason")) or _text(event.get("error")) or None
    step.cost_usd += _number(event.get("cost_usd"))
    _add_tokens(step.tokens, event.get("usage"))


def _stall(step: Step, event: dict[str, Any]) -> None:
    step.stall = _text(event.get("message")) or _text(event.get("detector")) or "stall"


_FANOUT_EVENTS = (Event.BRANCH_START, Event.BRANCH_FINISH, Event.FANOUT_MERGE)

_STEP_EVENTS = {
    Event.ACTION_START: _action_start,
    Event.ACTION_COMPLETE: _action_complete,
    Event.EVALUATE: _evaluate,
    Event.STALL: _stall,
}


def build_report(loop: str, run_id: str | None, events: Iterable[dict[str, Any]]) -> Report:
    """The report of the run whose *events* (oldest first) are given."""
    builder = _Builder(loop, run_id)
    for event in events:
        if isinstance(event, dict):
            builder.add(event)
    return builder.finish()
