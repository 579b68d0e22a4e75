"""The keys of each level of a loop file and the check of each: the one list of them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TypeVar

from little_loops.fsm.actions.registry import BY_OPTIONS_KEY, ENTRIES
from little_loops.fsm.actions.sandbox_key import SANDBOX_CHECK, SANDBOX_KEY
from little_loops.fsm.definition.checks import agent_checks
from little_loops.fsm.definition.checks.commit_checks import KEYS as CHECKPOINT_ROWS
from little_loops.fsm.definition.model import (
    agents,
    loop_keys,
    metadata,
    parameters,
    reuse_keys,
    route_keys,
)
from little_loops.fsm.definition.model.agents import AGENT_CHECK
from little_loops.fsm.definition.model.fanout import FANOUT_STATE_KEYS
from little_loops.fsm.definition.model.key_row import EVALUATE, LOOP, STATE, Key, checks_at
from little_loops.fsm.definition.model.key_rows import PR_ROWS, RUN_ROWS, RUNTIME_ROWS
from little_loops.fsm.definition.model.learning import LEARNING_STATE_KEYS
from little_loops.fsm.definition.model.lint_flags import LINT_FLAG_KEYS
from little_loops.fsm.definition.model.metadata import MORE_STATE_KEYS
from little_loops.fsm.definition.model.retry_keys import RATE_LIMIT_KEYS, RETRY_KEYS
from little_loops.fsm.definition.model.reuse_keys import REUSE_STATE_CHECKS
from little_loops.fsm.definition.model.typed import (
    ACTION_TYPES,
    APPROVAL,
    DIRECTIONS,
    OPERATORS,
    SESSION_MODES,
    TERMINAL_OUTCOMES,
)
from little_loops.fsm.evaluators.registry import EVALUATOR_TYPES
from little_loops.fsm.facts.outcomes import NOTIFY_OUTCOMES
from little_loops.fsm.values.value_checks import (
    MAX_ACTION_SECONDS,
    MAX_LOOP_SECONDS,
    URL,
    Check,
    boolean,
    integer,
    judge_schema,
    mapping,
    number,
    number_or_reference,
    one_of,
    optional,
    pattern,
    scalar,
    string,
    text,
    words,
)

# A capture name is read back as ${captured.NAME}, so it must be one path segment.
_CAPTURE_NAME = r"^[A-Za-z_][A-Za-z0-9_-]*$"

_ACTION_SECONDS = number(0, MAX_ACTION_SECONDS, above=True, why="about 24.8 days")

# --- the keys of each level; tests hold them equal to the dataclass fields -------------


# The options block of each action kind that has one (its `options_key`), at the loop and in a
# state: the keys of each, from the kind's option table; null in a state unsets the loop's.
class _OptionTables(Mapping[str, dict[str, Check]]):
    """The key checks of each options block, made from its kind's table when first read (a
    file with no options block of a kind does not import that kind to be validated)."""

    def __init__(self) -> None:
        self._made: dict[str, dict[str, Check]] = {}

    def __getitem__(self, key: str) -> dict[str, Check]:
        if key not in self._made:
            options = BY_OPTIONS_KEY[key].options
            self._made[key] = {name: optional(option.check) for name, option in options.items()}
        return self._made[key]

    def __contains__(self, key: object) -> bool:
        return key in BY_OPTIONS_KEY

    def __iter__(self) -> Iterator[str]:
        return iter(BY_OPTIONS_KEY)

    def __len__(self) -> int:
        return len(BY_OPTIONS_KEY)


OPTION_KEYS: Mapping[str, dict[str, Check]] = _OptionTables()
_OPTION_BLOCKS: dict[str, Check] = {key: optional(mapping) for key in OPTION_KEYS}

# The paradigm of a loop written directly as states (and of a file with no `paradigm:`).
FSM_PARADIGM = "fsm"

# The loop's keys: one row each (key_row.Key), in its feature's module or loop_keys.py. Its
# settings, FSM files and paradigm specs alike, stand in the table in this order: these rows,
# each action kind's options block (its registry entry's, not a row: OPTION_KEYS), these rows.
SETTING_ROWS: tuple[Key, ...] = (
    loop_keys.CONTEXT,
    *parameters.KEYS,
    *loop_keys.LIMITS,
    *loop_keys.BLOCKS,
)
LATER_SETTING_ROWS: tuple[Key, ...] = (
    *agents.KEYS,
    *agent_checks.KEYS,
    *loop_keys.AFTER_AGENTS,
    *RUNTIME_ROWS,
    *CHECKPOINT_ROWS,
    loop_keys.SANDBOX,
)
# The keys only an FSM file has, after the settings; then each `*_ok` flag (lint_flags.py).
FSM_ROWS: tuple[Key, ...] = (
    *route_keys.LOOP_LIMIT_ROWS,
    *reuse_keys.LOOP_ROWS,
    *RUN_ROWS,
    *metadata.LOOP_ROWS,
)
# Every row of a key that may stand at the loop, in the table's order.
LOOP_ROWS: tuple[Key, ...] = tuple(
    row
    for row in (*loop_keys.HEAD, *SETTING_ROWS, *LATER_SETTING_ROWS, *FSM_ROWS)
    if LOOP in row.where
)

_Said = TypeVar("_Said")


def loop_settings(
    at: Callable[[str, Iterable[Key]], dict[str, _Said]], options: Mapping[str, _Said]
) -> dict[str, _Said]:
    """What *at* (`checks_at`, `docs_at`) says of each loop setting, in the table's order,
    with what *options* says of each options block after `stall:`."""
    return {**at(LOOP, SETTING_ROWS), **options, **at(LOOP, LATER_SETTING_ROWS)}


def loop_table(
    at: Callable[[str, Iterable[Key]], dict[str, _Said]],
    options: Mapping[str, _Said],
    flags: Mapping[str, _Said],
) -> dict[str, _Said]:
    """What *at* says of each loop key, in the table's order (the JSON Schema's): the head,
    the settings (*options* among them), the FSM file's own, then *flags*' lint flags."""
    head = at(LOOP, loop_keys.HEAD)
    return {**head, **loop_settings(at, options), **at(LOOP, FSM_ROWS), **flags}


# Loop settings: the one check of each, for FSM files and paradigm specs alike.
LOOP_SETTING_KEYS: dict[str, Check] = loop_settings(checks_at, _OPTION_BLOCKS)
LOOP_KEYS: dict[str, Check] = loop_table(checks_at, _OPTION_BLOCKS, LINT_FLAG_KEYS)
# How a paradigm's generated action states run (an approval asks, it does not run anything).
RUN_ACTION_TYPE = optional(one_of(tuple(t for t in ACTION_TYPES if t != APPROVAL)))
STATE_KEYS: dict[str, Check] = {
    "action": optional(text),
    "action_type": optional(one_of(ACTION_TYPES)),
    "capture": optional(pattern(_CAPTURE_NAME, "a name of letters, digits, '_' and '-'")),
    "timeout": optional(_ACTION_SECONDS),
    "idle_timeout": optional(_ACTION_SECONDS),
    "evaluate": optional(mapping),
    "route": optional(mapping),
    "on_success": optional(string),
    "on_failure": optional(string),
    "on_error": optional(string),
    "next": optional(string),
    "terminal": boolean,
    "on_maintain": optional(string),
    "stall": optional(mapping),
    "on_timeout": optional(string),
    **_OPTION_BLOCKS,
    "agent": optional(AGENT_CHECK),
    "session": one_of(SESSION_MODES),
    "session_key": optional(string),
    "retry": optional(mapping),
    "on_retry_exhausted": optional(string),
    **checks_at(STATE, RUNTIME_ROWS),
    "loop": optional(string),
    "with": optional(mapping),
    "outcome": optional(one_of(TERMINAL_OUTCOMES)),
    **checks_at(STATE, CHECKPOINT_ROWS),
    **route_keys.STATE_ROUTE_KEYS,
    **REUSE_STATE_CHECKS,
    **checks_at(STATE, RUN_ROWS),
    SANDBOX_KEY: optional(SANDBOX_CHECK),
    **MORE_STATE_KEYS,
    **LEARNING_STATE_KEYS,
    **FANOUT_STATE_KEYS,
    **checks_at(STATE, PR_ROWS),
}
# `stall:` of the loop and of a state (no_change_passes is the loop's alone: it counts passes).
STALL_KEYS: dict[str, Check] = {
    "same_result": optional(integer(1)),
    "no_change_passes": optional(integer(1)),
    "max_visits": optional(integer(1)),
    "ignore_volatile": optional(boolean),
    "on_stall": optional(string),
}
LOOP_ONLY_STALL_KEYS: tuple[str, ...] = ("no_change_passes",)
EVALUATE_KEYS: dict[str, Check] = {
    "type": one_of(EVALUATOR_TYPES),
    "operator": optional(one_of(OPERATORS)),
    "target": optional(scalar),
    "tolerance": optional(number_or_reference(0)),
    "pattern": optional(string),
    "negate": boolean,
    "path": optional(string),
    "previous": optional(text),
    "direction": one_of(DIRECTIONS),
    "prompt": optional(text),
    "schema": optional(judge_schema),
    "min_confidence": number(0, 1),
    "uncertain_suffix": boolean,
    "source": optional(text),
    **checks_at(EVALUATE, RUNTIME_ROWS),
}
LLM_KEYS: dict[str, Check] = {
    "enabled": boolean,
    "model": string,
    "max_tokens": integer(1),
    "timeout": _ACTION_SECONDS,
    "backend": string,  # one of JUDGE_BACKENDS or an agent's name: agent_checks.py says which
}
# State keys that only an action of some kinds can use (an options block, `session:` ...), each
# with the names of the kinds that can.
KIND_STATE_KEYS: dict[str, tuple[str, ...]] = {
    key: tuple(name for name, other in ENTRIES.items() if key in other.state_keys)
    for entry in ENTRIES.values()
    for key in entry.state_keys
}

# The run archive (`.loops/.history/`): how many finished runs of the loop to keep, how long.
ARCHIVE_KEYS: dict[str, Check] = {
    "keep": integer(0),
    "max_age_days": optional(number(0, MAX_LOOP_SECONDS / 86400, above=True, why="a year")),
}

# Who hears that a run ended: a command and/or a webhook, for some outcomes (default: all).
NOTIFY_KEYS: dict[str, Check] = {
    "command": optional(string),
    "webhook": optional(URL),
    "on": optional(words(tuple(NOTIFY_OUTCOMES))),
    "timeout": number(0, 600, above=True, why="ten minutes"),
    "retries": integer(0, 10),
}
# The settings mappings of a loop and the keys of each (an options block's: OPTION_KEYS).
_SETTINGS: tuple[tuple[str, dict[str, Check] | None], ...] = (
    ("llm", LLM_KEYS),
    ("archive", ARCHIVE_KEYS),
    ("stall", STALL_KEYS),
    *((key, None) for key in OPTION_KEYS),
    ("notify", NOTIFY_KEYS),
    ("retry", RETRY_KEYS),
    ("rate_limit", RATE_LIMIT_KEYS),
)

REQUIRED_LOOP_KEYS: tuple[str, ...] = tuple(row.name for row in loop_keys.HEAD if row.required)
# What the target of an evaluator that compares numbers must be.
NUMERIC_TARGET = number_or_reference()
