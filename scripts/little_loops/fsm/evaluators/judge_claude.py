"""The judge through Claude Code: `claude -p --json-schema`, on the user's own Claude login.

Also who judges (`judge_backend`): the API, Claude Code or another agent (judge_agent.py).
With no ANTHROPIC_API_KEY (or `llm.backend: claude`), `llm_structured` asks Claude Code for
the verdict in structured-output mode: the same question as the API judge, the verdict
schema as `--json-schema`, no tools and no saved session. Claude Code prints one JSON
report whose `structured_output` is the answer and whose `total_cost_usd` is recorded.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from little_loops.fsm.actions.claude import parse_report, usage_of
from little_loops.fsm.evaluators.config import LLMConfig
from little_loops.fsm.evaluators.judge_rules import (
    judge_error,
    judge_text,
    one_line,
    run_judge,
    verdict_from_answer,
)
from little_loops.fsm.evaluators.spec import EvaluationResult
from little_loops.fsm.facts.spend import reported_cost

# `--tools ""` offers no tools but the StructuredOutput one `--json-schema` adds; `-p` goes
# last before the prompt, so the variadic `--tools` cannot take the prompt for a tool name.
JUDGE_FLAGS: tuple[str, ...] = (
    "--output-format",
    "json",
    "--no-session-persistence",
    "--tools",
    "",
    # The judge runs unconfined in the working tree, which a (sandboxed) step may write: no
    # project or local settings (their hooks, apiKeyHelper, env) and no MCP server from
    # there or anywhere; the user's own settings (a login's apiKeyHelper) still count.
    "--setting-sources",
    "user",
    "--strict-mcp-config",
)
AUTO_BACKEND = "auto"
API_BACKEND = "api"
CLAUDE_BACKEND = "claude"
# Where the API judge finds its credentials (auto chooses the API when one is set).
API_KEY_VARIABLES: tuple[str, ...] = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


def judge_backend(llm: LLMConfig, client: Any = None) -> str:
    """Who judges: `llm.backend` when it names one (api, claude or another agent that can
    judge); for auto, the API when a client is given or ANTHROPIC_API_KEY (or
    ANTHROPIC_AUTH_TOKEN) is set, else the state's agent (`llm.agent`) when it can judge,
    else Claude Code."""
    from little_loops.fsm.actions.registry import AGENTS

    if llm.backend != AUTO_BACKEND:
        return llm.backend
    if client is not None or any(os.environ.get(name) for name in API_KEY_VARIABLES):
        return API_BACKEND
    spec = AGENTS.get(llm.agent or "")
    return spec.name if spec is not None and spec.judge is not None else CLAUDE_BACKEND


def judge_argv(
    text: str, schema: dict[str, Any], model: str, claude: Sequence[str] = ("claude",)
) -> list[str]:
    """The command line that asks Claude Code *text*, answered as *schema* by *model*."""
    import json  # here, not at the top: `ll-loop validate` reads the evaluators' specs only

    return [
        *claude,
        *JUDGE_FLAGS,
        "--json-schema",
        json.dumps(schema, separators=(",", ":")),
        "--model",
        model,
        "-p",
        "--",  # the question is never read as a flag, whatever it starts with
        text,
    ]


def evaluate_with_claude(
    output: str,
    prompt: str | None,
    schema: dict[str, Any],
    min_confidence: float,
    uncertain_suffix: bool,
    model: str,
    timeout: float,
) -> EvaluationResult:
    """Claude Code's verdict on *output*, read by the shared rules; an `error` verdict with
    the reason when claude is missing, times out, fails or gives no structured answer."""
    argv = judge_argv(judge_text(output, prompt), schema, model)
    missing = "claude: command not found on PATH (install Claude Code)"
    result = run_judge(argv, timeout, "claude", missing, model)
    if isinstance(result, EvaluationResult):
        return result
    report = parse_report(result.output)
    if report is None:
        detail = (result.stderr or result.output).strip().splitlines()
        why = one_line(detail[-1]) if detail else "no output"
        return judge_error(f"claude exited with status {result.exit_code}: {why}", model)
    usage = usage_of(report)
    details: dict[str, Any] = {"backend": CLAUDE_BACKEND}
    cost, implausible = reported_cost(report.get("total_cost_usd"))
    if implausible is not None:
        return judge_error(f"claude {implausible}", model, **details)
    if cost is not None:
        details["cost_usd"] = cost
    answer = report.get("structured_output")
    if result.exit_code != 0 or report.get("is_error") is True or answer is None:
        said = report.get("result")
        errors = report.get("errors")
        if isinstance(errors, list) and errors:
            said = errors[0]
        why = one_line(str(said)) if said else "no structured answer"
        what = "gave no structured verdict" if result.exit_code == 0 else "failed"
        return judge_error(f"claude {what}: {why}", model, usage=usage, **details)
    verdict = verdict_from_answer(answer, schema, min_confidence, uncertain_suffix, model, usage)
    verdict.details.update(details)
    return verdict
