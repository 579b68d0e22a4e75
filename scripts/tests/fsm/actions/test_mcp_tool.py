"""The mcp_tool kind's command line: `mcp-call SERVER/TOOL PARAMS_JSON`."""

from __future__ import annotations

import json

from little_loops.fsm.actions.mcp_tool import SPEC, argv
from little_loops.fsm.actions.request import ActionRequest


def test_the_tool_and_its_params_as_json() -> None:
    request = ActionRequest("shop/find ", 30, "mcp_tool", options={"params": {"q": "a b"}})
    line = argv(request, SPEC.program)
    assert line[:2] == ["mcp-call", "shop/find"]
    assert json.loads(line[2]) == {"q": "a b"}


def test_no_params_is_an_empty_object() -> None:
    assert argv(ActionRequest("s/t", 30, "mcp_tool"), ("mcp-call",))[2] == "{}"
    assert SPEC.default_evaluator == "mcp_result"
