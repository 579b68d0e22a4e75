"""The loop's `circuit:` key (little-loops'): a breaker for a step failing the same way."""

from __future__ import annotations

from collections.abc import Mapping

from little_loops.fsm.definition.model.block_values import block_problem
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
        block="definition.model.circuit:CircuitConfig",
    ),
)
