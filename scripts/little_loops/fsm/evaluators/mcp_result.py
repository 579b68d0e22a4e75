"""The `mcp_result` evaluator: an MCP tool call's response envelope and mcp-call's exit code."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.output_json import parse_json
from little_loops.fsm.evaluators.spec import EvaluationResult, EvaluatorSpec, error_result, shorten

# mcp-call's exit codes that are verdicts of their own (little-loops' convention).
NOT_FOUND_EXIT = 127  # the server or the tool is not in .mcp.json
TIMEOUT_EXIT = 124  # the server did not answer in time
SIGNAL_EXIT = 128  # 128 + N: mcp-call was killed by signal N (it crashed)


def evaluate_mcp_result(output: str, exit_code: int) -> EvaluationResult:
    """Both mcp-call's exit status and the response envelope count: `success` only when it
    exited 0 with an envelope (a JSON object) whose `isError` is false or absent;
    `not_found` for exit 127, `timeout` for 124, `error` when mcp-call died of a signal;
    `tool_error` for any other exit, an envelope saying `isError`, or an answer that is
    no envelope (no JSON, nested too deeply, a number too long, NaN)."""
    details: dict[str, Any] = {"exit_code": exit_code}
    if exit_code == NOT_FOUND_EXIT:
        return EvaluationResult("not_found", {**details, "error": "server or tool not found"})
    if exit_code == TIMEOUT_EXIT:
        return EvaluationResult("timeout", {**details, "error": "the MCP tool call timed out"})
    if exit_code > SIGNAL_EXIT:  # a crash is never an answer, whatever it printed first
        signal = exit_code - SIGNAL_EXIT
        return error_result(f"mcp-call died of signal {signal} (exit {exit_code})", **details)
    envelope, problem = parse_json(output) if output.strip() else ({}, None)
    if problem is not None:
        return EvaluationResult("tool_error", {**details, "error": f"{problem}: {shorten(output)}"})
    if not isinstance(envelope, dict):
        return EvaluationResult("tool_error", {**details, "error": "the answer is no JSON object"})
    failed = exit_code != 0 or envelope.get("isError", False) is not False
    verdict = "tool_error" if failed else "success"
    return EvaluationResult(verdict, {**details, "envelope": envelope})


def _run(
    config: EvaluateConfig, output: str, exit_code: int, llm: LLMConfig, client: Any
) -> EvaluationResult:
    return evaluate_mcp_result(output, exit_code)


SPEC = EvaluatorSpec(
    name="mcp_result",
    summary="an MCP tool call's result: success (exit 0, no isError), tool_error, not_found "
    "(exit 127), timeout (124)",
    run=_run,
    reads_exit_code=True,
    pure=True,
    verdicts=("success", "tool_error", "not_found", "timeout"),
    bad=("tool_error", "not_found", "timeout"),
    error_causes="mcp-call crashed (was killed by a signal)",
)
