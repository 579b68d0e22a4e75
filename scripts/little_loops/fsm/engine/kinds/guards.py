"""The guards after a state's action (tamper guard, pre-patch check): recorded, then routed.

A crash does not switch them off: the test files as they were before the action are saved
with the run (`begin`, written with `action_start`), so the guards judge a resumed action
(run again, or only judged) against them; their verdicts are written (a `guards` event)
before they act on them (a revert) or route, and a resumed run goes by those.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.graph.routing import StepOutcome, follow_route
from little_loops.fsm.definition.model.run_keys import PREPATCH_CHECK, TAMPER_GUARD
from little_loops.fsm.definition.model.typed import OUTCOME_FAILURE, StateConfig
from little_loops.fsm.engine import events
from little_loops.fsm.engine.guard_policies import prepatch_policy, tamper_policy
from little_loops.fsm.engine.run import Run
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Outcome

if TYPE_CHECKING:  # the guards themselves: loaded by a run whose states have them
    from little_loops.fsm.engine import prepatch, tamper

RED_PATH = "the state's action did not succeed"  # why no check ran (little-loops' skip)
# The keys of a state's guard record (Memory.guard): its state, the test files before its
# action (tamper.stored, None without a tamper guard), the guards' verdicts.
STATE, BEFORE, VERDICTS = "state", "before", "verdicts"
# The verdicts' keys are the guards' keys, in the order the guards act (and `guards` lists them).
TAMPER, PREPATCH = TAMPER_GUARD.name, PREPATCH_CHECK.name
ORDER = (PREPATCH, TAMPER)
AT = "at"  # in a verdict: the place of its record in the context's list


def where(run: Run) -> Path:
    """The checkout a state's action worked in."""
    return run.config.cwd or run.config.stall_cwd or Path.cwd()


def begin(run: Run, name: str, state: StateConfig) -> None:
    """Before *state*'s action: its guard record, saved with the run's next write
    (`action_start`). A record with no verdicts yet is kept: its action may already have
    changed files (a crash, a limit's wait, a stop cut it short)."""
    policy = tamper_policy(run.fsm, state)
    if policy is None and prepatch_policy(run.fsm, state) is None:
        run.memory.guard = None
        return
    from little_loops.fsm.engine import tamper

    kept = run.memory.guard
    if kept is not None and kept.get(STATE) == name and VERDICTS not in kept:
        return
    before = tamper.stored(where(run), tamper.snapshot(where(run))) if policy else None
    run.memory.guard = {STATE: name, BEFORE: before}
    run.memory.guard_applied = False


def judge(run: Run, name: str, state: StateConfig, result: ActionResult) -> StepOutcome | None:
    """The guards on *state*'s action: the verdicts recorded for it, else judged now and
    written (a `guards` event) before anything acts on them; then acted on (once per
    process): the pre-patch check first, the tamper guard's revert and route after (when
    both would route, the tamper guard wins, as in little-loops)."""
    record = run.memory.guard
    if record is None or record.get(STATE) != name or run.memory.guard_applied:
        return None
    from little_loops.fsm.engine import prepatch, tamper

    verdicts = record.get(VERDICTS)
    fresh = verdicts is None
    if verdicts is None:
        verdicts = {}
        checks = prepatch.policy_of(run.fsm, state)
        if checks is not None:
            evidence = _evidence(run, result)
            if isinstance(evidence, StepOutcome):
                return evidence
            verdicts[PREPATCH] = {"state": name, "policy": checks, **evidence.to_dict()}
        policy = tamper.policy_of(run.fsm, state)
        if policy is not None and record.get(BEFORE) is not None:
            before = tamper.restored(where(run), record[BEFORE])
            verdicts[TAMPER] = tamper.compare(where(run), before, name, policy).to_dict()
        # Kept in the context now, so the write below records them with the verdicts; the
        # place of each is recorded too, for the revert to fill in what it put back.
        for key, guard in ((prepatch.RECORD_KEY, PREPATCH), (tamper.RECORD_KEY, TAMPER)):
            if guard in verdicts:
                kept = run.fsm.context.setdefault(key, [])
                verdicts[guard] = {**verdicts[guard], AT: len(kept)}
                kept.append(_shown(verdicts[guard]))
        run.memory.guard = record = {**record, VERDICTS: verdicts}
        shape = events.Guards(state=name)
        run.emit(Event.GUARDS, {**shape, **{g: verdicts[g] for g in ORDER if g in verdicts}})
    run.memory.guard_applied = True
    checked = None
    if PREPATCH in verdicts:
        found = _shown(verdicts[PREPATCH])
        checked = _checked(run, name, state, found, fresh=fresh, kept=True)
    if TAMPER in verdicts:
        report = tamper.Report.from_dict(verdicts[TAMPER])
        tamper.revert(where(run), tamper.restored(where(run), record[BEFORE]), report)
        kept = run.fsm.context.setdefault(tamper.RECORD_KEY, [])
        at = int(verdicts[TAMPER][AT])
        if at < len(kept):  # what the revert put back
            kept[at] = report.to_dict()
        checked = tampered(run, name, state, report, kept=True) or checked
    return checked


def _shown(verdict: dict[str, Any]) -> dict[str, Any]:
    """A recorded verdict as the context shows it (without its place there)."""
    return {k: v for k, v in verdict.items() if k != AT}


def tampered(
    run: Run, name: str, state: StateConfig, report: tamper.Report, *, kept: bool = False
) -> StepOutcome | None:
    """The tamper guard's finding on *state*'s action: kept in `${context._tamper_guard}`
    (unless *kept* there already); under `fail` (or a `revert` that could not restore
    all) the state routes as a failure."""
    from little_loops.fsm.engine import tamper

    if not kept:
        run.fsm.context.setdefault(tamper.RECORD_KEY, []).append(report.to_dict())
    if report.passed:
        return None
    shown = ", ".join(f"{f['path']} ({f['kind']})" for f in report.findings)
    msg = f"{TAMPER}: the action of state '{name}' changed test files: {shown}"
    return _failed(run, name, state, TAMPER, msg)


def prepatched(
    run: Run, name: str, state: StateConfig, policy: str, result: ActionResult
) -> StepOutcome | None:
    """The pre-patch check after *state*'s action succeeded: its record appended to
    `${context._prepatch_check}`; under `warn` a flagged check is an event, under `fail` the
    state routes as a failure. The run's end when a stop or its timeout cut pytest short."""
    evidence = _evidence(run, result)
    if isinstance(evidence, StepOutcome):
        return evidence
    return _checked(run, name, state, {"state": name, "policy": policy, **evidence.to_dict()})


def _evidence(run: Run, result: ActionResult) -> prepatch.Evidence | StepOutcome:
    """The pre-patch check of the action's patch (skipped when it did not succeed); the
    run's end when a stop or its timeout cut pytest short."""
    from little_loops.fsm.engine import prepatch

    if result.exit_code != 0 or result.error:
        return prepatch.skipped(RED_PATH)
    evidence = prepatch.examine(where(run), run.prepatched, lambda *a: _pytest(run, *a))
    stop = run.stopping.asked()
    if stop is not None:
        return StepOutcome(stop=stop)
    if run.limits.clock.deadline_passed():
        error = "loop timeout reached during the pre-patch check"
        return StepOutcome(stop=Outcome.TIMEOUT, error=error)
    return evidence


def _checked(
    run: Run,
    name: str,
    state: StateConfig,
    record: dict[str, Any],
    *,
    fresh: bool = True,
    kept: bool = False,
) -> StepOutcome | None:
    """Act on the pre-patch check's *record*: kept in `${context._prepatch_check}` (unless
    *kept* there already) and the evidence file; a `warn` that flags is an event (when
    *fresh*: judged now), a `fail` that flags routes the state as a failure."""
    from little_loops.fsm.engine import prepatch

    policy = str(record["policy"])
    evidence = prepatch.Evidence.from_dict(record)
    if not kept:
        run.fsm.context.setdefault(prepatch.RECORD_KEY, []).append(record)
    prepatch.evidence_file(run.fsm.context, evidence)
    flagged = evidence.flagged()
    if fresh and prepatch.warns(policy, evidence):
        shape = events.PrepatchFlagged(
            state=name, policy=policy, outcomes=len(evidence.tests), tests=flagged
        )
        run.emit(Event.PREPATCH_CHECK_FLAGGED, shape)
    if not prepatch.routes(policy, evidence):
        return None
    msg = f"{PREPATCH}: new tests of state '{name}' pass without its patch: "
    return _failed(run, name, state, PREPATCH, msg + ", ".join(flagged))


def _pytest(run: Run, fork: Path, ids: list[str], report: Path) -> ActionResult:
    """Run pytest in the fork through the run's runner (a stop ends it as it ends actions)."""
    from little_loops.fsm.engine import prepatch

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
    from little_loops.fsm.engine import tamper

    target = tamper.failure_target(run.fsm, state)
    if target is not None:
        return StepOutcome(target, OUTCOME_FAILURE, guard)
    return follow_route(state, OUTCOME_FAILURE, run.context(), name)
