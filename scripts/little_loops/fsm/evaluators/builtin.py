"""Turn an action's result into a verdict: the evaluators, their registry, and the dispatcher.

Tier 1 (`exit_code`, `output_numeric`, `output_json`, `output_contains`, `convergence`) is
deterministic and lives here. Tier 2 (`llm_structured`) lives in `llm_judge` and is
imported only when an LLM evaluation actually runs, so importing this module stays cheap.
"""

from __future__ import annotations

import json
import math
import operator as op
import re
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from little_loops.fsm.definition.model import DIRECTIONS, OPERATORS, EvaluateConfig, LLMConfig
from little_loops.fsm.engine.interpolation import InterpolationContext, interpolate_value, to_text
from little_loops.fsm.errors import InterpolationError
from little_loops.fsm.evaluators.jsonpath import JsonPathError, extract_json_path, json_kind
from little_loops.fsm.suggest import did_you_mean

LLM_SKIPPED_NOTE = "LLM evaluation disabled (--no-llm or llm.enabled: false); used exit_code"

# EvaluateConfig fields that may hold `${...}` references, resolved just before evaluating.
INTERPOLATED_FIELDS: tuple[str, ...] = (
    "target",
    "tolerance",
    "previous",
    "pattern",
    "path",
    "prompt",
    "source",
)

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": op.eq,
    "ne": op.ne,
    "lt": op.lt,
    "le": op.le,
    "gt": op.gt,
    "ge": op.ge,
}


@dataclass
class EvaluationResult:
    """A verdict (the routing key) and evaluator-specific details (`${result.details.*}`)."""

    verdict: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "details": self.details}


def _error(message: str, **details: Any) -> EvaluationResult:
    return EvaluationResult("error", {**details, "error": message})


def _shorten(text: str, limit: int = 60) -> str:
    """*text* quoted on one line, cut to *limit* characters, for error messages."""
    one_line = text.replace("\r", "\\r").replace("\n", "\\n")
    if len(one_line) > limit:
        one_line = one_line[: limit - 3] + "..."
    return f"'{one_line}'"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _parse_number(text: str) -> int | float:
    """A finite int or float written as *text* (surrounding whitespace allowed)."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    value = float(text)  # ValueError propagates
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _as_number(value: Any, what: str) -> int | float:
    """*value* (a number or a numeric string) as a number; ValueError names *what*."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return _parse_number(value)
        except ValueError:
            pass
    shown = _shorten(value) if isinstance(value, str) else to_text(value) or "nothing"
    raise ValueError(f"{what} is not a number: {shown}")


def _output_number(output: str, what: str = "output") -> int | float:
    """The number an action printed: its last non-empty line, which must be only a number.

    Taking the last line lets `cmd | grep -c x || echo 0` (which prints `0` twice) and
    commands that log before printing their measurement work, while `3 errors` is refused.
    """
    lines = [line for line in output.splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"{what} is empty, expected a number")
    try:
        return _parse_number(lines[-1])
    except ValueError:
        raise ValueError(f"{what} is not a number: {_shorten(lines[-1])}") from None


def _check_operator(operator: str | None) -> str:
    if operator not in _COMPARE:
        raise ValueError(
            f"unknown operator {_shorten(str(operator))} (expected one of {', '.join(OPERATORS)})"
        )
    return operator


# --- Tier 1 -----------------------------------------------------------------------------


def evaluate_exit_code(exit_code: int) -> EvaluationResult:
    """0 is `success`, 1 is `failure`, anything else (2+, signals, timeouts) is `error`."""
    details: dict[str, Any] = {"exit_code": exit_code}
    if exit_code == 0:
        return EvaluationResult("success", details)
    if exit_code == 1:
        return EvaluationResult("failure", details)
    return _error(f"exit code {exit_code}", **details)


def evaluate_output_numeric(output: str, operator: str, target: Any) -> EvaluationResult:
    """Compare the number the action printed with *target*: `success` when
    `value <operator> target` holds, `failure` when not, `error` when either is no number."""
    details: dict[str, Any] = {"value": None, "target": target, "operator": operator}
    try:
        compare = _COMPARE[_check_operator(operator)]
        wanted = _as_number(target, "target")
        details["target"] = wanted
        value = _output_number(output)
    except ValueError as exc:
        return _error(str(exc), **details)
    details["value"] = value
    return EvaluationResult("success" if compare(value, wanted) else "failure", details)


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality: 0 == 0.0, but true != 1 and "0" != 0."""
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if isinstance(a, bool) != isinstance(b, bool) or _is_number(a) != _is_number(b):
        return False
    return bool(a == b)


def evaluate_output_json(
    output: str, path: str, operator: str = "eq", target: Any = None
) -> EvaluationResult:
    """Parse the output as JSON, take the value at *path* and compare it with *target*.

    `eq`/`ne` compare any JSON values; `lt`..`ge` need numbers on both sides. Invalid
    JSON, a path that leads nowhere, or a non-number under `lt`..`ge` is `error`.
    """
    details: dict[str, Any] = {"value": None, "path": path, "target": target, "operator": operator}
    try:
        compare = _COMPARE[_check_operator(operator)]
    except ValueError as exc:
        return _error(str(exc), **details)
    if not output.strip():
        return _error("output is empty, expected JSON", **details)
    try:
        data = json.loads(output, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        return _error(
            f"output is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
            **details,
        )
    except RecursionError:
        return _error("output is JSON nested too deeply to read", **details)
    except _NotJSON as exc:
        return _error(f"output is not valid JSON: {exc}", **details)
    except ValueError:  # an integer with more digits than Python converts
        return _error("output is JSON with a number too long to read", **details)
    try:
        value = extract_json_path(data, path)
    except JsonPathError as exc:
        return _error(str(exc), **details)
    details["value"] = value
    if operator in ("eq", "ne"):
        equal = _json_equal(value, target)
        return EvaluationResult("success" if equal == (operator == "eq") else "failure", details)
    if not _is_number(value):
        return _error(
            f"operator {operator} needs a number, but {path} is {json_kind(value)}", **details
        )
    try:
        wanted = _as_number(target, "target")
    except ValueError as exc:
        return _error(str(exc), **details)
    details["target"] = wanted
    return EvaluationResult("success" if compare(value, wanted) else "failure", details)


class _NotJSON(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    # Python's json accepts NaN and Infinity; JSON does not, and they would poison the
    # state and event files (which must stay readable by any JSON parser).
    raise _NotJSON(f"{name} is not a JSON value")


# A regular expression may backtrack for hours ((a+)+b on "aaaa…!"); past this many seconds
# the match is abandoned and the verdict is `error`, so the loop's limits still hold.
REGEX_TIME_LIMIT = 10.0


class _RegexTooSlow(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _RegexTooSlow


def _search_within(pattern: str, text: str, seconds: float) -> bool:
    """re.search (MULTILINE) abandoned after *seconds*.

    CPython's matcher checks for signals as it works, so a SIGALRM handler that raises
    stops it; that only works on the main thread, elsewhere the search is unbounded.
    """
    compiled = re.compile(pattern, re.MULTILINE)
    if threading.current_thread() is not threading.main_thread():
        return compiled.search(text) is not None
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return compiled.search(text) is not None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def evaluate_output_contains(output: str, pattern: str, negate: bool = False) -> EvaluationResult:
    """`success` when *pattern* occurs in the output (`failure` when not; swapped by *negate*).

    The pattern matches if it occurs literally or, when it is a valid regular expression,
    if `re.search` (MULTILINE) finds it, so `passed (3)` and `^OK$` both do what they say.
    """
    details: dict[str, Any] = {"matched": False, "pattern": pattern, "negate": negate}
    if not isinstance(pattern, str) or pattern == "":
        return _error("pattern is empty", **details)
    mode: str | None = None
    if pattern in output:
        mode = "substring"
    else:
        try:
            if _search_within(pattern, output, REGEX_TIME_LIMIT):
                mode = "regex"
        except re.error:
            pass  # not a regex: the substring test above was the whole test
        except _RegexTooSlow:
            return _error(
                f"pattern took longer than {REGEX_TIME_LIMIT:g}s to match (a nested "
                "quantifier like (a+)+ backtracks without end); simplify the pattern",
                **details,
            )
    details["matched"] = mode is not None
    details["mode"] = mode
    found = mode is not None
    return EvaluationResult("success" if found != negate else "failure", details)


def evaluate_convergence(
    output: str,
    target: Any,
    previous: Any = None,
    tolerance: Any = 0,
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
        return _error(
            f"unknown direction {_shorten(str(direction))} (expected one of "
            f"{', '.join(DIRECTIONS)})",
            **details,
        )
    try:
        wanted = None if target is None or target == "" else _as_number(target, "target")
        details["target"] = wanted
        tol = 0 if tolerance is None or tolerance == "" else _as_number(tolerance, "tolerance")
        if tol < 0:
            raise ValueError(f"tolerance must not be negative: {tol}")
        details["tolerance"] = tol
        current = _output_number(output)
        details["current"] = current
        before: int | float | None = None
        if previous is not None and to_text(previous).strip():
            before = (
                previous if _is_number(previous) else _output_number(previous, "previous value")
            )
    except ValueError as exc:
        return _error(str(exc), **details)
    details["previous"] = before
    if before is not None:
        details["delta"] = current - before
    minimize = direction == "minimize"
    if wanted is not None and (
        abs(current - wanted) <= tol or (current < wanted if minimize else current > wanted)
    ):
        return EvaluationResult("target", details)
    if before is None:
        return EvaluationResult("progress", details)
    improved = current < before if minimize else current > before
    return EvaluationResult("progress" if improved else "stall", details)


# --- registry and dispatcher ------------------------------------------------------------


class Evaluator(Protocol):
    """One evaluator family: a resolved config plus the action's result give a verdict."""

    def __call__(
        self, config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
    ) -> EvaluationResult: ...


def _missing(config: EvaluateConfig, *names: str) -> EvaluationResult | None:
    """An error result when *config* lacks a field its type needs (validation should have
    caught it; a hand-built config must still not crash the loop)."""
    missing = [name for name in names if getattr(config, name) is None]
    if missing:
        return _error(f"{config.type} evaluator needs {' and '.join(missing)}")
    return None


def _run_exit_code(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    return evaluate_exit_code(exit_code)


def _run_output_numeric(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    if problem := _missing(config, "operator", "target"):
        return problem
    return evaluate_output_numeric(output, str(config.operator), config.target)


def _run_output_json(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    if problem := _missing(config, "path"):
        return problem
    return evaluate_output_json(
        output, to_text(config.path), config.operator or "eq", config.target
    )


def _run_output_contains(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    if problem := _missing(config, "pattern"):
        return problem
    return evaluate_output_contains(output, to_text(config.pattern), bool(config.negate))


def _run_convergence(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    return evaluate_convergence(
        output, config.target, config.previous, config.tolerance, config.direction
    )


def _llm_skipped(exit_code: int) -> EvaluationResult:
    result = evaluate_exit_code(exit_code)
    result.details["llm_skipped"] = LLM_SKIPPED_NOTE
    return result


def _run_llm_structured(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    if not llm.enabled:
        return _llm_skipped(exit_code)
    from little_loops.fsm.evaluators.llm_structured import evaluate_llm_structured

    return evaluate_llm_structured(
        output,
        prompt=to_text(config.prompt) if config.prompt is not None else None,
        schema=config.schema,
        min_confidence=config.min_confidence,
        uncertain_suffix=config.uncertain_suffix,
        model=llm.model,
        max_tokens=llm.max_tokens,
        timeout=llm.timeout,
        client=client,
    )


# Keys are exactly schema.EVALUATOR_TYPES (a test holds them together).
EVALUATORS: dict[str, Evaluator] = {
    "exit_code": _run_exit_code,
    "output_numeric": _run_output_numeric,
    "output_json": _run_output_json,
    "output_contains": _run_output_contains,
    "convergence": _run_convergence,
    "llm_structured": _run_llm_structured,
}


def resolve_config(config: EvaluateConfig, context: InterpolationContext) -> EvaluateConfig:
    """A copy of *config* with `${...}` in its INTERPOLATED_FIELDS resolved.

    Raises InterpolationError naming the variable.
    """
    changes = {
        name: interpolate_value(getattr(config, name), context)
        for name in INTERPOLATED_FIELDS
        if getattr(config, name) is not None
    }
    return replace(config, **changes)


def evaluate(
    config: EvaluateConfig,
    output: str,
    exit_code: int,
    context: InterpolationContext,
    *,
    llm: LLMConfig | None = None,
    client: Any = None,
) -> EvaluationResult:
    """Evaluate an action's result as *config* says; never raises for bad input or values.

    With `source:` set, the interpolated source is evaluated instead of *output*. With
    `llm.enabled` false, `llm_structured` falls back to `exit_code` and says so in
    `details["llm_skipped"]`. Every `error` verdict carries `details["error"]`.
    """
    evaluator = EVALUATORS.get(config.type)
    if evaluator is None:
        return _error(
            f"unknown evaluator type {_shorten(str(config.type))}"
            f"{did_you_mean(str(config.type), EVALUATORS)}"
        )
    llm = llm or LLMConfig()
    if config.type == "llm_structured" and not llm.enabled:
        return _llm_skipped(exit_code)  # before interpolating: the prompt is not used
    try:
        resolved = resolve_config(config, context)
    except InterpolationError as exc:
        return _error(str(exc))
    if resolved.source is not None:
        output = to_text(resolved.source)
    return evaluator(resolved, output, exit_code, llm, client)


def default_evaluation(
    state_is_prompt: bool,
    output: str,
    exit_code: int,
    context: InterpolationContext,
    *,
    llm: LLMConfig | None = None,
    client: Any = None,
) -> EvaluationResult:
    """The evaluation of a state without `evaluate:`: `llm_structured` for prompts and
    slash commands, `exit_code` for shell commands."""
    config = EvaluateConfig(type="llm_structured" if state_is_prompt else "exit_code")
    return evaluate(config, output, exit_code, context, llm=llm, client=client)
