"""A learning state (`type: learning`, `learning:`): its keys and checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

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


class _StateLike(Protocol):
    type: str | None

    @property
    def learning(self) -> object: ...


def proves(state: _StateLike) -> bool:
    """True for a learning state that proves targets (`type: learning` and `learning:`)."""
    return state.type == LEARNING_TYPE and state.learning is not None
