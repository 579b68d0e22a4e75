"""The action state kind: run the action (again after a retry's wait), evaluate, route."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.actions.spec import ActionKindSpec
from little_loops.fsm.definition.lint_flags import PASTE_FLAG
from little_loops.fsm.definition.model import StateConfig
from little_loops.fsm.definition.routing import StepOutcome, follow_route, next_fails
from little_loops.fsm.definition.run_keys import (
    CONTINUITY_HEADING,
    HANDOFF_TERMINATE,
    continues,
    continuity_of,
)
from little_loops.fsm.engine import events
from little_loops.fsm.engine.attempts import ladder_delay
from little_loops.fsm.engine.kinds import guards
from little_loops.fsm.engine.records import acted_record, prev_record, saved_result
from little_loops.fsm.engine.rules.fallback import (
    STILL_LIMITED,
    USAGE_LIMITED,
    agents_of,
    refusal,
)
from little_loops.fsm.engine.run import Run
from little_loops.fsm.engine.step import handoff_note
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Outcome
from little_loops.fsm.facts.spend import budget_unkept
from little_loops.fsm.values.interpolation import InterpolationContext, interpolate


def run_state(run: Run, name: str, state: StateConfig, done: ActionResult | None) -> StepOutcome:
    """Run state *name* (its action unless *done*) until it gives an outcome to route: a
    retry or an agent's limit runs it again after a wait (the run's end, if a stop or the
    timeout cuts that short); a usage limit with agents left in its list goes on with the
    next one (`run_action`)."""
    while True:
        ended = run.retries.finish_wait(name, run.limits.clock, run.wait, run.stopping.asked)
        if ended is not None:
            return ended
        outcome = _attempt(run, name, state, done)
        if not outcome.again:
            return outcome
        done = outcome.rejudge


def _attempt(run: Run, name: str, state: StateConfig, done: ActionResult | None) -> StepOutcome:
    """One attempt: the action (unless it already ran: *done*), its verdict and route."""
    ctx = run.context()
    result = done
    kind = run.fsm.kind_for(state) if state.action else state.action_kind()
    if state.action and done is None:
        agents = agents_of(run.fsm, state)
        every = run.fallback.waiting(agents)
        if every is not None:  # every agent of the list is limited: wait for the first
            return run.ratelimits.wait_for(name, every, run.memory)
        run.retries.announce(name, state)
        guards.begin(run, name, state)
        try:
            # --compat: little-loops cannot write out an action reading ${prev.*} before
            # any previous result (its error route)
            written = replace(ctx, prev_required=True) if run.fsm.theirs else ctx
            kind, result = run_action(run, name, state, written, agents)
        except InterpolationError as exc:
            return error_outcome(run, name, state, f"in action of state '{name}': {exc}")
    if result is not None:
        stop = stop_after_action(run, result)
        if stop is None and done is None and state.action:
            every = run.fallback.waiting(agents_of(run.fsm, state))
            stop = run.ratelimits.wait_for(name, every, run.memory) if every else None
        stop = stop or run.ratelimits.after_action(name, kind, result, run.memory)
        if stop is None and done is None:
            stop = _uncounted(run, name, kind, result)
        if stop is not None:
            return stop
        if state.is_prompt():
            memory = run.memory
            memory.continuation = None  # the note went to this prompt
            memory.continuation = handoff_note(result.output)
            # The chain of `session_mode: continue` prompts: this one's result leads the next.
            chained = continues(run.fsm.session_mode, state.session_mode) and result.exit_code == 0
            memory.continuity = continuity_of(result.output) if chained else None
            if memory.continuation is not None:
                memory.acted = None  # a resumed run gives the note to this prompt again
                memory.continuity = None  # a handoff goes on in a fresh session
                # The guards judge the action first: ending or pausing on it skipped them.
                checked = guards.judge(run, name, state, result) if state.action else None
                if checked is not None:
                    return checked
                ends = run.fsm.on_handoff == HANDOFF_TERMINATE
                return StepOutcome(stop=Outcome.HANDOFF_ENDED if ends else Outcome.HANDOFF)
        checked = guards.judge(run, name, state, result) if state.action else None
        if checked is not None:
            return checked
    run.commits.after(name, state, result.output if result else None, run.position.iteration)
    if state.next is not None:
        code = result.exit_code if result is not None else None
        if result is not None and (result.error or next_fails(state, code)):
            failed = error_outcome(run, name, state, result.error or f"exit code {code}")
            return run.retries.retry_or(name, state, failed, result, run.memory)
        return follow_route(state, None, run.context(), name)
    return _judged(run, name, state, result, ctx)


def _judged(
    run: Run,
    name: str,
    state: StateConfig,
    result: ActionResult | None,
    ctx: InterpolationContext,
) -> StepOutcome:
    """Evaluate the action's *result*, note it for `${prev.*}`/`${result.*}`, and route."""
    judged = run.memory.take_verdict()  # given before a resume: not asked (or paid) again
    if judged is None:
        judged = run.work.judge(name, state, result, ctx, run.budget.spend, run.memory.verdict)
    limited = run.ratelimits.after_judge(name, judged, result, run.memory)
    if limited is not None:
        return limited
    run.memory.last_result = {"verdict": judged.verdict, "details": judged.details}
    # `prev`: the last state that gave a verdict (`next:` states do not replace it, so
    # `measure → apply → measure` compares measurements).
    run.memory.prev_result = prev_record(name, result, judged.verdict)
    stalled = run.stalls.judged(name, judged.verdict, result)
    if stalled is not None:
        return stalled
    held = run.abstentions.judged(name, state, judged.verdict, run.context())
    if held is not None:  # --compat: little-loops holds an unrouted cannot_judge
        return held
    outcome = follow_route(state, judged.verdict, run.context(), name)
    if outcome.target is None and judged.verdict == ERROR_VERDICT:
        outcome.error = str(judged.details.get("error") or "") or None
    return run.retries.retry_or(name, state, outcome, result, run.memory)


def error_outcome(run: Run, name: str, state: StateConfig, msg: str) -> StepOutcome:
    """An error that happened before evaluation: routed like an `error` verdict."""
    run.memory.last_result = {"verdict": ERROR_VERDICT, "details": {"error": msg}}
    failed = events.Evaluation(state=name, type="none", verdict=ERROR_VERDICT, error=msg)
    run.emit(Event.EVALUATE, failed)
    outcome = follow_route(state, ERROR_VERDICT, run.context(), name, action_failed=True)
    if outcome.target is None and outcome.stop is None:
        outcome.error = msg
    return outcome


def run_action(
    run: Run,
    name: str,
    state: StateConfig,
    ctx: InterpolationContext,
    agents: Sequence[ActionKindSpec] = (),
) -> tuple[ActionKindSpec, ActionResult]:
    """Run *state*'s action with its `${...}` filled in, on the first free agent of
    *agents* (its list; its one kind when empty) and, when that one reports a usage limit
    or is not installed, on the next (`agent_switch`); record it for a resume. The agent
    that ran it last, and its result."""
    assert state.action is not None
    free = run.fallback.free(agents) if len(agents) > 1 else list(agents)
    kind = free[0] if free else run.fsm.kind_for(state)
    if len(agents) > 1 and kind.name != agents[0].name:
        _switched(run, name, agents[0], kind, run.fallback.entry(agents[0]), skipped=True)
    while True:
        result = _act(run, name, state, ctx, kind)
        if run.stopping.asked() is not None or len(agents) < 2:
            break
        ladder = ladder_delay(run.fsm.rate_limit, run.retries.attempts.of(name).limit_waits)
        why = refusal(kind, result, ladder)
        if why is None:
            break
        run.fallback.mark(kind, why)
        later = run.fallback.free(agents)
        if not later:
            break  # every agent is limited: the rate-limit rule waits for the first
        run.work.completed(name, result, run.budget.spend)
        _switched(run, name, kind, later[0], run.fallback.entry(kind))
        kind = later[0]
    memory, clock = run.memory, run.limits.clock
    if state.capture:
        memory.captured[state.capture] = saved_result(result)
    # Recorded with `action_complete`, so a resume evaluates it rather than running it
    # again; an action cut short by a stop or the loop's timeout runs again instead.
    cut_short = run.stopping.asked() is not None or (result.timed_out and clock.deadline_passed())
    memory.acted = None if cut_short else acted_record(result)
    run.work.completed(name, result, run.budget.spend)
    return kind, result


def _act(
    run: Run, name: str, state: StateConfig, ctx: InterpolationContext, kind: ActionKindSpec
) -> ActionResult:
    """Run *state*'s action on *kind*: its text filled in as that kind needs. An attempt
    that goes on with another agent records its own `action_complete` here."""
    assert state.action is not None
    # Each kind says how values land in its text: quoted for bash, as text for an agent.
    rendered = kind.interpolate(state.action, ctx, bool(run.fsm.lint_ok.get(PASTE_FLAG)))
    env = rendered.env
    added = state.env_of(agent=kind.agent is not None)  # what its keys' rows add
    if added:
        env = {**(env or {}), **added}
    action = rendered.script
    memory = run.memory
    chained = continues(run.fsm.session_mode, state.session_mode)
    if kind.agent is not None and memory.continuity and chained:
        action = f"{CONTINUITY_HEADING}\n\n{memory.continuity}\n\n---\n\n{action}"
    if kind.agent is not None and memory.continuation:
        # Kept until the action has run: a stop mid-action must not lose the note.
        action = f"Continue from this handoff note: {memory.continuation}\n\n{action}"
    return run.work.act(
        name,
        state,
        action,
        run.limits.clock.remaining_s(),
        run.budget.spend,
        memory.sessions,
        fill=lambda text: interpolate(text, ctx),
        env=env,
        shown=rendered.readable,
        kind=kind,
        session_agents=memory.session_agents,
    )


def _switched(
    run: Run,
    name: str,
    source: ActionKindSpec,
    target: ActionKindSpec,
    entry: dict[str, object] | None,
    *,
    skipped: bool = False,
) -> None:
    """Emit `agent_switch`: state *name* goes on with *target* instead of *source* (which
    an earlier step found limited, when *skipped*)."""
    reason = str((entry or {}).get("reason") or STILL_LIMITED)
    if skipped and reason == USAGE_LIMITED:
        reason = STILL_LIMITED
    switch: events.AgentSwitch = {
        "state": name,
        "from": source.name,
        "to": target.name,
        "reason": reason,
    }
    resets = (entry or {}).get("resets")
    if isinstance(resets, str):
        switch["resets"] = resets
    run.fallback.switched(dict(switch))
    run.emit(Event.AGENT_SWITCH, switch)


def _uncounted(
    run: Run, name: str, kind: ActionKindSpec, result: ActionResult
) -> StepOutcome | None:
    """The run's end when it has a budget and the spend of the action that just ran on
    *kind* cannot be counted: it goes on unbudgeted no further (the result is kept, so a
    resume judges it). Without a budget the step's cost is shown as not counted (`-`)."""
    limit = run.fsm.max_cost_usd
    if limit is None or result.uncounted is None:
        return None
    why = f"state '{name}' ran on {kind.name}, whose spend cannot be counted: {result.uncounted}"
    return StepOutcome(stop=Outcome.BUDGET, error=budget_unkept(limit, why))


def stop_after_action(run: Run, result: ActionResult) -> StepOutcome | None:
    """The run's end when a stop or the loop's timeout cut the action short."""
    stop = run.stopping.asked()
    if stop is not None:
        return StepOutcome(stop=stop)
    if result.timed_out and run.limits.clock.deadline_passed():
        error = "loop timeout reached during an action"
        return StepOutcome(stop=Outcome.TIMEOUT, error=error)
    return None
