"""A loop with its run flags applied: -n, --no-llm, --llm-model, --max-cost, --model."""

from __future__ import annotations

import dataclasses
from typing import Any

from little_loops.fsm.actions.registry import BY_OPTIONS_KEY
from little_loops.fsm.actions.sandbox_key import BWRAP
from little_loops.fsm.actions.sandbox_key import read as read_sandbox
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.runs.overrides import RunFlags

# The option `--model` sets, in each kind's option table that has it.
MODEL_OPTION = "model"


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
        changes.update(with_model(fsm, flags.model))
    if flags.sandbox is not None:
        return with_sandbox(dataclasses.replace(fsm, **changes), on=flags.sandbox)
    return dataclasses.replace(fsm, **changes)


def with_sandbox(fsm: FSMLoop, *, on: bool) -> FSMLoop:
    """*fsm* (and its sub-loops) with `--sandbox` (*on*: every step confined, bubblewrap
    where the loop names no sandbox; a `none` of a state or agent no longer counts) or
    `--no-sandbox` (no step confined, whatever the files say) applied."""

    def kept(value: object) -> object:
        return value if on and read_sandbox(value) is not None else None

    loop_value = (kept(fsm.sandbox) or BWRAP) if on else None
    return dataclasses.replace(
        fsm,
        sandbox=loop_value,
        states={n: dataclasses.replace(s, sandbox=kept(s.sandbox)) for n, s in fsm.states.items()},
        agents={n: dataclasses.replace(a, sandbox=kept(a.sandbox)) for n, a in fsm.agents.items()},
        project_agents={
            n: dataclasses.replace(a, sandbox=kept(a.sandbox))
            for n, a in fsm.project_agents.items()
        },
        children={name: with_sandbox(child, on=on) for name, child in fsm.children.items()},
    )


def with_model(fsm: FSMLoop, model: str) -> dict[str, Any]:
    """The `options` and `states` of *fsm* with *model* as the model of every action of a
    kind whose option table has a model: the loop's block of each such kind, and each
    state's own block that names a model."""
    keys = [key for key, spec in BY_OPTIONS_KEY.items() if MODEL_OPTION in spec.options]
    states = {}
    for name, state in fsm.states.items():
        own = {
            key: {**block, MODEL_OPTION: model}
            for key, block in state.options.items()
            if key in keys and MODEL_OPTION in block
        }
        states[name] = (
            dataclasses.replace(state, options={**state.options, **own}) if own else state
        )
    options = {**fsm.options, **{key: {**fsm.options[key], MODEL_OPTION: model} for key in keys}}
    return {"options": options, "states": states}
