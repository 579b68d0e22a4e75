"""A fan-out state (`parallel:`, `map:`): its keys, their checks and docs."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import partial
from typing import Any, Protocol, TypeVar

from little_loops.fsm.definition.model.agents import AGENT_CHECK
from little_loops.fsm.definition.model.block_values import block_problem
from little_loops.fsm.definition.model.key_row import STATE, Key, checks_at
from little_loops.fsm.definition.reading.loop_files import LOOP_NAME_PATTERN
from little_loops.fsm.values.value_checks import (
    Check,
    describe,
    integer,
    mapping,
    number,
    one_of,
    optional,
    pattern,
    string,
)

# How a fan-out's branches join into its verdict, and which of them are merged after.
JOIN_ALL, JOIN_ANY, JOIN_BEST = "all", "any", "best"
JOINS = (JOIN_ALL, JOIN_ANY, JOIN_BEST)
MERGE_GREEN, MERGE_BEST, MERGE_NONE = "green", "best", "none"
MERGES = (MERGE_GREEN, MERGE_BEST, MERGE_NONE)
# Children running at once when `max_concurrency` is not given: a `${...}` list of thousands
# of lines starts this many processes and worktrees, not thousands.
DEFAULT_MAX_CONCURRENCY = 8
# A branch's child loop: a loop's name (its runs' files, worktree and git branch are named
# by it, so no `/`, `..` or leading `-`), or `library:NAME`; `${...}` is checked when filled.
CHILD_LOOP_PATTERN = r"^(?:library:)?" + LOOP_NAME_PATTERN.removeprefix("^")
DEFAULT_ITEM_KEY = "item"  # the context key of a map's child that holds its item (`as:`)
# What `join: best`'s judge is asked when `judge: true` gives no question of its own.
DEFAULT_JUDGE_QUESTION = (
    "Which branch did the task best? Compare their changes (diffs) and outputs; pick one, or"
    " answer cannot_judge when none can be told better."
)


def _judge(value: object) -> str | None:
    if value is True or (isinstance(value, str) and value.strip()):
        return None
    return f"expected true or a question (text), got {describe(value)}"


def child_loop_problem(value: object, filled_later: bool = True) -> str | None:
    """What is wrong with a branch's `loop:` (one line), or None; `${...}` text is checked
    once filled in when *filled_later* (a `parallel:` branch's; a map's is not filled in)."""
    problem = string(value)
    if problem is not None or not isinstance(value, str) or ("${" in value and filled_later):
        return problem
    if re.fullmatch(CHILD_LOOP_PATTERN, value):
        return None
    return (
        f"expected a loop's name (letters, digits, '.', '_', '-') or library:NAME,"
        f" got {describe(value)}"
    )


CHILD_LOOP = Check(child_loop_problem, {"type": "string", "minLength": 1})
MAP_LOOP = Check(
    partial(child_loop_problem, filled_later=False), {"type": "string", "minLength": 1}
)


# The keys both blocks take: how many children at once, the join, the merge, the score.
_COMMON: dict[str, Check] = {
    "max_concurrency": optional(integer(1)),
    "join": optional(one_of(JOINS)),
    "merge": optional(one_of(MERGES)),
    "score": optional(string),
    "judge": optional(Check(_judge, {"anyOf": [{"const": True}, {"type": "string"}]})),
    "max_cost_usd": optional(number(0, above=True)),
}
# A branch: a sub-loop (`loop:` and its `with:` values), or a prompt on a named agent
# (`agent:` and `prompt:`, run as a one-state child: fanout/prompt.yaml).
BRANCH_KEYS: dict[str, Check] = {
    "loop": optional(CHILD_LOOP),
    "with": optional(mapping),
    "agent": optional(AGENT_CHECK),
    "prompt": optional(string),
}


def branch_problem(number_: int, branch: Mapping[Any, object]) -> str | None:
    """What is wrong with branch *number_*'s keys together (one line), or None."""
    if "loop" in branch:
        extra = [key for key in ("agent", "prompt") if key in branch]
        if extra:
            return f"branch {number_} has loop: or agent: and prompt:, not both ({extra[0]}:)"
        return None
    missing = [key for key in ("agent", "prompt") if key not in branch]
    if len(missing) == 2:
        return f"branch {number_} needs loop: (a sub-loop) or agent: and prompt:"
    if missing:
        given = "prompt" if missing[0] == "agent" else "agent"
        return f"branch {number_} needs {missing[0]}: beside {given}:"
    if "with" in branch:
        return f"branch {number_}: with: goes with loop:, a prompt branch has none"
    return None


def _items(value: object) -> str | None:
    if isinstance(value, str):
        return None  # `${...}` text: a JSON array or lines, read when the state runs
    if not isinstance(value, list):
        return f"expected a list or ${{...}} text, got {describe(value)}"
    bad = next((item for item in value if isinstance(item, dict | list) or item is None), None)
    return None if bad is None else f"expected plain values in the list, got {describe(bad)}"


MAP_KEYS: dict[str, Check] = {
    "items": Check(_items, {"type": ["array", "string"]}),
    "loop": optional(MAP_LOOP),
    "prompt": optional(string),  # no loop: each item is an agent given this prompt
    "as": optional(pattern(r"^[A-Za-z_][A-Za-z0-9_]*$", "a context key (letters, digits, _)")),
    "with": optional(mapping),
    **_COMMON,
}


def _branches(value: object) -> str | None:
    if not isinstance(value, list) or not value:
        return f"expected a non-empty list of branches, got {describe(value)}"
    for number_, branch in enumerate(value, 1):
        problem = block_problem(branch, BRANCH_KEYS, f"branch {number_} > ")
        if problem is None:
            problem = branch_problem(number_, branch)
        if problem is not None:
            return problem
    return None


PARALLEL_KEYS: dict[str, Check] = {
    "branches": Check(_branches, {"type": "array", "minItems": 1}),
    **_COMMON,
}


def _block(allowed: dict[str, Check], required: tuple[str, ...]) -> Check:
    def check(value: object) -> str | None:
        if value is None:
            return None
        problem = block_problem(value, allowed)
        if problem is None and isinstance(value, Mapping):
            missing = [key for key in required if key not in value]
            if missing:
                return f"needs {' and '.join(missing)}"
            if "items" in value:  # a map: of a loop, or of agents given one prompt
                if ("loop" in value) == ("prompt" in value):
                    return "needs loop: (the child loop) or prompt: (each item an agent), one"
                extra = [key for key in ("as", "with") if key in value]
                if "prompt" in value and extra:
                    return f"{extra[0]}: goes with loop:; with prompt: each item is an agent"
                item_key = value.get("as") or DEFAULT_ITEM_KEY
                if isinstance(value.get("with"), Mapping) and item_key in value["with"]:
                    return (
                        f"with: {item_key} is the key each child's item is given as (as:);"
                        " the item would replace it: name one of them differently"
                    )
            best = value.get("join") == JOIN_BEST
            if best and value.get("score") and value.get("judge"):
                return "join: best takes score: or judge:, not both"
            if best and not value.get("score") and not value.get("judge"):
                return (
                    "join: best needs score: (a command printing a number in each branch)"
                    " or judge: (the LLM judge compares the branches)"
                )
            if value.get("judge") and not best:
                return "judge: needs join: best"
            if value.get("merge") == MERGE_BEST and value.get("join") != JOIN_BEST:
                return "merge: best needs join: best"
        return problem

    schema = {
        "type": ["object", "null"],
        "properties": {key: c.json for key, c in allowed.items()},
        "additionalProperties": False,
    }
    return Check(check, schema)


# A fan-out state's keys, one row each (key_tables splices them into a state's keys).
KEYS: tuple[Key, ...] = (
    Key(
        "parallel",
        (STATE,),
        _block(PARALLEL_KEYS, ("branches",)),
        "Run several sub-loops or agent prompts at once, each in its own git worktree and "
        "branch: branches (each loop: and with:, or agent: and prompt:), max_concurrency, join "
        "(all, any, best), merge (green, best, none), score or judge (join: best's command, or "
        "true or a question for the LLM judge), max_cost_usd (shared by the branches). The "
        "join's verdict routes; ${captured.STATE.*} holds each branch's outcome.",
    ),
    Key(
        "map",
        (STATE,),
        _block(MAP_KEYS, ("items",)),
        "Run one sub-loop per item at once, each in its own git worktree and branch: items (a "
        "list, or ${...} text: a JSON array or lines), loop, or prompt (each item an agent "
        "given it: N agents, or one named N times), as (the child's context key of "
        "the item, default item), with, and parallel:'s max_concurrency, join, merge, score, "
        "judge, max_cost_usd.",
    ),
)
FANOUT_STATE_KEYS: dict[str, Check] = checks_at(STATE, KEYS)

# Keys a state whose work is a child run (a sub-loop state's child, a fan-out state's
# branches) cannot have: the child is its action and gives its verdict (`timeout:` bounds
# the child's time; `retry:` would run it again).
NOT_WITH_CHILD: tuple[str, ...] = (
    "action",
    "action_type",
    "evaluate",
    "next",
    "idle_timeout",
    "retry",
    "on_retry_exhausted",
)
# A fan-out state is no sub-loop state, nor a terminal one, either.
NOT_WITH_FANOUT: tuple[str, ...] = (*NOT_WITH_CHILD, "loop", "terminal")


def fanout_key_problems(state: Mapping[Any, object]) -> Iterator[tuple[tuple[str], str]]:
    """Keys that do not go together with `parallel:` / `map:` in one raw state."""
    given = [key for key in FANOUT_STATE_KEYS if state.get(key) is not None]
    if len(given) > 1:
        yield ("map",), "a state has parallel: or map:, not both"
    if given:
        for key in NOT_WITH_FANOUT:
            if state.get(key) not in (None, False):
                yield (
                    (key,),
                    f"a fan-out state ({given[0]}:) runs its branches: it cannot have {key}",
                )


def branch_label(branch: Mapping[str, Any]) -> str:
    """A `parallel:` branch in a word: its loop, or `agent prompt`."""
    if "loop" in branch:
        return str(branch.get("loop"))
    agent = branch.get("agent")
    return f"{','.join(agent) if isinstance(agent, list) else agent} prompt"


_FanOut = TypeVar("_FanOut", covariant=True)


class _StateLike(Protocol[_FanOut]):
    @property
    def parallel(self) -> _FanOut | None: ...

    @property
    def map(self) -> _FanOut | None: ...


def fan_out_of(state: _StateLike[_FanOut]) -> _FanOut | None:
    """The state's fan-out (`parallel:` or `map:`), or None when it is not a fan-out state."""
    return state.parallel if state.parallel is not None else state.map
