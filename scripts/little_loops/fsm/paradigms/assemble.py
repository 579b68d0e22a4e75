"""Assemble a compiled FSM from a paradigm's generated states and the spec's loop settings."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.definition.checks.key_checks import check_loop_settings
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.facts.errors import LoopValidationError
from little_loops.fsm.paradigms.spec import SETTING_KEYS, SpecReader

# The terminal state most paradigms end in.
DONE = "done"


def loop_settings(reader: SpecReader, name: str) -> dict[str, Any]:
    """The loop settings the spec carries, checked as an FSM file's are checked.

    Raises LoopValidationError, whose problems read word for word as the same mistake
    in an FSM file (`loop 'x' > max_iterations: expected a whole number >= 1, got 0`).
    """
    settings = {key: value for key, value in reader.data.items() if key in SETTING_KEYS}
    problems = check_loop_settings({**settings, "name": name}, SETTING_KEYS)
    if problems:
        raise LoopValidationError(problems)
    return settings


def build(
    reader: SpecReader,
    paradigm: str,
    name: str,
    initial: str,
    states: dict[str, dict[str, Any]],
    settings: dict[str, Any],
    context: dict[str, Any] | None = None,
) -> FSMLoop:
    """Assemble the FSM from generated states plus the spec's checked loop settings."""
    settings = dict(settings)
    action_type = settings.pop("action_type", None)
    if action_type is not None:
        for state in states.values():
            if "action" in state:
                state["action_type"] = action_type
    user_context = settings.pop("context", None) or {}
    merged = dict(context or {})
    for key in settings.get("parameters") or {}:
        if key in merged:
            raise reader.error(f"'{key}' is set by the {paradigm} compiler", "parameters")
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
