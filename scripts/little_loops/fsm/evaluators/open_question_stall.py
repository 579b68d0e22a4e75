"""The `open_question_stall` evaluator: has a count, one a line in a file, stopped falling."""

from __future__ import annotations

from little_loops.fsm.evaluators.plateau import history_spec

DEFAULT_EPSILON = 0.0  # a count must fall below the lowest so far by more than this
HISTORY = "${context.run_dir}/.open_questions_history"

SPEC = history_spec(
    "open_question_stall",
    "success while the count history (lower is better) falls; failure after "
    "max_stall rounds without",
    epsilon=DEFAULT_EPSILON,
    history=HISTORY,
    higher_is_better=False,
)
