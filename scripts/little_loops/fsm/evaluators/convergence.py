"""The `convergence` evaluator: is a measured value at its target, moving toward it, or stuck."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from little_loops.fsm.evaluators.config import DIRECTIONS, EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.numbers import as_number, difference, number_text, output_number
from little_loops.fsm.evaluators.spec import EvaluationResult, EvaluatorSpec, error_result, shorten
from little_loops.fsm.values.interpolation import to_text
from little_loops.fsm.values.value_checks import is_number


def evaluate_convergence(
    output: str,
    target: object,
    previous: object = None,
    tolerance: object = 0,
    direction: str = "minimize",
) -> EvaluationResult:
    """Compare the measured value with *target* and with the *previous* measurement.

    `target` when the value is within *tolerance* of the target or past it in *direction*;
    otherwise `progress` when it moved the right way since *previous* (or there is no
    previous value yet: an empty `${prev.output}` on the first iteration) and `stall`
    when it stayed the same or got worse.
    """
    details: dict[str, Any] = {
        "current": None,
        "previous": None,
        "target": target,
        "tolerance": tolerance,
        "delta": None,
        "direction": direction,
    }
    if direction not in DIRECTIONS:
        return error_result(
            f"unknown direction {shorten(str(direction))} (expected one of "
            f"{', '.join(DIRECTIONS)})",
            **details,
        )
    try:
        wanted = None if target is None or target == "" else as_number(target, "target")
        details["target"] = wanted
        tol = 0 if tolerance is None or tolerance == "" else as_number(tolerance, "tolerance")
        if tol < 0:
            raise ValueError(f"tolerance must not be negative: {tol}")
        details["tolerance"] = tol
        current = output_number(output)
        details["current"] = current
        before: int | float | None = None
        if previous is not None and to_text(previous).strip():
            before = (
                as_number(previous, "previous value")
                if is_number(previous)
                else output_number(to_text(previous), "previous value")
            )
    except ValueError as exc:
        return error_result(str(exc), **details)
    details["previous"] = before
    if before is not None:
        details["delta"] = difference(current, before)
    minimize = direction == "minimize"
    if wanted is not None and (
        abs(current - wanted) <= tol or (current < wanted if minimize else current > wanted)
    ):
        return EvaluationResult("target", details)
    if before is None:
        return EvaluationResult("progress", details)
    improved = current < before if minimize else current > before
    return EvaluationResult("progress" if improved else "stall", details)


def _run(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    return evaluate_convergence(
        output, config.target, config.previous, config.tolerance, config.direction
    )


def _detail(event: Mapping[str, object]) -> str | None:
    if "current" not in event:
        return None
    delta = event.get("delta")
    extra = f", delta: {number_text(delta, '+')}" if is_number(delta) else ""
    return f"(current: {number_text(event['current'])}{extra})"


SPEC = EvaluatorSpec(
    name="convergence",
    summary="the number printed reached target (target), moved toward it (progress) or not (stall)",
    run=_run,
    pure=True,
    keys=("target", "tolerance", "previous", "direction"),
    required=("target",),
    interpolated=("target", "tolerance", "previous"),
    verdicts=("target", "progress", "stall"),
    good=("target", "progress"),
    bad=("stall",),
    error_causes="output that is not a number",
    numeric_target=True,
    detail=_detail,
)
