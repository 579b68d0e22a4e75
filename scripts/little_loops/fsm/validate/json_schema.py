"""Build fsm-loop-schema.json (for editors) from the key checks, key docs and evaluator specs.

Run `scripts/dev schema` after changing a key; a test fails while the committed file differs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from little_loops.fsm.actions.custom import AGENT_KEYS, REQUIRED_AGENT_KEYS
from little_loops.fsm.definition.checks import key_tables as checks
from little_loops.fsm.definition.model import evaluate_keys, pr_keys, retry_keys
from little_loops.fsm.definition.model.typed import (
    CURRENT_STATE_TOKEN,
    ROUTE_DEFAULT_KEY,
    ROUTE_ERROR_KEY,
)
from little_loops.fsm.evaluators.registry import EVALUATOR_TYPES, SPECS
from little_loops.fsm.evaluators.spec import COMMON_KEYS
from little_loops.fsm.paradigms.registry import PARADIGMS
from little_loops.fsm.validate import key_docs as docs
from little_loops.fsm.values.value_checks import Check

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "fsm-loop-schema.json"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def _properties(
    keys: Mapping[str, Check], described: Mapping[str, str]
) -> dict[str, dict[str, Any]]:
    """Each checked key's JSON Schema and description; every key must be described."""
    if set(keys) != set(described):
        raise ValueError(f"keys and key docs differ: {sorted(set(keys) ^ set(described))}")
    return {key: {**check.json, "description": described[key]} for key, check in keys.items()}


def _readers(key: str) -> str:
    """`output_numeric, output_json: ` — the evaluators that read *key* (none for common keys)."""
    if key in COMMON_KEYS:
        return ""
    return ", ".join(name for name, spec in SPECS.items() if key in spec.keys) + ": "


def _loop() -> dict[str, Any]:
    props = _properties(checks.LOOP_KEYS, docs.LOOP_KEYS)
    props["states"] = {
        "type": "object",
        "description": docs.LOOP_KEYS["states"],
        "minProperties": 1,
        "propertyNames": {"not": {"const": CURRENT_STATE_TOKEN}},
        "additionalProperties": _ref("stateConfig"),
    }
    props["paradigm"] = {"const": checks.FSM_PARADIGM, "description": docs.LOOP_KEYS["paradigm"]}
    props["llm"] = {**_ref("llmConfig"), "description": docs.LOOP_KEYS["llm"]}
    props["archive"] = {**_ref("archiveConfig"), "description": docs.LOOP_KEYS["archive"]}
    props["stall"] = {
        "anyOf": [_ref("stallConfig"), {"type": "null"}],
        "description": docs.LOOP_KEYS["stall"],
    }
    for key in checks.OPTION_KEYS:
        props[key] = _options_ref(key, docs.LOOP_KEYS[key])
    props["notify"] = {
        "anyOf": [_ref("notifyConfig"), {"type": "null"}],
        "description": docs.LOOP_KEYS["notify"],
    }
    props["agents"] = {
        "type": ["object", "null"],
        "additionalProperties": _ref("customAgent"),
        "description": docs.LOOP_KEYS["agents"],
    }
    props["retry"] = _nullable_ref("retryConfig", docs.LOOP_KEYS["retry"])
    props["rate_limit"] = _nullable_ref("rateLimitConfig", docs.LOOP_KEYS["rate_limit"])
    return {
        "type": "object",
        "description": docs.LOOP,
        "required": ["name"],
        # A loop made from a base loop (from:) or a flow: need not write initial or states.
        "anyOf": [
            {"required": list(checks.REQUIRED_LOOP_KEYS)},
            {"required": ["from"]},
            {"required": ["initial", "flow"]},
        ],
        "additionalProperties": False,
        "properties": props,
    }


def _nullable_ref(name: str, description: str) -> dict[str, Any]:
    return {"anyOf": [_ref(name), {"type": "null"}], "description": description}


def _state() -> dict[str, Any]:
    props = _properties(checks.STATE_KEYS, docs.STATE_KEYS)
    props["retry"] = _nullable_ref("retryConfig", docs.STATE_KEYS["retry"])
    props[pr_keys.PR_KEY] = _nullable_ref("pullRequestConfig", docs.STATE_KEYS[pr_keys.PR_KEY])
    blocks = (("evaluate", "evaluateConfig"), ("route", "routeConfig"), ("stall", "stallConfig"))
    for key, block in blocks:
        props[key] = {
            "anyOf": [_ref(block), {"type": "null"}],
            "description": props[key]["description"],
        }
    for key in checks.OPTION_KEYS:
        props[key] = _options_ref(key, docs.STATE_KEYS[key])
    return {
        "type": "object",
        "description": docs.STATE,
        "additionalProperties": False,
        "properties": props,
    }


def _options_name(key: str) -> str:
    """`claudeOptions`: the definition of the options block *key* of an action kind."""
    return f"{key}Options"


def _options_ref(key: str, description: str) -> dict[str, Any]:
    return _nullable_ref(_options_name(key), description)


def _options() -> dict[str, dict[str, Any]]:
    """The definition of each action kind's options block, by its name."""
    return {
        _options_name(key): {
            "type": "object",
            "description": docs.OPTIONS[key],
            "additionalProperties": False,
            "properties": _properties(allowed, docs.OPTION_KEYS[key]),
        }
        for key, allowed in checks.OPTION_KEYS.items()
    }


def _evaluate() -> dict[str, Any]:
    described = {key: _readers(key) + text for key, text in docs.EVALUATE_KEYS.items()}
    described["type"] = (
        docs.EVALUATE_KEYS["type"]
        + " "
        + "; ".join(f"{name} ({spec.summary})" for name, spec in SPECS.items())
        + "."
    )
    props = _properties(checks.EVALUATE_KEYS, described)
    props["type"] = {"enum": list(EVALUATOR_TYPES), "description": described["type"]}
    rules = []
    for name, spec in SPECS.items():
        then: dict[str, Any] = {}
        if spec.required:
            then["required"] = list(spec.required)
        if spec.numeric_target:
            then["properties"] = {"target": dict(checks.NUMERIC_TARGET.json)}
        if then:
            rules.append({"if": {"properties": {"type": {"const": name}}}, "then": then})
    return {
        "type": "object",
        "description": docs.EVALUATE,
        "required": list(evaluate_keys.REQUIRED_KEYS),
        "additionalProperties": False,
        "properties": props,
        "allOf": rules,
    }


def _route() -> dict[str, Any]:
    return {
        "type": "object",
        "description": docs.ROUTE,
        "minProperties": 1,
        "properties": {
            ROUTE_DEFAULT_KEY: {**_ref("stateName"), "description": docs.ROUTE_DEFAULT},
            ROUTE_ERROR_KEY: {**_ref("stateName"), "description": docs.ROUTE_ERROR},
        },
        "additionalProperties": _ref("stateName"),
    }


def build() -> dict[str, Any]:
    """The JSON Schema of a loop file, as fsm-loop-schema.json holds it."""
    paradigms = [name for name in PARADIGMS if name != checks.FSM_PARADIGM]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "ll-loop loop file",
        "description": docs.FILE,
        "if": {
            "required": ["paradigm"],
            "properties": {"paradigm": {"not": {"const": checks.FSM_PARADIGM}}},
        },
        "then": _ref("paradigmSpec"),
        "else": _ref("fsmLoop"),
        "$defs": {
            "paradigmSpec": {
                "type": "object",
                "description": docs.PARADIGM_FILE.format(paradigms=", ".join(paradigms)),
                "required": ["paradigm"],
                "properties": {
                    "paradigm": {"enum": paradigms, "description": docs.LOOP_KEYS["paradigm"]}
                },
            },
            "stateName": {"type": "string", "minLength": 1, "description": docs.STATE_NAME},
            "fsmLoop": _loop(),
            "stateConfig": _state(),
            "evaluateConfig": _evaluate(),
            "routeConfig": _route(),
            "stallConfig": {
                "type": "object",
                "description": docs.STALL,
                "additionalProperties": False,
                "properties": _properties(checks.STALL_KEYS, docs.STALL_KEYS),
            },
            "llmConfig": {
                "type": "object",
                "description": docs.LLM,
                "additionalProperties": False,
                "properties": _properties(checks.LLM_KEYS, docs.LLM_KEYS),
            },
            "archiveConfig": {
                "type": "object",
                "description": docs.ARCHIVE,
                "additionalProperties": False,
                "properties": _properties(checks.ARCHIVE_KEYS, docs.ARCHIVE_KEYS),
            },
            **_options(),
            "customAgent": {
                "type": "object",
                "description": docs.CUSTOM_AGENT,
                "required": list(REQUIRED_AGENT_KEYS),
                "additionalProperties": False,
                "properties": _properties(
                    {key: check for key, (check, _) in AGENT_KEYS.items()}, docs.AGENT_KEYS
                ),
            },
            "notifyConfig": {
                "type": "object",
                "description": docs.NOTIFY,
                "additionalProperties": False,
                "anyOf": [{"required": ["command"]}, {"required": ["webhook"]}],
                "properties": _properties(checks.NOTIFY_KEYS, docs.NOTIFY_KEYS),
            },
            "retryConfig": {
                "type": "object",
                "description": docs.RETRY,
                "additionalProperties": False,
                "properties": _properties(retry_keys.RETRY_KEYS, docs.RETRY_KEYS),
            },
            "pullRequestConfig": _pull_request(),
            "rateLimitConfig": {
                "type": "object",
                "description": docs.RATE_LIMIT,
                "additionalProperties": False,
                "properties": _properties(retry_keys.RATE_LIMIT_KEYS, docs.RATE_LIMIT_KEYS),
            },
        },
    }


def _pull_request() -> dict[str, Any]:
    """A pull-request state's `pr:` block (definition/model/pr_keys.py)."""
    return {
        "type": "object",
        "description": pr_keys.PR_DOC,
        "additionalProperties": False,
        "required": list(pr_keys.REQUIRED_PR_KEYS),
        "properties": _properties(pr_keys.PR_CHECKS, pr_keys.PR_DOCS),
    }


def render() -> str:
    """build() as the committed file's text."""
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    """Write the schema file; with --check, exit 1 when the committed file is out of date."""
    text = render()
    if sys.argv[1:] == ["--check"]:
        current = SCHEMA_FILE.read_text() if SCHEMA_FILE.exists() else ""
        if current != text:
            print(f"{SCHEMA_FILE} is out of date: run scripts/dev schema", file=sys.stderr)
            return 1
        return 0
    SCHEMA_FILE.write_text(text)
    print(f"wrote {SCHEMA_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
