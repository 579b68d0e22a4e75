"""The `classify` evaluator: a token the action printed is the verdict (no model is asked)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.spec import EvaluationResult, EvaluatorSpec, error_result

# Which non-empty line holds the token when `line:` is left out.
LINE_WORDS: tuple[str, ...] = ("last", "first")


def evaluate_classify(output: str, line: str | int | None = None) -> EvaluationResult:
    """The chosen non-empty line of *output*, trimmed, as the verdict.

    *line* is `last` (the default), `first` or a 0-based index (negative counts from the
    end). No such line (empty output, an index past the end) gives the empty verdict, which
    only a route table's `_` default takes.
    """
    lines = [text.strip() for text in output.splitlines() if text.strip()]
    details: dict[str, Any] = {"token": "", "line": line, "lines": len(lines)}
    chosen = "last" if line is None else line
    if isinstance(chosen, bool) or not isinstance(chosen, int | str):
        return error_result(f"line must be last, first or a line number, got {chosen!r}")
    if isinstance(chosen, str):
        if chosen not in LINE_WORDS:
            return error_result(f"line must be last, first or a line number, got {chosen!r}")
        index = -1 if chosen == "last" else 0
    else:
        index = chosen
    if not -len(lines) <= index < len(lines):
        return EvaluationResult("", details)
    details["token"] = lines[index]
    return EvaluationResult(lines[index], details)


def _run(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    if exit_code != 0:
        return error_result(f"action exited with code {exit_code}", exit_code=exit_code)
    return evaluate_classify(output, config.line)


def _detail(event: Mapping[str, object]) -> str | None:
    token = event.get("token")
    return f"(token: {token})" if token else "(no token)" if "token" in event else None


def _any_token(config: EvaluateConfig) -> tuple[str, ...] | None:
    return None  # whatever the action prints: every route key can be given


SPEC = EvaluatorSpec(
    name="classify",
    summary="the last (or `line:`) non-empty output line is the verdict; routes by route:",
    run=_run,
    pure=True,
    keys=("line",),
    verdicts=(),
    good=(),
    bad=(),
    error_causes="an action that exits non-zero",
    detail=_detail,
    config_verdicts=_any_token,
)
