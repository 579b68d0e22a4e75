"""The evaluators by name: the one list that validation, analysis, display and dispatch read."""

from __future__ import annotations

from little_loops.fsm.evaluators import (
    convergence,
    exit_code,
    llm_structured,
    output_contains,
    output_json,
    output_numeric,
)
from little_loops.fsm.evaluators.spec import COMMON_KEYS, EvaluatorSpec

# In the order the docs and messages list them. To add an evaluator: write its module (its
# evaluate function and SPEC) in this folder and add it here.
SPECS: dict[str, EvaluatorSpec] = {
    spec.name: spec
    for spec in (
        exit_code.SPEC,
        output_numeric.SPEC,
        output_json.SPEC,
        output_contains.SPEC,
        convergence.SPEC,
        llm_structured.SPEC,
    )
}
EVALUATOR_TYPES: tuple[str, ...] = tuple(SPECS)
# Every `evaluate:` key some evaluator reads, in a stable order.
EVALUATE_KEY_NAMES: tuple[str, ...] = tuple(
    dict.fromkeys(key for key in COMMON_KEYS + sum((s.keys for s in SPECS.values()), ()))
)


def interpolated_fields(kind: str) -> tuple[str, ...]:
    """The `evaluate:` keys of evaluator *kind* resolved as `${...}` before it runs."""
    spec = SPECS.get(kind)
    return ("source", *spec.interpolated) if spec is not None else ("source",)


def needs_llm(kind: str) -> bool:
    """True when evaluator *kind* asks a model (so costs money and obeys `llm.enabled`)."""
    spec = SPECS.get(kind)
    return spec is not None and spec.needs_llm
