"""A learning state's `learning:` block as a dataclass (loaded when a file has one)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Its keys, their checks and docs (learning_keys.py, which validate reads without the
# dataclasses below), named here too.
from little_loops.fsm.definition.model.learning_keys import BLOCKED_VERDICT as BLOCKED_VERDICT
from little_loops.fsm.definition.model.learning_keys import (
    DEFAULT_LEARNING_RETRIES as DEFAULT_LEARNING_RETRIES,
)
from little_loops.fsm.definition.model.learning_keys import KEYS as KEYS
from little_loops.fsm.definition.model.learning_keys import LEARNING_KEYS as LEARNING_KEYS
from little_loops.fsm.definition.model.learning_keys import (
    LEARNING_STATE_KEYS as LEARNING_STATE_KEYS,
)
from little_loops.fsm.definition.model.learning_keys import LEARNING_TYPE as LEARNING_TYPE
from little_loops.fsm.definition.model.learning_keys import STATE_TYPES as STATE_TYPES
from little_loops.fsm.definition.model.learning_keys import proves as proves


@dataclass
class LearningConfig:
    """What a learning state proves: its targets (a list, or `${...}` text split at commas
    when the state runs) and how many times it may run `/ll:explore-api` for each."""

    targets: list[str] = field(default_factory=list)
    targets_csv: str | None = None
    max_retries: int = DEFAULT_LEARNING_RETRIES
    max_retries_expr: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LearningConfig:
        retries = data.get("max_retries")
        return cls(
            targets=[str(t) for t in data.get("targets") or []],
            targets_csv=data.get("targets_csv") or None,
            max_retries=DEFAULT_LEARNING_RETRIES if retries is None else int(retries),
            max_retries_expr=data.get("max_retries_expr") or None,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.targets:
            out["targets"] = list(self.targets)
        if self.targets_csv is not None:
            out["targets_csv"] = self.targets_csv
        if self.max_retries != DEFAULT_LEARNING_RETRIES:
            out["max_retries"] = self.max_retries
        if self.max_retries_expr is not None:
            out["max_retries_expr"] = self.max_retries_expr
        return out
