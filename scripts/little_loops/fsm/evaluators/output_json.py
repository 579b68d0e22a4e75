"""The `output_json` evaluator: take a value from JSON output by path and compare it."""

from __future__ import annotations

from typing import Any, NoReturn

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.jsonpath import JsonPathError, extract_json_path, json_kind
from little_loops.fsm.evaluators.numbers import as_number, comparison
from little_loops.fsm.evaluators.output_numeric import value_detail
from little_loops.fsm.evaluators.spec import EvaluationResult, EvaluatorSpec, error_result, missing
from little_loops.fsm.values.interpolation import to_text
from little_loops.fsm.values.value_checks import LARGEST_NUMBER, is_finite, is_number


class _NotJSON(ValueError):
    pass


def _reject_constant(name: str) -> NoReturn:
    # Python's json accepts NaN and Infinity; JSON does not, and they would poison the
    # state and event files (which must stay readable by any JSON parser).
    raise _NotJSON(f"{name} is not a JSON value")


def _json_equal(a: object, b: object) -> bool:
    """JSON equality: 0 == 0.0, but true != 1 and "0" != 0."""
    if is_number(a) and is_number(b):
        return bool(a == b)
    if isinstance(a, bool) != isinstance(b, bool) or is_number(a) != is_number(b):
        return False
    return bool(a == b)


def parse_json(output: str) -> tuple[object, str | None]:
    """(data, None) or (None, why the output is not JSON)."""
    import json  # here, not at the top: `ll-loop validate` reads this module's SPEC only

    if not output.strip():
        return None, "output is empty, expected JSON"
    try:
        return json.loads(output, parse_constant=_reject_constant), None
    except json.JSONDecodeError as exc:
        return None, f"output is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    except RecursionError:
        return None, "output is JSON nested too deeply to read"
    except _NotJSON as exc:
        return None, f"output is not valid JSON: {exc}"
    except ValueError:  # an integer with more digits than Python converts
        return None, "output is JSON with a number too long to read"


def evaluate_output_json(
    output: str, path: str, operator: str = "eq", target: object = None
) -> EvaluationResult:
    """Parse the output as JSON, take the value at *path* and compare it with *target*.

    `eq`/`ne` compare any JSON values; `lt`..`ge` need numbers on both sides. Invalid
    JSON, a path that leads nowhere, or a non-number under `lt`..`ge` is `error`.
    """
    details: dict[str, Any] = {"value": None, "path": path, "target": target, "operator": operator}
    try:
        compare = comparison(operator)
    except ValueError as exc:
        return error_result(str(exc), **details)
    data, problem = parse_json(output)
    if problem is not None:
        return error_result(problem, **details)
    try:
        value = extract_json_path(data, path)
    except JsonPathError as exc:
        return error_result(str(exc), **details)
    if is_number(value) and not is_finite(value):  # 1e400 reads as inf; 400 digits as an int
        return error_result(
            f"{path} is too large a number (at most {LARGEST_NUMBER:.1e})", **details
        )
    details["value"] = value
    if operator in ("eq", "ne"):
        equal = _json_equal(value, target)
        return EvaluationResult("success" if equal == (operator == "eq") else "failure", details)
    if not is_number(value):
        return error_result(
            f"operator {operator} needs a number, but {path} is {json_kind(value)}", **details
        )
    try:
        wanted = as_number(target, "target")
    except ValueError as exc:
        return error_result(str(exc), **details)
    details["target"] = wanted
    return EvaluationResult("success" if compare(value, wanted) else "failure", details)


def _run(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    if problem := missing(config, "path"):
        return problem
    return evaluate_output_json(
        output, to_text(config.path), config.operator or "eq", config.target
    )


SPEC = EvaluatorSpec(
    name="output_json",
    summary="the value at path in the JSON the action printed, compared with target",
    run=_run,
    pure=True,
    keys=("path", "operator", "target"),
    required=("path", "operator", "target"),
    interpolated=("path", "target"),
    error_causes="output that is not JSON or lacks the path",
    detail=value_detail,
)
