"""Assemble a compiled FSM from a paradigm's generated states and the spec's loop settings."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.definition.model import FSMLoop
from little_loops.fsm.paradigms.spec import SpecReader, read_loop_settings

# The terminal state most paradigms end in.
DONE = "done"


def build(
    reader: SpecReader,
    paradigm: str,
    name: str,
    initial: str,
    states: dict[str, dict[str, Any]],
    context: dict[str, Any] | None = None,
) -> FSMLoop:
    """Assemble the FSM from generated states plus the spec's loop-level settings."""
    settings = read_loop_settings(reader)
    action_type = settings.pop("action_type", None)
    if action_type is not None:
        for state in states.values():
            if "action" in state:
                state["action_type"] = action_type
    user_context = settings.pop("context", {})
    merged = dict(context or {})
    for key, value in user_context.items():
        if key in merged:
            raise reader.error(f"'{key}' is set by the {paradigm} compiler", "context")
        merged[key] = value
    data: dict[str, Any] = {"name": name, "initial": initial, "paradigm": paradigm}
    if merged:
        data["context"] = merged
    data["states"] = states
    data.update(settings)
    return FSMLoop.from_dict(data)
