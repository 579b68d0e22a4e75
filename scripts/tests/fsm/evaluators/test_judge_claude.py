"""The judge through Claude Code: which backend a run uses, and every way the call can end.

A small bash script named `claude` on PATH stands in for Claude Code here (the real CLI
against the scripted API is in e2e/test_judge_backend_e2e.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from little_loops.fsm.definition.model.typed import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.judge_claude import judge_argv, judge_backend
from little_loops.fsm.evaluators.llm_structured import SPEC


@pytest.mark.parametrize(
    ("backend", "env", "client", "chosen"),
    [
        ("api", {}, None, "api"),
        ("claude", {"ANTHROPIC_API_KEY": "k"}, None, "claude"),
        ("auto", {"ANTHROPIC_API_KEY": "k"}, None, "api"),
        ("auto", {"ANTHROPIC_AUTH_TOKEN": "t"}, None, "api"),
        ("auto", {}, object(), "api"),
        ("auto", {}, None, "claude"),
    ],
)
def test_judge_backend(
    backend: str,
    env: dict[str, str],
    client: Any,
    chosen: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert judge_backend(LLMConfig(backend=backend), client) == chosen


def test_judge_argv_puts_the_prompt_after_p() -> None:
    argv = judge_argv("Judge this", {"type": "object"}, "claude-m")
    assert argv == [
        "claude",
        "--output-format",
        "json",
        "--no-session-persistence",
        "--tools",
        "",
        "--setting-sources",
        "user",
        "--strict-mcp-config",
        "--json-schema",
        '{"type":"object"}',
        "--model",
        "claude-m",
        "-p",
        "--",
        "Judge this",
    ]


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where to write the `claude` stand-in; PATH has it first and no API key is set."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    return bin_dir / "claude"


def _stub(path: Path, body: str) -> None:
    path.write_text("#!/bin/bash\n" + body + "\n")
    path.chmod(0o755)


def _report(answer: Any, **more: Any) -> str:
    report = {
        "type": "result",
        "is_error": False,
        "result": json.dumps(answer),
        "total_cost_usd": 0.0125,
        "usage": {"input_tokens": 100, "output_tokens": 9},
        "structured_output": answer,
        **more,
    }
    return "cat <<'JSON'\n" + json.dumps(report) + "\nJSON"


def _judge(config: EvaluateConfig | None = None, timeout: float = 30) -> Any:
    config = config or EvaluateConfig(type="llm_structured")
    return SPEC.run(config, "3 passed", 0, LLMConfig(model="claude-j", timeout=timeout), None)


def test_claude_code_verdict_with_its_cost(fake_claude: Path) -> None:
    answer = {"verdict": "partial", "confidence": 0.3, "reason": "half"}
    _stub(fake_claude, _report(answer))
    config = EvaluateConfig(type="llm_structured", uncertain_suffix=True)
    result = _judge(config)
    assert result.verdict == "partial_uncertain"  # the shared rules: below min_confidence
    assert result.details["cost_usd"] == 0.0125
    assert result.details["backend"] == "claude"
    assert result.details["usage"]["input_tokens"] == 100
    assert result.details["model"] == "claude-j"


def test_an_answer_outside_the_enum_is_an_error(fake_claude: Path) -> None:
    _stub(fake_claude, _report({"verdict": "maybe", "confidence": 1}))
    result = _judge()
    assert result.verdict == "error"
    assert result.details["error"] == (
        "the model answered verdict 'maybe', which is not one of: success, failure, blocked, "
        "partial"
    )


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("echo 'Invalid API key' >&2; exit 3", "claude exited with status 3: Invalid API key"),
        (
            'echo \'{"type":"result","is_error":true,"result":"API Error: 401"}\'; exit 1',
            "claude failed: API Error: 401",
        ),
        (
            'echo \'{"type":"result","is_error":false,"result":"Looks fine."}\'',
            "claude gave no structured verdict: Looks fine.",
        ),
        ("sleep 5", "claude timed out after 1s"),
    ],
)
def test_every_failure_is_an_error_verdict_with_the_reason(
    fake_claude: Path, body: str, error: str
) -> None:
    _stub(fake_claude, body)
    result = _judge(timeout=1)
    assert (result.verdict, result.details["error"]) == ("error", error)


def test_no_claude_on_path(fake_claude: Path) -> None:
    result = _judge()
    assert result.details["error"] == "claude: command not found on PATH (install Claude Code)"


def test_a_bad_schema_is_an_error_before_claude_runs(fake_claude: Path) -> None:
    config = EvaluateConfig(type="llm_structured", schema={"type": "string"})
    assert _judge(config).details["error"] == "schema must be a mapping with type: object"


@pytest.mark.parametrize("cost", ["1e300", "1" + "0" * 400, "10000.5", "-Infinity"])
def test_a_cost_outside_any_plausible_range_is_an_error_of_the_judge(
    fake_claude: Path, cost: str
) -> None:
    answer = {"verdict": "success", "confidence": 1, "reason": "ok"}
    body = _report(answer).replace('"total_cost_usd": 0.0125', f'"total_cost_usd": {cost}')
    _stub(fake_claude, body)
    result = _judge()
    assert result.verdict == "error"
    shown = {"1e300": "$1e+300", "10000.5": "$10000.5", "-Infinity": "$-inf"}.get(
        cost, "a 401-digit number"
    )
    assert result.details["error"].startswith(f"claude reported a cost of {shown}, ")
    assert "outside any plausible range (at most $10000 for one call)" in result.details["error"]
    assert "cost_usd" not in result.details
