"""The registry of state kinds: the core names a kind (kinds.kind_of), the driver runs it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import import_module
from typing import Protocol

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.graph.routing import StepOutcome
from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine.kinds.names import (
    ACTION_KIND,
    APPROVAL_KIND,
    FANOUT_KIND,
    LEARNING_KIND,
    PR_KIND,
    SUBLOOP_KIND,
    TERMINAL_KIND,
)
from little_loops.fsm.engine.run import Run


class StateKind(Protocol):
    """Run state *name* of a run (its action already ran when *done* is given): the
    outcome to route, or None when the run may end there (a terminal state)."""

    def __call__(
        self, run: Run, name: str, state: StateConfig, done: ActionResult | None
    ) -> StepOutcome | None: ...


# Each kind's module in this folder (its `run_state`), imported the first time a run reaches
# a state of that kind: a run with no approval, sub-loop or learning state loads none of them.
MODULES: dict[str, str] = {
    ACTION_KIND: "action",
    APPROVAL_KIND: "approval",
    SUBLOOP_KIND: "subloop",
    LEARNING_KIND: "learning",
    FANOUT_KIND: "fanout",
    PR_KIND: "pr",
    TERMINAL_KIND: "terminal",
}


class _Kinds(Mapping[str, StateKind]):
    """The kinds' `run_state` by name, each module imported on the first look-up."""

    def __init__(self) -> None:
        self._loaded: dict[str, StateKind] = {}

    def __getitem__(self, kind: str) -> StateKind:
        found = self._loaded.get(kind)
        if found is None:
            module = import_module(f"little_loops.fsm.engine.kinds.{MODULES[kind]}")
            found = self._loaded[kind] = module.run_state
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(MODULES)

    def __len__(self) -> int:
        return len(MODULES)


STATE_KINDS: Mapping[str, StateKind] = _Kinds()
