"""fsm-loop-schema.json is generated from the key checks, key docs and evaluator specs."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import jsonschema
import pytest

from little_loops.fsm.definition.checks import key_tables
from little_loops.fsm.definition.model import retry_keys as retry_keys
from little_loops.fsm.evaluators.registry import SPECS
from little_loops.fsm.validate import json_schema, key_docs

SAMPLES: list[Any] = [
    None,
    "",
    "x",
    "${context.a}",
    "3",
    0,
    1,
    -1,
    0.5,
    2.0,
    True,
    False,
    [],
    ["a"],
    {},
    {"type": "object"},
]
TABLES = {
    "loop": key_tables.LOOP_KEYS,
    "state": key_tables.STATE_KEYS,
    "evaluate": key_tables.EVALUATE_KEYS,
    "llm": key_tables.LLM_KEYS,
    "notify": key_tables.NOTIFY_KEYS,
    "stall": key_tables.STALL_KEYS,
    "archive": key_tables.ARCHIVE_KEYS,
    "retry": retry_keys.RETRY_KEYS,
    "rate_limit": retry_keys.RATE_LIMIT_KEYS,
}


def test_the_committed_file_is_what_the_generator_writes() -> None:
    assert json_schema.SCHEMA_FILE.read_text() == json_schema.render()


def test_check_mode_passes_on_the_committed_file() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "little_loops.fsm.validate.json_schema", "--check"],
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize(
    ("level", "key"), [(level, key) for level, table in TABLES.items() for key in table]
)
def test_a_keys_schema_accepts_every_value_its_check_accepts(level: str, key: str) -> None:
    check = TABLES[level][key]
    validator = jsonschema.Draft202012Validator(dict(check.json))
    for value in SAMPLES:
        if check(value) is None:
            assert validator.is_valid(value), (key, value)


def test_the_schema_is_stricter_where_the_check_is() -> None:
    evaluate = json_schema.build()["$defs"]["evaluateConfig"]
    validator = jsonschema.Draft202012Validator(evaluate)
    assert not validator.is_valid({"type": "output_json", "path": ".a"})  # needs operator, target
    assert not validator.is_valid({"type": "convergence", "target": [1]})
    assert not validator.is_valid({"type": "exit_cod"})
    assert validator.is_valid({"type": "convergence", "target": "${context.goal}"})


def test_an_undescribed_key_stops_the_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(key_tables.LLM_KEYS, "temperature", key_tables.LLM_KEYS["timeout"])
    with pytest.raises(ValueError, match="temperature"):
        json_schema.build()


def test_evaluate_key_docs_name_the_evaluators_from_the_registry() -> None:
    described = json_schema.build()["$defs"]["evaluateConfig"]["properties"]
    assert described["pattern"]["description"].startswith("output_contains: ")
    assert described["operator"]["description"].startswith("output_numeric, output_json: ")
    assert set(described["type"]["enum"]) == set(SPECS)
    for name, spec in SPECS.items():
        assert f"{name} ({spec.summary})" in described["type"]["description"]
    assert not described["source"]["description"].startswith(":")
    assert set(key_docs.EVALUATE_KEYS) == set(key_tables.EVALUATE_KEYS)
