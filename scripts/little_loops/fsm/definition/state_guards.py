"""The keys and defaults of a state's `pruning_profile:` and `throttle:` (little-loops')."""

from __future__ import annotations

from little_loops.fsm.values.value_checks import Check, boolean, integer, optional, string

# What an agent's hooks read to trim what they add to every session (little-loops' names).
AUTOMATION_ENV = "LL_AUTOMATION"
AUTOMATION_PROFILE_ENV = "LL_AUTOMATION_PROFILE"
# The throttle's counts when its block leaves them out (little-loops' defaults).
DEFAULT_WARN_MAX = 8
DEFAULT_HARD_MAX = 12


PRUNING_PROFILE_KEYS: dict[str, Check] = {
    "enabled": boolean,
    "name": string,
    "suppress_catalog": boolean,
    "suppress_claude_md": boolean,
}
THROTTLE_KEYS: dict[str, Check] = {
    "normal_max": optional(integer(1)),
    "warn_max": optional(integer(1)),
    "hard_max": optional(integer(1)),
}
