"""The `output_numeric` evaluator: compare the number an action printed with a target."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.numbers import as_number, comparison, output_number
from little_loops.fsm.evaluators.spec import EvaluationResult, EvaluatorSpec, error_result, missing


def evaluate_output_numeric(
    output: str, operator: str, target: object, key: str | None = None, whole: bool = False
) -> EvaluationResult:
    """Compare the number the action printed with *target*: `success` when
    `value <operator> target` holds, `failure` when not, `error` when either is no number.

    With *key*, the number is that of the last `key=NUMBER` field in the output (the rest
    of the output may be anything); with *whole* (little-loops' reading, `--compat`), the
    whole output is the number; else its last non-empty line."""
    details: dict[str, Any] = {"value": None, "target": target, "operator": operator}
    try:
        compare = comparison(operator)
        wanted = as_number(target, "target")
        details["target"] = wanted
        if key is not None:
            value = keyed_number(output, key)
        elif whole:
            value = whole_number(output)
        else:
            value = output_number(output)
    except ValueError as exc:
        return error_result(str(exc), **details)
    details["value"] = value
    return EvaluationResult("success" if compare(value, wanted) else "failure", details)


def keyed_number(output: str, key: str) -> int | float:
    """The number of the last `key=NUMBER` (spaces allowed around `=`) in *output*."""
    found = re.findall(
        rf"(?<![\w.-]){re.escape(key)}\s*=\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)", output
    )
    if not found:
        raise ValueError(f"no '{key}=NUMBER' field in the output")
    return output_number(found[-1], f"field {key}")


def whole_number(output: str) -> int | float:
    """The number that is the whole of *output* (surrounding whitespace allowed): how
    little-loops reads it, so output of several lines is no number."""
    lines = [line for line in output.splitlines() if line.strip()]
    if len(lines) > 1:
        raise ValueError(
            f"output is {len(lines)} lines, not one number (little-loops reads the whole output)"
        )
    return output_number(output)


def _run(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    if problem := missing(config, "operator", "target"):
        return problem
    return evaluate_output_numeric(
        output, str(config.operator), config.target, config.key, whole=config.theirs
    )


def value_detail(event: Mapping[str, object]) -> str | None:
    """`(value: V)`: the value that was compared."""
    return f"(value: {event['value']})" if "value" in event else None


SPEC = EvaluatorSpec(
    name="output_numeric",
    summary="the number the action printed, compared with target",
    run=_run,
    pure=True,
    keys=("operator", "target", "key"),
    required=("operator", "target"),
    interpolated=("target",),
    error_causes="output that is not a number",
    numeric_target=True,
    detail=value_detail,
)
