"""Checkpoint keys (`commit:`, `rollback:`): where they may stand (their rows: commit_keys.py)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from little_loops.fsm.definition.model.commit_keys import ROLLBACK, STATE_KEYS
from little_loops.fsm.definition.model.typed import APPROVAL

KeyPath = tuple[str | int, ...]


def checkpoint_key_problems(state: Mapping[Any, object]) -> Iterator[tuple[KeyPath, str]]:
    """`commit: true` / `rollback: true` on a state that runs nothing of its own to checkpoint."""
    for key in STATE_KEYS:
        if state.get(key) is not True:
            continue
        if state.get("action_type") == APPROVAL:
            yield (key,), "an approval state only asks a question: it changes no files"
        elif state.get("loop") is not None:
            yield (key,), f"a sub-loop state runs its child loop: put {key}: on the child's states"
        elif key == ROLLBACK.name and state.get("terminal") is True:
            yield (
                (key,),
                ("a terminal state ends the run: put rollback: true on a state that leads to it"),
            )
