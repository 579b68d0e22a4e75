"""The keys of where a state goes and where a run ends, in both spellings, and their checks."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from little_loops.fsm.definition.model.key_row import LOOP, STATE, Key, checks_at
from little_loops.fsm.definition.model.retry_keys import MAX_EXIT_CODE
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


# A state's: the routes of the verdicts partial, blocked and cannot_judge, a cap on entering
# it again (model.StateConfig's fields), then little-loops' other spellings of our keys
# (definition/model/spellings.py), read into our keys' fields.
KEYS: tuple[Key, ...] = (
    Key("on_partial", (STATE,), optional(string), "Next state when the verdict is partial."),
    Key("on_blocked", (STATE,), optional(string), "Next state when the verdict is blocked."),
    Key(
        "on_cannot_judge",
        (STATE,),
        optional(string),
        "Next state when the judge answers cannot_judge (little-loops' judge, with --compat).",
    ),
    Key(
        "max_retries",
        (STATE,),
        optional(integer(0)),
        "Enter this state at most 1 + max_retries times in a row; the next time go to "
        "on_retry_exhausted instead of running it.",
    ),
    Key(
        "retryable_exit_codes",
        (STATE,),
        optional(exit_codes),
        "The exit codes worth retrying: an error with another exit code goes straight to "
        "on_retry_exhausted (else on_error).",
    ),
    Key(
        "on_yes",
        (STATE,),
        optional(string),
        "on_success written as little-loops writes it (yes is success).",
        field="on_success",
    ),
    Key(
        "on_no",
        (STATE,),
        optional(string),
        "on_failure written as little-loops writes it (no is failure).",
        field="on_failure",
    ),
    Key(
        "failure",
        (STATE,),
        boolean,
        "true is outcome: failure (false: outcome: success), as little-loops writes it.",
        field="outcome",
    ),
)
STATE_ROUTE_KEYS: dict[str, Check] = checks_at(STATE, KEYS)
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


def route_key_problems(state: Mapping[Any, Any]) -> Iterator[tuple[KeyPath, str]]:
    """The keys of this module in *state* that need another one, each with its key path."""
    if state.get("max_retries") is not None and state.get("on_retry_exhausted") is None:
        yield (
            ("max_retries",),
            "needs on_retry_exhausted: the state to go to once the state was entered again "
            "max_retries times in a row",
        )
    if "failure" in state and not state.get("terminal"):
        yield ("failure",), "only a terminal state ends a run (add terminal: true)"
