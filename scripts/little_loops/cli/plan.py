"""`--dry-run`: a loop's execution plan as text (states, actions, evaluators, routes, limits)."""

from __future__ import annotations

from little_loops.fsm.definition.model import (
    DEFAULT_PROMPT_EVALUATOR,
    FSMLoop,
    RetryConfig,
    StateConfig,
)
from little_loops.fsm.engine.transitions import declared
from little_loops.fsm.evaluators.registry import needs_llm
from little_loops.fsm.timefmt import format_duration


def _seconds(value: float | None) -> str:
    return "none" if not value else format_duration(float(value) * 1000)


def _evaluator(state: StateConfig, llm_enabled: bool) -> str | None:
    """How the state's result becomes a verdict, as the executor will do it."""
    if state.next is not None:
        return None  # an unconditional `next:` is taken without evaluating
    kind = state.effective_evaluate().type
    if state.evaluate is not None:
        note = ""
    elif kind == DEFAULT_PROMPT_EVALUATOR:
        note = " (default for prompt actions)"
    else:
        note = " (default)"
    if needs_llm(kind) and not llm_enabled:
        note += " (LLM off: judged by exit code)"
    return kind + note


def _retry(policy: RetryConfig) -> str:
    """`on failure, 75; 4 attempts; waits 2s × 3 (at most 30s), jitter full`."""
    cap = f" (at most {_seconds(policy.max_interval)})" if policy.max_interval else ""
    return (
        f"on {', '.join(map(str, policy.on))}; {policy.max_attempts} attempts; waits "
        f"{_seconds(policy.interval)} × {policy.backoff_rate:g}{cap}, jitter {policy.jitter}"
    )


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
        f"llm: {llm.model}" + ("" if llm.enabled else " (off)"),
    ]
    if fsm.context:
        lines.append("context: " + ", ".join(f"{k}={v!r}" for k, v in fsm.context.items()))
    lines.append("states:")
    for name, state in fsm.states.items():
        tags = [
            tag
            for tag, on in (("initial", name == fsm.initial), ("terminal", state.terminal))
            if on
        ]
        lines.append(f"  {name}" + (f"  [{', '.join(tags)}]" if tags else ""))
        if state.action:
            kind = "prompt" if state.is_prompt() else "shell"
            action = state.action.strip().replace("\n", "\n      ")
            lines.append(f"    action ({kind}): {action}")
            if state.capture:
                lines.append(f"    capture: {state.capture}")
            if state.timeout:
                lines.append(f"    timeout: {_seconds(state.timeout)}")
        policy = None if state.terminal or not state.action else fsm.retry_of(state)
        if policy is not None:
            lines.append(f"    retry: {_retry(policy)}")
        evaluator = None if state.terminal else _evaluator(state, llm.enabled)
        if evaluator is not None:
            lines.append(f"    evaluate: {evaluator}")
        routes = [f"{t.label} → {t.target}" for t in declared(state)]
        if routes:
            lines.append(f"    routes: {', '.join(routes)}")
    return "\n".join(lines) + "\n"
