"""One run's parts as the state kinds see them: rules in their order, memory, narrow edges."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from little_loops.fsm.actions.protocol import ActionRunner
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.engine import events
from little_loops.fsm.engine.config import ExecutorConfig
from little_loops.fsm.engine.core import Position, entered
from little_loops.fsm.engine.memory import Memory
from little_loops.fsm.engine.rules.abstentions import Abstentions
from little_loops.fsm.engine.rules.approval import Approval
from little_loops.fsm.engine.rules.budget import Budget
from little_loops.fsm.engine.rules.commits import Commits
from little_loops.fsm.engine.rules.fallback import Fallback
from little_loops.fsm.engine.rules.limits import Limits
from little_loops.fsm.engine.rules.pulls import PullRequests
from little_loops.fsm.engine.rules.ratelimits import RateLimits
from little_loops.fsm.engine.rules.retries import Retries
from little_loops.fsm.engine.rules.rule import Rule
from little_loops.fsm.engine.rules.stalls import Stalls
from little_loops.fsm.engine.step import StateWork
from little_loops.fsm.engine.subloop import Children, ChildRun
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Outcome
from little_loops.fsm.values.interpolation import InterpolationContext

Emit = Callable[[Event, Mapping[str, object]], None]


class NewChild(Protocol):
    """Makes the executor of a sub-loop state's child (its actions in *cwd*, if given)."""

    def __call__(self, child_fsm: FSMLoop, cwd: Path | None = None) -> ChildRun: ...


class Stopping:
    """A stop asked for (Ctrl-C, `ll-loop stop`): one flag for a run and its children."""

    def __init__(self) -> None:
        self.flag = threading.Event()
        self.reason: Outcome = Outcome.INTERRUPTED

    def request(self, reason: Outcome) -> None:
        self.reason = reason
        self.flag.set()

    def asked(self) -> Outcome | None:
        """The stop's outcome once one was asked for, else None."""
        return self.reason if self.flag.is_set() else None


@dataclass
class Run:
    """The parts of one run. `rules()` is the one declared order they are dumped and
    restored in; each owns its fields of the snapshot (engine/records.ExecutorSnapshot)."""

    fsm: FSMLoop
    config: ExecutorConfig
    emit: Emit
    runner: ActionRunner
    stopping: Stopping
    new_child: NewChild  # an executor for a sub-loop state's child
    position: Position = field(init=False)
    memory: Memory = field(default_factory=Memory)
    # The pre-patch check's verdict of each patch seen (engine/prepatch.py): not run twice.
    prepatched: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        fsm, emit = self.fsm, self.emit
        self.position = Position(fsm.initial)
        self.work = StateWork(fsm, self.runner, emit, self.config)
        self.limits = Limits(fsm.timeout)
        self.budget = Budget(fsm)
        self.retries = Retries(fsm, emit)
        self.ratelimits = RateLimits(self.retries)
        self.fallback = Fallback(self.config.unready)
        self.stalls = Stalls(fsm, emit, cwd=self.config.stall_cwd)
        self.abstentions = Abstentions(fsm)
        self.approval = Approval(
            self.config.answers, wait=self.config.wait_approval, kept=self.config.answer_kept
        )
        self.commits = Commits(fsm, emit, self.config.worktree)
        self.children = Children(fsm)
        self.pulls = PullRequests()

    def rules(self) -> tuple[Rule, ...]:
        """The parts that own a slice of the snapshot, in their one order."""
        return (
            self.memory,
            self.limits,
            self.budget,
            self.retries,
            self.ratelimits,
            self.fallback,
            self.stalls,
            self.abstentions,
            self.approval,
            self.commits,
            self.children,
            self.pulls,
        )

    def context(self) -> InterpolationContext:
        """What `${...}` reads now."""
        memory = self.memory
        return InterpolationContext(
            context=self.fsm.context,
            captured=memory.captured,
            prev=memory.prev_result,
            result=memory.last_result,
            state_name=self.position.state,
            iteration=self.position.iteration,
            loop_name=self.fsm.name,
            started_at=memory.started_at,
            elapsed_ms=self.limits.clock.elapsed_ms(),
        )

    def wait(self, seconds: float) -> None:
        """Wait *seconds* (the log is flushed first); a stop ends the wait at once."""
        if self.config.before_wait is not None:
            self.config.before_wait()
        if self.config.sleep is not None:
            self.config.sleep(seconds)
        else:
            self.stopping.flag.wait(seconds)

    def enter(self, *, counted: bool = True) -> None:
        """Enter the current state: its entry (and action) begins now; *counted*: it is one
        of this pass's states (a terminal state's action is not)."""
        at = self.position
        self.position = entered(at) if counted else replace(at, entered=True)
        payload = events.StateEnter(state=self.position.state, iteration=self.position.iteration)
        self.emit(Event.STATE_ENTER, payload)
