"""Evaluator settings as dataclasses (evaluators/config.py)."""

from __future__ import annotations

from little_loops.fsm.evaluators.config import (
    DEFAULT_LLM_MODEL,
    DEFAULT_LLM_MODEL_TOKEN,
    EvaluateConfig,
    LLMConfig,
)


def test_evaluate_config_reads_known_keys_and_writes_the_type_and_what_differs() -> None:
    config = EvaluateConfig.from_dict(
        {"type": "output_numeric", "operator": "lt", "target": 3, "x": 1}
    )
    assert (config.type, config.operator, config.target) == ("output_numeric", "lt", 3)
    assert config.to_dict() == {"type": "output_numeric", "operator": "lt", "target": 3}
    assert EvaluateConfig("exit_code").to_dict() == {"type": "exit_code"}


def test_llm_config_reads_the_default_model_token() -> None:
    assert LLMConfig.from_dict({"model": DEFAULT_LLM_MODEL_TOKEN}).model == DEFAULT_LLM_MODEL
    config = LLMConfig.from_dict({"model": "other", "timeout": 5, "unknown": True})
    assert config.to_dict() == {"model": "other", "timeout": 5}
    assert LLMConfig().to_dict() == {}
    assert LLMConfig().enabled is True
