"""What each loop-file key means, in one sentence: for the JSON Schema and editor hovers."""

from __future__ import annotations

from little_loops.fsm.actions.custom import AGENT_KEYS as CUSTOM_AGENT_KEYS
from little_loops.fsm.actions.registry import BY_OPTIONS_KEY
from little_loops.fsm.actions.sandbox_key import SANDBOX_DOC, SANDBOX_KEY
from little_loops.fsm.definition.checks.commit_checks import KEYS as CHECKPOINT_ROWS
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
from little_loops.fsm.definition.model import key_row
from little_loops.fsm.definition.model.fanout import FANOUT_KEY_DOCS
from little_loops.fsm.definition.model.key_row import docs_at
from little_loops.fsm.definition.model.key_rows import PR_ROWS, RUN_ROWS, RUNTIME_ROWS
from little_loops.fsm.definition.model.learning import LEARNING_KEY_DOCS
from little_loops.fsm.definition.model.lint_flags import CHECKS as LINT_FLAGS
from little_loops.fsm.definition.model.lint_flags import flag_doc
from little_loops.fsm.definition.model.metadata import METADATA_STATE_DOCS
from little_loops.fsm.definition.model.retry_keys import (
    RATE_LIMIT_BLOCK,
    RATE_LIMIT_ROWS,
    RETRY_BLOCK,
    RETRY_ROWS,
)
from little_loops.fsm.definition.model.reuse_keys import REUSE_STATE_DOCS

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
STATE_KEYS: dict[str, str] = {
    "action": (
        "A shell command run with bash, or a Claude Code prompt / slash command (an action "
        "starting with '/' goes to Claude unless action_type says otherwise)."
    ),
    "action_type": (
        "How to run the action: prompt or slash_command (Claude Code), shell (bash), or "
        "approval (ask a person: the action is the question, `ll-loop approve`/`reject` the "
        "verdict). Default: '/'-prefixed actions go to Claude, others to bash."
    ),
    "capture": (
        "Store the action's result as ${captured.NAME} (output, stderr, exit_code, duration_ms)."
    ),
    "timeout": (
        "Maximum seconds for this state's action (an approval state: to wait for the answer)."
    ),
    "idle_timeout": (
        "Kill this state's action when it prints nothing (stdout or stderr) for this many "
        "seconds (exit 124, verdict error)."
    ),
    "evaluate": (
        "How to turn the action's result into a verdict. Default: exit_code for shell actions, "
        "llm_structured for Claude actions."
    ),
    "route": "Verdict to next state; takes precedence over on_success/on_failure/on_error.",
    "on_success": "Next state when the verdict is success.",
    "on_failure": "Next state when the verdict is failure.",
    "on_error": (
        "Next state when the verdict is error (the action crashed or timed out, or evaluation "
        "failed)."
    ),
    "next": (
        "Unconditional next state; the action still runs but no evaluation is needed to move on."
    ),
    "terminal": "The loop ends when this state has run. Default false.",
    "on_maintain": (
        "For a terminal state of a loop with maintain: true, the state to start again from "
        "(default: the initial state)."
    ),
    "stall": "Stall breakers for this state; they override the loop's `stall:` here.",
    "on_timeout": "For an approval state with a timeout: the state to go to when none answered.",
    **{key: spec.state_options_doc for key, spec in BY_OPTIONS_KEY.items()},
    "agent": (
        "The coding agent of this prompt or slash-command state (default: the loop's agent, "
        "else claude), or a list: the fallback order. May be a ${context.NAME} reference."
    ),
    "session": (
        "fresh (the default): a new Claude session each visit; continue: resume this state's "
        "(or session_key's) previous session of the run."
    ),
    "session_key": (
        "The name this state's Claude session is recorded and resumed under (default: the "
        "state's name); states with the same key share a session."
    ),
    "retry": (
        "Run the action again after a matching verdict, error or exit code, waiting between "
        "attempts (as AWS Step Functions' Retry); attempts do not count as iterations."
    ),
    "on_retry_exhausted": (
        "Next state when every attempt of retry: gave a matching result (default: route the "
        "last attempt's verdict), or when max_retries is used up."
    ),
    "loop": (
        "Run this loop (a name in .loops/, a path, or library:NAME) as this state's action; "
        "its end gives the verdict: success, failure (a terminal state with outcome: failure) "
        "or error (a limit or an error)."
    ),
    "with": "For a sub-loop state: the child loop's parameter values (interpolated).",
    "outcome": (
        "For a terminal state: success or failure (the default: failure for a state named "
        "failed, failure, error or aborted, else success), how a run that ends here ends."
    ),
    **docs_at(key_row.STATE, CHECKPOINT_ROWS),
    "on_partial": "Next state when the verdict is partial.",
    "on_blocked": "Next state when the verdict is blocked.",
    "on_cannot_judge": (
        "Next state when the judge answers cannot_judge (little-loops' judge, with --compat)."
    ),
    "max_retries": (
        "Enter this state at most 1 + max_retries times in a row; the next time go to "
        "on_retry_exhausted instead of running it."
    ),
    "retryable_exit_codes": (
        "The exit codes worth retrying: an error with another exit code goes straight to "
        "on_retry_exhausted (else on_error)."
    ),
    "on_yes": "on_success written as little-loops writes it (yes is success).",
    "on_no": "on_failure written as little-loops writes it (no is failure).",
    "failure": "true is outcome: failure (false: outcome: success), as little-loops writes it.",
    **REUSE_STATE_DOCS,
    **docs_at(key_row.STATE, RUN_ROWS),
    SANDBOX_KEY: f"This state's sandbox, over the loop's (none: run unconfined). {SANDBOX_DOC}",
    **docs_at(key_row.STATE, RUNTIME_ROWS),
    **METADATA_STATE_DOCS,
    **LEARNING_KEY_DOCS,
    **FANOUT_KEY_DOCS,
    **docs_at(key_row.STATE, PR_ROWS),
}

STALL = "Stall breakers: detectors that end a run spinning without progress."
STALL_KEYS: dict[str, str] = docs_at(STALL_BLOCK, STALL_ROWS)

EVALUATE = "An evaluator: turns the action's result into a verdict."
# The evaluators that read a key are added in front from the registry: `output_json: ...`.
EVALUATE_KEYS: dict[str, str] = {
    "type": "The evaluator:",
    "operator": "the comparison: eq, ne, lt, le, gt, ge.",
    "target": "the value to compare with or converge to; may be a ${...} reference.",
    "tolerance": "the value counts as on target within this distance; may be a ${...} reference.",
    "pattern": "the substring or regular expression to look for.",
    "negate": "success when the pattern is NOT found. Default false.",
    "path": "jq-style path of the value to compare, e.g. .summary.failed.",
    "previous": "the previous measurement, usually ${prev.output}.",
    "direction": "whether smaller (minimize, the default) or larger values are progress.",
    "prompt": "the question put to the model about the output.",
    "schema": "JSON Schema of the model's answer; it must have a verdict.",
    "min_confidence": "answers below this confidence are not confident. Default 0.5.",
    "uncertain_suffix": "append _uncertain to the verdict when not confident. Default false.",
    "source": "Evaluate this (usually a ${...} reference) instead of the action's output.",
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
