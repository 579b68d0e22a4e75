"""Loop builders and scripted runners shared by tests that run an FSMExecutor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from little_loops.fsm.actions.request import ActionRequest
from little_loops.fsm.actions.runners import ActionResult, DefaultActionRunner
from little_loops.fsm.definition.model.typed import FSMLoop, LLMConfig, StateConfig
from little_loops.fsm.engine.executor import ExecutionResult, FSMExecutor

# `work` exits 2 (the verdict error) and routes it to `stuck`, which says nothing of outcome:
# the run ends there as a failure (exit 7), `done` would be a success.
# A loop named `one` whose one step runs `true` and ends (LoopProject.write dedents it).
ONE_STEP = """\
    name: one
    initial: a
    states:
      a:
        action: "true"
        next: done
      done:
        terminal: true
"""

ERROR_TO_TERMINAL = """\
    name: gives-up
    initial: work
    states:
      work:
        action: exit 2
        on_success: done
        on_error: stuck
      stuck:
        terminal: true
      done:
        terminal: true
"""


class PayingRunner:
    """A runner that records actions; each Claude action costs *cost* dollars."""

    def __init__(self, cost: float, exit_code: int) -> None:
        self.cost = cost
        self.exit_code = exit_code
        self.calls: list[str] = []

    def run(self, request: ActionRequest) -> ActionResult:
        action = request.action
        self.calls.append(action)
        out = ActionResult("x", "", self.exit_code, 1)
        out.cost_usd = self.cost if request.kind == "claude" else None
        return out


def prompt_loop(state_idle_timeout: float | None = None, **kw: Any) -> FSMLoop:
    """A loop of repeated prompt actions that never succeeds on its own."""
    return FSMLoop(
        name="spender",
        initial="fix",
        states={
            "fix": StateConfig(
                action="Fix it",
                action_type="prompt",
                on_success="fix",
                on_failure="fix",
                idle_timeout=state_idle_timeout,
            ),
            "done": StateConfig(terminal=True),
        },
        llm=LLMConfig(enabled=False),
        **kw,
    )


def run_loop(fsm: FSMLoop, cwd: Path) -> tuple[ExecutionResult, list[dict[str, Any]]]:
    """Run *fsm* with real processes (bash, `claude` from PATH) in *cwd*: result and events."""
    events: list[dict[str, Any]] = []
    runner = DefaultActionRunner(cwd=cwd)
    result = FSMExecutor(fsm, event_callback=events.append, action_runner=runner).run()
    return result, events


def first_action_complete(fsm: FSMLoop, project: Path) -> dict[str, Any]:
    """Run *fsm* with real processes in *project*; its first `action_complete` event."""
    _, events = run_loop(fsm, project)
    return next(e for e in events if e["event"] == "action_complete")
