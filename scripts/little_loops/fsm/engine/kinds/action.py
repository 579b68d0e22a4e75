"""The action state kind: run the action (again after a retry's wait), evaluate, route."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.actions.spec import ActionKindSpec
from little_loops.fsm.definition.graph.routing import StepOutcome, follow_route, next_fails
from little_loops.fsm.definition.model.lint_flags import PASTE_FLAG
from little_loops.fsm.definition.model.run_keys import (
    CONTINUITY_HEADING,
    HANDOFF_TERMINATE,
    continues,
    continuity_of,
)
from little_loops.fsm.definition.model.typed import StateConfig
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
from little_loops.fsm.engine.step import ActionCall, SessionBook, handoff_note
from little_loops.fsm.evaluators.spec import ERROR_VERDICT, EvaluationResult
from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Outcome
from little_loops.fsm.facts.spend import budget_unkept
from little_loops.fsm.values.interpolation import InterpolationContext, interpolate

# The points of an attempt where its rules act, in the order they come.
BEFORE = "before"  # its action is about to run (not one that already ran: a resume, a re-judge)
AFTER = "after"  # its action ran (or it has none), before it is judged
JUDGED = "judged"  # a verdict came, before it is taken as the state's
VERDICT = "verdict"  # the verdict is taken (`${prev.*}`, `${result.*}`), before routing
ROUTED = "routed"  # its route: a verdict's, or a failed `next:` action's
POINTS = (BEFORE, AFTER, JUDGED, VERDICT, ROUTED)


@dataclass
class Attempt:
    """One attempt of an action state, as its rules see it: what is known so far."""

    run: Run
    name: str
    state: StateConfig
    done: ActionResult | None  # its result when the action already ran (not run again)
    kind: ActionKindSpec
    ctx: InterpolationContext  # `${...}` as the attempt began
    # The kinds its action may run on, in the order it tries them (rules/fallback.agents_of),
    # worked out once for the attempt; [] for a state without an action.
    agents: Sequence[ActionKindSpec] = ()
    result: ActionResult | None = None
    judged: EvaluationResult | None = None
    outcome: StepOutcome | None = None  # its route, at ROUTED

    @property
    def acts(self) -> bool:
        """Whether its action runs in this attempt (rather than having run already)."""
        return bool(self.state.action) and self.done is None


Hook = Callable[[Attempt], StepOutcome | None]


@dataclass(frozen=True)
class ActionRule:
    """A rule of the action kind: what it does at some points of an attempt (POINTS). An
    outcome from a hook ends the attempt there (at ROUTED it replaces the route)."""

    name: str
    hooks: Mapping[str, Hook]


def _stopped(at: Attempt) -> StepOutcome | None:
    return stop_after_action(at.run, at.result) if at.result is not None else None


def _all_limited(at: Attempt) -> StepOutcome | None:
    """Every agent of the state's list is limited: wait for the first to be free."""
    every = at.run.fallback.waiting(at.agents)
    return at.run.ratelimits.wait_for(at.name, every, at.run.memory) if every else None


def _all_limited_now(at: Attempt) -> StepOutcome | None:
    """After an action that ran now: every agent of its list is limited (it was the last)."""
    return _all_limited(at) if at.result is not None and at.acts else None


def _announce(at: Attempt) -> StepOutcome | None:
    at.run.retries.announce(at.name, at.state)
    return None


def _retried(at: Attempt) -> StepOutcome | None:
    assert at.outcome is not None
    return at.run.retries.retry_or(at.name, at.state, at.outcome, at.result, at.run.memory)


def _agent_limited(at: Attempt) -> StepOutcome | None:
    if at.result is None:
        return None
    return at.run.ratelimits.after_action(at.name, at.kind, at.result, at.run.memory)


def _judge_limited(at: Attempt) -> StepOutcome | None:
    assert at.judged is not None
    return at.run.ratelimits.after_judge(at.name, at.judged, at.result, at.run.memory)


def _uncounted(at: Attempt) -> StepOutcome | None:
    """The run's end when it has a budget and the spend of the action that just ran on
    its kind cannot be counted: it goes on unbudgeted no further (the result is kept, so a
    resume judges it). Without a budget the step's cost is shown as not counted (`-`)."""
    limit, result = at.run.fsm.max_cost_usd, at.result
    if not at.acts or limit is None or result is None or result.uncounted is None:
        return None
    why = f"state '{at.name}' ran on {at.kind.name}, whose spend cannot be counted: "
    return StepOutcome(stop=Outcome.BUDGET, error=budget_unkept(limit, why + result.uncounted))


def _handoff(at: Attempt) -> StepOutcome | None:
    """A prompt's handoff note and its `session_mode: continue` chain; a prompt that hands
    off ends the run, once the guards judged its action (ending on it skipped them)."""
    run, result = at.run, at.result
    if result is None or not at.state.is_prompt():
        return None
    memory = run.memory
    memory.continuation = None  # the note went to this prompt
    memory.continuation = handoff_note(result.output)
    # The chain of `session_mode: continue` prompts: this one's result leads the next.
    chained = continues(run.fsm.session_mode, at.state.session_mode) and result.exit_code == 0
    memory.continuity = continuity_of(result.output) if chained else None
    if memory.continuation is None:
        return None
    memory.acted = None  # a resumed run gives the note to this prompt again
    memory.continuity = None  # a handoff goes on in a fresh session
    checked = _guards_judge(at)
    if checked is not None:
        return checked
    ends = run.fsm.on_handoff == HANDOFF_TERMINATE
    return StepOutcome(stop=Outcome.HANDOFF_ENDED if ends else Outcome.HANDOFF)


def _guards_begin(at: Attempt) -> StepOutcome | None:
    guards.begin(at.run, at.name, at.state)
    return None


def _guards_judge(at: Attempt) -> StepOutcome | None:
    if at.result is None or not at.state.action:
        return None
    return guards.judge(at.run, at.name, at.state, at.result)


def _commit(at: Attempt) -> StepOutcome | None:
    output = at.result.output if at.result else None
    at.run.commits.after(at.name, at.state, output, at.run.position.iteration)
    return None


def _stalled(at: Attempt) -> StepOutcome | None:
    assert at.judged is not None
    return at.run.stalls.judged(at.name, at.judged.verdict, at.result)


def _held(at: Attempt) -> StepOutcome | None:
    """--compat: little-loops holds an unrouted cannot_judge."""
    assert at.judged is not None
    if not at.run.fsm.theirs and not at.run.abstentions.held:
        return None  # nothing is held without --compat: no context made for it at each step
    return at.run.abstentions.judged(at.name, at.state, at.judged.verdict, at.run.context())


# The rules of the action kind, in the one order they act: at each point of an attempt
# the rules with a hook there run in this order, and the first outcome ends the attempt.
# A prompt's handoff asks the guards itself before it ends the run (they come after it).
RULES: tuple[ActionRule, ...] = (
    ActionRule("stop", {AFTER: _stopped}),
    ActionRule("agent_fallback", {BEFORE: _all_limited, AFTER: _all_limited_now}),
    ActionRule("retry", {BEFORE: _announce, ROUTED: _retried}),
    ActionRule("rate_limit", {AFTER: _agent_limited, JUDGED: _judge_limited}),
    ActionRule("budget", {AFTER: _uncounted}),
    ActionRule("handoff", {AFTER: _handoff}),
    ActionRule("guards", {BEFORE: _guards_begin, AFTER: _guards_judge}),
    ActionRule("commit", {AFTER: _commit}),
    ActionRule("stall", {VERDICT: _stalled}),
    ActionRule("abstention", {VERDICT: _held}),
)


# The hooks of RULES at each point, in their order: made once for the RULES in force (the
# rules are a table read at every step; a test may put another table in their place).
_HOOKS: tuple[tuple[ActionRule, ...], dict[str, tuple[Hook, ...]]] | None = None


def _hooks(point: str) -> tuple[Hook, ...]:
    """The hooks of RULES at *point*, in RULES' order."""
    global _HOOKS
    if _HOOKS is None or _HOOKS[0] is not RULES:
        table = {p: tuple(r.hooks[p] for r in RULES if p in r.hooks) for p in POINTS}
        _HOOKS = (RULES, table)
    return _HOOKS[1][point]


def _apply(at: Attempt, point: str) -> StepOutcome | None:
    """Run the hooks of RULES at *point* of the attempt, in their order, up to the first
    that gives an outcome (that outcome)."""
    for hook in _hooks(point):
        outcome = hook(at)
        if outcome is not None:
            return outcome
    return None


def _routed(at: Attempt, outcome: StepOutcome) -> StepOutcome:
    """*outcome* as the rules at ROUTED leave it (each may replace it)."""
    for hook in _hooks(ROUTED):
        at.outcome = outcome
        replaced = hook(at)
        outcome = outcome if replaced is None else replaced
    return outcome


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
    """One attempt: the action (unless it already ran: *done*), its verdict and route, with
    the rules (RULES) acting at each point in their order."""
    agents = agents_of(run.fsm, state) if state.action else []
    kind = agents[0] if agents else state.action_kind()  # fsm.kind_for(state)
    at = Attempt(run, name, state, done, kind, run.context(), agents, result=done)
    if at.acts:
        ended = _apply(at, BEFORE)
        if ended is not None:
            return ended
        try:
            # --compat: little-loops cannot write out an action reading ${prev.*} before
            # any previous result (its error route)
            ctx = replace(at.ctx, prev_required=True) if run.fsm.theirs else at.ctx
            at.kind, at.result = run_action(run, name, state, ctx, at.agents)
        except InterpolationError as exc:
            return error_outcome(run, name, state, f"in action of state '{name}': {exc}")
    ended = _apply(at, AFTER)
    if ended is not None:
        return ended
    result = at.result
    if state.next is not None:
        code = result.exit_code if result is not None else None
        if result is not None and (result.error or next_fails(state, code)):
            failed = error_outcome(run, name, state, result.error or f"exit code {code}")
            return _routed(at, failed)
        return follow_route(state, None, run.context(), name)
    return _judged(at)


def _judged(at: Attempt) -> StepOutcome:
    """Evaluate the action's result, note it for `${prev.*}`/`${result.*}`, and route."""
    run, name, state, result = at.run, at.name, at.state, at.result
    judged = run.memory.take_verdict()  # given before a resume: not asked (or paid) again
    if judged is None:
        first = at.agents[0].name if at.agents else None  # fsm.kind_for(state), known
        spend, keep = run.budget.spend, run.memory.verdict
        judged = run.work.judge(name, state, result, at.ctx, spend, keep, first)
    at.judged = judged
    ended = _apply(at, JUDGED)
    if ended is not None:
        return ended
    run.memory.last_result = {"verdict": judged.verdict, "details": judged.details}
    # `prev`: the last state that gave a verdict (`next:` states do not replace it, so
    # `measure → apply → measure` compares measurements).
    run.memory.prev_result = prev_record(name, result, judged.verdict)
    ended = _apply(at, VERDICT)
    if ended is not None:
        return ended
    outcome = follow_route(state, judged.verdict, run.context(), name)
    if outcome.target is None and judged.verdict == ERROR_VERDICT:
        outcome.error = str(judged.details.get("error") or "") or None
    return _routed(at, outcome)


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
    call = ActionCall(
        name, state, action, kind, env, rendered.readable, lambda t: interpolate(t, ctx)
    )
    book = SessionBook(memory.sessions, memory.session_agents)
    return run.work.act(call, run.limits.clock.remaining_s(), run.budget.spend, book)


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


def stop_after_action(run: Run, result: ActionResult) -> StepOutcome | None:
    """The run's end when a stop or the loop's timeout cut the action short."""
    stop = run.stopping.asked()
    if stop is not None:
        return StepOutcome(stop=stop)
    if result.timed_out and run.limits.clock.deadline_passed():
        error = "loop timeout reached during an action"
        return StepOutcome(stop=Outcome.TIMEOUT, error=error)
    return None
