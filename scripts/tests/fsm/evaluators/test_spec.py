"""What an evaluator is (evaluators/spec.py): results, errors, the spec."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.spec import (
    ERROR_VERDICT,
    EvaluationResult,
    EvaluatorSpec,
    error_result,
    missing,
    shorten,
)


def _run(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    return EvaluationResult("success")


def test_results_and_errors() -> None:
    assert EvaluationResult("ok", {"a": 1}).to_dict() == {"verdict": "ok", "details": {"a": 1}}
    error = error_result("boom", model="m")
    assert (error.verdict, error.details) == (ERROR_VERDICT, {"model": "m", "error": "boom"})


def test_shorten_quotes_on_one_line() -> None:
    assert shorten("a\nb") == "'a\\nb'"
    assert shorten("x" * 10, 6) == "'xxx...'"


def test_missing_fields_are_an_error_result() -> None:
    config = EvaluateConfig("output_numeric", operator="lt")
    assert missing(config, "operator") is None
    found = missing(config, "operator", "target", "path")
    assert found is not None
    assert found.details["error"] == "output_numeric evaluator needs target and path"


def test_verdicts_for_a_config() -> None:
    plain = EvaluatorSpec("plain", "a test evaluator", _run)
    assert plain.verdicts_for(EvaluateConfig("plain")) == ("success", "failure")
    assert plain.detail({"verdict": "x"}) is None
    schema = EvaluatorSpec("judge", "asks", _run, config_verdicts=lambda config: None)
    assert schema.verdicts_for(EvaluateConfig("judge")) is None
