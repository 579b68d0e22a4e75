"""Keys of how a run meets its limits and guards its files: on_handoff, singleton, guards."""

from __future__ import annotations

from little_loops.fsm.values.value_checks import (
    MAX_ACTION_SECONDS,
    Check,
    boolean,
    mapping,
    number,
    one_of,
    optional,
    string,
)

# The state keys only a sub-loop state has (after `loop:` and `with:`): the child shares the
# parent's context and gives its captures back; its commands run in a worktree of a branch.
SUBLOOP_STATE_KEYS: dict[str, Check] = {
    "context_passthrough": boolean,
    "worktree": optional(string),
}
SUBLOOP_KEY_DOCS: dict[str, str] = {
    "context_passthrough": (
        "A sub-loop state's: the child starts with the parent's context and captured outputs "
        "(its own context wins), and its captures come back as ${captured.STATE.NAME...}."
    ),
    "worktree": (
        "A sub-loop state's: a branch name (${...} allowed); the child's actions run in a "
        "scratch git worktree of that existing branch, removed when it ends (empty: no worktree)."
    ),
}
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


_GUARD_KEYS: dict[str, Check] = {
    "session_mode": optional(one_of(SESSION_MODE_VALUES)),
    "tamper_guard": optional(one_of(TAMPER_POLICIES)),
    "prepatch_check": optional(one_of(PREPATCH_POLICIES)),
}
RUN_LOOP_KEYS: dict[str, Check] = {
    "on_handoff": one_of(HANDOFF_MODES),
    "singleton": boolean,
    "default_timeout": optional(number(0, MAX_ACTION_SECONDS, above=True, why="about 24.8 days")),
    **_GUARD_KEYS,
}
# A state's (the sub-loop ones first): model.StateConfig has these fields in this order.
RUN_STATE_KEYS: dict[str, Check] = {
    **SUBLOOP_STATE_KEYS,
    **_GUARD_KEYS,
    "params": optional(mapping),
}

_GUARD_DOCS: dict[str, str] = {
    "session_mode": (
        "continue: a prompt state starts with the result of the previous prompt state that "
        "also continues (the chain breaks at a fresh one); fresh (the default): it does not."
    ),
    "tamper_guard": (
        "When the action changed test files (or pytest's config): fail routes to a failure "
        "terminal, revert restores tracked ones from git, allow records them in "
        "${context._tamper_guard}."
    ),
    "prepatch_check": (
        "After the action succeeded, the tests its patch added or changed run in a scratch git "
        "worktree at the code before the patch: a new one that passes there proves nothing; "
        "fail routes to a failure terminal, warn records a prepatch_check_flagged event, "
        "allow only ${context._prepatch_check}."
    ),
}
RUN_LOOP_KEY_DOCS: dict[str, str] = {
    "on_handoff": (
        "When a prompt's output says CONTEXT_HANDOFF: pause (the default) stops the run, "
        "resumable; spawn also starts `ll-loop resume NAME` in the background; terminate "
        "ends the run for good."
    ),
    "singleton": (
        "Only one run of this loop at a time, whatever its scope or worktree: another start "
        "is refused."
    ),
    "default_timeout": (
        "Seconds every state's action may run when the state sets no timeout: (instead of "
        "its kind's default)."
    ),
    **{key: f"Every state's default: {doc}" for key, doc in _GUARD_DOCS.items()},
}
RUN_STATE_KEY_DOCS: dict[str, str] = {
    **SUBLOOP_KEY_DOCS,
    **_GUARD_DOCS,
    "params": (
        "An mcp_tool state's arguments (a mapping, ${...} filled in), given to mcp-call as JSON."
    ),
}
