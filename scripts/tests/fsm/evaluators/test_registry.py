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
    # The list itself is checked against the folder's modules by package/test_single_source.
    assert len(set(EVALUATOR_TYPES)) == len(EVALUATOR_TYPES)
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


def test_good_and_bad_verdicts_come_from_the_specs() -> None:
    from little_loops.fsm.evaluators.registry import (
        BAD_VERDICTS,
        GOOD_VERDICTS,
        verdict_went_well,
    )

    assert {"success", "target", "progress"} == GOOD_VERDICTS
    assert {"failure", "error", "stall", "blocked", "tool_error", "not_found", "timeout"} == (
        BAD_VERDICTS
    )
    for spec in SPECS.values():
        assert set(spec.good) <= set(spec.verdicts), spec.name
        assert set(spec.bad) <= set(spec.verdicts), spec.name
        assert not set(spec.good) & set(spec.bad), spec.name
    assert verdict_went_well("success") is True
    assert verdict_went_well("blocked_uncertain") is False
    assert verdict_went_well("error") is False
    assert verdict_went_well("partial") is None
