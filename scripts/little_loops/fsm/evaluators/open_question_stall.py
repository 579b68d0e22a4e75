"""The `open_question_stall` evaluator: has a count, one a line in a file, stopped falling."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.plateau import HISTORY_KEYS, judge_history, stall_detail
from little_loops.fsm.evaluators.spec import EvaluationResult, EvaluatorSpec
from little_loops.fsm.values.interpolation import to_text

DEFAULT_EPSILON = 0.0  # a count must fall below the lowest so far by more than this
HISTORY = "${context.run_dir}/.open_questions_history"


def _run(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    epsilon = DEFAULT_EPSILON if config.epsilon is None else float(config.epsilon)
    history = to_text(config.history_file) if config.history_file is not None else None
    return judge_history(history, config.max_stall, epsilon, higher_is_better=False)


def _detail(event: Mapping[str, object]) -> str | None:
    return stall_detail(dict(event))


SPEC = EvaluatorSpec(
    name="open_question_stall",
    summary="success while the count history (lower is better) falls; failure after "
    "max_stall rounds without",
    run=_run,
    keys=HISTORY_KEYS,
    interpolated=("history_file",),
    error_causes="an unset history_file",
    detail=_detail,
    defaults={"history_file": HISTORY},
)
