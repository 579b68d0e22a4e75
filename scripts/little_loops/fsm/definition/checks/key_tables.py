"""The keys of each level of a loop file and the check of each: the one list of them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from little_loops.fsm.actions.registry import BY_OPTIONS_KEY, ENTRIES
from little_loops.fsm.actions.sandbox_key import SANDBOX_CHECK, SANDBOX_KEY
from little_loops.fsm.definition.model import route_keys
from little_loops.fsm.definition.model.agents import AGENT_CHECK, AGENTS_CHECK
from little_loops.fsm.definition.model.commit_keys import KEYS as CHECKPOINT_ROWS
from little_loops.fsm.definition.model.fanout import FANOUT_STATE_KEYS
from little_loops.fsm.definition.model.key_row import EVALUATE, LOOP, STATE, checks_at
from little_loops.fsm.definition.model.key_rows import PR_ROWS, RUN_ROWS, RUNTIME_ROWS
from little_loops.fsm.definition.model.learning import LEARNING_STATE_KEYS
from little_loops.fsm.definition.model.metadata import MORE_LOOP_KEYS, MORE_STATE_KEYS
from little_loops.fsm.definition.model.parameters import PARAMETERS_CHECK
from little_loops.fsm.definition.model.retry_keys import RATE_LIMIT_KEYS, RETRY_KEYS
from little_loops.fsm.definition.model.typed import (
    ACTION_TYPES,
    APPROVAL,
    DIRECTIONS,
    OPERATORS,
    SESSION_MODES,
    TERMINAL_OUTCOMES,
)
from little_loops.fsm.definition.reading.loop_files import LOOP_NAME_PATTERN
from little_loops.fsm.definition.reading.reuse_keys import REUSE_LOOP_CHECKS, REUSE_STATE_CHECKS
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
    string_list,
    text,
    words,
)

# A capture name is read back as ${captured.NAME}, so it must be one path segment.
_CAPTURE_NAME = r"^[A-Za-z_][A-Za-z0-9_-]*$"

_ACTION_SECONDS = number(0, MAX_ACTION_SECONDS, above=True, why="about 24.8 days")
_LOOP_SECONDS = number(0, MAX_LOOP_SECONDS, above=True, why="a year")

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

# Loop settings: the one check of each, for FSM files and paradigm specs alike.
LOOP_SETTING_KEYS: dict[str, Check] = {
    "context": optional(mapping),
    "parameters": optional(PARAMETERS_CHECK),
    "scope": optional(string_list),
    "max_iterations": integer(1),
    "backoff": optional(number(0, MAX_LOOP_SECONDS, why="a year")),
    "timeout": optional(_LOOP_SECONDS),
    "idle_timeout": optional(_ACTION_SECONDS),
    "max_cost_usd": optional(number(0, above=True)),
    "maintain": boolean,
    "worktree": boolean,
    "llm": mapping,
    "archive": mapping,
    "stall": optional(mapping),
    **_OPTION_BLOCKS,
    "agent": optional(AGENT_CHECK),
    "agents": optional(AGENTS_CHECK),
    "notify": optional(mapping),
    "retry": optional(mapping),
    "rate_limit": optional(mapping),
    **checks_at(LOOP, RUNTIME_ROWS),
    **checks_at(LOOP, CHECKPOINT_ROWS),
    SANDBOX_KEY: optional(SANDBOX_CHECK),
}
LOOP_KEYS: dict[str, Check] = {
    "name": pattern(LOOP_NAME_PATTERN, "a name of at most 200 letters, digits, '.', '_' and '-'"),
    "initial": string,
    "states": mapping,
    "paradigm": optional(string),
    **LOOP_SETTING_KEYS,
    **route_keys.LOOP_LIMIT_KEYS,
    **REUSE_LOOP_CHECKS,
    **checks_at(LOOP, RUN_ROWS),
    **MORE_LOOP_KEYS,
}
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

REQUIRED_LOOP_KEYS: tuple[str, ...] = ("name", "initial", "states")
# What the target of an evaluator that compares numbers must be.
NUMERIC_TARGET = number_or_reference()
