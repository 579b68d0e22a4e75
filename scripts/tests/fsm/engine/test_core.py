"""The stepping core: what happened in, the next position and a command out (no side effects)."""

from __future__ import annotations

from dataclasses import asdict

from support.engine_parts import loop

from little_loops.fsm.definition.graph.routing import StepOutcome
from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine import core
from little_loops.fsm.engine.core import Position, Readings
from little_loops.fsm.engine.kinds.names import ACTION_KIND, APPROVAL_KIND, TERMINAL_KIND
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.facts.outcomes import Outcome

FSM = loop(
    {
        "work": StateConfig(action="true", on_success="done", on_failure="work", on_error="stuck"),
        "ask": StateConfig(action="ok?", action_type="approval", on_success="done"),
        "done": StateConfig(terminal=True),
        "stuck": StateConfig(terminal=True),
    },
    max_iterations=3,
)
AT_WORK = Position("work", entered=True, iteration=1, pass_states=("work",))


def test_an_action_result_routed_to_a_terminal_moves_there_then_ends_the_run() -> None:
    there, command = core.step(
        FSM, AT_WORK, core.Routed(StepOutcome("done", "success", "on_success")), Readings()
    )
    assert command == core.Move("work", "success", "on_success")
    assert (there.state, there.entered, there.arrived_on_error) == ("done", False, None)
    entered, command = core.step(FSM, there, core.Arrived(), Readings())
    assert command == core.Enter(TERMINAL_KIND, began=False)
    _, command = core.step(FSM, entered, core.TerminalDone(), Readings())
    assert command == core.Stop(Outcome.TERMINAL)


def test_a_terminal_reached_on_the_verdict_error_ends_as_a_failure() -> None:
    routed = core.Routed(StepOutcome("stuck", "error", "on_error"), error="exit 2")
    there, _ = core.step(FSM, AT_WORK, routed, Readings())
    assert there.arrived_on_error == "reached from state 'work' on the verdict error: exit 2"
    _, command = core.step(FSM, there, core.TerminalDone(), Readings())
    assert command == core.Stop(Outcome.TERMINAL_FAILURE, there.arrived_on_error)


def test_coming_back_to_a_state_run_in_this_pass_begins_a_pass_or_stops_at_the_limit() -> None:
    back = Position("work", iteration=1, pass_states=("work",))
    after, command = core.step(FSM, back, core.Arrived(), Readings())
    assert command == core.Enter(ACTION_KIND, began=True)
    assert (after.iteration, after.pass_states) == (2, ())
    full = Position("work", iteration=3, pass_states=("work",))
    assert core.step(FSM, full, core.Arrived(), Readings())[1] == core.Stop(Outcome.MAX_ITERATIONS)


def test_a_backoff_is_a_wait_within_the_time_left_then_the_pass_begins() -> None:
    fsm = loop(FSM.states, backoff=10)
    back = Position("work", iteration=1, pass_states=("work",))
    same, command = core.step(fsm, back, core.Arrived(), Readings(remaining_s=4.0))
    assert (same, command) == (back, core.Wait(4.0))
    after, command = core.step(fsm, back, core.WaitEnded(), Readings())
    assert (after.iteration, command) == (2, core.Enter(ACTION_KIND, began=True))
    stopped = core.step(fsm, back, core.WaitEnded(), Readings(stopping=Outcome.STOPPED))
    assert stopped[1] == core.Stop(Outcome.STOPPED)


def test_readings_stop_the_run_before_it_enters_a_state() -> None:
    at = Position("work", iteration=1, pass_states=())
    budget = Readings(budget_error="spent $2 of $1")
    assert core.step(FSM, at, core.Arrived(), budget)[1] == core.Stop(
        Outcome.BUDGET, "spent $2 of $1"
    )
    assert core.step(FSM, at, core.Arrived(), Readings(stopping=Outcome.INTERRUPTED))[
        1
    ] == core.Stop(Outcome.INTERRUPTED)
    assert core.step(FSM, at, core.Arrived(), Readings(deadline_passed=True))[1] == core.Stop(
        Outcome.TIMEOUT
    )


def test_the_core_names_the_kind_of_the_state_to_enter() -> None:
    at = Position("ask", iteration=1, pass_states=("work",))
    assert core.step(FSM, at, core.Arrived(), Readings())[1] == core.Enter(APPROVAL_KIND, False)


def test_a_route_to_an_undeclared_state_or_nowhere_ends_the_run_with_error() -> None:
    _, command = core.step(FSM, AT_WORK, core.Routed(StepOutcome("nowhere", "success")), Readings())
    assert isinstance(command, core.Stop)
    assert command.outcome == Outcome.ERROR
    assert command.error is not None
    assert "nowhere" in command.error
    _, command = core.step(FSM, AT_WORK, core.Routed(StepOutcome(stop="handoff")), Readings())
    assert command == core.Stop(Outcome.HANDOFF)


def test_a_maintain_terminal_restarts_with_a_new_pass_pending() -> None:
    fsm = loop(FSM.states, maintain=True)
    at = Position("done", iteration=1, pass_states=("work",))
    after, command = core.step(fsm, at, core.TerminalDone(), Readings())
    assert isinstance(command, core.Move)
    assert after.state == "work"
    assert after.pass_pending


def test_the_position_dumps_and_restores_to_an_equal_position() -> None:
    at = Position("work", entered=False, iteration=2, pass_states=("work",), arrived_on_error="x")
    snap = ExecutorSnapshot(**at.dump())
    assert Position.restored(snap) == at
    assert set(at.dump()) <= set(asdict(snap))


def test_a_state_stopped_mid_action_runs_again_within_the_same_pass() -> None:
    snap = ExecutorSnapshot(current_state="work", iteration=2, pass_states=["work"], entered=True)
    assert Position.restored(snap) == Position("work", entered=False, iteration=2)
    assert core.entered(Position("work", iteration=2)).pass_states == ("work",)


def test_a_position_moved_at_a_step_is_the_one_dataclasses_replace_makes() -> None:
    """The core's quick copy of a position (`_moved`) equals `dataclasses.replace`, leaves
    the original as it was, and refuses a field the position does not have."""
    import dataclasses

    import pytest

    at = Position("work", entered=True, iteration=2, pass_states=("a",), steps=5)
    moved = core._moved(at, state="next", entered=False, repeats=1)
    assert moved == dataclasses.replace(at, state="next", entered=False, repeats=1)
    assert (at.state, at.entered, at.repeats) == ("work", True, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        moved.state = "x"  # type: ignore[misc]
    with pytest.raises(TypeError, match="'stat'"):
        core._moved(at, stat="next")
