"""`ignore_volatile` with no `same_result` to compare by (definition/checks/stall_checks.py)."""

from __future__ import annotations

from support.engine_parts import loop

from little_loops.fsm.definition.checks.stall_checks import stall_problems
from little_loops.fsm.definition.model.typed import StallConfig, StateConfig


def states(**stalls: StallConfig) -> dict[str, StateConfig]:
    """A looping `work` and `check` (each with its given stall block) and a terminal."""
    return {
        "work": StateConfig(action="make", on_success="check", stall=stalls.get("work")),
        "check": StateConfig(action="test", on_success="work", stall=stalls.get("check")),
        "out": StateConfig(terminal=True),
    }


def test_the_loops_ignore_volatile_with_no_same_result_anywhere_warns() -> None:
    fsm = loop(states(), stall=StallConfig(ignore_volatile=False, max_visits=3))
    [(where, message, severity)] = stall_problems(fsm)
    assert where == ("stall", "ignore_volatile")
    assert severity == "warning"
    assert message == (
        "does nothing: it says how same_result compares outputs, and neither the loop nor "
        "any state sets same_result (add same_result: N, or remove it)"
    )


def test_the_loops_ignore_volatile_is_used_by_its_own_or_a_states_same_result() -> None:
    assert (
        list(stall_problems(loop(states(), stall=StallConfig(same_result=2, ignore_volatile=True))))
        == []
    )
    counted = states(check=StallConfig(same_result=3))
    assert list(stall_problems(loop(counted, stall=StallConfig(ignore_volatile=True)))) == []


def test_a_states_ignore_volatile_with_no_same_result_of_its_own_or_the_loops_warns() -> None:
    idle = StallConfig(ignore_volatile=True, max_visits=2)
    fsm = loop(states(work=idle, check=StallConfig(same_result=2)))
    [(where, message, severity)] = stall_problems(fsm)  # another state's same_result: no help
    assert where == ("states", "work", "stall", "ignore_volatile")
    assert severity == "warning"
    assert "neither the state nor the loop sets same_result" in message


def test_a_states_ignore_volatile_is_used_by_its_own_or_the_loops_same_result() -> None:
    own = StallConfig(same_result=2, ignore_volatile=False)
    assert list(stall_problems(loop(states(work=own)))) == []
    idle = StallConfig(ignore_volatile=False)
    assert list(stall_problems(loop(states(work=idle), stall=StallConfig(same_result=4)))) == []


def test_no_ignore_volatile_no_warning() -> None:
    assert list(stall_problems(loop(states()))) == []
    plain = StallConfig(max_visits=2, no_change_passes=3)
    assert list(stall_problems(loop(states(work=plain), stall=plain))) == []


def test_each_idle_setting_is_named_once() -> None:
    idle = StallConfig(ignore_volatile=True)
    found = [
        where for where, _, _ in stall_problems(loop(states(work=idle, check=idle), stall=idle))
    ]
    assert found == [
        ("stall", "ignore_volatile"),
        ("states", "work", "stall", "ignore_volatile"),
        ("states", "check", "stall", "ignore_volatile"),
    ]
