"""A loop with its run flags applied: the loaded loop unchanged, --model on every Claude state."""

from __future__ import annotations

from little_loops.fsm.definition.model.typed import FSMLoop, LLMConfig, StateConfig
from little_loops.fsm.runs.overridden import apply_overrides
from little_loops.fsm.runs.overrides import RunFlags as RunOptions


def _loop() -> FSMLoop:
    return FSMLoop(name="x", initial="a", states={"a": StateConfig(terminal=True)})


def test_apply_overrides_leaves_the_loop_unchanged() -> None:
    fsm = _loop()
    changed = apply_overrides(
        fsm, RunOptions(max_iterations=3, no_llm=True, llm_model="claude-test-model")
    )
    assert (changed.max_iterations, changed.llm) == (
        3,
        LLMConfig(enabled=False, model="claude-test-model"),
    )
    assert (fsm.max_iterations, fsm.llm) == (50, LLMConfig())
    assert apply_overrides(fsm, RunOptions()) == fsm


def test_model_flag_is_the_model_of_every_claude_state() -> None:
    fsm = FSMLoop.from_dict(
        {
            "name": "x",
            "initial": "a",
            "claude": {"model": "loop-model", "tools": ["Read"]},
            "states": {
                "a": {"action": "A", "action_type": "prompt", "claude": {"model": "own"}},
                "b": {"action": "B", "action_type": "prompt", "claude": {"effort": "low"}},
                "c": {"action": "C", "action_type": "prompt"},
            },
        }
    )
    changed = apply_overrides(fsm, RunOptions(model="cli-model"))
    assert changed.claude == {"model": "cli-model", "tools": ["Read"]}
    assert changed.states["a"].claude == {"model": "cli-model"}
    assert changed.states["b"].claude == {"effort": "low"}  # the loop's model applies
    assert changed.states["c"].claude is None
    assert fsm.states["a"].claude == {"model": "own"}  # the loaded loop is not changed
