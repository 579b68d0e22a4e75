"""The loop's `circuit:` block as dataclasses (loaded when a file has one)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Self

from little_loops.fsm.definition.model.blocks import Block

# Its keys, their checks and docs (circuit_keys.py, which validate reads without the
# dataclasses below), named here too.
from little_loops.fsm.definition.model.circuit_keys import ABORT as ABORT
from little_loops.fsm.definition.model.circuit_keys import CIRCUIT_CHECK as CIRCUIT_CHECK
from little_loops.fsm.definition.model.circuit_keys import DEFAULT_WINDOW as DEFAULT_WINDOW
from little_loops.fsm.definition.model.circuit_keys import KEYS as KEYS
from little_loops.fsm.definition.model.circuit_keys import (
    REPEATED_FAILURE_KEYS as REPEATED_FAILURE_KEYS,
)
from little_loops.fsm.definition.model.circuit_keys import TARGET_KEY as TARGET_KEY
from little_loops.fsm.definition.model.circuit_keys import circuit_block as circuit_block


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
