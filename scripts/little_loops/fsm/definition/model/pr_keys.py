"""The `pr:` key of a pull-request state and the keys of its block: one row each (key_row.Key)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from little_loops.fsm.definition.model.key_row import STATE, Key, checks_at, docs_at
from little_loops.fsm.forges import registry as forges
from little_loops.fsm.forges.merge import MergeMethod
from little_loops.fsm.values.value_checks import (
    BACKOFF_RATE,
    LOOP_SECONDS,
    Check,
    mapping,
    one_of,
    optional,
    string,
    text,
)

PR_KEY = "pr"  # the state key whose block makes a state a pull-request state
CHECKS_ALL = "all"  # every check on the head must pass
CHECKS_REQUIRED = "required"  # only the checks branch protection requires
CHECKS_CHOICES: tuple[str, ...] = (CHECKS_ALL, CHECKS_REQUIRED)
# The defaults of the block's keys (their rows below hold them).
DEFAULT_REMOTE = "origin"
DEFAULT_INTERVAL = 30.0  # seconds before the first look again at pending checks
DEFAULT_BACKOFF_RATE = 1.5
DEFAULT_MAX_INTERVAL = 300.0
DEFAULT_MAX_WAIT = 2 * 60 * 60.0  # for the checks of one pushed commit, in all

PR_DOC = (
    "Make this a pull-request state: push the branch, open or update its pull request, wait "
    "for its checks, merge if asked; on_success when green, on_failure when a check failed "
    "(the next state reads their names and log tails in `${prev.output}`), on_error when the "
    "forge cannot be reached."
)
# The state key whose block makes a pull-request state (its model: blocks.PullRequestConfig).
KEYS: tuple[Key, ...] = (Key(PR_KEY, (STATE,), optional(mapping), PR_DOC),)
# Each key of the `pr:` block (its place: PR_KEY), one row each: its check, doc and default
# (PullRequestConfig in blocks.py, the key checks and docs and the JSON Schema read them).
BLOCK_KEYS: tuple[Key, ...] = (
    Key(
        "title",
        (PR_KEY,),
        text,
        "The pull request's title (`${...}` filled in). Required.",
        default="",
        required=True,
    ),
    Key(
        "body",
        (PR_KEY,),
        optional(text),
        "Its body (`${...}` filled in), followed, under a `---` line, by the run's summary "
        "(loop, passes, states run, cost, the states of this pass); default: the summary alone.",
    ),
    Key(
        "forge",
        (PR_KEY,),
        one_of(forges.NAMES),
        f"Which forge hosts the remote: {', '.join(forges.NAMES)}. Default {forges.DEFAULT}.",
        default=forges.DEFAULT,
    ),
    Key(
        "remote",
        (PR_KEY,),
        string,
        f"The git remote the branch is pushed to. Default {DEFAULT_REMOTE}.",
        default=DEFAULT_REMOTE,
    ),
    Key(
        "branch",
        (PR_KEY,),
        optional(string),
        "The branch pushed and proposed (`${...}` filled in); default: the checked-out branch.",
    ),
    Key(
        "base",
        (PR_KEY,),
        optional(string),
        "The branch it is proposed into; default: the repository's.",
    ),
    Key(
        "checks",
        (PR_KEY,),
        one_of(CHECKS_CHOICES),
        "Which checks must pass: all (the default) or required (those branch protection requires).",
        default=CHECKS_ALL,
    ),
    Key(
        "merge",
        (PR_KEY,),
        one_of(tuple(MergeMethod)),
        "How to merge once every check passed and it would merge: squash, merge, rebase, or "
        "none (the default: leave it open).",
        default=MergeMethod.NONE.value,
    ),
    Key(
        "interval",
        (PR_KEY,),
        LOOP_SECONDS,
        f"Seconds before looking again at pending checks. Default {DEFAULT_INTERVAL:g}.",
        default=DEFAULT_INTERVAL,
    ),
    Key(
        "backoff_rate",
        (PR_KEY,),
        BACKOFF_RATE,
        f"Each further wait is this many times the one before. Default {DEFAULT_BACKOFF_RATE:g}.",
        default=DEFAULT_BACKOFF_RATE,
    ),
    Key(
        "max_interval",
        (PR_KEY,),
        LOOP_SECONDS,
        f"No wait is longer than this many seconds. Default {DEFAULT_MAX_INTERVAL:g}.",
        default=DEFAULT_MAX_INTERVAL,
    ),
    Key(
        "max_wait",
        (PR_KEY,),
        LOOP_SECONDS,
        "Seconds in all to wait for the checks of one pushed commit; then `on_timeout`, else "
        f"`on_error`. Default {DEFAULT_MAX_WAIT:g}.",
        default=DEFAULT_MAX_WAIT,
    ),
)
PR_CHECKS: dict[str, Check] = checks_at(PR_KEY, BLOCK_KEYS)
PR_DOCS: dict[str, str] = docs_at(PR_KEY, BLOCK_KEYS)
PR_DEFAULTS: dict[str, Any] = {row.name: row.default for row in BLOCK_KEYS}
REQUIRED_PR_KEYS: tuple[str, ...] = tuple(row.name for row in BLOCK_KEYS if row.required)
# A pull-request state runs no action of its own and routes its verdict: not with these.
NOT_WITH_PR: tuple[str, ...] = ("action", "action_type", "evaluate", "next", "loop", "terminal")


def pr_state_problems(state: Mapping[str, object]) -> list[tuple[str, str]]:
    """The keys a state with `pr:` must not have, each with why: (key, message)."""
    pr = state.get(PR_KEY)
    if pr is None or not isinstance(pr, Mapping):  # (None first: most states, and cheaper)
        return []
    return [
        (key, f"a pull-request state (`{PR_KEY}:`) runs no action: no `{key}` with it")
        for key in NOT_WITH_PR
        if state.get(key) not in (None, False)
    ]
