"""The `evaluate:` keys of the token, stall and field evaluators (classify, *_stall, key)."""

from __future__ import annotations

from little_loops.fsm.evaluators.classify import LINE_WORDS
from little_loops.fsm.values.value_checks import (
    Check,
    check_with,
    describe,
    integer,
    number,
    optional,
    string,
    string_list,
    text,
)


@check_with({"anyOf": [{"type": "string", "enum": list(LINE_WORDS)}, {"type": "integer"}]})
def line_choice(value: object) -> str | None:
    """`line:` of classify: `last`, `first` or a 0-based line number (negative: from the end)."""
    if isinstance(value, bool) or not (isinstance(value, int) or value in LINE_WORDS):
        return f"expected last, first or a line number, got {describe(value)}"
    return None


# Spliced into key_tables.EVALUATE_KEYS; each evaluator's spec says which of them it reads.
EVALUATE_EXTRA_KEYS: dict[str, Check] = {
    "key": optional(string),
    "error_patterns": optional(string_list),
    "line": optional(line_choice),
    "scope": optional(string_list),
    "max_stall": integer(1),
    "history_file": optional(text),
    "epsilon": optional(number(0)),
}
