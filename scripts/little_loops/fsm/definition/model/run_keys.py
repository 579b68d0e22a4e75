"""Keys of how a run meets its limits and guards its files (on_handoff, singleton, guards): rows."""

from __future__ import annotations

from little_loops.fsm.definition.model.key_row import LOOP, STATE, Key, checks_at
from little_loops.fsm.values.value_checks import (
    ACTION_SECONDS,
    Check,
    boolean,
    mapping,
    one_of,
    optional,
    string,
)

# `on_handoff:` what a run does when a prompt's output hands over (`CONTEXT_HANDOFF: ...`).
HANDOFF_PAUSE = "pause"  # stop, resumable: `ll-loop resume NAME` goes on with the note
HANDOFF_SPAWN = "spawn"  # as pause, then a continuation run resumes it in the background
HANDOFF_TERMINATE = "terminate"  # stop for good: the run ends, not resumable
HANDOFF_MODES: tuple[str, ...] = (HANDOFF_PAUSE, HANDOFF_SPAWN, HANDOFF_TERMINATE)

# `session_mode:` of a prompt state (the loop's: every prompt state's default).
SESSION_MODE_FRESH = "fresh"
SESSION_MODE_CONTINUE = "continue"  # the previous chained prompt's result leads the prompt
SESSION_MODE_VALUES: tuple[str, ...] = (SESSION_MODE_FRESH, SESSION_MODE_CONTINUE)
# What leads a continuing prompt: the heading, then the end of the previous prompt's result.
CONTINUITY_HEADING = "## Continuity summary from the prior chained state"
CONTINUITY_CHARS = 4000

_SESSION_MODE_DOC = (
    "continue: a prompt state starts with the result of the previous prompt state that "
    "also continues (the chain breaks at a fresh one); fresh (the default): it does not."
)
_TAMPER_DOC = (
    "When the action changed test files (or pytest's config): fail routes to a failure "
    "terminal, revert restores tracked ones from git, allow records them in "
    "${context._tamper_guard}."
)
_PREPATCH_DOC = (
    "After the action succeeded, the tests its patch added or changed run in a scratch git "
    "worktree at the code before the patch: a new one that passes there proves nothing; "
    "fail routes to a failure terminal, warn records a prepatch_check_flagged event, "
    "allow only ${context._prepatch_check}."
)

# `tamper_guard:` what happens when a state's action changed test files.
TAMPER_REVERT = "revert"
TAMPER_FAIL = "fail"
TAMPER_ALLOW = "allow"
TAMPER_POLICIES: tuple[str, ...] = (TAMPER_REVERT, TAMPER_FAIL, TAMPER_ALLOW)
# `prepatch_check:` what happens when the state's new tests already pass without its patch.
PREPATCH_FAIL = "fail"
PREPATCH_WARN = "warn"
PREPATCH_ALLOW = "allow"
PREPATCH_POLICIES: tuple[str, ...] = (PREPATCH_FAIL, PREPATCH_WARN, PREPATCH_ALLOW)


def continues(loop_mode: str | None, state_mode: str | None) -> bool:
    """Whether a prompt state continues the chain: its `session_mode:`, else the loop's."""
    mode = state_mode if state_mode is not None else loop_mode
    return mode == SESSION_MODE_CONTINUE


def continuity_of(output: str) -> str | None:
    """What a continuing prompt's result hands the next one: its last CONTINUITY_CHARS
    characters (None when it said nothing)."""
    text = output.strip()
    return text[-CONTINUITY_CHARS:] if text else None


_GUARDS = "Every state's default: "  # how a guard's doc reads at the loop
# The guards' rows: what they read and record goes by these (`state.value(TAMPER_GUARD)`,
# a verdict recorded under `TAMPER_GUARD.name`), never by the key spelled again.
TAMPER_GUARD = Key(
    "tamper_guard",
    (LOOP, STATE),
    optional(one_of(TAMPER_POLICIES)),
    _TAMPER_DOC,
    docs={LOOP: _GUARDS + _TAMPER_DOC},
    lint_flag="tamper_guard_ok",
)
PREPATCH_CHECK = Key(
    "prepatch_check",
    (LOOP, STATE),
    optional(one_of(PREPATCH_POLICIES)),
    _PREPATCH_DOC,
    docs={LOOP: _GUARDS + _PREPATCH_DOC},
    lint_flag="prepatch_check_ok",
)
KEYS: tuple[Key, ...] = (
    Key(
        "on_handoff",
        (LOOP,),
        one_of(HANDOFF_MODES),
        "When a prompt's output says CONTEXT_HANDOFF: pause (the default) stops the run, "
        "resumable; spawn also starts `ll-loop resume NAME` in the background; terminate "
        "ends the run for good.",
        default=HANDOFF_PAUSE,
    ),
    Key(
        "singleton",
        (LOOP,),
        boolean,
        "Only one run of this loop at a time, whatever its scope or worktree: another start "
        "is refused.",
        default=False,
    ),
    Key(
        "default_timeout",
        (LOOP,),
        optional(ACTION_SECONDS),
        "Seconds every state's action may run when the state sets no timeout: (instead of "
        "its kind's default).",
    ),
    # A sub-loop state's (after `loop:` and `with:`): the child shares the parent's context
    # and gives its captures back; its commands run in a worktree of a branch.
    Key(
        "context_passthrough",
        (STATE,),
        boolean,
        "A sub-loop state's: the child starts with the parent's context and captured outputs "
        "(its own context wins), and its captures come back as ${captured.STATE.NAME...}.",
        default=False,
    ),
    Key(
        "worktree",
        (STATE,),
        optional(string),
        "A sub-loop state's: a branch name (${...} allowed); the child's actions run in a "
        "scratch git worktree of that existing branch, removed when it ends (empty: no "
        "worktree).",
    ),
    Key(
        "session_mode",
        (LOOP, STATE),
        optional(one_of(SESSION_MODE_VALUES)),
        _SESSION_MODE_DOC,
        docs={LOOP: _GUARDS + _SESSION_MODE_DOC},
        lint_flag="session_mode_ok",
    ),
    TAMPER_GUARD,
    PREPATCH_CHECK,
    Key(
        "params",
        (STATE,),
        optional(mapping),
        "An mcp_tool state's arguments (a mapping, ${...} filled in), given to mcp-call as JSON.",
    ),
)
RUN_LOOP_KEYS: dict[str, Check] = checks_at(LOOP, KEYS)
# A state's: model.StateConfig has these fields in this order.
RUN_STATE_KEYS: dict[str, Check] = checks_at(STATE, KEYS)
# The keys only a sub-loop state has (after `loop:` and `with:`).
SUBLOOP_STATE_KEYS: tuple[str, ...] = ("context_passthrough", "worktree")
