"""The loop-file keys declared as rows (key_row.Key), gathered from their features' modules."""

from __future__ import annotations

from little_loops.fsm.definition.model import (
    circuit_keys,
    core_keys,
    evaluate_keys,
    fanout_keys,
    guard_keys,
    learning_keys,
    pr_keys,
    ratelimit_routing,
    route_keys,
    run_keys,
)
from little_loops.fsm.definition.model.key_row import LOOP, Key
from little_loops.fsm.values.value_checks import boolean

# A declaration only: ll-loop keeps it, shows it and changes nothing.
ARTIFACT_VERSIONING = Key(
    "artifact_versioning",
    (LOOP,),
    boolean,
    "A declaration (little-loops'): the loop keeps each pass's artifacts itself (a "
    "snapshot state); ll-loop keeps and shows it and changes nothing. Default false.",
    default=False,
)

# little-loops' runtime features: the loop's breakers, a state's waits and guards, and the
# `evaluate:` keys of the token and stall evaluators (key_tables splices them in its tables).
RUNTIME_ROWS: tuple[Key, ...] = (
    *circuit_keys.KEYS,
    ARTIFACT_VERSIONING,
    *ratelimit_routing.KEYS,
    *guard_keys.KEYS,
    *evaluate_keys.KEYS,
)
# How a run meets its limits and guards its files.
RUN_ROWS: tuple[Key, ...] = run_keys.KEYS

# The state key of a pull-request state (its block's keys are rows of pr_keys too).
PR_ROWS: tuple[Key, ...] = pr_keys.KEYS

# A state's core keys, its other routes and spellings, a learning and a fan-out state's keys,
# and the `evaluate:` keys of every evaluator (key_tables splices them in its tables; a
# state's metadata and reuse keys are rows of metadata.py and reuse_keys.py, not gathered
# here: the one would be an import cycle, the other fills no field of the model's).
CORE_ROWS: tuple[Key, ...] = (
    *core_keys.KEYS,
    *route_keys.KEYS,
    *learning_keys.KEYS,
    *fanout_keys.KEYS,
    *evaluate_keys.BASE_KEYS,
)

ROWS: tuple[Key, ...] = (*RUNTIME_ROWS, *RUN_ROWS, *PR_ROWS, *CORE_ROWS)
# The rows whose value is a state a run goes to (the loop graph follows them).
ROUTE_ROWS: tuple[Key, ...] = tuple(row for row in ROWS if row.route is not None)
# The rows whose value adds to the environment of a state's action.
ENV_ROWS: tuple[Key, ...] = tuple(row for row in ROWS if row.env is not None)
# The rows `--dry-run` shows on a state.
SHOWN_ROWS: tuple[Key, ...] = tuple(row for row in ROWS if row.shown is not None)
