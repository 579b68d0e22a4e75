"""What each loop-file key means, in one sentence: for the JSON Schema and editor hovers."""

from __future__ import annotations

from little_loops.fsm.actions.custom import AGENT_KEYS as CUSTOM_AGENT_KEYS
from little_loops.fsm.actions.registry import BY_OPTIONS_KEY
from little_loops.fsm.actions.sandbox_key import SANDBOX_DOC, SANDBOX_KEY
from little_loops.fsm.definition.checks.key_tables import (
    ARCHIVE_BLOCK,
    ARCHIVE_ROWS,
    LLM_BLOCK,
    LLM_ROWS,
    NOTIFY_BLOCK,
    NOTIFY_ROWS,
    STALL_BLOCK,
    STALL_ROWS,
    loop_table,
)
from little_loops.fsm.definition.model import (
    core_keys,
    fanout_keys,
    key_row,
    learning_keys,
    metadata,
    reuse_keys,
    route_keys,
)
from little_loops.fsm.definition.model import evaluate_keys as evaluate_keys
from little_loops.fsm.definition.model.commit_keys import KEYS as CHECKPOINT_ROWS
from little_loops.fsm.definition.model.key_row import docs_at
from little_loops.fsm.definition.model.key_rows import PR_ROWS, RUN_ROWS, RUNTIME_ROWS
from little_loops.fsm.definition.model.lint_flags import CHECKS as LINT_FLAGS
from little_loops.fsm.definition.model.lint_flags import flag_doc
from little_loops.fsm.definition.model.retry_keys import (
    RATE_LIMIT_BLOCK,
    RATE_LIMIT_ROWS,
    RETRY_BLOCK,
    RETRY_ROWS,
)

FILE = (
    "A loop for ll-loop (.loops/*.yaml): named states, each running an action whose result an "
    "evaluator turns into a verdict, and routes from verdicts to the next state. Files with a "
    "paradigm other than fsm are checked by that paradigm's compiler instead. `ll-loop "
    "validate` checks everything this schema checks and more (transition targets, reachability)."
)
PARADIGM_FILE = (
    "A loop written in a paradigm ({paradigms}) that ll-loop compiles into states; the "
    "paradigm's compiler checks its keys."
)
STATE_NAME = (
    "The name of a state, `$current` for this state again, or a string with a ${...} "
    "reference resolved at run time."
)

# Each level: a description of the mapping, then one per key (the keys are key_checks').
LOOP = "A loop written directly as states and transitions."
# The loop's: from the rows (key_tables.loop_table), each options block's from its kind.
LOOP_KEYS: dict[str, str] = loop_table(
    docs_at,
    {key: spec.loop_options_doc for key, spec in BY_OPTIONS_KEY.items()},
    {flag: flag_doc(flag) for flag in LINT_FLAGS},
)

STATE = "One state: an optional action, how to evaluate it, and where to go next."
# In the order of key_tables.STATE_KEYS: the rows' docs, the options blocks' and sandbox's
# from their registries.
STATE_KEYS: dict[str, str] = {
    **docs_at(key_row.STATE, core_keys.ACTION_KEYS),
    **{key: spec.state_options_doc for key, spec in BY_OPTIONS_KEY.items()},
    **docs_at(key_row.STATE, core_keys.SESSION_KEYS),
    **docs_at(key_row.STATE, RUNTIME_ROWS),
    **docs_at(key_row.STATE, core_keys.SUBLOOP_KEYS),
    **docs_at(key_row.STATE, CHECKPOINT_ROWS),
    **docs_at(key_row.STATE, route_keys.KEYS),
    **docs_at(key_row.STATE, reuse_keys.STATE_ROWS),
    **docs_at(key_row.STATE, RUN_ROWS),
    SANDBOX_KEY: f"This state's sandbox, over the loop's (none: run unconfined). {SANDBOX_DOC}",
    **docs_at(key_row.STATE, metadata.STATE_ROWS),
    **docs_at(key_row.STATE, learning_keys.KEYS),
    **docs_at(key_row.STATE, fanout_keys.KEYS),
    **docs_at(key_row.STATE, PR_ROWS),
}

STALL = "Stall breakers: detectors that end a run spinning without progress."
STALL_KEYS: dict[str, str] = docs_at(STALL_BLOCK, STALL_ROWS)

EVALUATE = "An evaluator: turns the action's result into a verdict."
# The evaluators that read a key are added in front from the registry: `output_json: ...`.
EVALUATE_KEYS: dict[str, str] = {
    **docs_at(key_row.EVALUATE, evaluate_keys.BASE_KEYS),
    **docs_at(key_row.EVALUATE, RUNTIME_ROWS),
}

ROUTE = (
    "Verdict to next state. `_` is the default for any other verdict, `_error` the route for "
    "errors."
)
ROUTE_DEFAULT = "Next state for a verdict with no entry of its own."
ROUTE_ERROR = "Next state when the action or the evaluation fails with an error."

ARCHIVE = "The run archive: finished runs of the loop kept under .loops/.history/<name>/."
ARCHIVE_KEYS: dict[str, str] = docs_at(ARCHIVE_BLOCK, ARCHIVE_ROWS)

NOTIFY = "Who hears that a run ended: a command, a webhook, or both; they never change its outcome."
NOTIFY_KEYS: dict[str, str] = docs_at(NOTIFY_BLOCK, NOTIFY_ROWS)

LLM = "Settings of the llm_structured evaluator, the only place ll-loop calls a model itself."
LLM_KEYS: dict[str, str] = docs_at(LLM_BLOCK, LLM_ROWS)

# Each action kind's options block (by its key): what it is, and each option's doc, from the
# kind's module.
OPTIONS: dict[str, str] = {key: spec.options_doc for key, spec in BY_OPTIONS_KEY.items()}
OPTION_KEYS: dict[str, dict[str, str]] = {
    key: {name: option.doc for name, option in spec.options.items()}
    for key, spec in BY_OPTIONS_KEY.items()
}

CUSTOM_AGENT = (
    "A custom agent: a command of yours, run with bash in the run's working folder; it gets "
    "the prompt as data (never as shell text) and its stdout is the answer."
)
AGENT_KEYS: dict[str, str] = {key: doc for key, (_, doc) in CUSTOM_AGENT_KEYS.items()}

RETRY = "When and how to run a state's action again (as AWS Step Functions' Retry)."
RETRY_KEYS: dict[str, str] = docs_at(RETRY_BLOCK, RETRY_ROWS)

RATE_LIMIT = (
    "Waiting out Claude's rate, overload and usage limits: until the reset time Claude gives, "
    "else the next step of the ladder."
)
RATE_LIMIT_KEYS: dict[str, str] = docs_at(RATE_LIMIT_BLOCK, RATE_LIMIT_ROWS)
