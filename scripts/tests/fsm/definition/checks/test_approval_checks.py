"""What an approval state may and must have (definition/checks/approval_checks.py)."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.definition.checks.approval_checks import approval_problems


def _problems(state: dict[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    return list(approval_problems(state))


def test_a_complete_approval_state_has_no_problem() -> None:
    state = {"action_type": "approval", "action": "Ship it?", "timeout": 60, "on_timeout": "a"}
    assert _problems(state) == []


def test_each_rule_an_approval_state_breaks() -> None:
    state = {"action_type": "approval", "evaluate": {}, "terminal": True, "timeout": 5}
    assert _problems(state) == [
        ((), "an approval state needs action: the question to ask (missing required key)"),
        (("evaluate",), "not used by an approval state: the answer is its verdict"),
        (("terminal",), "an approval state cannot be terminal: its answer routes on"),
        (("timeout",), "an approval timeout needs on_timeout: the state to go to then"),
    ]
    lone = {"action_type": "approval", "action": "ok?", "on_timeout": "a"}
    assert _problems(lone) == [(("on_timeout",), "never used: the approval state has no timeout")]


def test_on_timeout_belongs_to_approval_and_sub_loop_states_only() -> None:
    assert _problems({"action": "x", "on_timeout": "a"}) == [
        (
            ("on_timeout",),
            "only used by an approval state (action_type: approval) or a sub-loop (loop:)",
        )
    ]
    assert _problems({"action": "x", "timeout": 5}) == []
    assert _problems({"loop": "child", "on_timeout": "a"}) == []
