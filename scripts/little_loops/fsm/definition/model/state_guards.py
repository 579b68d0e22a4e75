"""A state's `pruning_profile:` and self-loop guard blocks as dataclasses (loaded with one)."""

from __future__ import annotations

from dataclasses import dataclass

from little_loops.fsm.definition.model.blocks import Block

# Its keys, their checks and docs (guard_keys.py, which validate reads without the
# dataclasses below), named here too.
from little_loops.fsm.definition.model.guard_keys import AUTOMATION_ENV as AUTOMATION_ENV
from little_loops.fsm.definition.model.guard_keys import (
    AUTOMATION_PROFILE_ENV as AUTOMATION_PROFILE_ENV,
)
from little_loops.fsm.definition.model.guard_keys import DEFAULT_HARD_MAX as DEFAULT_HARD_MAX
from little_loops.fsm.definition.model.guard_keys import DEFAULT_WARN_MAX as DEFAULT_WARN_MAX
from little_loops.fsm.definition.model.guard_keys import KEYS as KEYS
from little_loops.fsm.definition.model.guard_keys import (
    PRUNING_PROFILE_KEYS as PRUNING_PROFILE_KEYS,
)
from little_loops.fsm.definition.model.guard_keys import STALL_LABEL as STALL_LABEL
from little_loops.fsm.definition.model.guard_keys import THROTTLE as THROTTLE
from little_loops.fsm.definition.model.guard_keys import THROTTLE_KEYS as THROTTLE_KEYS


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
    """A state's cap on a self-loop: the action's runs in one stay at the state (a self-loop)
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
