"""The loop's own keys, those of no feature module (name, states, limits, settings blocks): rows.

key_tables.py puts them in the loop's table with the loop keys of the feature modules (each
declared in its own: `parameters:` in parameters.py, `agent:` in agents.py ...).
"""

from __future__ import annotations

from little_loops.fsm.actions.sandbox_key import SANDBOX_CHECK, SANDBOX_DOC, SANDBOX_KEY
from little_loops.fsm.definition.model.blocks import ArchiveConfig, RateLimitConfig
from little_loops.fsm.definition.model.key_row import LOOP, Key
from little_loops.fsm.definition.reading.loop_files import LOOP_NAME_PATTERN
from little_loops.fsm.evaluators.config import LLMConfig
from little_loops.fsm.values.value_checks import (
    ACTION_SECONDS,
    LOOP_SECONDS,
    WAIT_SECONDS,
    boolean,
    integer,
    mapping,
    number,
    optional,
    pattern,
    string,
    string_list,
)

# The iterations a loop that sets no `max_iterations:` may run.
DEFAULT_MAX_ITERATIONS = 50

# What a loop file is: its name, where it starts, its states, and how it is written.
HEAD: tuple[Key, ...] = (
    Key(
        "name",
        (LOOP,),
        pattern(LOOP_NAME_PATTERN, "a name of at most 200 letters, digits, '.', '_' and '-'"),
        "The loop's identifier; it names the run's state and log files, so at most 200 "
        "letters, digits, '.', '_' and '-'.",
        required=True,
    ),
    Key("initial", (LOOP,), string, "The state the loop starts in.", required=True),
    Key("states", (LOOP,), mapping, "The states, by name.", required=True),
    Key(
        "paradigm",
        (LOOP,),
        optional(string),
        "The paradigm this file is written in; fsm (the default) for states and transitions.",
    ),
)
CONTEXT = Key(
    "context",
    (LOOP,),
    optional(mapping),
    "Variables for ${context.NAME} references; values may refer to each other.",
    default={},
)
# After `parameters:` (parameters.py): the loop's limits and whole-run settings.
LIMITS: tuple[Key, ...] = (
    Key(
        "scope",
        (LOOP,),
        optional(string_list),
        "Paths this loop changes; two loops with overlapping scopes do not run at once. "
        "Default: the whole project.",
        default=[],
    ),
    Key(
        "max_iterations",
        (LOOP,),
        integer(1),
        f"Safety limit on iterations (default {DEFAULT_MAX_ITERATIONS}); the loop stops with "
        "exit code 3 when it is reached.",
        default=DEFAULT_MAX_ITERATIONS,
    ),
    Key(
        "backoff",
        (LOOP,),
        optional(WAIT_SECONDS),
        "Seconds to wait between iterations.",
    ),
    Key(
        "timeout",
        (LOOP,),
        optional(LOOP_SECONDS),
        "Maximum wall-clock seconds for the whole loop.",
    ),
    Key(
        "idle_timeout",
        (LOOP,),
        optional(ACTION_SECONDS),
        "Default for every state: kill an action that prints nothing for this many seconds "
        "(exit 124, verdict error).",
    ),
    Key(
        "max_cost_usd",
        (LOOP,),
        optional(number(0, above=True)),
        "Spend budget in US dollars (Claude Code's total_cost_usd plus the LLM judge's "
        "estimate); the run ends with terminated_by 'budget' before the next paid action once "
        "it is reached.",
    ),
    Key(
        "maintain",
        (LOOP,),
        boolean,
        "After reaching a terminal state, start again (from its on_maintain, or the initial "
        "state). Default false.",
        default=False,
    ),
    Key(
        "worktree",
        (LOOP,),
        boolean,
        "Run every run of this loop in a new git worktree on a new branch ll/NAME/ID, as "
        "`ll-loop run --worktree` does; the main checkout is never touched. Default false.",
        default=False,
    ),
)
# The settings blocks before the action kinds' options blocks (their keys: key_tables.py).
BLOCKS: tuple[Key, ...] = (
    Key(
        "llm",
        (LOOP,),
        mapping,
        "Settings of LLM evaluation (the llm_structured evaluator).",
        default=LLMConfig(),
    ),
    Key(
        "archive",
        (LOOP,),
        mapping,
        "How many finished runs of this loop .loops/.history/ keeps, and for how long.",
        default=ArchiveConfig(),
    ),
    Key(
        "stall",
        (LOOP,),
        optional(mapping),
        "Stall breakers for every state: end a run that spins without progress (same_result, "
        "no_change_passes, max_visits), at on_stall or with terminated_by 'stall'.",
    ),
)
# The settings blocks after `agent:` and `agents:` (agents.py).
AFTER_AGENTS: tuple[Key, ...] = (
    Key(
        "notify",
        (LOOP,),
        optional(mapping),
        "A command and/or a webhook told (with a JSON summary) when a run of this loop ends.",
    ),
    Key(
        "retry",
        (LOOP,),
        optional(mapping),
        "The retry policy of every state that has no retry: of its own.",
    ),
    Key(
        "rate_limit",
        (LOOP,),
        optional(mapping),
        "How long to wait when Claude (Claude Code or the LLM judge) answers with a rate, "
        "overload or usage limit before running the step again.",
        default=RateLimitConfig(),
    ),
)
SANDBOX = Key(
    SANDBOX_KEY,
    (LOOP,),
    optional(SANDBOX_CHECK),
    f"Every step's sandbox, unless its state or custom agent gives one. {SANDBOX_DOC}",
)
