"""Run a loop: enter states, run actions, evaluate, route, enforce limits, emit events."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from little_loops.fsm.actions.runners import (
    ActionRequest,
    ActionResult,
    ActionRunner,
    DefaultActionRunner,
)
from little_loops.fsm.definition.model import CURRENT_STATE_TOKEN, FSMLoop, StateConfig
from little_loops.fsm.engine.interpolation import InterpolationContext, interpolate
from little_loops.fsm.engine.records import (
    ExecutionResult,
    ExecutorSnapshot,
    event_value,
    saved_result,
    short,
)
from little_loops.fsm.engine.routing import ERROR_VERDICT, resolve_route
from little_loops.fsm.errors import InterpolationError, LoopError
from little_loops.fsm.evaluators.builtin import EvaluationResult, evaluate
from little_loops.fsm.runs.layout import output_file_name
from little_loops.fsm.runs.spend import Spend
from little_loops.fsm.timefmt import iso_now

__all__ = [
    "ActionResult",
    "ActionRunner",
    "DefaultActionRunner",
    "EventCallback",
    "ExecutionResult",
    "ExecutorSnapshot",
    "FSMExecutor",
]

EventCallback = Callable[[dict[str, Any]], None]

# Seconds an action may run when its state sets no `timeout:`. Claude Code sessions
# legitimately take many minutes; shell checks should not.
DEFAULT_SHELL_TIMEOUT = 120
DEFAULT_PROMPT_TIMEOUT = 1800

# A prompt action that prints this at the start of a line hands its context over: the
# run stops with terminated_by "handoff" and can be resumed with the text.
HANDOFF_PATTERN = re.compile(r"^CONTEXT_HANDOFF:[ \t]*(.*)$", re.MULTILINE)


@dataclass
class _StepOutcome:
    """What running one state produced: a target to go to, or a reason to stop."""

    target: str | None = None
    verdict: str | None = None
    reason: str = ""
    stop: str | None = None  # a terminated_by value
    error: str | None = None


class FSMExecutor:
    """Execute an FSM loop until a terminal state or a limit.

    The executor only ever moves along transitions the loop declares: a route that
    resolves to an undeclared state ends the run with terminated_by "error".
    """

    def __init__(
        self,
        fsm: FSMLoop,
        event_callback: EventCallback | None = None,
        action_runner: ActionRunner | None = None,
        *,
        llm_client: Any = None,
        output_dir: Path | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.fsm = fsm
        self.event_callback: EventCallback = event_callback or (lambda _event: None)
        self.action_runner: ActionRunner = action_runner or DefaultActionRunner()
        self.llm_client = llm_client
        self.output_dir = output_dir

        self.current_state = fsm.initial
        self.iteration = 0
        self.pass_states: list[str] = []
        self.entered = False  # the current state's entry (and action) has begun
        self.pass_pending = False  # a maintain restart: a new pass begins before the next state
        self.captured: dict[str, Any] = {}
        self.prev_result: dict[str, Any] | None = None
        self.last_result: dict[str, Any] | None = None
        self.started_at = ""
        self.continuation: str | None = None
        self.spend = Spend()
        self._elapsed_before_ms = 0
        self._start_monotonic = 0.0
        self._shutdown = threading.Event()
        self._shutdown_reason = "interrupted"
        self._sleep = sleep

    # -- control -----------------------------------------------------------------------

    def request_shutdown(self, reason: str = "interrupted") -> None:
        """Stop as soon as possible: kill the running action and end the run.

        *reason* becomes terminated_by ("interrupted" for Ctrl-C, "stopped" for
        `ll-loop stop` / SIGTERM). Safe to call from a signal handler or another thread.
        """
        self._shutdown_reason = reason
        self._shutdown.set()
        cancel = getattr(self.action_runner, "cancel", None)
        if callable(cancel):
            cancel(reason)

    def snapshot(self) -> ExecutorSnapshot:
        return ExecutorSnapshot(
            current_state=self.current_state,
            iteration=self.iteration,
            pass_states=list(self.pass_states),
            entered=self.entered,
            pass_pending=self.pass_pending,
            captured=self.captured,
            prev_result=self.prev_result,
            last_result=self.last_result,
            started_at=self.started_at,
            elapsed_ms=self.elapsed_ms(),
            continuation=self.continuation,
            cost_usd=self.spend.cost_usd,
            usage=dict(self.spend.usage),
        )

    def restore(self, snap: ExecutorSnapshot) -> None:
        """Continue from *snap* on the next run(): the saved state runs again from its start."""
        if snap.current_state not in self.fsm.states:
            raise LoopError(
                f"cannot resume: saved state '{snap.current_state}' is not a state of loop "
                f"'{self.fsm.name}' (the loop file changed?)"
            )
        self.current_state = snap.current_state
        self.iteration = snap.iteration
        # A state that was entered (stopped or crashed mid-action) runs again within the
        # same pass; one that was only routed to is entered as an uninterrupted run would.
        self.pass_states = [
            s for s in snap.pass_states if not (snap.entered and s == snap.current_state)
        ]
        self.entered = False
        self.pass_pending = snap.pass_pending
        self.captured = dict(snap.captured)
        self.prev_result = snap.prev_result
        self.last_result = snap.last_result
        self.started_at = snap.started_at
        self._elapsed_before_ms = snap.elapsed_ms
        self.continuation = snap.continuation
        self.spend = Spend(snap.cost_usd, dict(snap.usage))

    def elapsed_ms(self) -> int:
        if not self._start_monotonic:
            return self._elapsed_before_ms
        return self._elapsed_before_ms + int((time.monotonic() - self._start_monotonic) * 1000)

    # -- the loop ----------------------------------------------------------------------

    def run(self) -> ExecutionResult:
        """Execute from the current state until a terminal state or a limit is reached."""
        self._start_monotonic = time.monotonic()
        if not self.started_at:
            self.started_at = iso_now()
        self._emit(
            "loop_start",
            {
                "loop": self.fsm.name,
                "state": self.current_state,
                "max_iterations": self.fsm.max_iterations,
                "resumed": self._elapsed_before_ms > 0 or self.iteration > 0,
            },
        )
        try:
            return self._loop()
        except LoopError as exc:
            return self._finish("error", error=str(exc))
        except Exception as exc:  # a bug must still end the run with its state saved
            return self._finish("error", error=f"internal error: {type(exc).__name__}: {exc}")

    def _loop(self) -> ExecutionResult:
        while True:
            if self._shutdown.is_set():
                return self._finish(self._shutdown_reason)
            state = self.fsm.states[self.current_state]
            # The budget is checked before a pass is counted, so a run stopped by it shows
            # the passes that ran, and a resume with a higher budget starts the next one.
            limit = self.fsm.max_cost_usd
            if limit is not None and self._spends(state) and self.spend.reached(limit):
                return self._finish(
                    "budget", error=self.spend.budget_message(limit, self.current_state)
                )
            # A pass ends when the loop comes back to a state it already ran in this pass;
            # a maintain restart always begins a new one.
            if (
                (self.iteration == 0 and not state.terminal)
                or self.pass_pending
                or (not state.terminal and self.current_state in self.pass_states)
            ):
                ended = self._start_pass()
                if ended is not None:
                    return ended

            if state.terminal:
                if state.action:
                    ended = self._run_terminal_action(state)
                    if ended is not None:
                        return ended
                if not self.fsm.maintain:
                    return self._finish("terminal")
                restart = state.on_maintain or self.fsm.initial
                if restart not in self.fsm.states:
                    return self._illegal(restart)
                self._emit_route(restart, "maintain", "maintain restart")
                self._move_to(restart)
                self.pass_pending = True
                continue

            if self._loop_deadline_passed():
                return self._finish("timeout")
            self.pass_states.append(self.current_state)
            self.entered = True
            self._emit("state_enter", {"state": self.current_state, "iteration": self.iteration})
            outcome = self._execute_state(self.current_state, state)
            if outcome.stop is not None:
                return self._finish(outcome.stop, error=outcome.error)
            if outcome.target is None:
                shown = outcome.verdict if outcome.verdict is not None else "(none)"
                detail = f"no valid transition from '{self.current_state}' for verdict '{shown}'"
                if outcome.error:
                    detail += f": {outcome.error}"
                return self._finish("error", error=detail)
            if outcome.target not in self.fsm.states:
                return self._illegal(outcome.target, outcome.verdict)
            self._emit_route(outcome.target, outcome.verdict, outcome.reason)
            self._move_to(outcome.target)

    def _start_pass(self) -> ExecutionResult | None:
        """Begin the next pass, or end the run at a limit. Backoff waits here, never past
        the loop's timeout; a stop during the wait leaves the pass pending for resume."""
        if self.iteration >= self.fsm.max_iterations:
            return self._finish("max_iterations")
        if self._loop_deadline_passed():
            return self._finish("timeout")
        if self.iteration > 0 and self.fsm.backoff:
            wait = float(self.fsm.backoff)
            remaining = self._loop_remaining_s()
            if remaining is not None:
                wait = min(wait, max(0.0, remaining))
            self._wait(wait)
            if self._shutdown.is_set():
                return self._finish(self._shutdown_reason)
            if self._loop_deadline_passed():
                return self._finish("timeout")
        self.iteration += 1
        self.pass_states = []
        self.pass_pending = False
        return None

    def _move_to(self, target: str) -> None:
        self.current_state = target
        self.entered = False

    def _execute_state(self, name: str, state: StateConfig) -> _StepOutcome:
        ctx = self._context()
        action_result: ActionResult | None = None
        if state.action:
            try:
                action_result = self._run_action(name, state, ctx)
            except InterpolationError as exc:
                return self._error_outcome(state, ctx, f"in action of state '{name}': {exc}")
            stop = self._stop_after_action(action_result)
            if stop is not None:
                return stop
            if state.is_prompt():
                self.continuation = None  # the note went to this prompt
                handoff = HANDOFF_PATTERN.search(action_result.output)
                if handoff is not None:
                    self.continuation = handoff.group(1).strip()
                    return _StepOutcome(stop="handoff")

        if state.next is not None:
            runner_error = getattr(action_result, "error", None) if action_result else None
            if runner_error:
                return self._error_outcome(state, self._context(), runner_error)
            return self._route(state, None, self._context())

        result = self._evaluate(name, state, action_result, ctx)
        self.last_result = {"verdict": result.verdict, "details": result.details}
        self._set_prev(name, action_result, result.verdict)
        route_ctx = self._context()
        outcome = self._route(state, result.verdict, route_ctx)
        if outcome.target is None and result.verdict == ERROR_VERDICT:
            outcome.error = str(result.details.get("error") or "") or None
        return outcome

    def _route(
        self,
        state: StateConfig,
        verdict: str | None,
        ctx: InterpolationContext,
        *,
        action_failed: bool = False,
    ) -> _StepOutcome:
        choice = resolve_route(state, verdict, action_failed=action_failed)
        if choice is None:
            return _StepOutcome(verdict=verdict)
        if choice.target == CURRENT_STATE_TOKEN:
            return _StepOutcome(self.current_state, verdict, f"{choice.reason} ($current)")
        try:
            target = interpolate(choice.target, ctx)
        except InterpolationError as exc:
            return _StepOutcome(
                verdict=verdict, stop="error", error=f"route of state '{self.current_state}': {exc}"
            )
        return _StepOutcome(target, verdict, choice.reason)

    def _error_outcome(
        self, state: StateConfig, ctx: InterpolationContext, msg: str
    ) -> _StepOutcome:
        """An error that happened before evaluation: routed like an `error` verdict."""
        self.last_result = {"verdict": ERROR_VERDICT, "details": {"error": msg}}
        self._emit(
            "evaluate",
            {"state": self.current_state, "type": "none", "verdict": ERROR_VERDICT, "error": msg},
        )
        outcome = self._route(state, ERROR_VERDICT, ctx, action_failed=True)
        if outcome.target is None and outcome.stop is None:
            outcome.error = msg
        return outcome

    # -- actions -----------------------------------------------------------------------

    def _run_action(self, name: str, state: StateConfig, ctx: InterpolationContext) -> ActionResult:
        assert state.action is not None
        action = interpolate(state.action, ctx)
        is_prompt = state.is_prompt()
        if is_prompt and self.continuation:
            # Kept until the action has run: a stop mid-action must not lose the note.
            action = f"Continue from this handoff note: {self.continuation}\n\n{action}"
        timeout = float(
            state.timeout or (DEFAULT_PROMPT_TIMEOUT if is_prompt else DEFAULT_SHELL_TIMEOUT)
        )
        remaining = self._loop_remaining_s()
        if remaining is not None:
            timeout = max(0.001, min(timeout, remaining))
        execute = getattr(self.action_runner, "execute", None)
        output_file = None
        if callable(execute) and self.output_dir is not None:
            output_file = self.output_dir / output_file_name(self.fsm.name, name)
        start: dict[str, Any] = {
            "state": name,
            "action": short(action),
            "action_type": "prompt" if is_prompt else "shell",
            "timeout": timeout,
        }
        if output_file is not None:
            start["output_path"] = str(output_file)  # where its output streams, live
        self._emit("action_start", start)
        if callable(execute):
            result: ActionResult = execute(
                ActionRequest(
                    action=action,
                    timeout=timeout,
                    is_slash_command=is_prompt,
                    idle_timeout=self._idle_timeout(state, is_prompt),
                    output_file=output_file,
                )
            )
        else:
            result = self.action_runner.run(action, timeout=timeout, is_slash_command=is_prompt)
        complete: dict[str, Any] = {
            "state": name,
            "exit_code": result.exit_code,
            "duration_ms": result.duration_ms,
            "output": short(result.output, tail=True),
        }
        for extra in ("error", "truncated", "output_path", "cost_usd", "usage"):
            value = getattr(result, extra, None)
            if value:
                # Claude's own sum can carry float noise (0.29152500000000003): every
                # dollar figure the product records is rounded to micro-dollars.
                complete[extra] = round(value, 6) if extra == "cost_usd" else value
        self.spend.add(getattr(result, "cost_usd", None), getattr(result, "usage", None), "claude_")
        if self.spend.cost_usd:
            complete["spent_usd"] = round(self.spend.cost_usd, 6)
        self._emit("action_complete", complete)
        if state.capture:
            self.captured[state.capture] = saved_result(result)
        return result

    def _run_terminal_action(self, state: StateConfig) -> ExecutionResult | None:
        """A terminal state's action runs once, as the loop's last step."""
        ctx = self._context()
        self.entered = True
        self._emit("state_enter", {"state": self.current_state, "iteration": self.iteration})
        try:
            result = self._run_action(self.current_state, state, ctx)
        except InterpolationError as exc:
            return self._finish("error", error=f"in action of state '{self.current_state}': {exc}")
        stop = self._stop_after_action(result)
        if stop is not None:
            return self._finish(stop.stop or "error", error=stop.error)
        if state.is_prompt():
            self.continuation = None
        return None

    def _stop_after_action(self, result: ActionResult) -> _StepOutcome | None:
        if self._shutdown.is_set():
            return _StepOutcome(stop=self._shutdown_reason)
        if getattr(result, "timed_out", False) and self._loop_deadline_passed():
            return _StepOutcome(stop="timeout", error="loop timeout reached during an action")
        return None

    # -- evaluation --------------------------------------------------------------------

    def _evaluate(
        self,
        name: str,
        state: StateConfig,
        action_result: ActionResult | None,
        ctx: InterpolationContext,
    ) -> EvaluationResult:
        output = action_result.output if action_result else ""
        exit_code = action_result.exit_code if action_result else 0
        runner_error = getattr(action_result, "error", None) if action_result else None
        config = state.effective_evaluate()
        if runner_error:
            # The action could not run properly (timeout, missing executable, ...): no
            # evaluator can judge it, and an LLM call would be paid for nothing.
            result = EvaluationResult(
                ERROR_VERDICT, {"error": runner_error, "exit_code": exit_code}
            )
        else:
            result = evaluate(
                config, output, exit_code, ctx, llm=self.fsm.llm, client=self.llm_client
            )
        event: dict[str, Any] = {"state": name, "type": config.type, "verdict": result.verdict}
        usage = result.details.get("usage")
        if isinstance(usage, dict) and usage:
            model = str(result.details.get("model") or self.fsm.llm.model)
            cost = self.spend.add_judge(model, usage)
            if cost is not None:
                event["cost_usd"] = round(cost, 6)
        for key, value in result.details.items():
            event.setdefault(key, event_value(value))
        self._emit("evaluate", event)
        return result

    # -- context and bookkeeping -------------------------------------------------------

    def _context(self) -> InterpolationContext:
        return InterpolationContext(
            context=self.fsm.context,
            captured=self.captured,
            prev=self.prev_result,
            result=self.last_result,
            state_name=self.current_state,
            iteration=self.iteration,
            loop_name=self.fsm.name,
            started_at=self.started_at,
            elapsed_ms=self.elapsed_ms(),
        )

    def _set_prev(self, name: str, action: ActionResult | None, verdict: str) -> None:
        """`prev` is the last state that produced a verdict. Unconditional `next:` states
        do not replace it, so `measure → apply → measure` compares measurements."""
        saved = saved_result(action) if action else {"output": "", "stderr": "", "exit_code": 0}
        saved.pop("duration_ms", None)
        self.prev_result = {"state": name, **saved, "verdict": verdict}

    def _idle_timeout(self, state: StateConfig, is_prompt: bool) -> float | None:
        """A state's own idle_timeout applies to its action; the loop's to shell actions
        only. Claude Code prints nothing during a long reply or tool call, so a Claude
        session is only ended for silence when its state asks for that."""
        if state.idle_timeout is not None:
            return state.idle_timeout
        return None if is_prompt else self.fsm.idle_timeout

    def _spends(self, state: StateConfig) -> bool:
        """True when running *state* calls Claude: a prompt action or an LLM judge."""
        if state.action and state.is_prompt():
            return True
        if state.terminal:
            return False  # a terminal state's action is not evaluated
        return state.effective_evaluate().type == "llm_structured" and self.fsm.llm.enabled

    def _loop_remaining_s(self) -> float | None:
        if not self.fsm.timeout:
            return None
        return float(self.fsm.timeout) - self.elapsed_ms() / 1000

    def _loop_deadline_passed(self) -> bool:
        remaining = self._loop_remaining_s()
        return remaining is not None and remaining <= 0

    def _wait(self, seconds: float) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        else:
            self._shutdown.wait(seconds)

    def _illegal(self, target: str, verdict: str | None = None) -> ExecutionResult:
        declared = ", ".join(self.fsm.states)
        return self._finish(
            "error",
            error=(
                f"illegal transition {self.current_state} → {target}: '{target}' is not a "
                f"declared state (verdict {verdict!r}; declared: {declared})"
            ),
        )

    def _emit_route(self, target: str, verdict: str | None, reason: str) -> None:
        self._emit(
            "route",
            {"from": self.current_state, "to": target, "verdict": verdict, "reason": reason},
        )

    def _emit(self, event: str, data: dict[str, Any]) -> None:
        self.event_callback({"event": event, "ts": iso_now(), **data})

    def _finish(self, terminated_by: str, error: str | None = None) -> ExecutionResult:
        result = ExecutionResult(
            final_state=self.current_state,
            iterations=self.iteration,
            terminated_by=terminated_by,
            duration_ms=self.elapsed_ms(),
            captured=self.captured,
            error=error,
            handoff=self.continuation if terminated_by == "handoff" else None,
            cost_usd=round(self.spend.cost_usd, 6),
            usage=dict(self.spend.usage),
        )
        payload: dict[str, Any] = {
            "final_state": result.final_state,
            "iterations": result.iterations,
            "terminated_by": terminated_by,
            "duration_ms": result.duration_ms,
        }
        if error:
            payload["error"] = error
        if result.handoff is not None:
            payload["handoff"] = result.handoff
        if self.spend.cost_usd or self.spend.usage:
            payload["cost_usd"] = result.cost_usd
            payload["usage"] = result.usage
        try:
            self._emit("loop_complete", payload)
        except Exception as exc:  # e.g. the disk is full: still report how the run ended
            note = f"could not record the end of the run: {type(exc).__name__}: {exc}"
            result.error = f"{error}; {note}" if error else note
        return result
