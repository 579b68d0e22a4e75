"""The loop-file keys declared as rows (key_row.Key), gathered from their features' modules."""

from __future__ import annotations

from little_loops.fsm.definition.model import (
    circuit,
    pr_keys,
    ratelimit_routing,
    run_keys,
    state_guards,
)
from little_loops.fsm.definition.model import evaluate_keys as evaluate_keys
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
    *circuit.KEYS,
    ARTIFACT_VERSIONING,
    *ratelimit_routing.KEYS,
    *state_guards.KEYS,
    *evaluate_keys.KEYS,
)
# How a run meets its limits and guards its files.
RUN_ROWS: tuple[Key, ...] = run_keys.KEYS

# The state key of a pull-request state (its block's keys are rows of pr_keys too).
PR_ROWS: tuple[Key, ...] = pr_keys.KEYS

ROWS: tuple[Key, ...] = (*RUNTIME_ROWS, *RUN_ROWS, *PR_ROWS)
# The rows whose value is a state a run goes to (the loop graph follows them).
ROUTE_ROWS: tuple[Key, ...] = tuple(row for row in ROWS if row.route is not None)
# The rows whose value adds to the environment of a state's action.
ENV_ROWS: tuple[Key, ...] = tuple(row for row in ROWS if row.env is not None)
# The rows `--dry-run` shows on a state.
SHOWN_ROWS: tuple[Key, ...] = tuple(row for row in ROWS if row.shown is not None)
