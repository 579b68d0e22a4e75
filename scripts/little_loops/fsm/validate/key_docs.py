"""What each loop-file key means, in one sentence: for the JSON Schema and editor hovers."""

from __future__ import annotations

from little_loops.fsm.actions.custom import AGENT_KEYS as CUSTOM_AGENT_KEYS
from little_loops.fsm.actions.registry import AGENTS, BY_OPTIONS_KEY
from little_loops.fsm.actions.sandbox_key import SANDBOX_DOC, SANDBOX_KEY
from little_loops.fsm.definition.model import key_row
from little_loops.fsm.definition.model.commit_keys import KEYS as CHECKPOINT_ROWS
from little_loops.fsm.definition.model.fanout import FANOUT_KEY_DOCS
from little_loops.fsm.definition.model.key_row import docs_at
from little_loops.fsm.definition.model.key_rows import PR_ROWS, RUN_ROWS, RUNTIME_ROWS
from little_loops.fsm.definition.model.learning import LEARNING_KEY_DOCS
from little_loops.fsm.definition.model.lint_flags import CHECKS as LINT_FLAGS
from little_loops.fsm.definition.model.lint_flags import flag_doc
from little_loops.fsm.definition.model.metadata import METADATA_LOOP_DOCS, METADATA_STATE_DOCS
from little_loops.fsm.definition.model.typed import DEFAULT_MAX_ITERATIONS
from little_loops.fsm.definition.reading.reuse_keys import REUSE_LOOP_DOCS, REUSE_STATE_DOCS

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
LOOP_KEYS: dict[str, str] = {
    "name": (
        "The loop's identifier; it names the run's state and log files, so at most 200 letters, "
        "digits, '.', '_' and '-'."
    ),
    "initial": "The state the loop starts in.",
    "states": "The states, by name.",
    "paradigm": (
        "The paradigm this file is written in; fsm (the default) for states and transitions."
    ),
    "context": "Variables for ${context.NAME} references; values may refer to each other.",
    "parameters": (
        "Typed context keys a run gives values to (`ll-loop run NAME VALUE... --set KEY=VALUE`), "
        "read as ${context.NAME}: each a type, or a mapping of type, default, required, "
        "description and choices."
    ),
    "scope": (
        "Paths this loop changes; two loops with overlapping scopes do not run at once. "
        "Default: the whole project."
    ),
    "max_iterations": (
        f"Safety limit on iterations (default {DEFAULT_MAX_ITERATIONS}); the loop stops with "
        "exit code 3 when it is reached."
    ),
    "backoff": "Seconds to wait between iterations.",
    "timeout": "Maximum wall-clock seconds for the whole loop.",
    "idle_timeout": (
        "Default for every state: kill an action that prints nothing for this many seconds "
        "(exit 124, verdict error)."
    ),
    "max_cost_usd": (
        "Spend budget in US dollars (Claude Code's total_cost_usd plus the LLM judge's "
        "estimate); the run ends with terminated_by 'budget' before the next paid action once "
        "it is reached."
    ),
    "maintain": (
        "After reaching a terminal state, start again (from its on_maintain, or the initial "
        "state). Default false."
    ),
    "worktree": (
        "Run every run of this loop in a new git worktree on a new branch ll/NAME/ID, as "
        "`ll-loop run --worktree` does; the main checkout is never touched. Default false."
    ),
    "llm": "Settings of LLM evaluation (the llm_structured evaluator).",
    "archive": "How many finished runs of this loop .loops/.history/ keeps, and for how long.",
    "stall": (
        "Stall breakers for every state: end a run that spins without progress (same_result, "
        "no_change_passes, max_visits), at on_stall or with terminated_by 'stall'."
    ),
    **{key: spec.loop_options_doc for key, spec in BY_OPTIONS_KEY.items()},
    "agent": (
        "The coding agent of every prompt and slash-command state without its own agent: "
        f"{', '.join(AGENTS)} (the default is claude) or a custom agent's name; a list is the "
        "fallback order (the next agent runs the step when one is out of quota or not ready). "
        "May be a ${context.NAME} reference (a parameter)."
    ),
    "agents": (
        "Custom agents by name, each a command of yours that gets the prompt and prints the "
        "answer; .loops/agents.yaml declares them for every loop of the project (an entry "
        "here of the same name wins)."
    ),
    "notify": "A command and/or a webhook told (with a JSON summary) when a run of this loop ends.",
    "retry": "The retry policy of every state that has no retry: of its own.",
    "rate_limit": (
        "How long to wait when Claude (Claude Code or the LLM judge) answers with a rate, "
        "overload or usage limit before running the step again."
    ),
    **docs_at(key_row.LOOP, CHECKPOINT_ROWS),
    "max_steps": (
        "Safety limit on steps (states run, in all passes; default none); the loop stops with "
        "exit code 10 when it is reached."
    ),
    "on_max_steps": (
        "When max_steps is reached: run this state once (e.g. a summary), then stop (max_steps)."
    ),
    "on_max_iterations": (
        "When max_iterations is reached: run this state once, then stop (max_iterations)."
    ),
    **REUSE_LOOP_DOCS,
    **docs_at(key_row.LOOP, RUN_ROWS),
    SANDBOX_KEY: f"Every step's sandbox, unless its state or custom agent gives one. {SANDBOX_DOC}",
    **docs_at(key_row.LOOP, RUNTIME_ROWS),
    **METADATA_LOOP_DOCS,
    **{flag: flag_doc(flag) for flag in LINT_FLAGS},
}

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
STALL_KEYS: dict[str, str] = {
    "same_result": "Stall when a state gives the same verdict on the same output N times in a row.",
    "no_change_passes": (
        "Stall when N passes in a row change nothing in the git working tree (loop level only)."
    ),
    "max_visits": "Stall when a state is entered more than N times.",
    "ignore_volatile": (
        "same_result compares outputs with durations, clock times, pids, temp paths and "
        "addresses masked (default true); false compares them byte for byte."
    ),
    "on_stall": "The state to go to on a stall; none: the run ends with terminated_by 'stall'.",
}

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
ARCHIVE_KEYS: dict[str, str] = {
    "keep": "How many finished runs to keep; the oldest go first; 0 keeps none. Default 50.",
    "max_age_days": "Also drop runs that ended more than this many days ago. Default: no limit.",
}

NOTIFY = "Who hears that a run ended: a command, a webhook, or both; they never change its outcome."
NOTIFY_KEYS: dict[str, str] = {
    "command": (
        "A bash command run in the project folder with the run's JSON summary on stdin and "
        "LL_LOOP_OUTCOME, LL_LOOP_EXIT_CODE, LL_LOOP_NAME, LL_LOOP_RUN_ID set."
    ),
    "webhook": "An http:// or https:// URL the run's JSON summary is POSTed to.",
    "on": (
        "The outcomes that notify (done, failed, budget, max_iterations, timeout, handoff, "
        "interrupted, stopped ...). Default: all."
    ),
    "timeout": "Seconds the command, or one webhook try, may take. Default 10.",
    "retries": "Webhook tries after a failed one, 1 s, 2 s, 4 s ... apart. Default 3.",
}

LLM = "Settings of the llm_structured evaluator, the only place ll-loop calls a model itself."
LLM_KEYS: dict[str, str] = {
    "enabled": "false turns LLM evaluation off (for CI). Default true.",
    "model": (
        'The model for evaluation; the default is DEFAULT_LLM_MODEL ("${DEFAULT_LLM_MODEL}" '
        "also means the default)."
    ),
    "max_tokens": "Maximum tokens of an evaluation answer. Default 256.",
    "timeout": "Seconds per evaluation call. Default 30.",
    "backend": (
        "Who judges: api (the Anthropic API, needs ANTHROPIC_API_KEY), an agent whose CLI "
        "answers with schema-checked JSON (claude: Claude Code's own login) or auto (the "
        "default: api when ANTHROPIC_API_KEY is set, else the state's agent when it can judge, "
        "else claude)."
    ),
}

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
RETRY_KEYS: dict[str, str] = {
    "on": (
        "The results that cause a retry: verdicts (success, failure, ...), error, and exit "
        "codes (whole numbers). Default [error]."
    ),
    "max_attempts": "Attempts in all, the first one included. Default 3.",
    "interval": "Seconds to wait before the second attempt. Default 1.",
    "backoff_rate": "Each further wait is this many times the one before. Default 2.0.",
    "max_interval": "No wait between attempts is longer than this many seconds.",
    "jitter": (
        "none (the default): wait exactly; full: wait a random time from 0 to the computed wait."
    ),
}

RATE_LIMIT = (
    "Waiting out Claude's rate, overload and usage limits: until the reset time Claude gives, "
    "else the next step of the ladder."
)
RATE_LIMIT_KEYS: dict[str, str] = {
    "ladder": (
        "Seconds of each successive wait when no reset time is given; the last repeats. "
        "Default [60, 300, 900, 1800]."
    ),
    "max_wait": (
        "The longest one step waits for Claude's limits in all before the run ends with an "
        "error. Default 21600 (6 hours)."
    ),
}
