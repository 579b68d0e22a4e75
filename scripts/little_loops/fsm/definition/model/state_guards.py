"""A state's `pruning_profile:` and `throttle:` (little-loops'): their rows, blocks, defaults."""

from __future__ import annotations

from dataclasses import dataclass

from little_loops.fsm.definition.model.block_values import keyed_block
from little_loops.fsm.definition.model.blocks import Block
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


@dataclass
class PruningProfileConfig(Block):
    """A state's pruning profile: its agent's session runs with LL_AUTOMATION=1 and
    LL_AUTOMATION_PROFILE=name, which automation-aware hooks read to trim their output.
    The suppress_* flags are declarations only (as in little-loops: nothing reads them)."""

    enabled: bool = True
    name: str = "default"
    suppress_catalog: bool = False
    suppress_claude_md: bool = False

    def env(self) -> dict[str, str]:
        """The variables an agent's session gets (none when not enabled)."""
        if not self.enabled:
            return {}
        return {AUTOMATION_ENV: "1", AUTOMATION_PROFILE_ENV: self.name}


@dataclass
class ThrottleConfig(Block):
    """A state's throttle: the action's runs in one stay at the state (a self-loop)
    counted; at warn_max an event warns, at hard_max the run goes to the state's hard route
    (else `on_error`), past it the run ends with an error. normal_max is the count below
    which nothing is said (kept for little-loops' files; it changes nothing)."""

    normal_max: int | None = None
    warn_max: int | None = None
    hard_max: int | None = None

    @property
    def warn_at(self) -> int:
        return DEFAULT_WARN_MAX if self.warn_max is None else self.warn_max

    @property
    def hard_at(self) -> int:
        return DEFAULT_HARD_MAX if self.hard_max is None else self.hard_max


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


def _profile_env(profile: PruningProfileConfig) -> dict[str, str]:
    return profile.env()


# The throttle's row: the stall rule reads the key's value and names its detector by it.
THROTTLE = Key(
    "throttle",
    (STATE,),
    keyed_block(THROTTLE_KEYS),
    "{hard_max (default 12), warn_max, normal_max}: the action runs at most hard_max times "
    "in a row in a self-loop, then the run goes to on_throttle_hard (else on_error, else it "
    "ends as a stall).",
    block=ThrottleConfig,
)
KEYS: tuple[Key, ...] = (
    Key(
        "pruning_profile",
        (STATE,),
        keyed_block(PRUNING_PROFILE_KEYS),
        "{enabled, name, suppress_catalog, suppress_claude_md}: the agent's session gets "
        "LL_AUTOMATION=1 and LL_AUTOMATION_PROFILE=name (hooks trim what they add); the "
        "suppress_* flags are declarations only.",
        block=PruningProfileConfig,
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
