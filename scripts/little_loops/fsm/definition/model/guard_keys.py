"""A state's `pruning_profile:` and `throttle:` (little-loops'): their rows and defaults."""

from __future__ import annotations

from typing import Protocol

from little_loops.fsm.definition.model.block_values import keyed_block
from little_loops.fsm.definition.model.key_row import STATE, Key
from little_loops.fsm.values.value_checks import (
    Check,
    boolean,
    integer,
    optional,
    pattern,
    string,
)

# What an agent's hooks read to trim what they add to every session (little-loops' names).
AUTOMATION_ENV = "LL_AUTOMATION"
AUTOMATION_PROFILE_ENV = "LL_AUTOMATION_PROFILE"
# The throttle's counts when its block leaves them out (little-loops' defaults).
DEFAULT_WARN_MAX = 8
DEFAULT_HARD_MAX = 12
# The label of the loop graph's edge to where a throttled state goes at its hard_max.
STALL_LABEL = "stall"


# The value of LL_AUTOMATION_PROFILE: an environment variable holds no NUL byte.
_NO_NUL = "^[^\\u0000]*$"
_PROFILE_NAME = Check(
    pattern(_NO_NUL, "a name without a NUL byte").find,
    {"type": "string", "minLength": 1, "pattern": _NO_NUL},
)
PRUNING_PROFILE_KEYS: dict[str, Check] = {
    "enabled": boolean,
    "name": _PROFILE_NAME,
    "suppress_catalog": boolean,
    "suppress_claude_md": boolean,
}
THROTTLE_KEYS: dict[str, Check] = {
    "normal_max": optional(integer(1)),
    "warn_max": optional(integer(1)),
    "hard_max": optional(integer(1)),
}


class _Profile(Protocol):
    def env(self) -> dict[str, str]: ...


def _profile_env(profile: _Profile) -> dict[str, str]:
    return profile.env()


# The throttle's row: the stall rule reads the key's value and names its detector by it.
THROTTLE = Key(
    "throttle",
    (STATE,),
    keyed_block(THROTTLE_KEYS),
    "{hard_max (default 12), warn_max, normal_max}: the action runs at most hard_max times "
    "in a row in a self-loop, then the run goes to on_throttle_hard (else on_error, else it "
    "ends as a stall).",
    block="definition.model.state_guards:ThrottleConfig",
)
KEYS: tuple[Key, ...] = (
    Key(
        "pruning_profile",
        (STATE,),
        keyed_block(PRUNING_PROFILE_KEYS),
        "{enabled, name, suppress_catalog, suppress_claude_md}: the agent's session gets "
        "LL_AUTOMATION=1 and LL_AUTOMATION_PROFILE=name (hooks trim what they add); the "
        "suppress_* flags are declarations only.",
        block="definition.model.state_guards:PruningProfileConfig",
        env=_profile_env,
        agents_only=True,
        lint_flag="pruning_profile_ok",
    ),
    THROTTLE,
    Key(
        "on_throttle_hard",
        (STATE,),
        optional(string),
        "The state to go to when the throttle's hard_max is reached.",
        route=STALL_LABEL,
    ),
)
