"""The loop's `circuit:` block (little-loops'): a breaker for a step failing the same way."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Self

from little_loops.fsm.definition.model.block_values import block_problem
from little_loops.fsm.definition.model.blocks import Block
from little_loops.fsm.definition.model.key_row import LOOP, Key
from little_loops.fsm.values.value_checks import (
    Check,
    check_with,
    integer,
    mapping,
    optional,
    string,
    string_list,
)

# `on_repeated_failure: abort` ends the run (terminated_by stall); any other word names a state.
ABORT = "abort"
TARGET_KEY = ("circuit", "repeated_failure", "on_repeated_failure")
DEFAULT_WINDOW = 3


@dataclass
class RepeatedFailureConfig(Block):
    """`circuit: {repeated_failure: ...}`: the same (state, exit code, verdict) *window* steps
    in a row (or *recurrent_window* times in all) goes to *on_repeated_failure*."""

    window: int = DEFAULT_WINDOW
    on_repeated_failure: str = ABORT
    progress_paths: list[str] = field(default_factory=list)  # a change to one resets the count
    exclude_paths: list[str] = field(default_factory=list)  # never counted as progress
    recurrent_window: int | None = None


@dataclass
class CircuitConfig(Block):
    """The loop's `circuit:` block."""

    repeated_failure: RepeatedFailureConfig | None = None

    @classmethod
    def read(cls, data: object) -> Self | None:
        """The block of a loop file's `circuit:` value (None when it is not a mapping)."""
        if not isinstance(data, Mapping):
            return None
        inner = data.get("repeated_failure")
        failure = (
            RepeatedFailureConfig.from_dict(dict(inner)) if isinstance(inner, Mapping) else None
        )
        return cls(repeated_failure=failure)

    @property
    def target(self) -> str | None:
        """The state a repeated failure goes to (None: none, or `abort`)."""
        failure = self.repeated_failure
        goes = failure.on_repeated_failure if failure is not None else ABORT
        return None if goes == ABORT else goes

    def to_dict(self) -> dict[str, Any]:
        failure = self.repeated_failure
        return {} if failure is None else {"repeated_failure": failure.to_dict()}


REPEATED_FAILURE_KEYS: dict[str, Check] = {
    "window": integer(1),
    "on_repeated_failure": string,
    "progress_paths": string_list,
    "exclude_paths": string_list,
    "recurrent_window": optional(integer(1)),
}


@check_with({"type": "object", "properties": {"repeated_failure": {"type": "object"}}})
def circuit_block(value: object) -> str | None:
    """`circuit:`: a mapping with `repeated_failure:` (its keys checked)."""
    problem = block_problem(value, {"repeated_failure": optional(mapping)})
    inner = value.get("repeated_failure") if isinstance(value, Mapping) else None
    if problem is None and isinstance(inner, Mapping):
        problem = block_problem(inner, REPEATED_FAILURE_KEYS, "repeated_failure > ")
    return problem


CIRCUIT_CHECK = optional(circuit_block)
KEYS: tuple[Key, ...] = (
    Key(
        "circuit",
        (LOOP,),
        CIRCUIT_CHECK,
        "Breakers (little-loops'): repeated_failure: {window: N, on_repeated_failure: STATE or "
        "abort, recurrent_window, progress_paths, exclude_paths}; the same state, exit code and "
        "verdict N steps in a row goes there (abort: the run ends as a stall).",
        block=CircuitConfig,
    ),
)
