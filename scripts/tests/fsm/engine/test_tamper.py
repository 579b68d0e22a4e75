"""The tamper guard's parts: what a test file is, whose policy, when it passes, where it goes."""

from __future__ import annotations

import pytest

from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine.tamper import Report, failure_target, is_test_file, policy_of


@pytest.mark.parametrize(
    ("path", "test"),
    [
        ("tests/test_a.py", True),
        ("pkg/a_test.py", True),
        ("conftest.py", True),
        ("web/app.spec.ts", True),
        ("src/__tests__/x.js", True),
        ("pytest.ini", True),
        ("pyproject.toml", True),
        ("src/app.py", False),
        ("docs/testing.md", False),
    ],
)
def test_what_a_test_file_is(path: str, test: bool) -> None:
    assert is_test_file(path) is test


def test_the_states_policy_wins_over_the_loops_and_only_actions_are_guarded() -> None:
    fsm = FSMLoop("x", "a", {}, tamper_guard="fail")
    assert policy_of(fsm, StateConfig(action="true")) == "fail"
    assert policy_of(fsm, StateConfig(action="true", tamper_guard="allow")) == "allow"
    assert policy_of(fsm, StateConfig(terminal=True)) is None


def test_when_a_report_passes() -> None:
    changed = [{"path": "tests/t.py", "kind": "modified"}]
    assert Report("s", "fail").passed
    assert not Report("s", "fail", changed).passed
    assert Report("s", "allow", changed).passed
    assert Report("s", "revert", changed, ["tests/t.py"]).passed
    assert not Report("s", "revert", changed).passed
    assert Report("s", "fail", changed).to_dict()["findings"] == changed


def test_a_failure_goes_to_a_failure_terminal() -> None:
    states = {
        "work": StateConfig(action="x", on_failure="stuck"),
        "stuck": StateConfig(terminal=True, outcome="failure"),
        "bad": StateConfig(terminal=True, outcome="failure"),
        "retry": StateConfig(action="y", on_failure="work"),
    }
    fsm = FSMLoop("x", "work", states)
    assert failure_target(fsm, states["work"]) == "stuck"
    assert failure_target(fsm, states["retry"]) == "bad"
    assert failure_target(FSMLoop("x", "work", {"work": states["retry"]}), states["retry"]) is None
