"""The `evaluate:` keys of the token, stall and field evaluators (classify, *_stall, key)."""

from __future__ import annotations

from little_loops.fsm.definition.model.key_row import EVALUATE, Key, checks_at
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


# The keys each evaluator's spec says it reads (the JSON Schema's doc names the readers).
KEYS: tuple[Key, ...] = (
    Key(
        "key",
        (EVALUATE,),
        optional(string),
        "read the number of the last KEY=NUMBER field of the output instead of all of it.",
    ),
    Key(
        "error_patterns",
        (EVALUATE,),
        optional(string_list),
        "texts that, when the pattern is not found, make the verdict error instead of failure.",
    ),
    Key(
        "line",
        (EVALUATE,),
        optional(line_choice),
        "which non-empty output line is the token: last (the default), first or an index.",
    ),
    Key(
        "scope",
        (EVALUATE,),
        optional(string_list),
        "the paths whose `git diff --stat` counts. Default: the whole working tree.",
    ),
    Key(
        "max_stall",
        (EVALUATE,),
        integer(1),
        "rounds in a row without progress before the verdict is failure. Default 1.",
    ),
    Key(
        "history_file",
        (EVALUATE,),
        optional(text),
        "the file of one number a line the loop appends each round. Default "
        "${context.run_dir}/.score_history (score_stall), .open_questions_history "
        "(open_question_stall).",
    ),
    Key(
        "epsilon",
        (EVALUATE,),
        optional(number(0)),
        "the least change over the best so far that counts as progress. Default 0.5 "
        "(score_stall), 0 (open_question_stall).",
    ),
)
EVALUATE_EXTRA_KEYS: dict[str, Check] = checks_at(EVALUATE, KEYS)
