"""The keys little-loops' runtime features add to a loop, a state and an `evaluate:` block."""

from __future__ import annotations

from little_loops.fsm.definition.block_checks import keyed_block
from little_loops.fsm.definition.circuit import CIRCUIT_CHECK
from little_loops.fsm.definition.evaluate_checks import EVALUATE_EXTRA_KEYS
from little_loops.fsm.definition.ratelimit_routing import STATE_RATE_LIMIT_KEYS
from little_loops.fsm.definition.state_guards import PRUNING_PROFILE_KEYS, THROTTLE_KEYS
from little_loops.fsm.values.value_checks import Check, boolean, optional, string

# Each is spliced into its table in key_checks.py (LOOP_SETTING_KEYS, STATE_KEYS,
# EVALUATE_KEYS); the model's fields and the key docs list the same keys.
LOOP_RUNTIME_KEYS: dict[str, Check] = {
    "circuit": CIRCUIT_CHECK,
    "artifact_versioning": boolean,
}
STATE_RUNTIME_KEYS: dict[str, Check] = {
    **STATE_RATE_LIMIT_KEYS,
    "pruning_profile": keyed_block(PRUNING_PROFILE_KEYS),
    "throttle": keyed_block(THROTTLE_KEYS),
    "on_throttle_hard": optional(string),
}
EVALUATE_RUNTIME_KEYS: dict[str, Check] = EVALUATE_EXTRA_KEYS
