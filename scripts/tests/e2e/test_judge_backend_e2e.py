"""The llm_structured judge through Claude Code: no ANTHROPIC_API_KEY, the user's Claude login.

Claude Code is configured as a logged-in user's would be, by an `apiKeyHelper` in its
settings; the loop's environment has no API key, so `llm.backend: auto` asks Claude Code
(`claude -p --json-schema`), which the scripted Messages API answers with its
StructuredOutput tool call.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support import llproc
from support.fake_anthropic import (
    STRUCTURED_OUTPUT_TOOL,
    FakeAnthropic,
    Reply,
    Route,
    is_claude_judge,
)

from little_loops.fsm.runs.store import get_loop_history

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("claude_code_env")]

HELPER_KEY = "sk-ant-from-api-key-helper"
JUDGED = """\
    name: judged
    initial: build
    llm:
      model: claude-judge-via-cli
    states:
      build:
        action: "echo 'built 3 targets, 0 warnings'"
        evaluate:
          type: llm_structured
          prompt: "Did the build succeed?"
        route:
          success: done
          failure: broken
          _error: judge_failed
      done:
        terminal: true
      broken:
        terminal: true
      judge_failed:
        terminal: true
"""


@pytest.fixture
def logged_in(claude_code_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """No API key in the loop's environment; Claude Code gets its key from its settings."""
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    settings = Path(claude_code_env["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"apiKeyHelper": f"echo {HELPER_KEY}"}))


def _project(tmp_path: Path) -> Path:
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "judged.yaml").write_text(textwrap.dedent(JUDGED))
    return tmp_path


def _judge(fake: FakeAnthropic) -> Route:
    return fake.route("judge", is_claude_judge)


def _evaluation(project: Path) -> dict[str, Any]:
    events = get_loop_history("judged", project / ".loops")
    (evaluated,) = [e for e in events if e["event"] == "evaluate"]
    return evaluated


@pytest.mark.usefixtures("logged_in")
def test_judge_without_api_key_asks_claude_code_and_routes_on_its_verdict(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    judge = _judge(fake_anthropic)
    judge.reply_tool(
        {"verdict": "failure", "confidence": 0.9, "reason": "the build did not finish"},
        name=STRUCTURED_OUTPUT_TOOL,
    )
    project = _project(tmp_path)
    assert "ANTHROPIC_API_KEY" not in os.environ

    run = llproc.ll_loop(project, "run", "judged", "--json", timeout=120)

    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["final_state"] == "broken"
    evaluated = _evaluation(project)
    assert (evaluated["verdict"], evaluated["confidence"]) == ("failure", 0.9)
    assert evaluated["reason"] == "the build did not finish"
    assert evaluated["backend"] == "claude"
    assert evaluated["cost_usd"] > 0  # Claude Code's own total_cost_usd
    (call,) = judge.requests
    assert call.credential == HELPER_KEY
    assert call.body["model"] == "claude-judge-via-cli"
    # It is asked what the API judge is asked, and offered no tool but the answer's.
    assert "Did the build succeed?" in call.all_user_text
    assert "<action_output>\nbuilt 3 targets, 0 warnings\n" in call.all_user_text
    assert call.tool_names == [STRUCTURED_OUTPUT_TOOL]
    verdict_schema = call.tool(STRUCTURED_OUTPUT_TOOL)["input_schema"]["properties"]["verdict"]
    assert verdict_schema["enum"] == ["success", "failure", "blocked", "partial"]


@pytest.mark.usefixtures("logged_in")
def test_judge_via_claude_code_without_a_verdict_is_an_error_with_the_reason(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    judge = _judge(fake_anthropic)
    judge.default_reply = Reply("message", [{"type": "text", "text": "I cannot tell."}])
    project = _project(tmp_path)

    run = llproc.ll_loop(project, "run", "judged", "--json", timeout=120)

    assert json.loads(run.stdout)["final_state"] == "judge_failed", run.stderr
    evaluated = _evaluation(project)
    assert evaluated["verdict"] == "error"
    # Claude Code asks its model again for the StructuredOutput call, then gives up.
    assert evaluated["error"] == "claude gave no structured verdict: I cannot tell."
    assert evaluated["cost_usd"] > 0  # what the failed judging cost still counts


@pytest.mark.usefixtures("logged_in")
def test_dry_run_says_the_judge_goes_through_claude_code(tmp_path: Path) -> None:
    project = _project(tmp_path)

    auto = llproc.ll_loop(project, "run", "judged", "--dry-run")
    keyed = llproc.ll_loop(
        project, "run", "judged", "--dry-run", env={**os.environ, "ANTHROPIC_API_KEY": "sk-x"}
    )

    assert auto.returncode == 0, auto.stderr
    assert (
        "llm: claude-judge-via-cli (judge backend claude, auto: no ANTHROPIC_API_KEY, "
        "Claude Code's login)\n" in auto.stdout
    )
    assert (
        "llm: claude-judge-via-cli (judge backend api, auto: an API key is set)\n" in keyed.stdout
    )
