"""The pull-request state kind (`pr:`): push, open or update, wait for the checks, merge, route."""

from __future__ import annotations

import os
from pathlib import Path

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.graph.routing import StepOutcome, follow_route
from little_loops.fsm.definition.graph.transitions import TIMEOUT_LABEL
from little_loops.fsm.definition.model.pr_block import PullRequestConfig
from little_loops.fsm.definition.model.pr_keys import CHECKS_REQUIRED
from little_loops.fsm.definition.model.typed import OUTCOME_SUCCESS, StateConfig
from little_loops.fsm.engine import events
from little_loops.fsm.engine.attempts import wait_event
from little_loops.fsm.engine.rules.pulls import PullRecord
from little_loops.fsm.engine.run import Run
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.facts.events import Event
from little_loops.fsm.forges import pull
from little_loops.fsm.forges import registry as forges
from little_loops.fsm.forges.forge import Forge, ForgeError, Place, PullRequest
from little_loops.fsm.forges.merge import MergeMethod
from little_loops.fsm.processes.gitcmd import git
from little_loops.fsm.values.interpolation import interpolate

FAILURE = "failure"


def run_state(run: Run, name: str, state: StateConfig, done: ActionResult | None) -> StepOutcome:
    """Push the branch and open (or update) its pull request, then look at its checks until
    they are in: wait between looks (a resumable wait: kill -9 and `resume` go on with it,
    `stop` ends it), merge when green if asked, and route the verdict."""
    config = state.pr
    assert config is not None
    place = place_of(run, config)
    forge = forges.get(config.forge)
    while True:
        ended = run.retries.finish_wait(name, run.limits.clock, run.wait, run.stopping.asked)
        if ended is not None:
            return ended
        record = run.pulls.of(name)
        try:
            if record is None:
                record = _publish(run, name, config, forge, place)
            pr = PullRequest(record.number, record.url)
            required = config.checks == CHECKS_REQUIRED
            seen = pull.look(forge, place, pr, record.head, required=required)
        except (ForgeError, InterpolationError) as exc:
            return _routed(run, name, state, record, ERROR_VERDICT, str(exc))
        record.looks += 1
        if seen.verdict is pull.Verdict.PENDING:
            waited = _wait(run, name, config, record, seen.reason)
            if waited is not None:
                return waited
            continue
        confirmed = _confirmed(record, seen, config)
        if not confirmed:
            said = f"{seen.reason}; looking once more before the merge, for checks still to come"
            waited = _wait(run, name, config, record, said)
            if waited is not None:
                return waited
            continue
        if seen.verdict is pull.Verdict.FAILED:
            return _routed(run, name, state, record, FAILURE, _failed_text(seen), seen)
        merged = False
        try:
            if seen.verdict is pull.Verdict.PASSED:
                method = MergeMethod(config.merge)
                merged = pull.merge_if_green(forge, place, pr, seen, method, record.head)
        except ForgeError as exc:
            return _routed(run, name, state, record, ERROR_VERDICT, str(exc), seen)
        said = f"{seen.reason}; merged ({config.merge})" if merged else seen.reason
        return _routed(run, name, state, record, OUTCOME_SUCCESS, said, seen, merged=merged)


def place_of(run: Run, config: PullRequestConfig) -> Place:
    """Where the run's pull requests are made from: its working tree (its worktree in a
    worktree run) and the remote `pr.remote`."""
    where = run.config.cwd or run.config.workdir or Path.cwd()
    return Place(where, config.remote, dict(os.environ))


def _publish(
    run: Run, name: str, config: PullRequestConfig, forge: Forge, place: Place
) -> PullRecord:
    """Push the branch and open or update its pull request: the new record, announced."""
    ctx = run.context()
    branch = interpolate(config.branch, ctx) if config.branch else _current_branch(place)
    title = interpolate(config.title, ctx)
    body = summary(run)
    if config.body is not None:  # the summary is always carried, under the body written
        body = f"{interpolate(config.body, ctx).rstrip()}\n\n---\n\n{body}"
    base = interpolate(config.base, ctx) if config.base else None
    pr, head = pull.publish(forge, place, branch, base, title, body)
    record = run.pulls.record = PullRecord(name, pr.number, pr.url, head)
    opened = events.PullRequestOpened(
        state=name, number=pr.number, url=pr.url, branch=branch, head=head, created=pr.created
    )
    run.emit(Event.PULL_REQUEST, opened)
    return record


def _current_branch(place: Place) -> str:
    found = git(place.where, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    if not found.ok or not found.out.strip():
        raise ForgeError(
            f"HEAD is not on a branch in {place.where}: name one with `pr: {{branch: ...}}`"
        )
    return found.out.strip()


def summary(run: Run) -> str:
    """The run's summary, which ends every pull request's body: loop, passes, cost, states."""
    at = run.position
    states = " → ".join(at.pass_states) or at.state
    return (
        f"Opened by ll-loop, loop `{run.fsm.name}`.\n\n"
        f"- passes: {at.iteration}\n"
        f"- states run: {at.steps}\n"
        f"- cost: ${run.budget.spend.cost_usd:.2f}\n"
        f"- states of this pass: {states}\n"
    )


def _wait(
    run: Run, name: str, config: PullRequestConfig, record: PullRecord, reason: str
) -> StepOutcome | None:
    """Plan the wait before the next look (None), or the timeout's route past `max_wait`."""
    seconds = config.interval * config.backoff_rate ** min(record.looks - 1, 64)
    seconds = min(seconds, config.max_interval, config.max_wait - record.waited_s)
    if seconds <= 0:
        state = run.fsm.states[name]
        said = f"the checks were not in within pr.max_wait ({config.max_wait:g}s): {reason}"
        return _routed(run, name, state, record, TIMEOUT_LABEL, said)
    record.waited_s += seconds
    wait = run.retries.attempts.plan_checks(name, seconds)
    payload = wait_event(name, wait, run.retries.attempts.of(name), None)
    run.emit(Event.CHECKS_WAIT, {**payload, "number": record.number, "reason": reason})
    return None


def _confirmed(record: PullRecord, seen: pull.Look, config: PullRequestConfig) -> bool:
    """False for a first green look before a merge: a check that has not reported yet
    (a slow workflow, an app) is in no list, so green merges only when the same checks
    are green again a wait later."""
    names = sorted(c.name for c in seen.checks)
    if seen.verdict is not pull.Verdict.PASSED or config.merge == MergeMethod.NONE:
        record.green = []
        return True
    if record.green == names:
        return True
    record.green = names
    return False


def _failed_text(seen: pull.Look) -> str:
    """What the next state reads of failed checks (`${prev.output}`): names, links, logs."""
    parts = [seen.reason]
    for check in seen.failed:
        link = f" ({check.link})" if check.link else ""
        parts.append(f"--- {check.name}{link}")
        if check.log_tail:
            parts.append(check.log_tail)
    return "\n".join(parts)


def _routed(
    run: Run,
    name: str,
    state: StateConfig,
    record: PullRecord | None,
    verdict: str,
    text: str,
    seen: pull.Look | None = None,
    *,
    merged: bool = False,
) -> StepOutcome:
    """The verdict on the pull request: recorded (`checks`), for `${prev.*}` and
    `${result.*}`, and routed (a timeout to `on_timeout`, else as an error)."""
    failed = [c.name for c in seen.failed] if seen is not None else []
    said = events.ChecksSeen(
        state=name, verdict=verdict, reason=text.splitlines()[0] if text else ""
    )
    if record is not None:
        said["number"] = record.number
    if failed:
        said["failed"] = failed
    if merged:
        said["merged"] = True
    run.emit(Event.CHECKS, said)
    details = {"url": record.url if record else "", "number": record.number if record else 0}
    run.memory.last_result = {"verdict": verdict, "details": {**details, "failed": failed}}
    run.memory.prev_result = {
        "state": name,
        "output": text,
        "stderr": "",
        "exit_code": 0 if verdict == OUTCOME_SUCCESS else 1,
        "verdict": verdict,
    }
    if verdict == TIMEOUT_LABEL:
        if state.on_timeout is not None:
            return StepOutcome(state.on_timeout, verdict, "on_timeout")
        verdict = ERROR_VERDICT
    outcome = follow_route(state, verdict, run.context(), name)
    if outcome.target is None and outcome.stop is None and verdict == ERROR_VERDICT:
        outcome.error = text
    return outcome
