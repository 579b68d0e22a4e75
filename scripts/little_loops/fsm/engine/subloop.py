"""A sub-loop state (`loop:`): run the child loop in-process, within the parent's limits."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from little_loops.fsm.actions.protocol import ActionRunner
from little_loops.fsm.definition.model import (
    OUTCOME_FAILURE,
    OUTCOME_SUCCESS,
    FSMLoop,
    StateConfig,
)
from little_loops.fsm.definition.parameters import check_value
from little_loops.fsm.definition.routing import StepOutcome, follow_route
from little_loops.fsm.definition.subloop_checks import INTERPOLATION_START
from little_loops.fsm.engine import events
from little_loops.fsm.engine.limits import RunClock
from little_loops.fsm.engine.records import ExecutionResult, ExecutorSnapshot
from little_loops.fsm.engine.step import StateWork
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.errors import InterpolationError, LoopDefinitionError
from little_loops.fsm.facts.outcomes import Outcome
from little_loops.fsm.facts.spend import Spend
from little_loops.fsm.values.interpolation import (
    InterpolationContext,
    interpolate,
    interpolate_value,
    literal,
)

# How a child run's end reaches the parent: these stop the whole tree, with the same
# terminated_by at the top; any other end but a terminal state is the verdict error.
TREE_STOPS: tuple[str, ...] = (
    Outcome.BUDGET,
    Outcome.INTERRUPTED,
    Outcome.STOPPED,
    Outcome.HANDOFF,
    Outcome.AWAITING_APPROVAL,
)
SUBLOOP_EVALUATOR = "loop"  # the evaluator type the sub-loop's `evaluate` event names


def end_verdict(child: FSMLoop, terminated_by: str, final_state: str) -> str:
    """A sub-loop state's verdict when its *child* ended so: success at a terminal state,
    failure at one with `outcome: failure` or one reached on the verdict error, else error
    (a limit or an error)."""
    if terminated_by not in (Outcome.TERMINAL, Outcome.TERMINAL_FAILURE):
        return ERROR_VERDICT
    final = child.states.get(final_state)
    failed = terminated_by == Outcome.TERMINAL_FAILURE or (
        final is not None and final.outcome == OUTCOME_FAILURE
    )
    return OUTCOME_FAILURE if failed else OUTCOME_SUCCESS


def child_context(
    child: FSMLoop, state_name: str, given: Mapping[str, Any], ctx: InterpolationContext
) -> dict[str, Any]:
    """The child's context: its own, with `with:` interpolated and checked against its
    parameters (defaults for the rest); raises LoopDefinitionError naming the key."""
    out = dict(child.context)
    for key, raw in given.items():
        text = isinstance(raw, str) and INTERPOLATION_START in raw
        nested = isinstance(raw, list | Mapping)  # its items are filled in here too
        value = interpolate(raw, ctx) if text else interpolate_value(raw, ctx) if nested else raw
        spec = child.parameters.get(key)
        try:
            value = value if spec is None else check_value(spec, value, text=text)
        except ValueError as exc:
            raise LoopDefinitionError(
                f"state '{state_name}' > with > {key}: parameter of loop '{child.name}': {exc}"
            ) from None
        # A filled-in value is data (it may be a command's or Claude's output): the child
        # must not fill in a `${...}` in it, which could read `${env.TOKEN}`.
        out[key] = literal(value) if text or nested else value
    for name, spec in child.parameters.items():
        if name not in out:
            if spec.required:
                raise LoopDefinitionError(
                    f"state '{state_name}': missing parameter '{name}' of loop '{child.name}'"
                )
            out[name] = spec.run_default()
    return out


class SubLoops:
    """The sub-loop half of FSMExecutor (the fields it uses are declared here)."""

    fsm: FSMLoop
    current_state: str
    captured: dict[str, Any]
    prev_result: dict[str, Any] | None
    last_result: dict[str, Any] | None
    spend: Spend
    clock: RunClock
    event_callback: Callable[[dict[str, Any]], None]
    child: Any  # the running child executor (an FSMExecutor), or None
    pending_child: dict[str, Any] | None
    _shutdown: threading.Event
    _sleep: Callable[[float], None] | None
    action_runner: ActionRunner
    work: StateWork
    worktree: Path | None  # a worktree run's: the child commits and rolls back there too

    _context: Callable[[], InterpolationContext]
    _emit: Callable[[str, Mapping[str, object]], None]
    _error_outcome: Callable[[StateConfig, InterpolationContext, str], StepOutcome]

    def child_snapshot(self) -> dict[str, Any] | None:
        """The running child's snapshot (with its own child), saved in this one's `child`."""
        if self.child is None:
            return None
        return {"loop": self.child.fsm.name, **dataclasses.asdict(self.child.snapshot())}

    def request_child_shutdown(self, reason: str) -> None:
        if self.child is not None:
            self.child.request_shutdown(reason)

    def _run_subloop(self, name: str, state: StateConfig) -> StepOutcome:
        """Run the child loop of sub-loop state *name*; its end is the verdict."""
        ctx = self._context()
        base = self.fsm.children.get(name)
        if base is None:
            msg = f"sub-loop '{state.loop}' of state '{name}' was not loaded (validate the file)"
            return self._error_outcome(state, ctx, msg)
        try:
            context = child_context(base, name, state.with_ or {}, ctx)
        except (InterpolationError, LoopDefinitionError) as exc:
            return self._error_outcome(state, ctx, str(exc))
        child_fsm = dataclasses.replace(base, context=context)
        limits = [x for x in (base.max_cost_usd, self.fsm.max_cost_usd) if x is not None]
        child_fsm.max_cost_usd = min(limits) if limits else None
        child = self._new_child(child_fsm)
        saved, self.pending_child = self.pending_child, None
        if saved is not None and saved.get("loop") == base.name:
            fields = {f.name for f in dataclasses.fields(ExecutorSnapshot)}
            child.restore(ExecutorSnapshot(**{k: v for k, v in saved.items() if k in fields}))
        child.spend = self.spend  # one budget and one total for the whole tree
        # The child's own timeout counts its time before a resume too (as a run's does);
        # the parent's bounds what is left of it from now on.
        remaining = self.clock.remaining_s()
        before = child.clock.elapsed_before_ms
        bounds = [child_fsm.timeout, None if remaining is None else remaining + before / 1000]
        limits = [float(x) for x in bounds if x is not None]
        # (a timeout of 0 would read as none: a deadline already passed is a millisecond)
        bound = max(min(limits), 0.001) if limits else None
        child.clock = RunClock(bound, elapsed_before_ms=before)
        self.child = child
        spent_before = self.spend.cost_usd
        try:
            result: ExecutionResult = child.run()
        finally:
            self.child = None
        if self._stops_tree(result.terminated_by):
            # The tree ends here: the run's last snapshot keeps the child where it stopped,
            # so a resume goes on inside it (a finished child's verdict is routed instead).
            self.child = child
        return self._child_verdict(name, state, child_fsm, result, spent_before)

    def _stops_tree(self, how: str) -> bool:
        """True when the child's end *how* ends this run too: a stop, or a limit of this
        run (its budget, its deadline); the child's own limits are its verdict `error`."""
        if how == Outcome.BUDGET:
            limit = self.fsm.max_cost_usd
            return limit is not None and self.spend.reached(limit)
        if how == Outcome.TIMEOUT:
            return self.clock.deadline_passed()
        return how in TREE_STOPS

    def _new_child(self, child_fsm: FSMLoop) -> Any:
        """An executor of the same kind for *child_fsm*, sharing runner, stop and spend."""
        parent = self

        def forward(event: dict[str, Any]) -> None:
            depth = event.get(events.DEPTH_KEY)
            event[events.DEPTH_KEY] = (depth if isinstance(depth, int) else 0) + 1
            event.setdefault(events.LOOP_KEY, child_fsm.name)
            parent.event_callback(event)

        child = type(self)(  # type: ignore[call-arg]
            child_fsm,
            event_callback=forward,
            action_runner=self.action_runner,
            llm_client=self.work.llm_client,
            output_dir=self.work.output_dir,
            sleep=self._sleep,
            worktree=self.worktree,
        )
        child._shutdown = self._shutdown  # a stop reaches the whole tree
        # In a worktree run (files `<name>@<id>`) its outputs carry the id too, so those of
        # parallel runs of one parent never meet.
        key = self.work.output_key
        if key.startswith(self.fsm.name) and key != self.fsm.name:
            child.work.output_key = child_fsm.name + key[len(self.fsm.name) :]
        return child

    def _child_verdict(
        self,
        name: str,
        state: StateConfig,
        child_fsm: FSMLoop,
        result: ExecutionResult,
        spent_before: float,
    ) -> StepOutcome:
        how = result.terminated_by
        if self._stops_tree(how):
            return StepOutcome(stop=how, error=result.error)
        verdict = end_verdict(child_fsm, how, result.final_state)
        details: dict[str, Any] = {
            "loop": child_fsm.name,
            "final_state": result.final_state,
            "terminated_by": how,
            "captured": dict(result.captured),
        }
        if result.error or verdict == ERROR_VERDICT:  # a limit has no error of its own
            details["error"] = result.error or f"loop '{child_fsm.name}' ended by {how}"
        self.last_result = {"verdict": verdict, "details": details}
        self.prev_result = {"state": name, "output": result.final_state, "verdict": verdict}
        if state.capture:
            self.captured[state.capture] = {"output": result.final_state, **details}
        judged = events.Evaluation(state=name, type=SUBLOOP_EVALUATOR, verdict=verdict)
        judged["final_state"] = result.final_state  # type: ignore[typeddict-unknown-key]
        if result.error:
            judged["error"] = result.error
        if self.spend.cost_usd > spent_before:  # the child's spend, on this state
            judged["cost_usd"] = round(self.spend.cost_usd - spent_before, 6)
        self._emit("evaluate", judged)
        outcome = follow_route(state, verdict, self._context(), self.current_state)
        if outcome.target is None and verdict == ERROR_VERDICT:
            outcome.error = details["error"]
        return outcome
