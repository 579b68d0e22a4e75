"""Evaluate a state's result: resolve the config's references, pick the evaluator, run it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from little_loops.fsm.actions import registry
from little_loops.fsm.actions.registry import DEFAULT_KIND
from little_loops.fsm.evaluators.config import (
    EvaluateConfig,
    LLMConfig,
)
from little_loops.fsm.evaluators.exit_code import evaluate_exit_code
from little_loops.fsm.evaluators.registry import SPECS, interpolated_fields
from little_loops.fsm.evaluators.spec import (
    EvaluationResult,
    EvaluatorSpec,
    RunEvaluator,
    error_result,
    shorten,
)
from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.facts.suggest import did_you_mean
from little_loops.fsm.facts.verdict_words import canonical_verdict
from little_loops.fsm.values.interpolation import InterpolationContext, interpolate_value, to_text

LLM_SKIPPED_NOTE = "LLM evaluation disabled (--no-llm or llm.enabled: false); used exit_code"


def llm_skipped(exit_code: int) -> EvaluationResult:
    """The verdict of an LLM evaluator when LLM evaluation is off: the exit code's."""
    result = evaluate_exit_code(exit_code)
    result.details["llm_skipped"] = LLM_SKIPPED_NOTE
    return result


def _guarded(spec: EvaluatorSpec) -> RunEvaluator:
    """*spec*'s run, judging by exit code when it needs a model and LLM evaluation is off."""
    if not spec.needs_llm:
        return spec.run

    def run(
        config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
    ) -> EvaluationResult:
        if not llm.enabled:
            return llm_skipped(exit_code)
        return spec.run(config, output, exit_code, llm, client)

    return run


class _Runs(Mapping[str, RunEvaluator]):
    """Each evaluator's guarded run by name, made when first looked up: like SPECS, a run
    imports only the evaluators its loop uses."""

    def __init__(self) -> None:
        self._made: dict[str, RunEvaluator] = {}

    def __getitem__(self, name: str) -> RunEvaluator:
        run = self._made.get(name)
        if run is None:
            run = self._made[name] = _guarded(SPECS[name])
        return run

    def __iter__(self) -> Iterator[str]:
        return iter(SPECS)

    def __len__(self) -> int:
        return len(SPECS)


# The seed's registry: evaluator name -> run(config, output, exit_code, llm, client).
EVALUATORS: Mapping[str, RunEvaluator] = _Runs()


def resolve_config(config: EvaluateConfig, context: InterpolationContext) -> EvaluateConfig:
    """A copy of *config* with `${...}` resolved in the keys its evaluator interpolates
    (*config* itself when it has none of them: nothing changes it).

    Raises InterpolationError naming the variable. The keys the file leaves out take the
    evaluator's `defaults` first.
    """
    spec = SPECS.get(config.type)
    if spec is not None and spec.defaults:
        unset = {k: v for k, v in spec.defaults.items() if getattr(config, k) is None}
        config = replace(config, **unset) if unset else config
    changes = {
        name: interpolate_value(getattr(config, name), context)
        for name in interpolated_fields(config.type)
        if getattr(config, name) is not None
    }
    return replace(config, **changes) if changes else config


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
    spec = SPECS.get(config.type)
    if spec is None:
        return error_result(
            f"unknown evaluator type {shorten(str(config.type))}"
            f"{did_you_mean(str(config.type), SPECS)}"
        )
    if config.theirs and exit_code != 0 and not spec.reads_exit_code:
        # little-loops' rule: an evaluator that does not judge the exit code gives `error`
        return error_result(f"action exited with code {exit_code}", exit_code=exit_code)
    llm = llm or LLMConfig()
    if spec.needs_llm and not llm.enabled:
        return llm_skipped(exit_code)  # before interpolating: the prompt is not used
    try:
        resolved = resolve_config(config, context)
    except InterpolationError as exc:
        return error_result(str(exc))
    if resolved.source is not None:
        output = to_text(resolved.source)
    result = spec.run(resolved, output, exit_code, llm, client)
    result.verdict = canonical_verdict(result.verdict)  # any evaluator's `yes` is success
    return result


def default_evaluation(
    state_is_prompt: bool,
    output: str,
    exit_code: int,
    context: InterpolationContext,
    *,
    llm: LLMConfig | None = None,
    client: Any = None,
) -> EvaluationResult:
    """The evaluation of a state without `evaluate:`: its action kind's default evaluator
    (`state_is_prompt`: the kind of a `/` action, `llm_structured`; else `exit_code`)."""
    kind = registry.SLASH_KIND if state_is_prompt else DEFAULT_KIND
    config = EvaluateConfig(type=kind.default_evaluator)
    return evaluate(config, output, exit_code, context, llm=llm, client=client)
