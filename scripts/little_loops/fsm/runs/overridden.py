"""A loop with its run flags applied: -n, --no-llm, --llm-model, --max-cost, --model."""

from __future__ import annotations

import dataclasses
from typing import Any

from little_loops.fsm.definition.model import FSMLoop
from little_loops.fsm.runs.overrides import RunFlags


def apply_overrides(fsm: FSMLoop, flags: RunFlags) -> FSMLoop:
    """The loop with the flags that change it applied (the loaded loop is not changed)."""
    llm = fsm.llm
    if flags.no_llm:
        llm = dataclasses.replace(llm, enabled=False)
    if flags.llm_model is not None:
        llm = dataclasses.replace(llm, model=flags.llm_model)
    changes: dict[str, Any] = {"llm": llm}
    if flags.max_iterations is not None:
        changes["max_iterations"] = flags.max_iterations
    if flags.max_cost is not None:
        changes["max_cost_usd"] = flags.max_cost
    if flags.model is not None:
        changes.update(with_claude_model(fsm, flags.model))
    return dataclasses.replace(fsm, **changes)


def with_claude_model(fsm: FSMLoop, model: str) -> dict[str, Any]:
    """The `claude` and `states` of *fsm* with *model* as the model of every Claude state."""
    states = {
        name: dataclasses.replace(state, claude={**state.claude, "model": model})
        if state.claude is not None and "model" in state.claude
        else state
        for name, state in fsm.states.items()
    }
    return {"claude": {**fsm.claude, "model": model}, "states": states}
