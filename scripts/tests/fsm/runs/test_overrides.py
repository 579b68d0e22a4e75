"""The run flags: the options file a resume reads back, and the loop they change."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from little_loops.fsm.definition.model.typed import FSMLoop, LLMConfig, StateConfig
from little_loops.fsm.facts.layout import run_files
from little_loops.fsm.runs.flags import flag_rows
from little_loops.fsm.runs.overrides import (
    RunFlags,
    apply_overrides,
    load_overrides,
    resumed_over,
    save_overrides,
)


def test_the_flags_round_trip(tmp_path: Path) -> None:
    assert load_overrides("x", tmp_path) is None
    flags = RunFlags(max_iterations=4, no_llm=True, llm_model="m", max_cost=0.5, model="c")
    save_overrides("x", tmp_path, flags)
    assert load_overrides("x", tmp_path) == flags
    written = json.loads(run_files("x", tmp_path).options.read_text())
    assert written == {
        "max_iterations": 4,
        "no_llm": True,
        "llm_model": "m",
        "max_cost": 0.5,
        "wait_approval": False,
        "model": "c",
        "sandbox": None,
        "compat": False,
    }
    waits = RunFlags(wait_approval=True)
    save_overrides("x", tmp_path, waits)
    assert load_overrides("x", tmp_path) == waits


@pytest.mark.parametrize(
    "text",
    [
        '{"max_iterations": true, "no_llm": "yes", "llm_model": 3, "max_cost": -1}',
        '{"max_iterations": 0, "max_cost": true, "model": ""}',
        "{}",
    ],
)
def test_bad_values_are_ignored(tmp_path: Path, text: str) -> None:
    path = run_files("x", tmp_path).options
    path.parent.mkdir(parents=True)
    path.write_text(text)
    assert load_overrides("x", tmp_path) == RunFlags()


@pytest.mark.parametrize("text", ["[1]", "not json"])
def test_an_unreadable_record_is_no_record(tmp_path: Path, text: str) -> None:
    path = run_files("x", tmp_path).options
    path.parent.mkdir(parents=True)
    path.write_text(text)
    assert load_overrides("x", tmp_path) is None


def test_the_record_is_the_resumed_rows_and_the_rest_is_not_kept(tmp_path: Path) -> None:
    flags = RunFlags(max_iterations=2, queue=True, quiet=True, verbose=True, as_json=True)
    assert set(flags.record()) == {name for name, row in flag_rows(RunFlags) if row.resumed}
    save_overrides("x", tmp_path, flags)
    assert load_overrides("x", tmp_path) == RunFlags(max_iterations=2)


def test_resume_merges_each_flag_over_the_record() -> None:
    saved = RunFlags(max_iterations=3, no_llm=True, llm_model="m", max_cost=1.0, model="c")
    assert resumed_over(RunFlags(quiet=True), saved) == dataclasses.replace(saved, quiet=True)
    given = RunFlags(max_iterations=9, model="d", wait_approval=True)
    assert resumed_over(given, saved) == RunFlags(
        max_iterations=9, no_llm=True, llm_model="m", max_cost=1.0, model="d", wait_approval=True
    )
    assert resumed_over(given, None) is given  # no record: the loop file's values apply


def test_the_argv_of_the_flags_given() -> None:
    assert RunFlags().argv() == []
    assert RunFlags(max_cost=0.1, no_color=True, wait_approval=True).argv() == [
        "--max-cost",
        "0.1",
        "--wait-approval",
        "--no-color",
    ]


def test_a_value_that_looks_like_a_flag_is_passed_on_as_one_argument() -> None:
    # `run --background --llm-model=--x` is accepted, then its background child was given
    # `--llm-model --x`, which argparse refuses ("expected one argument"): the run never ran.
    flags = RunFlags(llm_model="--x", model="-m")
    assert flags.argv() == ["--llm-model=--x", "--model=-m"]


def _loop() -> FSMLoop:
    return FSMLoop(name="x", initial="a", states={"a": StateConfig(terminal=True)})


def test_apply_overrides_leaves_the_loop_unchanged() -> None:
    fsm = _loop()
    changed = apply_overrides(
        fsm, RunFlags(max_iterations=3, no_llm=True, llm_model="claude-test-model")
    )
    assert (changed.max_iterations, changed.llm) == (
        3,
        LLMConfig(enabled=False, model="claude-test-model"),
    )
    assert (fsm.max_iterations, fsm.llm) == (50, LLMConfig())
    assert apply_overrides(fsm, RunFlags()) == fsm


def test_model_flag_is_the_model_of_every_claude_state() -> None:
    fsm = FSMLoop.from_dict(
        {
            "name": "x",
            "initial": "a",
            "claude": {"model": "loop-model", "tools": ["Read"]},
            "states": {
                "a": {"action": "A", "action_type": "prompt", "claude": {"model": "own"}},
                "b": {"action": "B", "action_type": "prompt", "claude": {"effort": "low"}},
                "c": {"action": "C", "action_type": "prompt"},
            },
        }
    )
    changed = apply_overrides(fsm, RunFlags(model="cli-model"))
    assert changed.claude == {"model": "cli-model", "tools": ["Read"]}
    assert changed.states["a"].claude == {"model": "cli-model"}
    assert changed.states["b"].claude == {"effort": "low"}  # the loop's model applies
    assert changed.states["c"].claude is None
    assert fsm.states["a"].claude == {"model": "own"}  # the loaded loop is not changed
