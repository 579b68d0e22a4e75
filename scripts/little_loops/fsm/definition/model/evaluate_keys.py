"""The keys of a state's `evaluate:` block, one row each: every evaluator's, then the others'."""

from __future__ import annotations

from little_loops.fsm.definition.model.key_row import EVALUATE, Key, checks_at
from little_loops.fsm.evaluators.classify import LINE_WORDS
from little_loops.fsm.evaluators.config import DIRECTIONS, OPERATORS
from little_loops.fsm.evaluators.registry import EVALUATOR_TYPES
from little_loops.fsm.values.value_checks import (
    Check,
    boolean,
    check_with,
    describe,
    integer,
    judge_schema,
    number,
    number_or_reference,
    one_of,
    optional,
    scalar,
    string,
    string_list,
    text,
)

# The evaluator, then the keys of the comparing, matching and judging evaluators, in the
# order of EvaluateConfig's fields (key_tables puts the rows of KEYS below after them).
BASE_KEYS: tuple[Key, ...] = (
    Key("type", (EVALUATE,), one_of(EVALUATOR_TYPES), "The evaluator:", required=True),
    Key(
        "operator",
        (EVALUATE,),
        optional(one_of(OPERATORS)),
        "the comparison: eq, ne, lt, le, gt, ge.",
    ),
    Key(
        "target",
        (EVALUATE,),
        optional(scalar),
        "the value to compare with or converge to; may be a ${...} reference.",
    ),
    Key(
        "tolerance",
        (EVALUATE,),
        optional(number_or_reference(0)),
        "the value counts as on target within this distance; may be a ${...} reference.",
    ),
    Key(
        "pattern",
        (EVALUATE,),
        optional(string),
        "the substring or regular expression to look for.",
    ),
    Key(
        "negate",
        (EVALUATE,),
        boolean,
        "success when the pattern is NOT found. Default false.",
        default=False,
    ),
    Key(
        "path",
        (EVALUATE,),
        optional(string),
        "jq-style path of the value to compare, e.g. .summary.failed.",
    ),
    Key(
        "previous",
        (EVALUATE,),
        optional(text),
        "the previous measurement, usually ${prev.output}.",
    ),
    Key(
        "direction",
        (EVALUATE,),
        one_of(DIRECTIONS),
        "whether smaller (minimize, the default) or larger values are progress.",
        default="minimize",
    ),
    Key(
        "prompt",
        (EVALUATE,),
        optional(text),
        "the question put to the model about the output.",
    ),
    Key(
        "schema",
        (EVALUATE,),
        optional(judge_schema),
        "JSON Schema of the model's answer; it must have a verdict.",
    ),
    Key(
        "min_confidence",
        (EVALUATE,),
        number(0, 1),
        "answers below this confidence are not confident. Default 0.5.",
        default=0.5,
    ),
    Key(
        "uncertain_suffix",
        (EVALUATE,),
        boolean,
        "append _uncertain to the verdict when not confident. Default false.",
        default=False,
    ),
    Key(
        "source",
        (EVALUATE,),
        optional(text),
        "Evaluate this (usually a ${...} reference) instead of the action's output.",
    ),
)
# The keys every `evaluate:` block must have (the key checks and the JSON Schema read it).
REQUIRED_KEYS: tuple[str, ...] = tuple(row.name for row in BASE_KEYS if row.required)


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
        default=1,
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
