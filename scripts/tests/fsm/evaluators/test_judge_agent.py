"""The judge through an agent's CLI (`llm.backend: codex`, or auto on a codex state).

A small bash script named `codex` on PATH stands in for the Codex CLI here: it saves its
arguments and the schema file it was given, and prints JSON lines as Codex 0.171 does (the
real CLI against the scripted API is in e2e/test_codex_e2e.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from little_loops.fsm.actions.ratelimit import USAGE_LIMIT, judge_limit
from little_loops.fsm.actions.registry import AGENTS
from little_loops.fsm.evaluators.config import DEFAULT_LLM_MODEL, EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.judge_agent import evaluate_with_agent
from little_loops.fsm.evaluators.judge_claude import judge_backend
from little_loops.fsm.evaluators.llm_structured import DEFAULT_LLM_SCHEMA, SPEC

FAKE_CODEX = """#!/bin/bash
printf '%s\\0' "$@" > "$CALLS/argv"
while [ $# -gt 0 ]; do
  if [ "$1" = --output-schema ]; then cp "$2" "$CALLS/schema.json"; fi
  shift
done
cat "$CALLS/reply"
exit "$(cat "$CALLS/status" 2>/dev/null || echo 0)"
"""


def lines(answer: str, failed: str | None = None) -> str:
    events: list[dict[str, Any]] = [
        {"type": "thread.started", "thread_id": "t-1"},
        {"type": "turn.started"},
    ]
    if failed is None:
        events.append(
            {"type": "item.completed", "item": {"id": "i", "type": "agent_message", "text": answer}}
        )
        usage = {"input_tokens": 1000, "cached_input_tokens": 0, "output_tokens": 20}
        events.append({"type": "turn.completed", "usage": usage})
    else:
        events.append({"type": "turn.failed", "error": {"message": failed}})
    return "".join(json.dumps(e) + "\n" for e in events)


@pytest.fixture
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "codex"
    script.write_text(FAKE_CODEX)
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CALLS", str(tmp_path))
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def judge(model: str | None = None) -> Any:
    return evaluate_with_agent(
        AGENTS["codex"], "tests pass", "Did it work?", DEFAULT_LLM_SCHEMA, 0.5, False, model, 30
    )


def test_a_schema_checked_answer_is_the_verdict(calls: Path) -> None:
    answer = {"verdict": "success", "confidence": 0.9, "reason": "green"}
    (calls / "reply").write_text(lines(json.dumps(answer)))
    result = judge("gpt-5-mini")
    assert result.verdict == "success"
    assert result.details["backend"] == "codex"
    assert result.details["usage"]["input_tokens"] == 1000
    assert result.details["cost_usd"] == pytest.approx((1000 * 0.25 + 20 * 2.0) / 1e6)
    argv = (calls / "argv").read_text().split("\0")[:-1]
    assert argv[0] == "exec"
    assert argv[argv.index("--model") + 1] == "gpt-5-mini"
    assert argv[-2] == "--"
    assert "Did it work?" in argv[-1]
    schema = json.loads((calls / "schema.json").read_text())
    assert schema["additionalProperties"] is False  # the API's strict mode needs it


def test_no_json_or_a_failed_turn_is_an_error_verdict(calls: Path) -> None:
    (calls / "reply").write_text(lines("I think it worked"))
    result = judge()
    assert result.verdict == "error"
    assert result.details["error"] == (
        "codex gave no verdict: no JSON object in its answer: I think it worked"
    )
    (calls / "reply").write_text(lines("", failed="The model refused."))
    (calls / "status").write_text("1")
    failed = judge()
    assert failed.details["error"] == "codex gave no verdict: codex failed: The model refused."
    assert judge_limit(failed.details) is None


@pytest.mark.parametrize(
    ("tokens", "said"),
    [("1" + "0" * 400, "a 401-digit number"), ("Infinity", "inf"), ("NaN", "nan")],
)
def test_token_counts_outside_any_plausible_range_are_an_error_verdict(
    calls: Path, tokens: str, said: str
) -> None:
    # Priced as they were, these ended the whole run with an internal OverflowError or
    # ValueError (its error route skipped); they are an error of the judge's output.
    answer = {"verdict": "success", "confidence": 0.9, "reason": "green"}
    kept = lines(json.dumps(answer)).splitlines()[:-1]  # all but turn.completed
    counts = f'{{"input_tokens": {tokens}, "output_tokens": 1}}'
    usage = f'{{"type": "turn.completed", "usage": {counts}}}'
    (calls / "reply").write_text("\n".join([*kept, usage]) + "\n")
    result = judge("gpt-5")
    assert result.verdict == "error"
    assert result.details["error"] == (
        f"codex gave no verdict: codex failed: it reported input_tokens of {said}, outside any "
        "plausible range (at most 1,000,000,000,000 for one call)"
    )
    assert "cost_usd" not in result.details


def test_a_usage_limit_of_the_judging_agent_is_a_limit_the_run_waits_out(calls: Path) -> None:
    (calls / "reply").write_text(lines("", failed="You’ve hit your usage limit. Try again later."))
    (calls / "status").write_text("1")
    limited = judge()
    assert limited.verdict == "error"
    assert limited.details["error"].startswith("codex is limited: ")
    limit = judge_limit(limited.details)
    assert limit is not None
    assert limit.kind == USAGE_LIMIT


def test_a_missing_cli_is_an_error_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert judge().details["error"] == "codex: command not found on PATH"


@pytest.mark.parametrize(
    ("backend", "agent", "env", "chosen"),
    [
        ("codex", None, {"ANTHROPIC_API_KEY": "k"}, "codex"),
        ("auto", "codex", {}, "codex"),
        ("auto", "codex", {"ANTHROPIC_API_KEY": "k"}, "api"),
        ("auto", "shell", {}, "claude"),
        ("auto", None, {}, "claude"),
    ],
)
def test_auto_judges_through_the_states_agent_when_it_can(
    backend: str,
    agent: str | None,
    env: dict[str, str],
    chosen: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert judge_backend(LLMConfig(backend=backend).for_agent(agent)) == chosen


def test_the_evaluator_uses_the_agents_own_model_unless_the_loop_names_one(calls: Path) -> None:
    answer = {"verdict": "failure", "confidence": 0.8, "reason": "red"}
    (calls / "reply").write_text(lines(json.dumps(answer)))
    config = EvaluateConfig(type="llm_structured", prompt="ok?")
    llm = LLMConfig(backend="codex")
    assert llm.model == DEFAULT_LLM_MODEL
    assert SPEC.run(config, "out", 0, llm, None).verdict == "failure"
    assert "--model" not in (calls / "argv").read_text().split("\0")[:-1]
    SPEC.run(config, "out", 0, LLMConfig(backend="codex", model="o3"), None)
    assert "o3" in (calls / "argv").read_text().split("\0")[:-1]
    # The engine's hint is no loop key: it is neither read nor written.
    assert LLMConfig.from_dict({"agent": "codex"}).agent is None
    assert "agent" not in LLMConfig(backend="codex").for_agent("codex").to_dict()
