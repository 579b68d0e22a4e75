"""The seed path of the loop model: it lives in `little_loops.fsm.definition.model.typed`."""

from little_loops.fsm.definition.model.typed import (
    ACTION_TYPES,
    DEFAULT_LLM_MODEL,
    DEFAULT_MAX_ITERATIONS,
    DIRECTIONS,
    OPERATORS,
    EvaluateConfig,
    FSMLoop,
    LLMConfig,
    RouteConfig,
    StateConfig,
)
from little_loops.fsm.evaluators.registry import EVALUATOR_TYPES

__all__ = [
    "ACTION_TYPES",
    "DEFAULT_LLM_MODEL",
    "DEFAULT_MAX_ITERATIONS",
    "DIRECTIONS",
    "EVALUATOR_TYPES",
    "OPERATORS",
    "EvaluateConfig",
    "FSMLoop",
    "LLMConfig",
    "RouteConfig",
    "StateConfig",
]
