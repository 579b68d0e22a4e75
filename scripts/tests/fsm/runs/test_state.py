"""The run-state model: one name per value, the state file's keys, the executor's snapshot."""

from __future__ import annotations

import ast
import json
from dataclasses import fields
from pathlib import Path

import little_loops
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.runs.state import SNAPSHOT_FIELDS, LoopState, StateFile, parse_state

PACKAGE = Path(little_loops.__file__).parent


def test_every_snapshot_field_is_a_run_state_field_of_the_same_name() -> None:
    assert set(SNAPSHOT_FIELDS) <= {f.name for f in fields(LoopState)}
    snap = ExecutorSnapshot(
        "b",
        2,
        ["a"],
        False,
        True,
        {"k": {"output": "1"}},
        {"verdict": "x"},
        None,
        "t",
        9,
        "go on",
        0.25,
        {"claude_input_tokens": 3},
    )
    state = LoopState.from_snapshot("x", snap, pid=5)
    assert (state.loop_name, state.pid, state.continuation) == ("x", 5, "go on")
    assert state.snapshot() == snap


def test_the_state_file_is_statefile_key_for_key() -> None:
    data = LoopState("x", "a", continuation="note").to_dict()
    assert list(data) == list(StateFile.__annotations__)
    assert data["continuation_prompt"] == "note"
    json_keys = {f.name for f in fields(LoopState)} - {"continuation"} | {"continuation_prompt"}
    assert set(data) == json_keys


def test_an_older_state_file_keeps_loading_with_its_key() -> None:
    old = LoopState("x", "a").to_dict()
    old["continuation_prompt"] = "carry on"
    state = parse_state(json.loads(json.dumps(old)))
    assert state.continuation == "carry on"
    assert state.to_dict() == {**old, "updated_at": state.updated_at}


def test_the_continuation_has_one_name_in_the_code() -> None:
    """`continuation_prompt` is only the JSON key (StateFile in state.py); no other code says it."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).as_posix() == "fsm/runs/state.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute):
                name = node.attr
            elif isinstance(node, ast.Name):
                name = node.id
            elif isinstance(node, ast.keyword):
                name = node.arg or ""
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                name = node.value
            else:
                continue
            if "continuation_prompt" in name:
                found.append(f"{path.relative_to(PACKAGE)}:{getattr(node, 'lineno', '?')}")
    assert found == []
