"""The mcp_result evaluator: mcp-call's envelope and exit codes as verdicts."""

from __future__ import annotations

import pytest

from little_loops.fsm.evaluators.mcp_result import evaluate_mcp_result


@pytest.mark.parametrize(
    ("output", "code", "verdict"),
    [
        ('{"content": [], "isError": false}', 0, "success"),
        ('{"content": [], "isError": true}', 1, "tool_error"),
        ('{"content": []}', 1, "tool_error"),
        ("not json", 0, "tool_error"),
        ("", 127, "not_found"),
        ("", 124, "timeout"),
    ],
)
def test_the_verdicts(output: str, code: int, verdict: str) -> None:
    assert evaluate_mcp_result(output, code).verdict == verdict
