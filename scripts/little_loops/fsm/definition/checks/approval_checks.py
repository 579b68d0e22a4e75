"""What an approval state (`action_type: approval`) may and must have."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from little_loops.fsm.definition.model.typed import APPROVAL


def approval_problems(state: Mapping[Any, object]) -> Iterator[tuple[tuple[str, ...], str]]:
    """(key path within the state, problem) of each approval rule *state* breaks."""
    if state.get("action_type") != APPROVAL:
        # A sub-loop state takes it when its child is cut off by a limit (kinds/subloop.py).
        if state.get("on_timeout") is not None and state.get("loop") is None:
            yield (
                ("on_timeout",),
                ("only used by an approval state (action_type: approval) or a sub-loop (loop:)"),
            )
        return
    if state.get("action") is None:
        yield (), "an approval state needs action: the question to ask (missing required key)"
    for key in ("evaluate", "capture", "idle_timeout"):
        if state.get(key) is not None:
            yield (key,), "not used by an approval state: the answer is its verdict"
    if state.get("terminal") is True:
        yield ("terminal",), "an approval state cannot be terminal: its answer routes on"
    has_timeout = state.get("timeout") is not None
    if has_timeout and state.get("on_timeout") is None:
        yield ("timeout",), "an approval timeout needs on_timeout: the state to go to then"
    if state.get("on_timeout") is not None and not has_timeout:
        yield ("on_timeout",), "never used: the approval state has no timeout"
