"""The `exit_code` evaluator: 0 is success, 1 is failure, anything else is an error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.spec import EvaluationResult, EvaluatorSpec, error_result


def evaluate_exit_code(exit_code: int) -> EvaluationResult:
    """0 is `success`, 1 is `failure`, anything else (2+, signals, timeouts) is `error`."""
    details: dict[str, Any] = {"exit_code": exit_code}
    if exit_code == 0:
        return EvaluationResult("success", details)
    if exit_code == 1:
        return EvaluationResult("failure", details)
    return error_result(f"exit code {exit_code}", **details)


def _run(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    return evaluate_exit_code(exit_code)


def exit_detail(event: Mapping[str, object]) -> str | None:
    """`(exit N)` when the event carries the action's exit code."""
    return f"(exit {event['exit_code']})" if "exit_code" in event else None


SPEC = EvaluatorSpec(
    name="exit_code",
    summary="exit code 0 is success, 1 failure, 2 or more error",
    run=_run,
    reads_exit_code=True,
    pure=True,
    error_causes="exit code 2 or more",
    detail=exit_detail,
)
