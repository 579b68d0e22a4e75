"""kinds.kind_of: every state is of exactly one kind, named in the registry."""

from __future__ import annotations

from little_loops.fsm.definition.model.learning import LearningConfig
from little_loops.fsm.definition.model.pr_block import PullRequestConfig
from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine.kinds.names import (
    ACTION_KIND,
    APPROVAL_KIND,
    LEARNING_KIND,
    PR_KIND,
    SUBLOOP_KIND,
    TERMINAL_KIND,
    kind_of,
)


def test_each_state_has_its_kind() -> None:
    assert kind_of(StateConfig(terminal=True, action="echo bye")) == TERMINAL_KIND
    assert kind_of(StateConfig(action="ok?", action_type="approval")) == APPROVAL_KIND
    assert kind_of(StateConfig(loop="child")) == SUBLOOP_KIND
    learning = LearningConfig(targets=["pathlib"])
    assert kind_of(StateConfig(type="learning", learning=learning)) == LEARNING_KIND
    assert kind_of(StateConfig(type="learning", action="make")) == ACTION_KIND  # a marker only
    assert kind_of(StateConfig(action="make")) == ACTION_KIND
    assert kind_of(StateConfig(pr=PullRequestConfig(title="Fix"))) == PR_KIND
    assert kind_of(StateConfig(action="/fix", action_type="prompt")) == ACTION_KIND
