"""Time limits of a run: action timeouts, idle timeouts, the loop deadline, who spends."""

from __future__ import annotations

from little_loops.fsm.actions import claude_code, shell
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine.limits import (
    RunClock,
    action_timeout,
    idle_timeout,
    spends,
)


def test_action_timeout_defaults_and_the_loop_deadline() -> None:
    assert action_timeout(StateConfig(action="x"), shell.SPEC, None) == 120
    assert action_timeout(StateConfig(action="/p"), claude_code.SPEC, None) == 1800
    assert action_timeout(StateConfig(action="x", timeout=5), shell.SPEC, 2.5) == 2.5
    assert action_timeout(StateConfig(action="x"), shell.SPEC, -1) == 0.001


def test_idle_timeout_of_the_loop_applies_to_shell_only() -> None:
    fsm = FSMLoop(name="t", initial="a", states={}, idle_timeout=30)
    assert idle_timeout(fsm, StateConfig(action="x"), shell.SPEC) == 30
    assert idle_timeout(fsm, StateConfig(action="/p"), claude_code.SPEC) is None
    assert idle_timeout(fsm, StateConfig(action="/p", idle_timeout=200), claude_code.SPEC) == 200


def test_spends_when_claude_is_called() -> None:
    fsm = FSMLoop(name="t", initial="a", states={})
    assert spends(fsm, StateConfig(action="/p"))
    assert not spends(fsm, StateConfig(action="x", next="a"))
    assert not spends(fsm, StateConfig(terminal=True))


def test_the_clock_counts_earlier_sessions() -> None:
    clock = RunClock(None, elapsed_before_ms=1500)
    assert clock.elapsed_ms() == 1500
    assert clock.remaining_s() is None
    assert not clock.deadline_passed()
    clock = RunClock(1.0, elapsed_before_ms=1500)
    clock.start()
    assert clock.deadline_passed()
