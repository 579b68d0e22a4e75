"""Build one run's parts (engine/run.Run) around a scripted runner, for tests of kinds and rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from little_loops.fsm.actions.protocol import as_action_runner
from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.definition.model.typed import FSMLoop, LLMConfig, StateConfig
from little_loops.fsm.engine.config import ExecutorConfig
from little_loops.fsm.engine.run import Run, Stopping
from little_loops.fsm.engine.subloop import ChildRun


@dataclass
class Exits:
    """A runner whose actions exit with the codes given per action text (0 otherwise)."""

    codes: dict[str, list[int]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    def run(self, request: ActionRequest) -> ActionResult:
        action = request.action
        self.calls.append(action)
        queue = self.codes.get(action)
        code = queue.pop(0) if queue else 0
        return ActionResult(f"out of {action}", "", code, 1)


@dataclass
class Recorded:
    """The events a run's parts emitted, as (name, payload)."""

    seen: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def __call__(self, event: str, payload: Mapping[str, object]) -> None:
        self.seen.append((str(event), dict(payload)))

    def names(self) -> list[str]:
        return [name for name, _ in self.seen]


def no_children(fsm: FSMLoop) -> ChildRun:
    raise AssertionError(f"no child expected: {fsm.name}")


def loop(states: dict[str, StateConfig], initial: str = "work", **kw: Any) -> FSMLoop:
    """A loop of *states* (the LLM judge off)."""
    return FSMLoop(name="t", initial=initial, states=states, llm=LLMConfig(enabled=False), **kw)


def parts(
    fsm: FSMLoop,
    runner: Any = None,
    config: ExecutorConfig | None = None,
    new_child: Any = no_children,
) -> tuple[Run, Recorded]:
    """The parts of a run of *fsm* and the events they emit."""
    emitted = Recorded()
    run = Run(
        fsm,
        config or ExecutorConfig(sleep=lambda _s: None),
        emitted,
        as_action_runner(runner or Exits()),
        Stopping(),
        new_child,
    )
    return run, emitted
