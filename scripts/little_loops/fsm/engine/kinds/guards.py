"""The guards after a state's action (tamper_guard, prepatch_check): recorded, then routed."""

from __future__ import annotations

from pathlib import Path

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.model import OUTCOME_FAILURE, StateConfig
from little_loops.fsm.definition.routing import StepOutcome, follow_route
from little_loops.fsm.engine import events, prepatch, tamper
from little_loops.fsm.engine.run import Run
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Outcome

RED_PATH = "the state's action did not succeed"  # why no check ran (little-loops' skip)


def where(run: Run) -> Path:
    """The checkout a state's action worked in."""
    return run.config.cwd or run.config.stall_cwd or Path.cwd()


def tampered(run: Run, name: str, state: StateConfig, report: tamper.Report) -> StepOutcome | None:
    """The tamper guard's finding on *state*'s action: kept in `${context._tamper_guard}`;
    under `fail` (or a `revert` that could not restore all) the state routes as a failure."""
    run.fsm.context.setdefault(tamper.RECORD_KEY, []).append(report.to_dict())
    if report.passed:
        return None
    shown = ", ".join(f"{f['path']} ({f['kind']})" for f in report.findings)
    msg = f"tamper_guard: the action of state '{name}' changed test files: {shown}"
    return _failed(run, name, state, "tamper_guard", msg)


def prepatched(
    run: Run, name: str, state: StateConfig, policy: str, result: ActionResult
) -> StepOutcome | None:
    """The pre-patch check after *state*'s action succeeded: its record appended to
    `${context._prepatch_check}`; under `warn` a flagged check is an event, under `fail` the
    state routes as a failure. The run's end when a stop or its timeout cut pytest short."""
    if result.exit_code != 0 or result.error:
        evidence = prepatch.skipped(RED_PATH)
    else:
        evidence = prepatch.examine(where(run), run.prepatched, lambda *a: _pytest(run, *a))
        stop = run.stopping.asked()
        if stop is not None:
            return StepOutcome(stop=stop)
        if run.limits.clock.deadline_passed():
            error = "loop timeout reached during the pre-patch check"
            return StepOutcome(stop=Outcome.TIMEOUT, error=error)
    record = {"state": name, "policy": policy, **evidence.to_dict()}
    run.fsm.context.setdefault(prepatch.RECORD_KEY, []).append(record)
    prepatch.evidence_file(run.fsm.context, evidence)
    flagged = evidence.flagged()
    if prepatch.warns(policy, evidence):
        shape = events.PrepatchFlagged(
            state=name, policy=policy, outcomes=len(evidence.tests), tests=flagged
        )
        run.emit(Event.PREPATCH_CHECK_FLAGGED, shape)
    if not prepatch.routes(policy, evidence):
        return None
    msg = f"prepatch_check: new tests of state '{name}' pass without its patch: "
    return _failed(run, name, state, "prepatch_check", msg + ", ".join(flagged))


def _pytest(run: Run, fork: Path, ids: list[str], report: Path) -> ActionResult:
    """Run pytest in the fork through the run's runner (a stop ends it as it ends actions)."""
    remaining = run.limits.clock.remaining_s()
    timeout = prepatch.PYTEST_TIMEOUT if remaining is None else remaining
    timeout = max(min(timeout, prepatch.PYTEST_TIMEOUT), 0.001)
    return run.runner.execute(prepatch.pytest_request(fork, ids, report, timeout))


def _failed(run: Run, name: str, state: StateConfig, guard: str, msg: str) -> StepOutcome:
    """A guard failed *state*: an `evaluate` of type *guard*, then the failure route (as
    little-loops: its `on_failure` when a failure terminal, else the first such one)."""
    run.memory.last_result = {"verdict": OUTCOME_FAILURE, "details": {"error": msg}}
    judged = events.Evaluation(state=name, type=guard, verdict=OUTCOME_FAILURE, error=msg)
    run.emit(Event.EVALUATE, judged)
    target = tamper.failure_target(run.fsm, state)
    if target is not None:
        return StepOutcome(target, OUTCOME_FAILURE, guard)
    return follow_route(state, OUTCOME_FAILURE, run.context(), name)
