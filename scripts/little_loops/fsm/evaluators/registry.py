"""The evaluators by name: the one list that validation, analysis, display and dispatch read."""

from __future__ import annotations

from little_loops.fsm.evaluators import (
    classify,
    convergence,
    diff_stall,
    exit_code,
    harbor_scorer,
    llm_structured,
    mcp_result,
    open_question_stall,
    output_contains,
    output_json,
    output_numeric,
    score_stall,
)
from little_loops.fsm.evaluators.judge_rules import UNCERTAIN_SUFFIX
from little_loops.fsm.evaluators.spec import COMMON_KEYS, ERROR_VERDICT, EvaluatorSpec

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
        mcp_result.SPEC,
        classify.SPEC,
        diff_stall.SPEC,
        score_stall.SPEC,
        open_question_stall.SPEC,
        harbor_scorer.SPEC,
    )
}
EVALUATOR_TYPES: tuple[str, ...] = tuple(SPECS)
# Every `evaluate:` key some evaluator reads, in a stable order.
EVALUATE_KEY_NAMES: tuple[str, ...] = tuple(
    dict.fromkeys(key for key in COMMON_KEYS + sum((s.keys for s in SPECS.values()), ()))
)

# The verdicts that mean a step went well, and those that mean it did not (`error` too),
# from each evaluator's spec: the progress display and `simulate` mark them ✓ and ✗.
GOOD_VERDICTS: frozenset[str] = frozenset(v for s in SPECS.values() for v in s.good)
BAD_VERDICTS: frozenset[str] = frozenset(
    {ERROR_VERDICT, *(v for s in SPECS.values() for v in s.bad)}
)


def verdict_went_well(verdict: str) -> bool | None:
    """True for a good verdict, False for a bad one, None for any other (a judge's own
    words); a judge's `_uncertain` variant counts as its plain verdict."""
    base = verdict.removesuffix(UNCERTAIN_SUFFIX)
    if base in GOOD_VERDICTS:
        return True
    return False if base in BAD_VERDICTS else None


def interpolated_fields(kind: str) -> tuple[str, ...]:
    """The `evaluate:` keys of evaluator *kind* resolved as `${...}` before it runs."""
    spec = SPECS.get(kind)
    return ("source", *spec.interpolated) if spec is not None else ("source",)


def needs_llm(kind: str) -> bool:
    """True when evaluator *kind* asks a model (so costs money and obeys `llm.enabled`)."""
    spec = SPECS.get(kind)
    return spec is not None and spec.needs_llm


def is_pure(kind: str) -> bool:
    """True when evaluator *kind* reads the output, exit code and its keys alone (no model,
    file or git), so a rehearsal (`simulate --compat`) can run it."""
    spec = SPECS.get(kind)
    return spec is not None and spec.pure
