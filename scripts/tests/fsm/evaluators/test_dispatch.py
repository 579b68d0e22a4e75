"""The dispatcher: references resolved, the evaluator picked by name, LLM evaluation off."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from little_loops.fsm.definition.model.typed import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.dispatch import (
    EVALUATORS,
    LLM_SKIPPED_NOTE,
    default_evaluation,
    evaluate,
)
from little_loops.fsm.evaluators.registry import EVALUATOR_TYPES
from little_loops.fsm.evaluators.spec import EvaluationResult
from little_loops.fsm.values.interpolation import InterpolationContext


def ctx(**kwargs: Any) -> InterpolationContext:
    kwargs.setdefault("env", {})
    return InterpolationContext(**kwargs)


def test_registry_covers_exactly_the_schema_types() -> None:
    assert tuple(EVALUATORS) == EVALUATOR_TYPES


def test_evaluation_result_to_dict() -> None:
    assert EvaluationResult("success", {"a": 1}).to_dict() == {
        "verdict": "success",
        "details": {"a": 1},
    }


def test_dispatch_each_tier1_type() -> None:
    c = ctx()
    assert evaluate(EvaluateConfig(type="exit_code"), "", 1, c).verdict == "failure"
    numeric = EvaluateConfig(type="output_numeric", operator="le", target=5)
    assert evaluate(numeric, "4\n", 0, c).verdict == "success"
    json_cfg = EvaluateConfig(type="output_json", path=".ok", operator="eq", target=True)
    assert evaluate(json_cfg, '{"ok": true}', 0, c).verdict == "success"
    contains = EvaluateConfig(type="output_contains", pattern="PASS", negate=True)
    assert evaluate(contains, "PASS", 0, c).verdict == "failure"
    conv = EvaluateConfig(type="convergence", target=0, previous="9")
    assert evaluate(conv, "4", 0, c).verdict == "progress"


def test_dispatch_interpolates_fields() -> None:
    c = ctx(
        context={"target": 3, "tol": "1", "word": "ready", "key": "count"},
        prev={"output": "10\n", "exit_code": 0, "state": "apply"},
    )
    conv = EvaluateConfig(
        type="convergence",
        target="${context.target}",
        tolerance="${context.tol}",
        previous="${prev.output}",
    )
    result = evaluate(conv, "7", 0, c)
    assert result.verdict == "progress"
    assert (result.details["target"], result.details["tolerance"]) == (3, 1)
    assert result.details["previous"] == 10
    contains = EvaluateConfig(type="output_contains", pattern="status: ${context.word}")
    assert evaluate(contains, "status: ready", 0, c).verdict == "success"
    json_cfg = EvaluateConfig(
        type="output_json", path=".${context.key}", operator="gt", target="${context.target}"
    )
    assert evaluate(json_cfg, '{"count": 4}', 0, c).details["target"] == 3


def test_dispatch_first_iteration_of_convergence_with_no_prev() -> None:
    conv = EvaluateConfig(type="convergence", target=0, previous="${prev.output}")
    result = evaluate(conv, "12", 0, ctx(prev=None))
    assert result.verdict == "progress"
    assert result.details["previous"] is None


def test_dispatch_interpolation_error_is_error_verdict() -> None:
    numeric = EvaluateConfig(type="output_numeric", operator="eq", target="${context.nope}")
    result = evaluate(numeric, "1", 0, ctx(context={"max": 1}))
    assert result.verdict == "error"
    assert result.details == {
        "error": "${context.nope}: undefined variable ('nope' not found in context)"
    }


def test_dispatch_source_replaces_output() -> None:
    c = ctx(captured={"errors": {"output": "0\n", "exit_code": 1}})
    decide = EvaluateConfig(
        type="output_numeric", source="${captured.errors.output}", operator="eq", target=0
    )
    assert evaluate(decide, "ignored 99", 0, c).verdict == "success"
    # a non-string source is evaluated as its text
    c2 = ctx(context={"report": {"failed": 2}})
    json_cfg = EvaluateConfig(
        type="output_json", source="${context.report}", path=".failed", operator="eq", target=2
    )
    assert evaluate(json_cfg, "", 0, c2).verdict == "success"


def test_dispatch_missing_required_fields_and_unknown_type() -> None:
    result = evaluate(EvaluateConfig(type="output_numeric"), "1", 0, ctx())
    assert result.details == {"error": "output_numeric evaluator needs operator and target"}
    result = evaluate(EvaluateConfig(type="output_json"), "{}", 0, ctx())
    assert result.details == {"error": "output_json evaluator needs path"}
    result = evaluate(EvaluateConfig(type="output_contains"), "1", 0, ctx())
    assert result.details == {"error": "output_contains evaluator needs pattern"}
    result = evaluate(EvaluateConfig(type="exit_cod"), "", 0, ctx())
    assert result.details == {
        "error": "unknown evaluator type 'exit_cod' (did you mean exit_code?)"
    }


@pytest.mark.parametrize(("code", "verdict"), [(0, "success"), (1, "failure"), (3, "error")])
def test_llm_disabled_falls_back_to_exit_code(code: int, verdict: str) -> None:
    result = evaluate(
        EvaluateConfig(type="llm_structured", prompt="Did ${context.unset} work?"),
        "whatever",
        code,
        ctx(),
        llm=LLMConfig(enabled=False),
    )
    assert result.verdict == verdict
    assert result.details["exit_code"] == code
    assert result.details["llm_skipped"] == (
        "LLM evaluation disabled (--no-llm or llm.enabled: false); used exit_code"
    )
    assert result.details["llm_skipped"] == LLM_SKIPPED_NOTE


def test_default_evaluation_for_shell_state() -> None:
    assert default_evaluation(False, "", 1, ctx()).verdict == "failure"
    no_llm = LLMConfig(enabled=False)
    prompt_result = default_evaluation(True, "done", 0, ctx(), llm=no_llm)
    assert prompt_result.verdict == "success"
    assert "llm_skipped" in prompt_result.details


def test_importing_evaluators_does_not_import_anthropic() -> None:
    code = (
        "import sys\n"
        "import little_loops.fsm.evaluators as ev\n"
        "assert 'anthropic' not in sys.modules, 'anthropic imported'\n"
        "assert 'little_loops.fsm.evaluators.llm_structured' not in sys.modules, 'judge imported'\n"
        "assert callable(ev.evaluate_llm_structured)\n"
        "assert 'anthropic' not in sys.modules, 'anthropic imported by the judge'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_registry_entry_for_llm_also_honours_disabled() -> None:
    result = EVALUATORS["llm_structured"](
        EvaluateConfig(type="llm_structured"), "out", 0, LLMConfig(enabled=False), None
    )
    assert (result.verdict, result.details["llm_skipped"]) == ("success", LLM_SKIPPED_NOTE)
