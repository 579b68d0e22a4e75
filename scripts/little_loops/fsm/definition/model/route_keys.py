"""The keys of where a state goes and where a run ends, in both spellings, and their checks."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from little_loops.fsm.definition.model.key_row import LOOP, Key
from little_loops.fsm.definition.model.retry_keys import MAX_EXIT_CODE
from little_loops.fsm.definition.model.spellings import ROUTE, STATE, spellings_at
from little_loops.fsm.values.value_checks import (
    Check,
    boolean,
    check_with,
    describe,
    integer,
    optional,
    string,
)

KeyPath = tuple[str | int, ...]


@check_with(
    {
        "type": "array",
        "items": {"type": "integer", "minimum": 0, "maximum": MAX_EXIT_CODE},
        "minItems": 1,
    }
)
def exit_codes(value: object) -> str | None:
    """`retryable_exit_codes:` a list of exit codes (whole numbers 0-255)."""
    if not isinstance(value, list) or not value:
        return f"expected a list of exit codes, got {describe(value)}"
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item <= MAX_EXIT_CODE:
            return f"an exit code is a whole number from 0 to {MAX_EXIT_CODE}, got {describe(item)}"
    return None


# A state's keys, after ours (key_tables.STATE_KEYS): the model's fields, then the other
# spellings of ours (definition/model/spellings.py), read into our fields.
STATE_ROUTE_KEYS: dict[str, Check] = {
    "on_partial": optional(string),
    "on_blocked": optional(string),
    "on_cannot_judge": optional(string),
    "max_retries": optional(integer(0)),
    "retryable_exit_codes": optional(exit_codes),
    "on_yes": optional(string),
    "on_no": optional(string),
    "failure": boolean,
}
# The loop's caps and where each one's run goes (after its settings in key_tables.LOOP_KEYS);
# graph.py follows the two routes out of every state.
LOOP_LIMIT_ROWS: tuple[Key, ...] = (
    Key(
        "max_steps",
        (LOOP,),
        optional(integer(1)),
        "Safety limit on steps (states run, in all passes; default none); the loop stops with "
        "exit code 10 when it is reached.",
    ),
    Key(
        "on_max_steps",
        (LOOP,),
        optional(string),
        "When max_steps is reached: run this state once (e.g. a summary), then stop (max_steps).",
    ),
    Key(
        "on_max_iterations",
        (LOOP,),
        optional(string),
        "When max_iterations is reached: run this state once, then stop (max_iterations).",
    ),
)
# The verdict each `on_<verdict>` shorthand routes (ours, then these two).
EXTRA_SHORTHANDS: tuple[tuple[str, str], ...] = (
    ("partial", "on_partial"),
    ("blocked", "on_blocked"),
    ("cannot_judge", "on_cannot_judge"),
)


def _twice(data: Mapping[Any, Any], level: str) -> Iterator[tuple[str, str]]:
    """Each key written in two spellings in *data*: (theirs, ours)."""
    for theirs, spelling in spellings_at(STATE if level == STATE else ROUTE).items():
        if theirs in data and spelling.ours in data:
            yield theirs, spelling.ours


def spelling_problems(state: Mapping[Any, Any]) -> Iterator[tuple[KeyPath, str]]:
    """A key written twice in two spellings in *state* (or its route table), and the keys
    of this module that need another one; each with its key path in the state."""
    for theirs, ours in _twice(state, STATE):
        yield (theirs,), f"{theirs} and {ours} are one key written twice: keep one ({ours})"
    route = state.get("route")
    if isinstance(route, Mapping):
        for theirs, ours in _twice(route, ROUTE):
            yield ("route", theirs), f"{theirs} and {ours} are one verdict: keep one ({ours})"
    if state.get("max_retries") is not None and state.get("on_retry_exhausted") is None:
        yield (
            ("max_retries",),
            "needs on_retry_exhausted: the state to go to once the state was entered again "
            "max_retries times in a row",
        )
    if "failure" in state and not state.get("terminal"):
        yield ("failure",), "only a terminal state ends a run (add terminal: true)"
