"""The driver of a run: feeds the stepping core what happened and performs the commands it gives."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from little_loops.fsm.actions.protocol import ActionRunner, RunsActions, as_action_runner
from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.definition.graph.routing import StepOutcome
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.engine import core, events
from little_loops.fsm.engine.config import ExecutorConfig
from little_loops.fsm.engine.core import Position
from little_loops.fsm.engine.events import EventCallback
from little_loops.fsm.engine.kinds.names import TERMINAL_KIND, kind_of
from little_loops.fsm.engine.kinds.registry import STATE_KINDS
from little_loops.fsm.engine.passes import Passes
from little_loops.fsm.engine.records import ExecutionResult, ExecutorSnapshot
from little_loops.fsm.engine.run import Run, Stopping
from little_loops.fsm.engine.subloop import ChildRun
from little_loops.fsm.facts.errors import LoopError
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import HANDOFFS, Outcome, outcome_of
from little_loops.fsm.facts.spend import Spend
from little_loops.fsm.facts.timefmt import iso_now

__all__ = [
    "ActionResult",
    "ActionRunner",
    "DefaultActionRunner",
    "EventCallback",
    "ExecutionResult",
    "ExecutorConfig",
    "ExecutorSnapshot",
    "FSMExecutor",
]


class FSMExecutor:
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
        config: ExecutorConfig | None = None,
        llm_client: Any = None,
        output_dir: Path | None = None,
        sleep: Callable[[float], None] | None = None,
        worktree: Path | None = None,
        stopping: Stopping | None = None,
    ) -> None:
        """*config*: the run's options; the keywords after it are shorthands for its fields.
        *stopping*: the stop flag of the tree a sub-loop's child runs in."""
        given = {"llm_client": llm_client, "output_dir": output_dir, "sleep": sleep}
        given["worktree"] = worktree
        self.config = replace(
            config or ExecutorConfig(), **{k: v for k, v in given.items() if v is not None}
        )
        self.event_callback: EventCallback = event_callback or (lambda _event: None)
        self.action_runner: ActionRunner = (
            DefaultActionRunner() if action_runner is None else as_action_runner(action_runner)
        )
        self.run_parts = Run(
            fsm,
            self.config,
            self._emit,
            self.action_runner,
            stopping or Stopping(),
            self._new_child,
        )

    # -- what callers read ---------------------------------------------------------------

    @property
    def fsm(self) -> FSMLoop:
        return self.run_parts.fsm

    @property
    def current_state(self) -> str:
        return self.run_parts.position.state

    @property
    def passes(self) -> Passes:
        """The run's passes (a copy: the core owns them)."""
        return self.run_parts.position.passes()

    @property
    def captured(self) -> dict[str, Any]:
        return self.run_parts.memory.captured

    @property
    def sessions(self) -> dict[str, str]:
        return self.run_parts.memory.sessions

    def elapsed_ms(self) -> int:
        return self.run_parts.limits.clock.elapsed_ms()

    # -- control -------------------------------------------------------------------------

    def request_shutdown(self, reason: str = Outcome.INTERRUPTED) -> None:
        """Stop as soon as possible: kill the running action and end the run.

        *reason* becomes terminated_by ("interrupted" for Ctrl-C, "stopped" for
        `ll-loop stop` / SIGTERM). Safe to call from a signal handler or another thread.
        """
        self.run_parts.stopping.request(outcome_of(reason))
        self.run_parts.children.stop(reason)
        self.action_runner.cancel(reason)

    def share(self, spend: Spend, parent_remaining_s: float | None) -> None:
        """As a sub-loop's child: count into the parent's *spend*, end within its time."""
        self.run_parts.budget.share(spend)
        self.run_parts.limits.bound(parent_remaining_s)

    # -- snapshot and restore ------------------------------------------------------------

    def snapshot(self) -> ExecutorSnapshot:
        """Everything needed to go on later: the core's position and each rule's slice."""
        return ExecutorSnapshot(**self.dumped())

    def dumped(self) -> dict[str, Any]:
        """The fields of `snapshot()` by name, without making it."""
        fields: dict[str, Any] = {}
        for part in self.dumps():
            fields.update(part)
        return fields

    def dumps(self) -> list[dict[str, Any]]:
        """The fields of `snapshot()` in the slices their owners dump (the position's, then
        each rule's, in their order): a run saves what changed at every event that leaves
        the process, and a slice that did not change is passed over whole."""
        parts = self.run_parts
        return [parts.position.dump(), *[rule.dump() for rule in parts.rules()]]

    def restore(self, snap: ExecutorSnapshot) -> None:
        """Continue from *snap* on the next run(): the saved state runs again from its start."""
        if snap.current_state not in self.fsm.states:
            raise LoopError(
                f"cannot resume: saved state '{snap.current_state}' is not a state of loop "
                f"'{self.fsm.name}' (the loop file changed?)"
            )
        self.run_parts.position = Position.restored(snap)
        for rule in self.run_parts.rules():
            rule.restore(snap)

    # -- the loop ------------------------------------------------------------------------

    def run(self) -> ExecutionResult:
        """Execute from the current state until a terminal state or a limit is reached."""
        parts = self.run_parts
        parts.limits.clock.start()
        if not parts.memory.started_at:
            parts.memory.started_at = iso_now()
        at = parts.position
        start = events.LoopStart(
            loop=self.fsm.name,
            state=at.state,
            max_iterations=self.fsm.max_iterations,
            resumed=parts.limits.clock.elapsed_before_ms > 0 or at.iteration > 0,
        )
        self._emit(Event.LOOP_START, start)
        try:
            return self._drive()
        except LoopError as exc:
            return self._finish(Outcome.ERROR, error=str(exc))
        except Exception as exc:  # a bug must still end the run with its state saved
            return self._finish(Outcome.ERROR, error=f"internal error: {type(exc).__name__}: {exc}")

    def _drive(self) -> ExecutionResult:
        """Step the core and perform each command until one ends the run."""
        parts = self.run_parts
        stop = parts.stopping.asked()
        if stop is not None:
            return self._finish(stop)
        happened: core.Happened = core.Arrived()
        done, parts.memory.resumed_action = parts.memory.resumed_action, None
        stalled = parts.stalls.replayed()
        if stalled is not None:  # resumed after a stall fired: its route, not a new count
            happened = self._routed(stalled)
        elif done is not None:  # resumed after the current state's action finished
            happened = self._run_kind(kind_of(self.fsm.states[self.current_state]), done)
        while True:
            parts.position, command = core.step(
                self.fsm, parts.position, happened, self._readings(happened)
            )
            if isinstance(command, core.Stop):
                return self._finish(command.outcome, error=command.error)
            happened = self._perform(command)

    def _readings(self, happened: core.Happened) -> core.Readings:
        parts = self.run_parts
        clock = parts.limits.clock
        budget = None
        if isinstance(happened, core.Arrived):
            budget = parts.budget.used_up(parts.position.state)
        return core.Readings(
            stopping=parts.stopping.asked(),
            deadline_passed=clock.deadline_passed(),
            remaining_s=clock.remaining_s(),
            budget_error=budget,
        )

    def _perform(self, command: core.Wait | core.Enter | core.Move) -> core.Happened:
        """Do what *command* says; what happened then."""
        parts = self.run_parts
        if isinstance(command, core.Wait):
            parts.wait(command.seconds)
            return core.WaitEnded()
        if isinstance(command, core.Move):
            route = events.Route(
                {
                    "from": command.source,
                    "to": parts.position.state,
                    "verdict": command.verdict,
                    "reason": command.reason,
                }
            )
            parts.memory.left()
            parts.retries.attempts.left()
            parts.stalls.left()
            parts.approval.left()
            parts.pulls.left()
            self._emit(Event.ROUTE, route)
            return core.Arrived()
        if command.kind != TERMINAL_KIND:
            name = parts.position.state
            stalled = parts.stalls.entering(name, command.began)
            if stalled is not None:
                return self._routed(stalled)
            parts.enter()
            parts.commits.before(name, self.fsm.states[name])
        return self._run_kind(command.kind, None)

    def _run_kind(self, kind: str, done: ActionResult | None) -> core.Happened:
        """Run the current state as its *kind* does (its action already ran: *done*)."""
        name = self.current_state
        outcome = STATE_KINDS[kind](self.run_parts, name, self.fsm.states[name], done)
        return core.TerminalDone() if outcome is None else self._routed(outcome)

    def _routed(self, outcome: StepOutcome) -> core.Routed:
        return core.Routed(outcome, self.run_parts.memory.error_detail())

    def _new_child(self, child_fsm: FSMLoop, cwd: Path | None = None) -> ChildRun:
        """An executor for *child_fsm*, sharing the runner, the stop flag and the options;
        its actions run in *cwd* (a sub-loop's worktree), else where this one's do."""

        def forward(event: dict[str, Any]) -> None:
            depth = event.get(events.DEPTH_KEY)
            event[events.DEPTH_KEY] = (depth if isinstance(depth, int) else 0) + 1
            event.setdefault(events.LOOP_KEY, child_fsm.name)
            self.event_callback(event)

        # The options of how actions run and where; the run's own ones (where answers and
        # the stall detector look, the flush before a wait) stay the parent's.
        config = ExecutorConfig(
            llm_client=self.config.llm_client,
            output_dir=self.config.output_dir,
            output_key=self.config.child_key(self.fsm.name, child_fsm.name),
            sleep=self.config.sleep,
            worktree=self.config.worktree,
            cwd=cwd or self.config.cwd,
            workdir=cwd or self.config.cwd or self.config.workdir,
            loops_dir=self.config.loops_dir,
            depth=self.config.depth + 1,
            unready=self.config.unready,  # the preflight checked the sub-loops' agents too
        )
        return FSMExecutor(
            child_fsm,
            event_callback=forward,
            action_runner=self.action_runner,
            config=config,
            stopping=self.run_parts.stopping,  # a stop reaches the whole tree
        )

    def _emit(self, event: Event, data: Mapping[str, object]) -> None:
        self.event_callback(events.stamped(event, data))

    def _finish(self, terminated_by: Outcome, error: str | None = None) -> ExecutionResult:
        parts = self.run_parts
        spend = parts.budget.spend
        result = ExecutionResult(
            final_state=self.current_state,
            iterations=parts.position.iteration,
            terminated_by=terminated_by,
            duration_ms=self.elapsed_ms(),
            captured=parts.memory.captured,
            error=error,
            handoff=parts.memory.continuation if terminated_by in HANDOFFS else None,
            cost_usd=round(spend.cost_usd, 6),
            usage=dict(spend.usage),
            stall=parts.stalls.stalled if terminated_by == Outcome.STALL else None,
            waited_ms=dict(parts.retries.attempts.waited_ms),
            agent_switches=list(parts.fallback.switches),
            limited_agents=dict(parts.fallback.limited),
        )
        payload = events.loop_complete(result, bool(spend.cost_usd or spend.usage))
        try:
            self._emit(Event.LOOP_COMPLETE, payload)
        except Exception as exc:  # e.g. the disk is full: still report how the run ended
            note = f"could not record the end of the run: {type(exc).__name__}: {exc}"
            result.error = f"{error}; {note}" if error else note
        return result
