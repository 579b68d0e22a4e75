"""The approval state kind (`action_type: approval`): ask, wait for the answer, route it."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.graph.routing import StepOutcome, follow_route
from little_loops.fsm.definition.graph.transitions import TIMEOUT_LABEL
from little_loops.fsm.definition.model.typed import OUTCOME_SUCCESS, StateConfig
from little_loops.fsm.engine import events
from little_loops.fsm.engine.rules.approval import ANSWER_COMMANDS, ANSWER_POLL_S
from little_loops.fsm.engine.run import Run
from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Outcome
from little_loops.fsm.facts.timefmt import iso_now
from little_loops.fsm.values.interpolation import interpolate


def run_state(run: Run, name: str, state: StateConfig, done: ActionResult | None) -> StepOutcome:
    """Ask *state*'s question and take its answer: now, after waiting (--wait-approval),
    or on a resume (the run stops with terminated_by awaiting_approval meanwhile)."""
    approval = run.approval
    recorded = approval.recorded(name)
    if recorded is not None:  # answered before the run was killed: routed, not asked again
        return _routed(run, name, state, *recorded)
    pending = approval.pending
    if pending is None or pending.get("state") != name:
        try:
            question = interpolate(state.action or "", run.context())
        except InterpolationError as exc:
            return StepOutcome(stop=Outcome.ERROR, error=f"in action of state '{name}': {exc}")
        pending = {"state": name, "question": question, "asked_at": iso_now()}
        if state.timeout is not None:
            pending["deadline"] = time.time() + float(state.timeout)
        approval.pending = pending
    answer = approval.answer()
    if answer is not None:  # answered while the run was stopped
        return _answered(run, name, state, *answer)
    run.emit(Event.APPROVAL_WAIT, _wait_event(run, name, pending))
    return _wait(run, name, state, pending.get("deadline"))


def _wait_event(run: Run, name: str, pending: dict[str, Any]) -> events.ApprovalWait:
    wait = events.ApprovalWait(
        state=name,
        question=str(pending.get("question", "")),
        asked_at=str(pending.get("asked_at", "")),
        answer_with=ANSWER_COMMANDS.replace("NAME", run.fsm.name),
    )
    deadline = pending.get("deadline")
    if isinstance(deadline, int | float):
        wait["deadline"] = datetime.fromtimestamp(deadline, UTC).isoformat(timespec="seconds")
    return wait


def _wait(run: Run, name: str, state: StateConfig, deadline: object) -> StepOutcome:
    """Wait for the answer in this process (--wait-approval), else stop awaiting it."""
    waited = False
    while True:
        answer = run.approval.answer()
        if answer is not None:
            return _answered(run, name, state, *answer)
        if isinstance(deadline, int | float) and time.time() >= deadline:
            return _answered(run, name, state, TIMEOUT_LABEL, "")
        if not run.approval.wait:
            return StepOutcome(stop=Outcome.AWAITING_APPROVAL)
        stop = run.stopping.asked()
        if stop is not None:
            return StepOutcome(stop=stop)
        if run.limits.clock.deadline_passed():
            return StepOutcome(stop=Outcome.TIMEOUT)
        if not waited and run.config.before_wait is not None:
            run.config.before_wait()  # the log says where the run waits before it does
        waited = True
        run.stopping.flag.wait(ANSWER_POLL_S)


def _answered(run: Run, name: str, state: StateConfig, verdict: str, note: str) -> StepOutcome:
    """The approval state *name* got *verdict* (or timed out): recorded, then routed."""
    run.approval.record(verdict, note)
    run.emit(Event.APPROVAL, events.ApprovalAnswer(state=name, verdict=verdict, note=note))
    run.approval.saved()
    return _routed(run, name, state, verdict, note)


def _routed(run: Run, name: str, state: StateConfig, verdict: str, note: str) -> StepOutcome:
    """The answer *verdict* of approval state *name*: `${result.note}`, `${prev.*}`, route."""
    run.memory.last_result = {"verdict": verdict, "details": {"note": note}, "note": note}
    code = 0 if verdict == OUTCOME_SUCCESS else 1
    run.memory.prev_result = {
        "state": name,
        "output": note,
        "stderr": "",
        "exit_code": code,
        "verdict": verdict,
    }
    if verdict == TIMEOUT_LABEL:
        return StepOutcome(state.on_timeout, verdict, "on_timeout")
    return follow_route(state, verdict, run.context(), name)
