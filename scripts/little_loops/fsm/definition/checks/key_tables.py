"""The keys of each level of a loop file and the check of each: the one list of them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TypeVar

from little_loops.fsm.actions.registry import BY_OPTIONS_KEY, ENTRIES
from little_loops.fsm.actions.sandbox_key import SANDBOX_CHECK, SANDBOX_KEY
from little_loops.fsm.definition.model import (
    agents,
    core_keys,
    evaluate_keys,
    fanout_keys,
    learning_keys,
    loop_keys,
    metadata,
    parameters,
    reuse_keys,
    route_keys,
)
from little_loops.fsm.definition.model.blocks import (
    DEFAULT_KEEP_RUNS,
    DEFAULT_NOTIFY_RETRIES,
    DEFAULT_NOTIFY_TIMEOUT,
)
from little_loops.fsm.definition.model.commit_keys import KEYS as CHECKPOINT_ROWS
from little_loops.fsm.definition.model.core_keys import ACTION_TYPES, APPROVAL
from little_loops.fsm.definition.model.key_row import EVALUATE, LOOP, STATE, Key, checks_at
from little_loops.fsm.definition.model.key_rows import PR_ROWS, RUN_ROWS, RUNTIME_ROWS
from little_loops.fsm.definition.model.lint_flags import LINT_FLAG_KEYS
from little_loops.fsm.definition.model.retry_keys import (
    RATE_LIMIT_BLOCK,
    RATE_LIMIT_KEYS,
    RETRY_BLOCK,
    RETRY_KEYS,
)
from little_loops.fsm.evaluators.config import DEFAULT_LLM_MODEL
from little_loops.fsm.facts.outcomes import NOTIFY_OUTCOMES
from little_loops.fsm.values.value_checks import (
    ACTION_SECONDS,
    MAX_LOOP_SECONDS,
    URL,
    Check,
    boolean,
    integer,
    mapping,
    number,
    number_or_reference,
    one_of,
    optional,
    string,
    words,
)

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
# A state's keys: the rows of their features' modules; the action kinds' options blocks and
# `sandbox:` are the registries' (actions/registry.py, actions/sandbox_key.py).
STATE_KEYS: dict[str, Check] = {
    **checks_at(STATE, core_keys.ACTION_KEYS),
    **_OPTION_BLOCKS,
    **checks_at(STATE, core_keys.SESSION_KEYS),
    **checks_at(STATE, RUNTIME_ROWS),
    **checks_at(STATE, core_keys.SUBLOOP_KEYS),
    **checks_at(STATE, CHECKPOINT_ROWS),
    **checks_at(STATE, route_keys.KEYS),
    **checks_at(STATE, reuse_keys.STATE_ROWS),
    **checks_at(STATE, RUN_ROWS),
    SANDBOX_KEY: optional(SANDBOX_CHECK),
    **checks_at(STATE, metadata.STATE_ROWS),
    **checks_at(STATE, learning_keys.KEYS),
    **checks_at(STATE, fanout_keys.KEYS),
    **checks_at(STATE, PR_ROWS),
}
# `stall:` of the loop and of a state, one row each (its place: the block's key; StallConfig
# in blocks.py holds the rows' defaults: no_change_passes is the loop's alone, it counts passes).
STALL_BLOCK = "stall"
STALL_ROWS: tuple[Key, ...] = (
    Key(
        "same_result",
        (STALL_BLOCK,),
        optional(integer(1)),
        "Stall when a state gives the same verdict on the same output N times in a row.",
    ),
    Key(
        "no_change_passes",
        (STALL_BLOCK,),
        optional(integer(1)),
        "Stall when N passes in a row change nothing in the git working tree (loop level only).",
    ),
    Key(
        "max_visits",
        (STALL_BLOCK,),
        optional(integer(1)),
        "Stall when a state is entered more than N times.",
    ),
    Key(
        "ignore_volatile",
        (STALL_BLOCK,),
        optional(boolean),
        "same_result compares outputs with durations, clock times, pids, temp paths and "
        "addresses masked (default true); false compares them byte for byte.",
    ),
    Key(
        "on_stall",
        (STALL_BLOCK,),
        optional(string),
        "The state to go to on a stall; none: the run ends with terminated_by 'stall'.",
    ),
)
STALL_KEYS: dict[str, Check] = checks_at(STALL_BLOCK, STALL_ROWS)
LOOP_ONLY_STALL_KEYS: tuple[str, ...] = ("no_change_passes",)
EVALUATE_KEYS: dict[str, Check] = {
    **checks_at(EVALUATE, evaluate_keys.BASE_KEYS),
    **checks_at(EVALUATE, RUNTIME_ROWS),
}
# `llm:`, the llm_structured evaluator's settings, one row each (LLMConfig in
# evaluators/config.py holds the rows' defaults).
LLM_BLOCK = "llm"
LLM_ROWS: tuple[Key, ...] = (
    Key(
        "enabled",
        (LLM_BLOCK,),
        boolean,
        "false turns LLM evaluation off (for CI). Default true.",
        default=True,
    ),
    Key(
        "model",
        (LLM_BLOCK,),
        string,
        'The model for evaluation; the default is DEFAULT_LLM_MODEL ("${DEFAULT_LLM_MODEL}" '
        "also means the default).",
        default=DEFAULT_LLM_MODEL,
    ),
    Key(
        "max_tokens",
        (LLM_BLOCK,),
        integer(1),
        "Maximum tokens of an evaluation answer. Default 256.",
        default=256,
    ),
    Key(
        "timeout",
        (LLM_BLOCK,),
        ACTION_SECONDS,
        "Seconds per evaluation call. Default 30.",
        default=30,
    ),
    Key(
        "backend",
        (LLM_BLOCK,),
        string,  # one of JUDGE_BACKENDS or an agent's name: agent_checks.py says which
        "Who judges: api (the Anthropic API, needs ANTHROPIC_API_KEY), an agent whose CLI "
        "answers with schema-checked JSON (claude: Claude Code's own login) or auto (the "
        "default: api when ANTHROPIC_API_KEY is set, else the state's agent when it can judge, "
        "else claude).",
        default="auto",
    ),
)
LLM_KEYS: dict[str, Check] = checks_at(LLM_BLOCK, LLM_ROWS)
# State keys that only an action of some kinds can use (an options block, `session:` ...), each
# with the names of the kinds that can.
KIND_STATE_KEYS: dict[str, tuple[str, ...]] = {
    key: tuple(name for name, other in ENTRIES.items() if key in other.state_keys)
    for entry in ENTRIES.values()
    for key in entry.state_keys
}

# The run archive (`.loops/.history/`): how many finished runs of the loop to keep, how long
# (ArchiveConfig in blocks.py holds the rows' defaults).
ARCHIVE_BLOCK = "archive"
ARCHIVE_ROWS: tuple[Key, ...] = (
    Key(
        "keep",
        (ARCHIVE_BLOCK,),
        integer(0),
        "How many finished runs to keep; the oldest go first; 0 keeps none. "
        f"Default {DEFAULT_KEEP_RUNS}.",
        default=DEFAULT_KEEP_RUNS,
    ),
    Key(
        "max_age_days",
        (ARCHIVE_BLOCK,),
        optional(number(0, MAX_LOOP_SECONDS / 86400, above=True, why="a year")),
        "Also drop runs that ended more than this many days ago. Default: no limit.",
    ),
)
ARCHIVE_KEYS: dict[str, Check] = checks_at(ARCHIVE_BLOCK, ARCHIVE_ROWS)

# Who hears that a run ended: a command and/or a webhook, for some outcomes (default: all);
# NotifyConfig in blocks.py holds the rows' defaults.
NOTIFY_BLOCK = "notify"
NOTIFY_ROWS: tuple[Key, ...] = (
    Key(
        "command",
        (NOTIFY_BLOCK,),
        optional(string),
        "A bash command run in the project folder with the run's JSON summary on stdin and "
        "LL_LOOP_OUTCOME, LL_LOOP_EXIT_CODE, LL_LOOP_NAME, LL_LOOP_RUN_ID set.",
    ),
    Key(
        "webhook",
        (NOTIFY_BLOCK,),
        optional(URL),
        "An http:// or https:// URL the run's JSON summary is POSTed to.",
    ),
    Key(
        "on",
        (NOTIFY_BLOCK,),
        optional(words(tuple(NOTIFY_OUTCOMES))),
        "The outcomes that notify (done, failed, budget, max_iterations, timeout, handoff, "
        "interrupted, stopped ...). Default: all.",
    ),
    Key(
        "timeout",
        (NOTIFY_BLOCK,),
        number(0, 600, above=True, why="ten minutes"),
        f"Seconds the command, or one webhook try, may take. Default {DEFAULT_NOTIFY_TIMEOUT:g}.",
        default=DEFAULT_NOTIFY_TIMEOUT,
    ),
    Key(
        "retries",
        (NOTIFY_BLOCK,),
        integer(0, 10),
        "Webhook tries after a failed one, 1 s, 2 s, 4 s ... apart. "
        f"Default {DEFAULT_NOTIFY_RETRIES}.",
        default=DEFAULT_NOTIFY_RETRIES,
    ),
)
NOTIFY_KEYS: dict[str, Check] = checks_at(NOTIFY_BLOCK, NOTIFY_ROWS)
# The settings mappings of a loop and the keys of each (an options block's: OPTION_KEYS).
_SETTINGS: tuple[tuple[str, dict[str, Check] | None], ...] = (
    (LLM_BLOCK, LLM_KEYS),
    (ARCHIVE_BLOCK, ARCHIVE_KEYS),
    (STALL_BLOCK, STALL_KEYS),
    *((key, None) for key in OPTION_KEYS),
    (NOTIFY_BLOCK, NOTIFY_KEYS),
    (RETRY_BLOCK, RETRY_KEYS),
    (RATE_LIMIT_BLOCK, RATE_LIMIT_KEYS),
)

REQUIRED_LOOP_KEYS: tuple[str, ...] = tuple(row.name for row in loop_keys.HEAD if row.required)
# What the target of an evaluator that compares numbers must be.
NUMERIC_TARGET = number_or_reference()
