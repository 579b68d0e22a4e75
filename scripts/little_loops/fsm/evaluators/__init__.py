"""Turn an action's result into a verdict: one module per evaluator, a registry, a dispatcher.

This is also the seed path `little_loops.fsm.evaluators`. Names load on first use, so that
importing the package is cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from little_loops.fsm.evaluators.config import LLMEvaluatorConfig
    from little_loops.fsm.evaluators.convergence import evaluate_convergence
    from little_loops.fsm.evaluators.dispatch import EVALUATORS, default_evaluation, evaluate
    from little_loops.fsm.evaluators.exit_code import evaluate_exit_code
    from little_loops.fsm.evaluators.llm_structured import evaluate_llm_structured
    from little_loops.fsm.evaluators.output_contains import evaluate_output_contains
    from little_loops.fsm.evaluators.output_json import evaluate_output_json
    from little_loops.fsm.evaluators.output_numeric import evaluate_output_numeric
    from little_loops.fsm.evaluators.spec import EvaluationResult

# Each name and the module (in this folder) it lives in.
_HOMES: dict[str, str] = {
    "EVALUATORS": "dispatch",
    "EvaluationResult": "spec",
    "LLMEvaluatorConfig": "config",
    "default_evaluation": "dispatch",
    "evaluate": "dispatch",
    "evaluate_convergence": "convergence",
    "evaluate_exit_code": "exit_code",
    "evaluate_llm_structured": "llm_structured",
    "evaluate_output_contains": "output_contains",
    "evaluate_output_json": "output_json",
    "evaluate_output_numeric": "output_numeric",
}
__all__ = [
    "EVALUATORS",
    "EvaluationResult",
    "LLMEvaluatorConfig",
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
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
