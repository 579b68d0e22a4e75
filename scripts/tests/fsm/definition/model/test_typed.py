"""The typed model (schema.py) and the JSON Schema for loop files, kept in step."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from support.paths import REPO, SHIPPED_LOOPS, TESTS
from support.subloop_docs import check_with_siblings, has_subloops

from little_loops.fsm.definition.model.reuse_keys import REUSE_LOOP_CHECKS, REUSE_STATE_CHECKS
from little_loops.fsm.definition.model.spellings import SPELLINGS, STATE
from little_loops.fsm.definition.model.typed import (
    ACTION_TYPES,
    DEFAULT_LLM_MODEL,
    DEFAULT_MAX_ITERATIONS,
    DIRECTIONS,
    OPERATORS,
    EvaluateConfig,
    FSMLoop,
    LLMConfig,
    RouteConfig,
    StateConfig,
    model_keys,
)
from little_loops.fsm.definition.reading.loader import load_file, load_text
from little_loops.fsm.definition.reading.loopdoc import uses_reuse
from little_loops.fsm.evaluators.registry import EVALUATOR_TYPES
from little_loops.fsm.validate.json_schema import SCHEMA_FILE
from little_loops.fsm.validate.loopfile import check_document

SCHEMA: dict[str, Any] = json.loads(SCHEMA_FILE.read_text())
DEFS = SCHEMA["$defs"]
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


# --- the dataclasses --------------------------------------------------------------------


def test_defaults() -> None:
    fsm = FSMLoop(name="x", initial="a", states={"a": StateConfig(terminal=True)})
    assert fsm.max_iterations == DEFAULT_MAX_ITERATIONS == 50
    assert fsm.llm == LLMConfig(enabled=True, model=DEFAULT_LLM_MODEL, max_tokens=256, timeout=30)
    assert (fsm.maintain, fsm.backoff, fsm.timeout, fsm.context, fsm.scope) == (
        False,
        None,
        None,
        {},
        [],
    )
    assert fsm.effective_scope() == ["."]
    evaluate = EvaluateConfig(type="convergence")
    assert (evaluate.direction, evaluate.min_confidence, evaluate.negate) == (
        "minimize",
        0.5,
        False,
    )


def test_to_dict_drops_unset_fields_and_keeps_reading_order() -> None:
    fsm = FSMLoop.from_dict(
        {
            "max_iterations": 5,
            "states": {"a": {"action": "x", "next": "b"}, "b": {"terminal": True}},
            "initial": "a",
            "name": "order",
            "context": {"k": 1},
            "llm": {"max_tokens": 100},
        }
    )
    assert fsm.to_dict() == {
        "name": "order",
        "initial": "a",
        "context": {"k": 1},
        "states": {"a": {"action": "x", "next": "b"}, "b": {"terminal": True}},
        "max_iterations": 5,
        "llm": {"max_tokens": 100},
    }
    assert list(fsm.to_dict()) == ["name", "initial", "context", "states", "max_iterations", "llm"]


FULL: dict[str, Any] = {
    "name": "full",
    "paradigm": "fsm",
    "initial": "measure",
    "context": {"target": 0},
    "states": {
        "measure": {
            "action": "echo 3",
            "action_type": "shell",
            "capture": "value",
            "timeout": 10,
            "evaluate": {
                "type": "convergence",
                "target": "${context.target}",
                "tolerance": 1,
                "previous": "${prev.output}",
                "direction": "maximize",
                "source": "${captured.value.output}",
            },
            "route": {"target": "done", "progress": "$current", "_": "done", "_error": "done"},
        },
        "judge": {
            "action": "Did it work?",
            "evaluate": {
                "type": "llm_structured",
                "prompt": "Judge",
                "schema": {"type": "object"},
                "min_confidence": 0.7,
                "uncertain_suffix": True,
            },
            "on_success": "done",
            "on_failure": "measure",
            "on_error": "done",
        },
        "done": {"terminal": True, "on_maintain": "measure"},
    },
    "scope": ["src/"],
    "max_iterations": 7,
    "backoff": 0.5,
    "timeout": 60,
    "maintain": True,
    "llm": {"enabled": False, "model": "other", "max_tokens": 64, "timeout": 5},
}


def test_round_trip_of_every_field() -> None:
    fsm = FSMLoop.from_dict(FULL)
    assert fsm.to_dict() == FULL
    assert FSMLoop.from_dict(fsm.to_dict()) == fsm
    assert fsm.states["measure"].route == RouteConfig(
        routes={"target": "done", "progress": "$current"}, default="done", error="done"
    )


def test_llm_model_token_means_the_default_model() -> None:
    assert LLMConfig.from_dict({"model": "${DEFAULT_LLM_MODEL}"}).model == DEFAULT_LLM_MODEL
    assert LLMConfig.from_dict({"model": "other"}).model == "other"


# action_type (ENH-109): prompts that do not start with '/' can still go to Claude.


def test_action_type_field() -> None:
    state = StateConfig(action="Analyze the code", action_type="prompt", on_success="done")
    assert state.action_type == "prompt"
    assert StateConfig(action="pytest").action_type is None


def test_action_type_round_trip() -> None:
    original = StateConfig(action="echo hello", action_type="shell", on_success="done")
    assert StateConfig.from_dict(original.to_dict()).action_type == "shell"
    assert original.to_dict() == {
        "action": "echo hello",
        "action_type": "shell",
        "on_success": "done",
    }


@pytest.mark.parametrize(
    ("action", "action_type", "is_prompt"),
    [
        ("Analyze the code", "prompt", True),
        ("/ll:check_code", "slash_command", True),
        ("/usr/bin/ls", "shell", False),
        ("/ll:help", None, True),
        ("pytest", None, False),
        (None, None, False),
    ],
)
def test_is_prompt(action: str | None, action_type: Any, is_prompt: bool) -> None:
    assert StateConfig(action=action, action_type=action_type).is_prompt() is is_prompt


# --- the JSON Schema ---------------------------------------------------------------------


def test_the_json_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize(
    ("definition", "cls"),
    [
        ("fsmLoop", FSMLoop),
        ("stateConfig", StateConfig),
        ("evaluateConfig", EvaluateConfig),
        ("llmConfig", LLMConfig),
    ],
)
def test_schema_and_dataclass_list_the_same_keys(definition: str, cls: type) -> None:
    schema = DEFS[definition]
    others = {each.theirs for each in SPELLINGS if each.level == STATE and cls is StateConfig}
    # The reuse keys (import:, from:, fragment: ...) are resolved while the file is read:
    # the schema knows them, the model never sees them.
    reuse = {FSMLoop: list(REUSE_LOOP_CHECKS), StateConfig: list(REUSE_STATE_CHECKS)}
    resolved = reuse.get(cls, [])
    listed = [key for key in schema["properties"] if key not in others and key not in resolved]
    assert listed == model_keys(cls)
    assert set(resolved) <= set(schema["properties"])
    assert schema["additionalProperties"] is False
    for name, prop in schema["properties"].items():
        assert prop.get("description"), f"{definition}.{name} has no description"


def test_route_schema_matches_route_config() -> None:
    route = DEFS["routeConfig"]
    # RouteConfig: `_` is .default, `_error` is .error, every other key is a verdict in .routes.
    assert [f.name for f in fields(RouteConfig)] == ["routes", "default", "error"]
    assert list(route["properties"]) == ["_", "_error"]
    assert route["additionalProperties"] == {"$ref": "#/$defs/stateName"}


def test_schema_enums_are_the_model_constants() -> None:
    evaluate = DEFS["evaluateConfig"]["properties"]
    assert tuple(evaluate["type"]["enum"]) == EVALUATOR_TYPES
    assert tuple(evaluate["operator"]["enum"][:-1]) == OPERATORS
    assert tuple(evaluate["direction"]["enum"]) == DIRECTIONS
    assert tuple(DEFS["stateConfig"]["properties"]["action_type"]["enum"][:-1]) == ACTION_TYPES


def _doc_blocks() -> list[tuple[str, str]]:
    """Complete FSM loops (name, initial and states; no other paradigm) in docs/*.md."""
    blocks = []
    for doc in sorted((REPO / "docs").glob("*.md")):
        for index, text in enumerate(re.findall(r"```yaml\n(.*?)```", doc.read_text(), re.S)):
            data = load_text(text, f"{doc.name}#{index}").data
            complete = {"name", "initial", "states"} <= set(data)
            # A loop that imports fragment libraries needs the doc's other files: it is
            # checked in a project of them (docs/test_reuse_doc.py, docs/test_doc_blocks.py).
            if complete and data.get("paradigm", "fsm") == "fsm" and not uses_reuse(data):
                blocks.append((f"{doc.name}#{index}", text))
    return blocks


LOOP_FILES = SHIPPED_LOOPS + sorted((TESTS / "data" / "doc_loops").glob("*.yaml"))
DOC_BLOCKS = _doc_blocks()


def test_there_are_examples_to_check() -> None:
    assert len(LOOP_FILES) >= 12
    assert len(DOC_BLOCKS) >= 3


@pytest.mark.parametrize("path", LOOP_FILES, ids=[p.name for p in LOOP_FILES])
def test_example_loop_files_are_valid(path: Path) -> None:
    doc = load_file(path)
    assert sorted(VALIDATOR.iter_errors(doc.data), key=str) == []
    report = check_document(doc)
    # Warnings the static analysis finds in the design doc's examples are asserted in
    # fsm/definition/checks/test_analysis.py; here: no errors.
    assert [str(p) for p in report.errors] == []
    assert report.fsm is not None


@pytest.mark.parametrize(("where", "text"), DOC_BLOCKS, ids=[w for w, _ in DOC_BLOCKS])
def test_example_loops_in_docs_are_valid(where: str, text: str, tmp_path: Path) -> None:
    doc = load_text(text, where)
    assert sorted(VALIDATOR.iter_errors(doc.data), key=str) == []
    if has_subloops(text):  # its children are the doc's other examples
        doc_name = where.partition("#")[0]
        siblings = [other for w, other in DOC_BLOCKS if w.partition("#")[0] == doc_name]
        report = check_with_siblings(text, siblings, tmp_path)
    else:
        report = check_document(doc)
    assert [str(p) for p in report.problems()] == []


INVALID = sorted((TESTS / "data" / "invalid_loops").glob("*.yaml"))
SCHEMA_REJECTS = [p for p in INVALID if "\n# schema: rejects\n" in p.read_text()]


def test_some_invalid_loops_are_marked_for_the_schema() -> None:
    assert len(SCHEMA_REJECTS) >= 15


@pytest.mark.parametrize("path", SCHEMA_REJECTS, ids=[p.stem for p in SCHEMA_REJECTS])
def test_the_schema_rejects_field_mistakes_too(path: Path) -> None:
    assert not VALIDATOR.is_valid(load_file(path).data)


def test_paradigm_specs_are_left_to_their_compiler() -> None:
    spec = {"paradigm": "goal", "goal": "No type errors", "tools": ["/ll:check_code types"]}
    assert VALIDATOR.is_valid(spec)
    assert not VALIDATOR.is_valid({**spec, "paradigm": "fsm"})


def test_each_kinds_options_block_is_read_through_one_accessor() -> None:
    from little_loops.fsm.actions import claude_code, shell

    fsm = FSMLoop.from_dict(
        {
            "name": "x",
            "initial": "a",
            "claude": {"model": "m", "tools": ["Read"]},
            "states": {
                "a": {"action": "A", "action_type": "prompt", "claude": {"tools": None}},
                "b": {"action": "B"},
            },
        }
    )
    a, b = fsm.states["a"], fsm.states["b"]
    assert a.options_of(claude_code.SPEC) == {"tools": None} == a.claude
    assert a.options_of(shell.SPEC) is None
    assert fsm.options_of(claude_code.SPEC) == {"model": "m", "tools": ["Read"]} == fsm.claude
    assert fsm.options_for(a) == {"model": "m"}  # null unsets the loop's tools
    assert fsm.options_for(b) == {}  # bash has no options
    assert b.claude is None
    b.claude = {"effort": "low"}
    assert b.to_dict()["claude"] == {"effort": "low"}
    b.claude = None
    assert "claude" not in b.to_dict()
    again = FSMLoop.from_dict(fsm.to_dict())
    assert again == fsm
    assert list(fsm.to_dict()) == ["name", "initial", "states", "claude"]


def test_keys_come_in_reading_order_and_defaults_are_dropped() -> None:
    data = {
        "max_steps": 9,
        "states": {"a": {"action": "true", "next": "b"}, "b": {"terminal": True}},
        "initial": "a",
        "name": "n",
        "context": {"x": "1"},
        "category": "demo",
    }
    out = FSMLoop.from_dict(data).to_dict()
    assert list(out)[:4] == ["name", "initial", "context", "states"]
    assert out["max_steps"] == 9
    assert out["category"] == "demo"
    assert "max_iterations" not in out  # the default is left out


def test_the_plain_data_reads_back_as_the_same_loop() -> None:
    data = {
        "name": "n",
        "initial": "a",
        "on_handoff": "terminate",
        "states": {
            "a": {"action": "exit 1", "on_success": "b", "on_error": "b"},
            "b": {"terminal": True},
        },
    }
    loop = FSMLoop.from_dict(data)
    assert FSMLoop.from_dict(loop.to_dict()) == loop
