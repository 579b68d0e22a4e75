"""`--dry-run`: a loop's execution plan as text (states, actions, evaluators, routes, limits)."""

from __future__ import annotations

import json

from little_loops.fsm.actions.registry import recorded_type
from little_loops.fsm.actions.spec import ActionKindSpec
from little_loops.fsm.definition.graph.transitions import declared
from little_loops.fsm.definition.graph.verdicts import judged_by_llm
from little_loops.fsm.definition.model.fanout import (
    JOIN_BEST,
    FanOutConfig,
    fan_out_of,
    fan_out_text,
)
from little_loops.fsm.definition.model.metadata import PUBLIC, first_line
from little_loops.fsm.definition.model.pr_block import PullRequestConfig
from little_loops.fsm.definition.model.typed import (
    APPROVAL,
    DEFAULT_EVALUATOR,
    SESSION_CONTINUE,
    FSMLoop,
    NotifyConfig,
    RetryConfig,
    StallConfig,
    StateConfig,
)
from little_loops.fsm.evaluators.judge_claude import API_BACKEND, CLAUDE_BACKEND, judge_backend
from little_loops.fsm.evaluators.registry import needs_llm
from little_loops.fsm.facts.timefmt import format_duration
from little_loops.fsm.runs.preflight import needs
from little_loops.fsm.runs.webhook import where


def _pull_request(pr: PullRequestConfig) -> str:
    """What a `pr:` state does, on one line."""
    merge = "never merged" if pr.merge == "none" else f"merged ({pr.merge}) when green"
    return (
        f"push to {pr.remote} and open or update one ({pr.forge}): {first_line(pr.title)!r}; "
        f"{pr.checks} checks must pass, looked at every {_seconds(pr.interval)} "
        f"(x{pr.backoff_rate:g}, at most {_seconds(pr.max_interval)}) for up to "
        f"{_seconds(pr.max_wait)}; {merge}"
    )


def _seconds(value: float | None) -> str:
    return "none" if not value else format_duration(float(value) * 1000)


def _evaluator(state: StateConfig, llm_enabled: bool) -> str | None:
    """How the state's result becomes a verdict, as the executor will do it."""
    if state.next is not None:
        return None  # an unconditional `next:` is taken without evaluating
    kind = state.effective_evaluate().type
    action_kind = state.action_kind()
    if state.evaluate is not None:
        note = ""
    elif state.action and kind != DEFAULT_EVALUATOR:  # its action kind's own default
        note = f" (default for {action_kind.action_types[0]} actions)"
    else:
        note = " (default)"
    if needs_llm(kind) and not llm_enabled:
        note += " (LLM off: judged by exit code)"
    return kind + note


def _judge(fsm: FSMLoop) -> str:
    """Who the llm_structured judge asks in this environment, and why: with `auto` and no
    API key, each judged state's own agent when it can judge, else Claude Code."""
    if fsm.llm.backend != "auto":
        return f"judge backend {fsm.llm.backend}, llm.backend"
    judged = [state for state in fsm.states.values() if judged_by_llm(state)]
    backends = sorted(
        {judge_backend(fsm.llm.for_agent(fsm.kind_for(state).name)) for state in judged}
    ) or [judge_backend(fsm.llm)]
    if backends == [API_BACKEND]:
        why = "auto: an API key is set"
    elif backends == [CLAUDE_BACKEND]:
        why = "auto: no ANTHROPIC_API_KEY, Claude Code's login"
    else:
        why = "auto: no ANTHROPIC_API_KEY, each state's own agent when it can judge"
    return f"judge backend {', '.join(backends)}, {why}"


def _kind_lines(fsm: FSMLoop, name: str, state: StateConfig, kind: ActionKindSpec) -> list[str]:
    """The agents (a prompt's), options and session of a state, as they will be used."""
    out = []
    agents = fsm.agents_for(state)
    if len(agents) > 1:
        shown = ", ".join(agent.name for agent in agents)
        out.append(f"    agent: {shown} (fallback: the next when one is limited or not ready)")
    elif agents:
        out.append(f"    agent: {agents[0].name}")
    for each in agents or [kind]:
        options = fsm.options_for(state, each)
        if options:
            out.append(f"    {each.options_key}: {each.describe_options(options)}")
    if kind.sessions and state.session == SESSION_CONTINUE:
        out.append(f"    session: continue ({state.session_name(name)})")
    confined = fsm.sandbox_for(state, kind)
    if confined is not None:
        out.append(f"    sandbox: {confined.describe()}")
    return out


def _needs(fsm: FSMLoop) -> list[str]:
    """`needs: claude (fix, check)`: each agent CLI a run calls, and the states that call it
    (whether it is ready here is checked before a run's first step: `run`, not the plan)."""
    lines = []
    for program, uses in needs(fsm).items():
        states = (u.state if u.subloop is None else f"{u.subloop} > {u.state}" for u in uses)
        lines.append(f"needs: {program} ({', '.join(dict.fromkeys(states))})")
    return lines


def _stall(config: StallConfig) -> str:
    """`same_result 3, max_visits 10; on_stall → triage`: the breakers and where they go."""
    breakers = {k: v for k, v in config.to_dict().items() if k != "on_stall"}
    said = ", ".join(f"{key} {value}" for key, value in breakers.items()) or "no breakers"
    where = f"on_stall → {config.on_stall}" if config.on_stall else "no on_stall: the run ends"
    return f"{said}; {where}"


def _notify(config: NotifyConfig) -> str:
    """`the command, the webhook https://host (on: done, failed)`: who hears a run end."""
    told = [
        *(["the command"] if config.command is not None else []),
        *([f"the webhook {where(config.webhook)}"] if config.webhook is not None else []),
    ]
    when = "every outcome" if config.on is None else ", ".join(config.on)
    return f"{' and '.join(told)} (on: {when})"


def _retry(policy: RetryConfig) -> str:
    """`on failure, 75; 4 attempts; waits 2s × 3 (at most 30s), jitter full`."""
    cap = f" (at most {_seconds(policy.max_interval)})" if policy.max_interval else ""
    return (
        f"on {', '.join(map(str, policy.on))}; {policy.max_attempts} attempts; waits "
        f"{_seconds(policy.interval)} × {policy.backoff_rate:g}{cap}, jitter {policy.jitter}"
    )


def about_lines(fsm: FSMLoop) -> list[str]:
    """The loop's metadata as the plan shows it (description, category, labels,
    visibility, its command lines, its input keys): nothing for a loop without."""
    lines = [f"about: {first_line(fsm.description)}"] if fsm.description else []
    if fsm.category:
        lines.append(f"category: {fsm.category}")
    if fsm.labels:
        lines.append(f"labels: {', '.join(fsm.labels)}")
    if fsm.visibility != PUBLIC:
        lines.append(f"visibility: {fsm.visibility}")
    if fsm.required_inputs:
        lines.append(f"required inputs: {', '.join(fsm.required_inputs)}")
    for entry in fsm.commands:
        comment = entry.get("comment")
        lines.append(f"command: {entry.get('cmd')}" + (f"  # {comment}" if comment else ""))
    return lines


def _pull_request_lines(pr: PullRequestConfig | None) -> list[str]:
    """A pull-request state's line: what it pushes, opens, waits for and merges."""
    return [] if pr is None else [f"    pull request: {_pull_request(pr)}"]


def _fan_out_lines(fan: FanOutConfig | None) -> list[str]:
    """A fan-out state's lines: what its branches run, how many at once, join and merge."""
    if fan is None:
        return []
    by = f"judge: {fan.judge_question}" if fan.judge_question else f"score: {fan.score}"
    return [f"    fan-out: {fan_out_text(fan)}", *([f"    {by}"] if fan.join == JOIN_BEST else [])]


def _parameters(fsm: FSMLoop) -> list[str]:
    """The loop's parameters, each with its value and what it takes."""
    lines = ["parameters:"] if fsm.parameters else []
    for name, spec in fsm.parameters.items():
        value = json.dumps(fsm.context[name]) if name in fsm.context else "not given"
        lines.append(f"  {name} = {value}  ({spec.summary()})")
        if spec.description:
            lines.append(f"      {spec.description}")
    return lines


def format_plan(fsm: FSMLoop, source: str) -> str:
    """The plan `ll-loop run NAME --dry-run` prints; nothing is run to make it."""
    llm = fsm.llm
    lines = [
        f"loop: {fsm.name}" + (f" (paradigm: {fsm.paradigm})" if fsm.paradigm else ""),
        f"file: {source}",
        f"initial: {fsm.initial}",
        "limits: "
        f"max_iterations {fsm.max_iterations}, timeout {_seconds(fsm.timeout)}, "
        f"backoff {_seconds(fsm.backoff)}, maintain {'yes' if fsm.maintain else 'no'}, "
        f"max_cost_usd {'none' if fsm.max_cost_usd is None else f'${fsm.max_cost_usd:g}'}",
        f"scope: {', '.join(fsm.effective_scope())}",
    ]
    lines[1:1] = about_lines(fsm)
    if any(judged_by_llm(state) for state in fsm.states.values()):
        lines.append(f"llm: {llm.model}" + (f" ({_judge(fsm)})" if llm.enabled else " (off)"))
    lines += _needs(fsm)
    if fsm.stall is not None:
        lines.append(f"stall: {_stall(fsm.stall)}")
    context = {k: v for k, v in fsm.context.items() if k not in fsm.parameters}
    if context:
        lines.append("context: " + ", ".join(f"{k}={v!r}" for k, v in context.items()))
    lines += _parameters(fsm)
    if fsm.notify is not None:
        lines.append(f"notify: {_notify(fsm.notify)}")
    lines.append("states:")
    for name, state in fsm.states.items():
        tags = [
            tag
            for tag, on in (("initial", name == fsm.initial), ("terminal", state.terminal))
            if on
        ]
        lines.append(f"  {name}" + (f"  [{', '.join(tags)}]" if tags else ""))
        if state.description:
            lines.append(f"    about: {first_line(state.description)}")
        if state.action:
            kind = fsm.kind_for(state)
            written = APPROVAL if state.is_approval() else recorded_type(kind)
            action = state.action.strip().replace("\n", "\n      ")
            lines.append(f"    action ({written}): {action}")
            if state.capture:
                lines.append(f"    capture: {state.capture}")
            if state.timeout:
                lines.append(f"    timeout: {_seconds(state.timeout)}")
            if not state.is_approval():
                lines += _kind_lines(fsm, name, state, kind)
        if state.loop is not None:  # its verdict is how the child loop ends
            given = ", ".join(f"{k}={v!r}" for k, v in (state.with_ or {}).items())
            lines.append(f"    loop: {state.loop}" + (f" with {given}" if given else ""))
            if state.capture:
                lines.append(f"    capture: {state.capture}")
        fan = fan_out_of(state)  # its verdict is the join of its branches
        lines += _fan_out_lines(fan) + _pull_request_lines(state.pr)
        if state.stall is not None:
            lines.append(f"    stall: {_stall(state.stall)}")
        if state.rollback:
            lines.append("    rollback: first, back to the worktree's last commit")
        if fsm.commits_after(state) and not (state.is_approval() or state.loop is not None):
            lines.append("    commit: the worktree, when it changed")
        acts = state.action and not (state.terminal or state.is_approval())
        policy = fsm.retry_of(state) if acts else None
        if policy is not None:
            lines.append(f"    retry: {_retry(policy)}")
        # An answer is no evaluation; a sub-loop's verdict is how its child ended.
        judged = not (
            state.terminal
            or state.is_approval()
            or state.loop is not None
            or state.pr is not None
            or fan
        )
        evaluator = _evaluator(state, llm.enabled) if judged else None
        if evaluator is not None:
            lines.append(f"    evaluate: {evaluator}")
        lines += [f"    {key}: {shown}" for key, shown in state.shown()]  # its keys' rows
        routes = [f"{t.label} → {t.target}" for t in declared(state)]
        if routes:
            lines.append(f"    routes: {', '.join(routes)}")
    return "\n".join(lines) + "\n"
