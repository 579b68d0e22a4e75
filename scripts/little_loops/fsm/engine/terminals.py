"""A terminal state: its action runs once as the loop's last step, then the run ends or restarts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.model import OUTCOME_FAILURE, FSMLoop, StateConfig
from little_loops.fsm.definition.routing import StepOutcome
from little_loops.fsm.definition.transitions import MAINTAIN_LABEL, restart
from little_loops.fsm.engine.passes import Passes
from little_loops.fsm.engine.records import ExecutionResult
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.facts.outcomes import Outcome
from little_loops.fsm.values.interpolation import InterpolationContext


class Terminals:
    """The terminal-state half of FSMExecutor (the fields it uses are declared here)."""

    fsm: FSMLoop
    current_state: str
    entered: bool
    continuation: str | None
    passes: Passes
    acted: dict[str, Any] | None
    last_result: dict[str, Any] | None
    arrived_on_error: str | None  # why the run came to current_state on the verdict error

    _context: Callable[[], InterpolationContext]
    _emit_enter: Callable[[], None]
    _run_action: Callable[[str, StateConfig, InterpolationContext], ActionResult]
    _stop_after_action: Callable[[ActionResult], StepOutcome | None]
    _finish: Callable[..., ExecutionResult]
    _illegal: Callable[..., ExecutionResult]
    _move_to: Callable[[str, str | None, str], None]
    _commit_after: Callable[[str, StateConfig, str | None], None]

    def _arrive(self, verdict: str | None) -> None:
        """Note why the run leaves the current state: on the verdict `error`, which state
        gave it and the error (a terminal state reached so ends the run as a failure)."""
        self.arrived_on_error = None
        if verdict == ERROR_VERDICT:
            details = (self.last_result or {}).get("details")
            error = details.get("error") if isinstance(details, dict) else None
            why = f"reached from state '{self.current_state}' on the verdict error"
            self.arrived_on_error = f"{why}: {error}" if error else why

    def _run_terminal_action(
        self, state: StateConfig, done: ActionResult | None = None
    ) -> ExecutionResult | None:
        """A terminal state's action runs once, as the loop's last step (*done*: it ran)."""
        result = done
        if result is None:
            ctx = self._context()
            self.entered = True
            self._emit_enter()
            try:
                result = self._run_action(self.current_state, state, ctx)
            except InterpolationError as exc:
                where = f"in action of state '{self.current_state}'"
                return self._finish("error", error=f"{where}: {exc}")
        stop = self._stop_after_action(result)
        if stop is not None:
            return self._finish(stop.stop or "error", error=stop.error)
        if state.is_prompt():
            self.continuation = None
        return None

    def _leave_terminal(self, state: StateConfig) -> ExecutionResult | None:
        """End the run at a terminal state, or restart a `maintain` loop (a `commit:` first)."""
        self._commit_after(self.current_state, state, (self.acted or {}).get("output"))
        way = restart(self.fsm, state)
        if way is None:
            # A terminal reached on the verdict `error` is a failure whatever it is called:
            # a run whose Claude step could not run must not exit 0 (facts/outcomes.py).
            why = self.arrived_on_error
            if state.outcome == OUTCOME_FAILURE or why is not None:
                return self._finish(Outcome.TERMINAL_FAILURE, error=why)
            return self._finish(Outcome.TERMINAL)
        if way.target not in self.fsm.states:
            return self._illegal(way.target)
        self.passes.restarted()
        self._move_to(way.target, MAINTAIN_LABEL, "maintain restart")
        return None
