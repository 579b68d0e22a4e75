"""jq-style paths into parsed JSON (evaluators/jsonpath.py)."""

from __future__ import annotations

import pytest

from little_loops.fsm.evaluators.jsonpath import JsonPathError, extract_json_path, json_kind

DOC = {"summary": {"failed": 2}, "items": [{"name": "a"}, {"name": "b"}], "odd key": True}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (".", DOC),
        (".summary.failed", 2),
        ("summary.failed", 2),
        (".items[0].name", "a"),
        (".items[-1].name", "b"),
        (".items.1.name", "b"),
        ('.["odd key"]', True),
        (" .summary ", {"failed": 2}),
    ],
)
def test_a_path_leads_to_its_value(path: str, value: object) -> None:
    assert extract_json_path(DOC, path) == value


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", "path is empty"),
        (".summary.passed", "path .summary.passed: key 'passed' not found in .summary"),
        (".items[5]", "path .items[5]: index 5 out of range in .items (2 items)"),
        (".summary[0]", "path .summary[0]: .summary is an object, not an array"),
        (".items.name", "path .items.name: .items is an array, not an object"),
        (".summary..failed", "path .summary..failed: malformed at '..failed'"),
    ],
)
def test_a_bad_path_says_why(path: str, message: str) -> None:
    with pytest.raises(JsonPathError) as caught:
        extract_json_path(DOC, path)
    assert str(caught.value) == message


def test_json_kind_names_values_as_messages_do() -> None:
    assert [json_kind(v) for v in (None, True, 3, "x", [], {})] == [
        "null",
        "a boolean",
        "a number",
        "a string",
        "an array",
        "an object",
    ]
