"""The `mcp_result` evaluator: an MCP tool call's response envelope and mcp-call's exit code."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.spec import EvaluationResult, EvaluatorSpec

# mcp-call's exit codes that are verdicts of their own (little-loops' convention).
NOT_FOUND_EXIT = 127  # the server or the tool is not in .mcp.json
TIMEOUT_EXIT = 124  # the server did not answer in time


def evaluate_mcp_result(output: str, exit_code: int) -> EvaluationResult:
    """`success` when the envelope says no error, `tool_error` when it does (or is no JSON),
    `not_found` for exit 127, `timeout` for exit 124."""
    import json  # not at start-up: checking a loop file never needs it

    details: dict[str, Any] = {"exit_code": exit_code}
    if exit_code == NOT_FOUND_EXIT:
        return EvaluationResult("not_found", {**details, "error": "server or tool not found"})
    if exit_code == TIMEOUT_EXIT:
        return EvaluationResult("timeout", {**details, "error": "the MCP tool call timed out"})
    try:
        envelope = json.loads(output) if output.strip() else {}
    except json.JSONDecodeError:
        return EvaluationResult("tool_error", {**details, "error": f"no JSON: {output[:200]}"})
    failed = envelope.get("isError", exit_code != 0) if isinstance(envelope, dict) else True
    verdict = "tool_error" if failed else "success"
    return EvaluationResult(verdict, {**details, "envelope": envelope})


def _run(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    return evaluate_mcp_result(output, exit_code)


SPEC = EvaluatorSpec(
    name="mcp_result",
    summary="an MCP tool call's result: success, tool_error, not_found (exit 127), timeout (124)",
    run=_run,
    verdicts=("success", "tool_error", "not_found", "timeout"),
    bad=("tool_error", "not_found", "timeout"),
    error_causes="never (every end of a call is one of its verdicts)",
)
