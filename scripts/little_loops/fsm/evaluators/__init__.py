"""Turn an action's result into a verdict: the evaluators, their registry and the dispatcher.

This is also the seed path `little_loops.fsm.evaluators`. Names load on first use, so that
importing the package is cheap and never imports the anthropic package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from little_loops.fsm.evaluators.builtin import (
        EVALUATORS,
        EvaluationResult,
        default_evaluation,
        evaluate,
        evaluate_convergence,
        evaluate_exit_code,
        evaluate_output_contains,
        evaluate_output_json,
        evaluate_output_numeric,
    )
    from little_loops.fsm.evaluators.llm_structured import evaluate_llm_structured

__all__ = [
    "EVALUATORS",
    "EvaluationResult",
    "default_evaluation",
    "evaluate",
    "evaluate_convergence",
    "evaluate_exit_code",
    "evaluate_llm_structured",
    "evaluate_output_contains",
    "evaluate_output_json",
    "evaluate_output_numeric",
]


def __getattr__(name: str) -> object:
    # Loaded on first use: validation reads the verdict specs without the dispatcher's imports,
    # and the judge (with anthropic) loads only when a judge call runs.
    if name == "evaluate_llm_structured":
        module = "llm_structured"
    elif name in __all__:
        module = "builtin"
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
