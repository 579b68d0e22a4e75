"""The `score_stall` evaluator: has the score, one a line in a history file, stopped rising."""

from __future__ import annotations

from little_loops.fsm.evaluators.plateau import history_spec

DEFAULT_EPSILON = 0.5  # a score must beat the best so far by more than this to be progress
HISTORY = "${context.run_dir}/.score_history"

SPEC = history_spec(
    "score_stall",
    "success while the score history (higher is better) improves; failure after "
    "max_stall rounds without",
    epsilon=DEFAULT_EPSILON,
    history=HISTORY,
    higher_is_better=True,
)
