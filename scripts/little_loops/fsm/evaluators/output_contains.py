"""The `output_contains` evaluator: does the output contain a text or match a pattern."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.spec import (
    EvaluationResult,
    EvaluatorSpec,
    error_result,
    missing,
    shorten,
)
from little_loops.fsm.values.interpolation import to_text
from little_loops.fsm.values.regex_limit import REGEX_TIME_LIMIT, SLOW_HINT, RegexTooSlow, within


def _search_within(pattern: str, text: str, seconds: float) -> bool:
    """re.search (MULTILINE) abandoned (RegexTooSlow) after *seconds*."""
    compiled = re.compile(pattern, re.MULTILINE)
    return within(seconds, lambda: compiled.search(text) is not None)


def evaluate_output_contains(
    output: str, pattern: str, negate: bool = False, error_patterns: list[str] | None = None
) -> EvaluationResult:
    """`success` when *pattern* occurs in the output (`failure` when not; swapped by *negate*).

    Without *negate*, an output that lacks *pattern* but holds one of *error_patterns* (as
    text) gives `error` instead of `failure`, so a loop can route, say, a login failure to
    `on_error`.

    The pattern matches if it occurs literally or, when it is a valid regular expression,
    if `re.search` (MULTILINE) finds it, so `passed (3)` and `^OK$` both do what they say.
    """
    details: dict[str, Any] = {"matched": False, "pattern": pattern, "negate": negate}
    if not isinstance(pattern, str) or pattern == "":
        return error_result("pattern is empty", **details)
    mode: str | None = None
    if pattern in output:
        mode = "substring"
    else:
        try:
            if _search_within(pattern, output, REGEX_TIME_LIMIT):
                mode = "regex"
        except re.error:
            pass  # not a regex: the substring test above was the whole test
        except RegexTooSlow:
            return error_result(
                f"pattern took longer than {REGEX_TIME_LIMIT:g}s to match ({SLOW_HINT}); "
                "simplify the pattern",
                **details,
            )
    details["matched"] = mode is not None
    details["mode"] = mode
    found = mode is not None
    if not found and not negate:
        for text in error_patterns or ():
            if text and str(text) in output:
                return error_result(
                    f"output holds error pattern {shorten(str(text))}",
                    **details,
                    error_pattern=str(text),
                )
    return EvaluationResult("success" if found != negate else "failure", details)


def _run(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    if problem := missing(config, "pattern"):
        return problem
    return evaluate_output_contains(
        output, to_text(config.pattern), bool(config.negate), config.error_patterns
    )


def _detail(event: Mapping[str, object]) -> str | None:
    if "matched" not in event:
        return None
    return "(matched)" if event["matched"] else "(not matched)"


SPEC = EvaluatorSpec(
    name="output_contains",
    summary="the output contains pattern (text or regular expression); negate swaps",
    run=_run,
    pure=True,
    keys=("pattern", "negate", "error_patterns"),
    required=("pattern",),
    interpolated=("pattern",),
    error_causes="a reference that cannot be resolved or an error_patterns text",
    detail=_detail,
)
