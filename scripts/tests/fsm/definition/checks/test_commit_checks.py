"""Checkpoint keys: where commit/rollback may stand (definition/checks/commit_checks.py)."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.definition.checks.commit_checks import checkpoint_key_problems


def _problems(state: dict[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    return list(checkpoint_key_problems(state))


def test_commit_and_rollback_on_a_state_that_changes_nothing_of_its_own() -> None:
    assert _problems({"action": "x", "commit": True, "rollback": True}) == []
    assert _problems({"action_type": "approval", "commit": True}) == [
        (("commit",), "an approval state only asks a question: it changes no files")
    ]
    assert _problems({"loop": "child", "rollback": True}) == [
        (("rollback",), "a sub-loop state runs its child loop: put rollback: on the child's states")
    ]
    assert _problems({"terminal": True, "rollback": True}) == [
        (
            ("rollback",),
            "a terminal state ends the run: put rollback: true on a state that leads to it",
        )
    ]
    assert _problems({"terminal": True, "commit": True}) == []
