"""The evaluators by name (evaluators/registry.py)."""

from __future__ import annotations

from little_loops.fsm.evaluators.registry import (
    EVALUATE_KEY_NAMES,
    EVALUATOR_TYPES,
    SPECS,
    interpolated_fields,
    needs_llm,
)


def test_every_evaluator_is_registered_under_its_own_name() -> None:
    assert EVALUATOR_TYPES == (
        "exit_code",
        "output_numeric",
        "output_json",
        "output_contains",
        "convergence",
        "llm_structured",
    )
    assert all(SPECS[name].name == name for name in EVALUATOR_TYPES)


def test_every_key_some_evaluator_reads_once() -> None:
    assert EVALUATE_KEY_NAMES[:2] == ("type", "source")
    assert len(EVALUATE_KEY_NAMES) == len(set(EVALUATE_KEY_NAMES))
    for spec in SPECS.values():
        assert set(spec.keys) <= set(EVALUATE_KEY_NAMES)


def test_interpolated_fields_and_needs_llm() -> None:
    assert interpolated_fields("nope") == ("source",)
    assert interpolated_fields("output_contains")[0] == "source"
    assert "pattern" in interpolated_fields("output_contains")
    assert needs_llm("llm_structured") is True
    assert needs_llm("exit_code") is False
    assert needs_llm("nope") is False
