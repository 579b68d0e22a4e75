"""The `output_contains` evaluator: does the output contain a text or match a pattern."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import FrameType
from typing import Any

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.spec import EvaluationResult, EvaluatorSpec, error_result, missing
from little_loops.fsm.values.interpolation import to_text

# A regular expression may backtrack for hours ((a+)+b on "aaaa…!"); past this many seconds
# the match is abandoned and the verdict is `error`, so the loop's limits still hold.
REGEX_TIME_LIMIT = 10.0


class _RegexTooSlow(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _RegexTooSlow


def _search_within(pattern: str, text: str, seconds: float) -> bool:
    """re.search (MULTILINE) abandoned after *seconds*.

    CPython's matcher checks for signals as it works, so a SIGALRM handler that raises
    stops it; that only works on the main thread, elsewhere the search is unbounded.
    """
    import signal  # here, not at the top: `ll-loop validate` reads this module's SPEC only
    import threading

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
        except _RegexTooSlow:
            return error_result(
                f"pattern took longer than {REGEX_TIME_LIMIT:g}s to match (a nested "
                "quantifier like (a+)+ backtracks without end); simplify the pattern",
                **details,
            )
    details["matched"] = mode is not None
    details["mode"] = mode
    found = mode is not None
    return EvaluationResult("success" if found != negate else "failure", details)


def _run(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    if problem := missing(config, "pattern"):
        return problem
    return evaluate_output_contains(output, to_text(config.pattern), bool(config.negate))


def _detail(event: Mapping[str, object]) -> str | None:
    if "matched" not in event:
        return None
    return "(matched)" if event["matched"] else "(not matched)"


SPEC = EvaluatorSpec(
    name="output_contains",
    summary="the output contains pattern (text or regular expression); negate swaps",
    run=_run,
    keys=("pattern", "negate"),
    required=("pattern",),
    interpolated=("pattern",),
    error_causes="a reference that cannot be resolved",
    detail=_detail,
)
