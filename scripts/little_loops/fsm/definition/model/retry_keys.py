"""The keys of `retry:` and `rate_limit:`, and which verdicts a state's `retry: on:` may name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from little_loops.fsm.actions.registry import kind_of
from little_loops.fsm.definition.model.blocks import (
    DEFAULT_RATE_LIMIT_LADDER,
    DEFAULT_RATE_LIMIT_MAX_WAIT,
)
from little_loops.fsm.definition.model.key_row import Key, checks_at
from little_loops.fsm.evaluators.config import DEFAULT_EVALUATOR, EvaluateConfig
from little_loops.fsm.evaluators.judge_rules import UNCERTAIN_SUFFIX
from little_loops.fsm.evaluators.registry import SPECS
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.suggest import did_you_mean
from little_loops.fsm.values.value_checks import (
    BACKOFF_RATE,
    LOOP_SECONDS,
    RETRY_ATTEMPTS,
    WAIT_SECONDS,
    Check,
    check_with,
    describe,
    one_of,
    optional,
)

# How `retry: {jitter: ...}` spreads the waits (Step Functions' JitterStrategy FULL|NONE).
JITTER_STRATEGIES: tuple[str, ...] = ("none", "full")
MAX_EXIT_CODE = 255  # a process's exit status is one byte


@check_with(
    {
        "anyOf": [
            {"type": ["string", "integer"]},
            {"type": "array", "items": {"type": ["string", "integer"]}, "minItems": 1},
        ]
    }
)
def retry_on(value: object) -> str | None:
    """`retry: {on: ...}`: a verdict, `error` or an exit code, or a list of them."""
    items = value if isinstance(value, list) else [value]
    if not items:
        return "expected at least one verdict, `error` or exit code"
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int) or item == "":
            return f"expected verdicts, `error` or exit codes (whole numbers), got {describe(item)}"
        if isinstance(item, int) and not 0 <= item <= MAX_EXIT_CODE:
            return f"an exit code is a whole number from 0 to {MAX_EXIT_CODE}, got {item}"
    return None


@check_with({"type": "array", "items": {"type": "number", "minimum": 0}, "minItems": 1})
def wait_ladder(value: object) -> str | None:
    """`rate_limit: {ladder: ...}`: seconds of each successive wait."""
    if not isinstance(value, list) or not value:
        return f"expected a list of seconds, got {describe(value)}"
    for item in value:
        problem = WAIT_SECONDS(item)
        if problem is not None:
            return problem
    return None


# `retry:` of the loop and of a state, one row each (its place: the block's key; RetryConfig
# in blocks.py holds the rows' defaults).
RETRY_BLOCK = "retry"
RETRY_ROWS: tuple[Key, ...] = (
    Key(
        "on",
        (RETRY_BLOCK,),
        retry_on,
        "The results that cause a retry: verdicts (success, failure, ...), error, and exit "
        "codes (whole numbers). Default [error].",
        default=[ERROR_VERDICT],
    ),
    Key(
        "max_attempts",
        (RETRY_BLOCK,),
        RETRY_ATTEMPTS,
        "Attempts in all, the first one included. Default 3.",
        default=3,
    ),
    Key(
        "interval",
        (RETRY_BLOCK,),
        WAIT_SECONDS,
        "Seconds to wait before the second attempt. Default 1.",
        default=1.0,
    ),
    Key(
        "backoff_rate",
        (RETRY_BLOCK,),
        BACKOFF_RATE,
        "Each further wait is this many times the one before. Default 2.0.",
        default=2.0,
    ),
    Key(
        "max_interval",
        (RETRY_BLOCK,),
        optional(LOOP_SECONDS),
        "No wait between attempts is longer than this many seconds.",
    ),
    Key(
        "jitter",
        (RETRY_BLOCK,),
        one_of(JITTER_STRATEGIES),
        "none (the default): wait exactly; full: wait a random time from 0 to the computed wait.",
        default=JITTER_STRATEGIES[0],
    ),
)
RETRY_KEYS: dict[str, Check] = checks_at(RETRY_BLOCK, RETRY_ROWS)

# `rate_limit:` of the loop, one row each (RateLimitConfig in blocks.py holds the rows' defaults).
RATE_LIMIT_BLOCK = "rate_limit"
RATE_LIMIT_ROWS: tuple[Key, ...] = (
    Key(
        "ladder",
        (RATE_LIMIT_BLOCK,),
        wait_ladder,
        "Seconds of each successive wait when no reset time is given; the last repeats. "
        f"Default [{', '.join(f'{step:g}' for step in DEFAULT_RATE_LIMIT_LADDER)}].",
        default=list(DEFAULT_RATE_LIMIT_LADDER),
    ),
    Key(
        "max_wait",
        (RATE_LIMIT_BLOCK,),
        LOOP_SECONDS,
        "The longest one step waits for Claude's limits in all before the run ends with an "
        f"error. Default {DEFAULT_RATE_LIMIT_MAX_WAIT:g} (6 hours).",
        default=DEFAULT_RATE_LIMIT_MAX_WAIT,
    ),
)
RATE_LIMIT_KEYS: dict[str, Check] = checks_at(RATE_LIMIT_BLOCK, RATE_LIMIT_ROWS)


def unknown_verdicts(data: Mapping[Any, object], state: Mapping[Any, object]) -> list[str]:
    """One problem for each verdict a state's `retry:` block *data* names in `on:` that the
    *state* cannot give (its evaluator's vocabulary, when its file says)."""
    on = data.get("on")
    verdicts = _verdicts_of(state)
    if verdicts is None or retry_on(on) is not None:
        return []
    known = (ERROR_VERDICT, *verdicts)
    problems = []
    for item in on if isinstance(on, list) else [on]:
        if isinstance(item, str) and item.removesuffix(UNCERTAIN_SUFFIX) not in known:
            hint = did_you_mean(item, known) or f" (it gives: {', '.join(known)})"
            problems.append(f"'{item}' is not a verdict of this state{hint}")
    return problems


def verdicts_no_state_gives(data: Mapping[Any, object], states: Mapping[Any, object]) -> list[str]:
    """One problem for each verdict the loop's `retry:` block *data* names in `on:` that no
    state it applies to can give: those with an action and no `retry:` of their own (none
    when one of them does not say which verdicts it gives, or none of them has an action)."""
    on = data.get("on")
    if retry_on(on) is not None:
        return []
    given: dict[str, None] = {ERROR_VERDICT: None}
    applies = False
    for state in states.values():
        if not isinstance(state, Mapping) or state.get("retry") is not None:
            continue
        if not state.get("action") or state.get("terminal") is True:
            continue  # a decision state is not retried (engine/rules/retries.py)
        verdicts = _verdicts_of(state)
        if verdicts is None:
            return []
        applies = True
        given.update(dict.fromkeys(verdicts))
    known = tuple(given)
    problems = []
    for item in on if isinstance(on, list) else [on]:
        if applies and isinstance(item, str) and item.removesuffix(UNCERTAIN_SUFFIX) not in known:
            hint = did_you_mean(item, known) or f" (they give: {', '.join(known)})"
            problems.append(f"'{item}' is not a verdict of any state it applies to{hint}")
    return problems


def _verdicts_of(state: Mapping[Any, object]) -> tuple[str, ...] | None:
    """The verdicts besides `error` a raw *state* can give, when its file says (else None)."""
    raw = state.get("evaluate")
    if raw is not None and not isinstance(raw, Mapping):
        return None
    if raw is None:
        action = state.get("action")
        default = kind_of(state.get("action_type"), action).default_evaluator
        raw = {"type": default if action else DEFAULT_EVALUATOR}
    kind = raw.get("type")
    spec = SPECS.get(kind) if isinstance(kind, str) else None
    if spec is None:
        return None
    try:
        return spec.verdicts_for(EvaluateConfig.from_dict(dict(raw)))
    except TypeError:
        return None
