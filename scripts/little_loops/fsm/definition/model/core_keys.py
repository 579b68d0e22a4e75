"""A state's core keys (its action, evaluation, routes, session, child loop, end): one row each."""

from __future__ import annotations

from little_loops.fsm.actions.registry import ACTION_TYPE_NAMES
from little_loops.fsm.definition.model.agents import AGENT_CHECK
from little_loops.fsm.definition.model.key_row import STATE, Key
from little_loops.fsm.values.value_checks import (
    ACTION_SECONDS,
    boolean,
    mapping,
    one_of,
    optional,
    pattern,
    string,
    text,
)

# The action type of a state that asks a person: its action is the question, the answer
# (`ll-loop approve` / `ll-loop reject`) its verdict. A kind of state, not of action.
APPROVAL = "approval"

# Every `action_type:` a loop file may give: each action kind's (actions/registry.py),
# then the state kinds written the same way.
ACTION_TYPES: tuple[str, ...] = (*ACTION_TYPE_NAMES, APPROVAL)
# `session:` of a Claude state: a new session each visit, or its previous one resumed.
SESSION_FRESH = "fresh"
SESSION_CONTINUE = "continue"
SESSION_MODES: tuple[str, ...] = (SESSION_FRESH, SESSION_CONTINUE)

# A terminal state's `outcome:` (the verdict a parent's sub-loop state gets when the
# child loop ends there; failure also sets a top-level run's outcome, facts/outcomes.py).
OUTCOME_SUCCESS = "success"
OUTCOME_FAILURE = "failure"
TERMINAL_OUTCOMES: tuple[str, ...] = (OUTCOME_SUCCESS, OUTCOME_FAILURE)

# A capture name is read back as ${captured.NAME}, so it must be one path segment.
_CAPTURE_NAME = r"^[A-Za-z_][A-Za-z0-9_-]*$"

# The core keys stand in three runs, with other features' keys between them (key_tables
# splices the action kinds' options blocks after the first, the runtime guards after the
# second): each run in the order of model.StateConfig's fields.

# The state's action, how its result is judged, and where the run goes next.
ACTION_KEYS: tuple[Key, ...] = (
    Key(
        "action",
        (STATE,),
        optional(text),
        "A shell command run with bash, or a Claude Code prompt / slash command (an action "
        "starting with '/' goes to Claude unless action_type says otherwise).",
    ),
    Key(
        "action_type",
        (STATE,),
        optional(one_of(ACTION_TYPES)),
        "How to run the action: prompt or slash_command (Claude Code), shell (bash), or "
        "approval (ask a person: the action is the question, `ll-loop approve`/`reject` the "
        "verdict). Default: '/'-prefixed actions go to Claude, others to bash.",
    ),
    Key(
        "capture",
        (STATE,),
        optional(pattern(_CAPTURE_NAME, "a name of letters, digits, '_' and '-'")),
        "Store the action's result as ${captured.NAME} (output, stderr, exit_code, duration_ms).",
    ),
    Key(
        "timeout",
        (STATE,),
        optional(ACTION_SECONDS),
        "Maximum seconds for this state's action (an approval state: to wait for the answer).",
    ),
    Key(
        "idle_timeout",
        (STATE,),
        optional(ACTION_SECONDS),
        "Kill this state's action when it prints nothing (stdout or stderr) for this many "
        "seconds (exit 124, verdict error).",
    ),
    Key(
        "evaluate",
        (STATE,),
        optional(mapping),
        "How to turn the action's result into a verdict. Default: exit_code for shell actions, "
        "llm_structured for Claude actions.",
    ),
    Key(
        "route",
        (STATE,),
        optional(mapping),
        "Verdict to next state; takes precedence over on_success/on_failure/on_error.",
    ),
    Key("on_success", (STATE,), optional(string), "Next state when the verdict is success."),
    Key("on_failure", (STATE,), optional(string), "Next state when the verdict is failure."),
    Key(
        "on_error",
        (STATE,),
        optional(string),
        "Next state when the verdict is error (the action crashed or timed out, or evaluation "
        "failed).",
    ),
    Key(
        "next",
        (STATE,),
        optional(string),
        "Unconditional next state; the action still runs but no evaluation is needed to move on.",
    ),
    Key(
        "terminal",
        (STATE,),
        boolean,
        "The loop ends when this state has run. Default false.",
        default=False,
    ),
    Key(
        "on_maintain",
        (STATE,),
        optional(string),
        "For a terminal state of a loop with maintain: true, the state to start again from "
        "(default: the initial state).",
    ),
    Key(
        "stall",
        (STATE,),
        optional(mapping),
        "Stall breakers for this state; they override the loop's `stall:` here.",
    ),
    Key(
        "on_timeout",
        (STATE,),
        optional(string),
        "For an approval state with a timeout: the state to go to when none answered.",
    ),
)
# Which agent runs its prompt, in which session, and how its action is tried again.
SESSION_KEYS: tuple[Key, ...] = (
    Key(
        "agent",
        (STATE,),
        optional(AGENT_CHECK),
        "The coding agent of this prompt or slash-command state (default: the loop's agent, "
        "else claude), or a list: the fallback order. May be a ${context.NAME} reference.",
    ),
    Key(
        "session",
        (STATE,),
        one_of(SESSION_MODES),
        "fresh (the default): a new Claude session each visit; continue: resume this state's "
        "(or session_key's) previous session of the run.",
        default=SESSION_FRESH,
    ),
    Key(
        "session_key",
        (STATE,),
        optional(string),
        "The name this state's Claude session is recorded and resumed under (default: the "
        "state's name); states with the same key share a session.",
    ),
    Key(
        "retry",
        (STATE,),
        optional(mapping),
        "Run the action again after a matching verdict, error or exit code, waiting between "
        "attempts (as AWS Step Functions' Retry); attempts do not count as iterations.",
    ),
    Key(
        "on_retry_exhausted",
        (STATE,),
        optional(string),
        "Next state when every attempt of retry: gave a matching result (default: route the "
        "last attempt's verdict), or when max_retries is used up.",
    ),
)
# A sub-loop state's child loop and its values, and how a run that ends at a terminal ends.
SUBLOOP_KEYS: tuple[Key, ...] = (
    Key(
        "loop",
        (STATE,),
        optional(string),
        "Run this loop (a name in .loops/, a path, or library:NAME) as this state's action; "
        "its end gives the verdict: success, failure (a terminal state with outcome: failure) "
        "or error (a limit or an error).",
    ),
    Key(
        "with",
        (STATE,),
        optional(mapping),
        "For a sub-loop state: the child loop's parameter values (interpolated).",
        field="with_",
    ),
    Key(
        "outcome",
        (STATE,),
        optional(one_of(TERMINAL_OUTCOMES)),
        "For a terminal state: success or failure (the default: failure for a state named "
        "failed, failure, error or aborted, else success), how a run that ends here ends.",
    ),
)
KEYS: tuple[Key, ...] = (*ACTION_KEYS, *SESSION_KEYS, *SUBLOOP_KEYS)
