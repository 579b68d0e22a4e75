"""A learning state (`type: learning`, `learning:`): its settings, their keys and checks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from little_loops.fsm.definition.model.block_values import block_problem
from little_loops.fsm.definition.model.key_row import STATE, Key, checks_at
from little_loops.fsm.values.value_checks import (
    Check,
    integer,
    one_of,
    optional,
    string,
    string_list,
)

# `type:` of a state; `learning` is the one kind little-loops names there. With a
# `learning:` block the state proves its targets; alone it only exempts the state from a
# throttle's hard_max (as in little-loops).
LEARNING_TYPE = "learning"
STATE_TYPES: tuple[str, ...] = (LEARNING_TYPE,)
DEFAULT_LEARNING_RETRIES = 2  # `/ll:explore-api` runs per target before the state is blocked
# The verdict of a learning state whose target was refuted or could not be proven: routed
# by `on_blocked`, else (as in little-loops) by `on_failure` / `on_no`.
BLOCKED_VERDICT = "blocked"

LEARNING_KEYS: dict[str, Check] = {
    "targets": optional(string_list),
    "targets_csv": optional(string),
    "max_retries": optional(integer(0)),
    "max_retries_expr": optional(string),
}


def _learning_problem(value: object) -> str | None:
    if value is None:
        return None
    problem = block_problem(value, LEARNING_KEYS)
    if problem is not None or not isinstance(value, Mapping):
        return problem
    if not value.get("targets") and not value.get("targets_csv"):
        return "needs targets (a list) or targets_csv (a comma-separated string)"
    return None


_LEARNING_CHECK = Check(
    _learning_problem,
    {
        "type": ["object", "null"],
        "properties": {key: check.json for key, check in LEARNING_KEYS.items()},
        "additionalProperties": False,
    },
)
# A learning state's keys, one row each (key_tables splices them into a state's keys).
KEYS: tuple[Key, ...] = (
    Key(
        "type",
        (STATE,),
        optional(one_of(STATE_TYPES)),
        "learning: with a learning: block, the state proves its targets from the project's "
        "learning-test registry (.ll/learning-tests/) instead of running an action; alone, it "
        "only exempts the state from a throttle's hard_max.",
    ),
    Key(
        "learning",
        (STATE,),
        _LEARNING_CHECK,
        "A learning state's targets: targets (a list) or targets_csv (${...} text split at "
        "commas), and max_retries (default 2) or max_retries_expr: the /ll:explore-api runs "
        "per missing or stale target. All proven: success; one refuted or still unproven: "
        "blocked (on_blocked, else on_failure).",
    ),
)
LEARNING_STATE_KEYS: dict[str, Check] = checks_at(STATE, KEYS)


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


class _StateLike(Protocol):
    type: str | None
    learning: LearningConfig | None


def proves(state: _StateLike) -> bool:
    """True for a learning state that proves targets (`type: learning` and `learning:`)."""
    return state.type == LEARNING_TYPE and state.learning is not None
