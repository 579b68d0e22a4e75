"""Run a loop: enter states, run actions, evaluate, route, enforce limits, emit events."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from little_loops.fsm.actions.protocol import ActionRunner, RunsActions, as_action_runner
from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.definition.model import FSMLoop, StateConfig
from little_loops.fsm.definition.routing import StepOutcome, follow_route, illegal_route, no_route
from little_loops.fsm.engine import events
from little_loops.fsm.engine.attempts import Attempts
from little_loops.fsm.engine.commits import Commits
from little_loops.fsm.engine.events import EventCallback
from little_loops.fsm.engine.limits import RunClock, spends
from little_loops.fsm.engine.passes import Passes
from little_loops.fsm.engine.records import (
    ExecutionResult,
    ExecutorSnapshot,
    acted_record,
    prev_record,
    saved_result,
)
from little_loops.fsm.engine.retrying import Retrying
from little_loops.fsm.engine.safeguards import STALLED, Safeguards
from little_loops.fsm.engine.step import StateWork, handoff_note
from little_loops.fsm.engine.subloop import SubLoops
from little_loops.fsm.engine.terminals import Terminals
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.errors import InterpolationError, LoopError
from little_loops.fsm.facts.spend import Spend
from little_loops.fsm.facts.timefmt import iso_now
from little_loops.fsm.values.interpolation import InterpolationContext, interpolate

__all__ = [
    "ActionResult",
    "ActionRunner",
    "DefaultActionRunner",
    "EventCallback",
    "ExecutionResult",
    "ExecutorSnapshot",
    "FSMExecutor",
]


class FSMExecutor(Safeguards, Retrying, Terminals, SubLoops, Commits):
    """Execute an FSM loop until a terminal state or a limit.

    The executor only ever moves along transitions the loop declares: a route that
    resolves to an undeclared state ends the run with terminated_by "error".
    """

    def __init__(
        self,
        fsm: FSMLoop,
        event_callback: EventCallback | None = None,
        action_runner: ActionRunner | RunsActions | None = None,
        *,
        llm_client: Any = None,
        output_dir: Path | None = None,
        sleep: Callable[[float], None] | None = None,
        worktree: Path | None = None,
    ) -> None:
        self.fsm = fsm
        self.worktree = worktree  # a worktree run's top-level: checkpoints (engine/commits.py)
        self.event_callback: EventCallback = event_callback or (lambda _event: None)
        self.action_runner: ActionRunner = (
            DefaultActionRunner() if action_runner is None else as_action_runner(action_runner)
        )
        self.work = StateWork(
            fsm, self.action_runner, self._emit, output_dir=output_dir, llm_client=llm_client
        )

        self.current_state = fsm.initial
        self.passes = Passes()
        self.entered = False  # the current state's entry (and action) has begun
        self.captured: dict[str, Any] = {}
        self.prev_result: dict[str, Any] | None = None
        self.last_result: dict[str, Any] | None = None
        self.arrived_on_error: str | None = None  # see ExecutorSnapshot.arrived_on_error
        self.started_at = ""
        self.continuation: str | None = None
        self.acted: dict[str, Any] | None = None  # the current state's finished action
        self.resumed_action: ActionResult | None = None  # restored: evaluate, not run again
        self.spend = Spend()
        self.sessions: dict[str, str] = {}  # Claude Code session ids by session_key
        self.attempts = Attempts()  # retry: attempts and waits (engine/retrying.py)
        self.clock = RunClock(fsm.timeout)
        self._shutdown = threading.Event()
        self._shutdown_reason = "interrupted"
        self._sleep = sleep
        self.before_wait: Callable[[], None] | None = None  # called before a backoff wait
        self.child: FSMExecutor | None = None  # a sub-loop state's running child loop
        self.pending_child: dict[str, Any] | None = None  # its saved snapshot, on resume
        self._init_safeguards()

    # -- control -----------------------------------------------------------------------

    def request_shutdown(self, reason: str = "interrupted") -> None:
        """Stop as soon as possible: kill the running action and end the run.

        *reason* becomes terminated_by ("interrupted" for Ctrl-C, "stopped" for
        `ll-loop stop` / SIGTERM). Safe to call from a signal handler or another thread.
        """
        self._shutdown_reason = reason
        self._shutdown.set()
        self.request_child_shutdown(reason)
        self.action_runner.cancel(reason)

    # -- the loop ----------------------------------------------------------------------

    def run(self) -> ExecutionResult:
        """Execute from the current state until a terminal state or a limit is reached."""
        self.clock.start()
        if not self.started_at:
            self.started_at = iso_now()
        self._emit(
            "loop_start",
            events.LoopStart(
                loop=self.fsm.name,
                state=self.current_state,
                max_iterations=self.fsm.max_iterations,
                resumed=self.clock.elapsed_before_ms > 0 or self.passes.iteration > 0,
            ),
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
            done, self.resumed_action = self.resumed_action, None
            if done is not None:  # resumed after this state's action finished
                ended = self._after_action(state, done)
                if ended is not None:
                    return ended
                continue
            # The budget is checked before a pass is counted, so a run stopped by it shows
            # the passes that ran, and a resume with a higher budget starts the next one.
            limit = self.fsm.max_cost_usd
            if limit is not None and spends(self.fsm, state) and self.spend.reached(limit):
                return self._finish(
                    "budget", error=self.spend.budget_message(limit, self.current_state)
                )
            began = self.passes.begins(self.current_state, state)
            if began:
                ended = self._start_pass()
                if ended is not None:
                    return ended

            if state.terminal:
                if state.action:
                    ended = self._run_terminal_action(state)
                    if ended is not None:
                        return ended
                ended = self._leave_terminal(state)
                if ended is not None:
                    return ended
                continue

            if self.clock.deadline_passed():
                return self._finish("timeout")
            stall = self.stall.entering(self.current_state, began)
            if stall is not None:
                ended = self._follow(self._stalled(stall))
                if ended is not None:
                    return ended
                continue
            self.passes.ran(self.current_state)
            self.entered = True
            self._emit_enter()
            self._rollback_before(self.current_state, state)
            ended = self._after_action(state, None)
            if ended is not None:
                return ended

    def _after_action(
        self, state: StateConfig, done: ActionResult | None
    ) -> ExecutionResult | None:
        """Finish the current (entered) state: its action unless *done*, verdict, route."""
        if state.terminal:  # only a resumed terminal action gets here
            ended = self._run_terminal_action(state, done)
            return ended if ended is not None else self._leave_terminal(state)
        outcome = self._attempts_of(state, done)
        if isinstance(outcome, ExecutionResult):
            return outcome
        return self._follow(outcome)

    def _follow(self, outcome: StepOutcome) -> ExecutionResult | None:
        """Go where *outcome* leads, or end the run there."""
        if outcome.stop is not None:
            return self._finish(outcome.stop, error=outcome.error)
        if outcome.target is None:
            return self._finish("error", error=no_route(self.current_state, outcome))
        if outcome.target not in self.fsm.states:
            return self._illegal(outcome.target, outcome.verdict)
        self._move_to(outcome.target, outcome.verdict, outcome.reason)
        return None

    def _start_pass(self) -> ExecutionResult | None:
        """Begin the next pass, or end the run at a limit. Backoff waits here, never past
        the loop's timeout; a stop during the wait leaves the pass pending for resume."""
        if self.passes.iteration >= self.fsm.max_iterations:
            return self._finish("max_iterations")
        if self.clock.deadline_passed():
            return self._finish("timeout")
        if self.passes.iteration > 0 and self.fsm.backoff:
            wait = float(self.fsm.backoff)
            remaining = self.clock.remaining_s()
            if remaining is not None:
                wait = min(wait, max(0.0, remaining))
            self._wait(wait)
            if self._shutdown.is_set():
                return self._finish(self._shutdown_reason)
            if self.clock.deadline_passed():
                return self._finish("timeout")
        self.passes.start()
        return None

    def _move_to(self, target: str, verdict: str | None, reason: str) -> None:
        """Go to *target*; the `route` event is emitted once the run is there (a resume
        from it enters *target*)."""
        route = events.Route(
            {"from": self.current_state, "to": target, "verdict": verdict, "reason": reason}
        )
        self._arrive(verdict)
        self.current_state = target
        self.entered = False
        self.acted = None
        self.attempts.left()
        self._emit("route", route)

    def _execute_state(
        self, name: str, state: StateConfig, done: ActionResult | None = None
    ) -> StepOutcome:
        """Run the state's action (unless it already ran: *done*), evaluate it and route."""
        if state.is_approval():
            return self._ask(name, state)
        if state.loop is not None:
            return self._run_subloop(name, state)
        ctx = self._context()
        action_result: ActionResult | None = done
        if state.action and done is None:
            self._announce_attempt(name, state)
            try:
                action_result = self._run_action(name, state, ctx)
            except InterpolationError as exc:
                return self._error_outcome(state, ctx, f"in action of state '{name}': {exc}")
        if action_result is not None:
            stop = self._stop_after_action(action_result) or self._action_limit(
                name, state, action_result
            )
            if stop is not None:
                return stop
            if state.is_prompt():
                self.continuation = None  # the note went to this prompt
                self.continuation = handoff_note(action_result.output)
                if self.continuation is not None:
                    self.acted = None  # a resumed run gives the note to this prompt again
                    return StepOutcome(stop="handoff")
        self._commit_after(name, state, action_result.output if action_result else None)

        if state.next is not None:
            if action_result is not None and action_result.error:
                failed = self._error_outcome(state, self._context(), action_result.error)
                return self._retry_or(name, state, failed, action_result)
            return follow_route(state, None, self._context(), self.current_state)

        result = self.work.judge(name, state, action_result, ctx, self.spend)
        limited = self._judge_limit(name, result, action_result)
        if limited is not None:
            return limited
        self.last_result = {"verdict": result.verdict, "details": result.details}
        # `prev`: the last state that gave a verdict (`next:` states do not replace it, so
        # `measure → apply → measure` compares measurements).
        self.prev_result = prev_record(name, action_result, result.verdict)
        stalled = self._same_result(name, result.verdict, action_result)
        if stalled is not None:
            return stalled
        route_ctx = self._context()
        outcome = follow_route(state, result.verdict, route_ctx, self.current_state)
        if outcome.target is None and result.verdict == ERROR_VERDICT:
            outcome.error = str(result.details.get("error") or "") or None
        return self._retry_or(name, state, outcome, action_result)

    def _error_outcome(
        self, state: StateConfig, ctx: InterpolationContext, msg: str
    ) -> StepOutcome:
        """An error that happened before evaluation: routed like an `error` verdict."""
        self.last_result = {"verdict": ERROR_VERDICT, "details": {"error": msg}}
        failed = events.Evaluation(
            state=self.current_state, type="none", verdict=ERROR_VERDICT, error=msg
        )
        self._emit("evaluate", failed)
        outcome = follow_route(state, ERROR_VERDICT, ctx, self.current_state, action_failed=True)
        if outcome.target is None and outcome.stop is None:
            outcome.error = msg
        return outcome

    # -- actions -----------------------------------------------------------------------

    def _run_action(self, name: str, state: StateConfig, ctx: InterpolationContext) -> ActionResult:
        assert state.action is not None
        kind = state.action_kind()
        # A prompt gets the values as text; bash gets each one quoted where it lands.
        action = kind.interpolate(state.action, ctx)
        if kind.agent is not None and self.continuation:
            # Kept until the action has run: a stop mid-action must not lose the note.
            action = f"Continue from this handoff note: {self.continuation}\n\n{action}"
        result = self.work.act(
            name,
            state,
            action,
            self.clock.remaining_s(),
            self.spend,
            self.sessions,
            fill=lambda text: interpolate(text, ctx),
        )
        if state.capture:
            self.captured[state.capture] = saved_result(result)
        # Recorded with `action_complete`, so a resume evaluates it rather than running it
        # again; an action cut short by a stop or the loop's timeout runs again instead.
        cut_short = self._shutdown.is_set() or (result.timed_out and self.clock.deadline_passed())
        self.acted = None if cut_short else acted_record(result)
        self.work.completed(name, result, self.spend)
        return result

    def _stop_after_action(self, result: ActionResult) -> StepOutcome | None:
        if self._shutdown.is_set():
            return StepOutcome(stop=self._shutdown_reason)
        if result.timed_out and self.clock.deadline_passed():
            return StepOutcome(stop="timeout", error="loop timeout reached during an action")
        return None

    # -- context and bookkeeping -------------------------------------------------------

    def _context(self) -> InterpolationContext:
        return InterpolationContext(
            context=self.fsm.context,
            captured=self.captured,
            prev=self.prev_result,
            result=self.last_result,
            state_name=self.current_state,
            iteration=self.passes.iteration,
            loop_name=self.fsm.name,
            started_at=self.started_at,
            elapsed_ms=self.elapsed_ms(),
        )

    def _wait(self, seconds: float) -> None:
        if self.before_wait is not None:
            self.before_wait()
        if self._sleep is not None:
            self._sleep(seconds)
        else:
            self._shutdown.wait(seconds)

    def _illegal(self, target: str, verdict: str | None = None) -> ExecutionResult:
        error = illegal_route(self.current_state, target, verdict, self.fsm.states)
        return self._finish("error", error=error)

    def _emit_enter(self) -> None:
        enter = events.StateEnter(state=self.current_state, iteration=self.passes.iteration)
        self._emit("state_enter", enter)

    def _emit(self, event: str, data: Mapping[str, object]) -> None:
        self.event_callback(events.stamped(event, data))

    def _finish(self, terminated_by: str, error: str | None = None) -> ExecutionResult:
        result = ExecutionResult(
            final_state=self.current_state,
            iterations=self.passes.iteration,
            terminated_by=terminated_by,
            duration_ms=self.elapsed_ms(),
            captured=self.captured,
            error=error,
            handoff=self.continuation if terminated_by == "handoff" else None,
            cost_usd=round(self.spend.cost_usd, 6),
            usage=dict(self.spend.usage),
            stall=self.stalled if terminated_by == STALLED else None,
            waited_ms=dict(self.attempts.waited_ms),
        )
        payload = events.loop_complete(result, bool(self.spend.cost_usd or self.spend.usage))
        try:
            self._emit("loop_complete", payload)
        except Exception as exc:  # e.g. the disk is full: still report how the run ended
            note = f"could not record the end of the run: {type(exc).__name__}: {exc}"
            result.error = f"{error}; {note}" if error else note
        return result
