"""A learning state's keys (model/learning.py): checked, read into the model, written back."""

from __future__ import annotations

import pytest

from little_loops.fsm.definition.model.learning import LEARNING_STATE_KEYS, LearningConfig, proves
from little_loops.fsm.definition.model.typed import StateConfig


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"targets": ["a"]}, None),
        ({"targets_csv": "${context.targets}", "max_retries_expr": "${context.n}"}, None),
        ({"max_retries": 1}, "needs targets (a list) or targets_csv"),
        ({"targets": []}, "needs targets (a list) or targets_csv"),
        ({"target": ["a"]}, "unknown key target (did you mean targets"),
        ({"targets": ["a"], "max_retries": -1}, "max_retries: expected a whole number >= 0"),
        ("pathlib", "expected a mapping"),
    ],
)
def test_the_learning_block_is_checked(value: object, problem: str | None) -> None:
    found = LEARNING_STATE_KEYS["learning"](value)
    assert (found is None) if problem is None else (problem in str(found)), found


def test_type_is_learning_or_nothing() -> None:
    assert LEARNING_STATE_KEYS["type"]("learning") is None
    assert "did you mean learning" in str(LEARNING_STATE_KEYS["type"]("learnin"))


def test_read_into_the_model_and_written_back() -> None:
    data = {"type": "learning", "learning": {"targets": ["a"], "max_retries": 0}, "on_yes": "d"}
    state = StateConfig.from_dict(data)
    assert state.learning == LearningConfig(targets=["a"], max_retries=0)
    assert proves(state)
    assert state.to_dict()["learning"] == {"targets": ["a"], "max_retries": 0}
    assert not proves(StateConfig(type="learning", action="make"))  # the marker alone
