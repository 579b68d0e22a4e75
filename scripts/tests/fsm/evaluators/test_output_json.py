"""The output_json evaluator and the JSON paths it reads."""

from __future__ import annotations

from typing import Any

import pytest

from little_loops.fsm.evaluators.jsonpath import JsonPathError, extract_json_path
from little_loops.fsm.evaluators.output_json import evaluate_output_json

REPORT = '{"summary": {"failed": 0, "passed": 12, "name": "unit"}, "items": [3, {"id": "a"}]}'


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (".summary.failed", 0),
        (".summary.name", "unit"),
        (".items[0]", 3),
        (".items[-1].id", "a"),
        (".items.1.id", "a"),
        ('.["summary"]["passed"]', 12),
        ("summary.passed", 12),
        (".", {"summary": {"failed": 0, "passed": 12, "name": "unit"}, "items": [3, {"id": "a"}]}),
    ],
)
def test_extract_json_path(path: str, value: Any) -> None:
    import json

    assert extract_json_path(json.loads(REPORT), path) == value


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (".summary.skipped", "path .summary.skipped: key 'skipped' not found in .summary"),
        (".items[5]", "path .items[5]: index 5 out of range in .items (2 items)"),
        (".summary[0]", "path .summary[0]: .summary is an object, not an array"),
        (".items.x", "path .items.x: .items is an array, not an object"),
        (".summary.failed.x", "path .summary.failed.x: .summary.failed is a number, not an object"),
        (".summary..failed", "path .summary..failed: malformed at '..failed'"),
        ("", "path is empty"),
    ],
)
def test_extract_json_path_errors(path: str, message: str) -> None:
    import json

    with pytest.raises(JsonPathError) as info:
        extract_json_path(json.loads(REPORT), path)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("path", "operator", "target", "verdict"),
    [
        (".summary.failed", "eq", 0, "success"),
        (".summary.failed", "eq", 0.0, "success"),
        (".summary.failed", "ne", 0, "failure"),
        (".summary.failed", "eq", "0", "failure"),
        (".summary.failed", "eq", False, "failure"),
        (".summary.name", "eq", "unit", "success"),
        (".summary.name", "ne", "e2e", "success"),
        (".items[1]", "eq", {"id": "a"}, "success"),
        (".summary.passed", "ge", 10, "success"),
        (".summary.passed", "lt", "10", "failure"),
        (".summary.passed", "gt", 12, "failure"),
    ],
)
def test_output_json_compare(path: str, operator: str, target: Any, verdict: str) -> None:
    result = evaluate_output_json(REPORT, path, operator, target)
    assert result.verdict == verdict
    assert result.details["path"] == path
    assert result.details["operator"] == operator


def test_output_json_details() -> None:
    assert evaluate_output_json(REPORT, ".summary.passed", "ge", "10").details == {
        "value": 12,
        "path": ".summary.passed",
        "target": 10,
        "operator": "ge",
    }


@pytest.mark.parametrize(
    ("output", "path", "operator", "message"),
    [
        ("not json", ".a", "eq", "output is not valid JSON: Expecting value (line 1, column 1)"),
        ('{"a": 1', ".a", "eq", "output is not valid JSON: Expecting ',' delimiter "
         "(line 1, column 8)"),
        ("", ".a", "eq", "output is empty, expected JSON"),
        ('{"a": 1}', ".b", "eq", "path .b: key 'b' not found in ."),
        ('{"a": "x"}', ".a", "lt", "operator lt needs a number, but .a is a string"),
        ('{"a": 1}', ".a", "is", "unknown operator 'is' (expected one of eq, ne, lt, le, gt, ge)"),
        ("[" * 100_000, ".a", "eq", "output is JSON nested too deeply to read"),
        ('{"a": ' + "9" * 5000 + "}", ".a", "eq", "output is JSON with a number too long to read"),
    ],
)  # fmt: skip
def test_output_json_errors(output: str, path: str, operator: str, message: str) -> None:
    result = evaluate_output_json(output, path, operator, 1)
    assert result.verdict == "error"
    assert result.details["error"] == message


# --- moved from test_qa_regressions.py ---


def test_nan_in_json_output_is_not_json() -> None:
    result = evaluate_output_json('{"a": NaN}', ".a", "eq", 0)
    assert result.verdict == "error"
    assert result.details["error"] == "output is not valid JSON: NaN is not a JSON value"
