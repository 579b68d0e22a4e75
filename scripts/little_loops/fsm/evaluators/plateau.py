"""Plateau counting for the history-file stall evaluators: rounds since the best value."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.spec import EvaluationResult, EvaluatorSpec, error_result
from little_loops.fsm.values.interpolation import to_text

# The `evaluate:` keys both history evaluators read (score_stall, open_question_stall).
HISTORY_KEYS: tuple[str, ...] = ("history_file", "max_stall", "epsilon")


def read_history(path: str) -> list[float]:
    """The numbers of *path*, one a line; blank and non-number lines are skipped, and a
    missing or unreadable file is an empty history (the first round has not written yet)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    values: list[float] = []
    for raw in text.splitlines():
        try:
            values.append(float(raw.strip()))
        except ValueError:
            continue
    return values


def plateau(values: list[float], epsilon: float, *, higher_is_better: bool) -> tuple[int, float]:
    """Rounds in a row, up to the last, that did not beat the best so far by more than
    *epsilon*, and that best."""
    sign = 1.0 if higher_is_better else -1.0
    best, stalled = values[0], 0
    for value in values[1:]:
        if sign * (value - best) > epsilon:
            best, stalled = value, 0
            continue
        if sign * (value - best) > 0:
            best = value
        stalled += 1
    return stalled, best


def judge_history(
    history_file: str | None, max_stall: int, epsilon: float, *, higher_is_better: bool
) -> EvaluationResult:
    """`failure` once the history in *history_file* has not improved for *max_stall* rounds
    in a row; `success` while it still does (or has fewer than two rounds)."""
    if not history_file:
        return error_result("history_file is empty")
    if isinstance(max_stall, bool) or not isinstance(max_stall, int) or max_stall < 1:
        return error_result(f"max_stall must be a whole number of at least 1, got {max_stall!r}")
    values = read_history(history_file)
    details: dict[str, Any] = {
        "stall_count": 0,
        "max_stall": max_stall,
        "epsilon": epsilon,
        "rounds": len(values),
        "best": values[-1] if values else None,
    }
    if len(values) < 2:
        return EvaluationResult("success", details)
    stalled, best = plateau(values, epsilon, higher_is_better=higher_is_better)
    details.update(stall_count=stalled, best=best)
    return EvaluationResult("failure" if stalled >= max_stall else "success", details)


def stall_detail(event: object) -> str | None:
    """`(stalled N/M)`: rounds without progress out of the limit."""
    if not isinstance(event, dict) or "stall_count" not in event:
        return None
    return f"(stalled {event['stall_count']}/{event['max_stall']})"


def history_spec(
    name: str, summary: str, *, epsilon: float, history: str, higher_is_better: bool
) -> EvaluatorSpec:
    """The spec of an evaluator that judges a history file of numbers (one a line): progress
    is a new best by more than `epsilon` (*epsilon* by default), in the direction given;
    `failure` after `max_stall` rounds without. Its file is *history* unless told."""

    def run(
        config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
    ) -> EvaluationResult:
        least = epsilon if config.epsilon is None else float(config.epsilon)
        path = to_text(config.history_file) if config.history_file is not None else None
        return judge_history(path, config.max_stall, least, higher_is_better=higher_is_better)

    def detail(event: Mapping[str, object]) -> str | None:
        return stall_detail(dict(event))

    return EvaluatorSpec(
        name=name,
        summary=summary,
        run=run,
        reads_exit_code=True,  # little-loops' history evaluators judge the exit code too
        keys=HISTORY_KEYS,
        interpolated=("history_file",),
        error_causes="an unset history_file",
        detail=detail,
        defaults={"history_file": history},
    )
