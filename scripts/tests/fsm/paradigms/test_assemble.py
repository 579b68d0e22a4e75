"""Assembling the compiled FSM: the loop settings checked, `action_type`, the merged context."""

from __future__ import annotations

from typing import Any

import pytest

from little_loops.fsm.definition.checks.key_checks import check_definition
from little_loops.fsm.definition.checks.key_tables import (
    LOOP_KEYS,
    LOOP_SETTING_KEYS,
    RUN_ACTION_TYPE,
)
from little_loops.fsm.definition.model.lint_flags import LINT_FLAG_KEYS
from little_loops.fsm.definition.model.metadata import METADATA_LOOP_KEYS
from little_loops.fsm.definition.model.reuse_keys import REUSE_LOOP_CHECKS
from little_loops.fsm.definition.model.route_keys import LOOP_LIMIT_ROWS
from little_loops.fsm.definition.model.run_keys import RUN_LOOP_KEYS
from little_loops.fsm.facts.errors import LoopDefinitionError, LoopValidationError
from little_loops.fsm.paradigms.assemble import DONE, build, loop_settings
from little_loops.fsm.paradigms.spec import SETTING_KEYS, SpecReader

STATES = {"run": {"action": "x", "next": DONE}, DONE: {"terminal": True}}


def _states() -> dict[str, dict[str, Any]]:
    return {name: dict(state) for name, state in STATES.items()}


def test_action_type_goes_onto_each_state_with_an_action() -> None:
    reader = SpecReader("paradigm 't'", {"action_type": "shell"})
    fsm = build(reader, "t", "n", "run", _states(), loop_settings(reader, "n"))
    assert (fsm.states["run"].action_type, fsm.states[DONE].action_type) == ("shell", None)


def test_the_spec_context_is_merged_but_cannot_replace_a_compiler_key() -> None:
    reader = SpecReader("paradigm 't'", {"context": {"a": 1}})
    fsm = build(reader, "t", "n", "run", _states(), loop_settings(reader, "n"), {"b": 2})
    assert fsm.context == {"b": 2, "a": 1}
    clash = SpecReader("paradigm 't'", {"context": {"b": 1}})
    with pytest.raises(LoopDefinitionError, match="'b' is set by the t compiler"):
        build(clash, "t", "n", "run", _states(), loop_settings(clash, "n"), {"b": 2})


# The same mistaken setting, in an FSM file and in a paradigm spec.
BAD_SETTINGS: list[dict[str, Any]] = [
    {"max_iterations": 0},
    {"max_iterations": 2.5},
    {"timeout": -1},
    {"idle_timeout": 0},
    {"backoff": "1s"},
    {"max_cost_usd": 0},
    {"maintain": "yes"},
    {"scope": "src/"},
    {"scope": ["src/", ""]},
    {"context": ["a"]},
    {"llm": {"modle": "x"}},
    {"llm": {"max_tokens": 0}},
    {"llm": "off"},
    {"timeout": -1, "maintain": "no"},
]


@pytest.mark.parametrize("bad", BAD_SETTINGS, ids=str)
def test_a_bad_setting_reads_the_same_in_a_spec_as_in_an_fsm_file(bad: dict[str, Any]) -> None:
    fsm_file = {"name": "n", "initial": "a", "states": {"a": {"terminal": True}}, **bad}
    expected = [str(p) for p in check_definition(fsm_file)]
    assert expected  # each of these is a mistake in an FSM file
    with pytest.raises(LoopValidationError) as exc:
        loop_settings(SpecReader("paradigm 't'", bad), "n")
    assert [str(p) for p in exc.value.errors] == expected


def test_the_spec_settings_are_the_fsm_settings_plus_action_type() -> None:
    assert {**LOOP_SETTING_KEYS, "action_type": RUN_ACTION_TYPE} == SETTING_KEYS
    # The reuse keys (import:, from: ...) are resolved while a file is read: no setting;
    # caps with routes, metadata and little-loops' run keys are an FSM file's own.
    plain = {"name", "initial", "states", "paradigm", *LOOP_SETTING_KEYS}
    caps = {row.name for row in LOOP_LIMIT_ROWS}
    fsm_only = {*REUSE_LOOP_CHECKS, *caps, *RUN_LOOP_KEYS, *METADATA_LOOP_KEYS, *LINT_FLAG_KEYS}
    assert set(LOOP_KEYS) == plain | fsm_only
    assert all(LOOP_KEYS[key] is check for key, check in LOOP_SETTING_KEYS.items())
