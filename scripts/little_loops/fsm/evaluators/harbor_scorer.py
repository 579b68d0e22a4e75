"""The `harbor_scorer` evaluator: a benchmark scorer's exit code and the score it prints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.spec import EvaluationResult, EvaluatorSpec, error_result


def evaluate_harbor_scorer(output: str, exit_code: int) -> EvaluationResult:
    """`failure` when the scorer exits non-zero; else `success` when its output (trimmed)
    is a number, the score, and `error` when it is not."""
    if exit_code != 0:
        return EvaluationResult("failure", {"exit_code": exit_code})
    text = output.strip()
    try:
        score = float(text)
    except ValueError:
        return error_result(f"scorer output is not a number: {text[:200]!r}", exit_code=0)
    return EvaluationResult("success", {"score": score, "exit_code": 0})


def _run(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    return evaluate_harbor_scorer(output, exit_code)


def _detail(event: Mapping[str, object]) -> str | None:
    if "score" in event:
        return f"(score {event['score']})"
    return f"(exit {event['exit_code']})" if "exit_code" in event else None


SPEC = EvaluatorSpec(
    name="harbor_scorer",
    summary="a benchmark scorer: exit 0 printing a number (the score) is success, a "
    "non-zero exit failure",
    run=_run,
    reads_exit_code=True,
    pure=True,
    error_causes="exit 0 with output that is not a number",
    detail=_detail,
)
