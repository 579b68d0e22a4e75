"""The terminal state kind: its action runs once (the state entered, not counted in the pass)."""

from __future__ import annotations

from support.engine_parts import Exits, loop, parts

from little_loops.fsm.definition.graph.routing import StepOutcome
from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine.kinds.terminal import run_state
from little_loops.fsm.facts.outcomes import Outcome

BYE = StateConfig(terminal=True, action="echo bye")


def test_its_action_runs_once_and_the_run_may_end_there() -> None:
    runner = Exits()
    run, emitted = parts(loop({"done": BYE}, initial="done"), runner)
    assert run_state(run, "done", BYE, None) is None
    assert runner.calls == ["echo bye"]
    assert emitted.names() == ["state_enter", "action_start", "action_complete"]
    assert run.position.entered
    assert run.position.pass_states == ()


def test_a_stop_during_its_action_is_the_runs_end() -> None:
    run, _ = parts(loop({"done": BYE}, initial="done"))
    run.stopping.request(Outcome.INTERRUPTED)
    assert run_state(run, "done", BYE, None) == StepOutcome(stop=Outcome.INTERRUPTED)
