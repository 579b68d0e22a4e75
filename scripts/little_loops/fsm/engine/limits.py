"""The time limits of a run: action timeouts, idle timeouts and the loop's own deadline."""

from __future__ import annotations

import time

from little_loops.fsm.actions.spec import ActionKindSpec
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.evaluators.registry import needs_llm


class RunClock:
    """A run's elapsed time across resumes, and what is left of the loop's `timeout`."""

    def __init__(self, timeout: float | None, elapsed_before_ms: int = 0) -> None:
        self.timeout = timeout
        self.elapsed_before_ms = elapsed_before_ms  # time spent in earlier sessions
        self._started = 0.0

    def start(self) -> None:
        """Count time from now on."""
        self._started = time.monotonic()

    def elapsed_ms(self) -> int:
        if not self._started:
            return self.elapsed_before_ms
        return self.elapsed_before_ms + int((time.monotonic() - self._started) * 1000)

    def remaining_s(self) -> float | None:
        """Seconds left before the loop's timeout; None when it has none."""
        if not self.timeout:
            return None
        return float(self.timeout) - self.elapsed_ms() / 1000

    def deadline_passed(self) -> bool:
        remaining = self.remaining_s()
        return remaining is not None and remaining <= 0


def action_timeout(
    state: StateConfig,
    kind: ActionKindSpec,
    remaining: float | None,
    loop_default: float | None = None,
) -> float:
    """Seconds *state*'s action may run: its `timeout:`, else the loop's `default_timeout:`
    (*loop_default*), else its kind's; within the loop's own time left (*remaining*)."""
    timeout = float(state.timeout or loop_default or kind.default_timeout)
    if remaining is not None:
        timeout = max(0.001, min(timeout, remaining))
    return timeout


def idle_timeout(fsm: FSMLoop, state: StateConfig, kind: ActionKindSpec) -> float | None:
    """A state's own idle_timeout applies to its action; the loop's only to a kind that
    takes it (`loop_idle_timeout`). Claude Code prints nothing during a long reply or tool
    call, so a Claude session is only ended for silence when its state asks for that."""
    if state.idle_timeout is not None:
        return state.idle_timeout
    return fsm.idle_timeout if kind.loop_idle_timeout else None


def spends(fsm: FSMLoop, state: StateConfig) -> bool:
    """True when running *state* calls Claude: a prompt action or an LLM judge."""
    if state.action and state.is_prompt():
        return True
    if state.terminal:
        return False  # a terminal state's action is not evaluated
    return needs_llm(state.effective_evaluate().type) and fsm.llm.enabled
