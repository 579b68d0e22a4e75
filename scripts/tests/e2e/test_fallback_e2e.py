"""Fallback with the real Claude Code CLI against the scripted Messages API: Claude answers
with its usage-limit message, the same step runs on the second agent of the list and the run
completes; the event, the display line, `--json` and the report show the switch."""

from __future__ import annotations

import json
import math
import os
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from support import llproc
from support.fake_anthropic import FakeAnthropic, error_reply, is_claude_code_turn
from support.fake_openai import FakeOpenAI, Reply, usage_limit_body
from support.fallback_loop import FIX_CALC_LOOP
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

pytestmark = pytest.mark.e2e

# The second agent of the list: its name and what the loop declares for it. Swapping it for
# another agent (codex, once its module lands) is this one line.
SECOND = ("mine", "agents: {mine: {command: bash ./mine.sh, cost_pattern: 'cost: \\$([0-9.]+)'}}")

# The second agent fixes the planted bug (2+3 instead of 2+2) and says what it cost.
MINE = "sed -i 's/2+3/2+2/' calc.sh && echo 'fixed calc.sh' && echo 'cost: $0.125'\n"


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind]


def _claude_limited(fake_anthropic: FakeAnthropic) -> tuple[int, Any]:
    """Claude Code's stand-in answers every turn with its usage-limit message (resets in an
    hour): the time it resets, and the route (its requests)."""
    resets = math.ceil(time.time() + scaled(3600))
    message = f"Claude AI usage limit reached|{resets}"
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": message}}
    agent = fake_anthropic.route("agent", is_claude_code_turn)
    agent.default_reply = error_reply(429, body, headers={"retry-after": "0"})
    return resets, agent


def test_claude_s_usage_limit_sends_the_step_to_the_next_agent_which_completes_the_run(
    claude_code_env: dict[str, str], fake_anthropic: FakeAnthropic, loop_project: LoopProject
) -> None:
    root = loop_project.root
    (root / "calc.sh").write_text("echo $((2+3))\n")
    (root / "mine.sh").write_text(MINE)
    resets, agent = _claude_limited(fake_anthropic)
    name, declared = SECOND
    loop_project.write(
        "fallback", FIX_CALC_LOOP.format(first="claude", second=name, declared=declared)
    )

    done = llproc.console(root, "run", "fallback", "--json", timeout=180)

    assert done.returncode == ExitCode.OK, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["final_state"] == "done"
    assert outcome["iterations"] == 1  # fix (on two agents) and check, in one pass
    assert (root / "calc.sh").read_text() == "echo $((2+2))\n"
    events = llproc.events(root, "fallback")
    assert [e.get("agent") for e in _of(events, "action_start")] == ["claude", name, None]
    shown = datetime.fromtimestamp(resets).strftime("%H:%M")
    (switch,) = _of(events, "agent_switch")
    assert (switch["from"], switch["to"], switch["reason"]) == ("claude", name, "usage_limit")
    assert switch["resets"] == shown
    assert f"↪ claude's usage limit (resets {shown}): on with {name}" in done.stderr
    assert _of(events, "rate_limit_wait") == []  # no wait: the second agent was free
    assert outcome["agent_switches"][0]["to"] == name
    assert outcome["limited_agents"]["claude"]["until"] == resets
    report = json.loads(llproc.console(root, "report", "fallback", "--json").stdout)
    assert report["agents"][name]["cost_usd"] == 0.125
    assert report["agents"]["claude"]["actions"] == 1
    assert report["agent_switches"][0]["reason"] == "usage_limit"
    assert agent.requests  # Claude Code was really asked


SESSION_LOOP = """\
name: sessions
initial: plan
agent: [claude, {second}]
{declared}
states:
  plan:
    action_type: prompt
    action: "Plan the fix"
    session_key: work
    evaluate: {{type: exit_code}}
    next: fix
  fix:
    action_type: prompt
    action: "Now fix it as planned"
    session: continue
    session_key: work
    evaluate: {{type: exit_code}}
    on_success: done
    on_failure: failed
    on_error: failed
  done:
    terminal: true
  failed:
    terminal: true
"""


def test_a_session_continued_on_another_agent_starts_fresh_with_the_step_s_prompt(
    claude_code_env: dict[str, str], fake_anthropic: FakeAnthropic, loop_project: LoopProject
) -> None:
    root = loop_project.root
    (root / "calc.sh").write_text("echo $((2+3))\n")
    (root / "mine.sh").write_text(f'printf "%s\\n" "$1" > prompt.txt\n{MINE}')
    resets = math.ceil(time.time() + scaled(3600))
    body = {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": f"Claude AI usage limit reached|{resets}"},
    }
    agent = fake_anthropic.route("agent", is_claude_code_turn)
    agent.reply_text("Planned: change 2+3 to 2+2.")
    agent.default_reply = error_reply(429, body, headers={"retry-after": "0"})
    name, declared = SECOND
    loop_project.write("sessions", SESSION_LOOP.format(second=name, declared=declared))

    done = llproc.console(root, "run", "sessions", "--json", timeout=180)

    assert done.returncode == ExitCode.OK, done.stderr
    assert json.loads(done.stdout)["final_state"] == "done"
    events = llproc.events(root, "sessions")
    plan, fix_claude, fix_second = _of(events, "action_start")
    assert (plan["agent"], fix_claude["agent"], fix_second["agent"]) == ("claude", "claude", name)
    assert "resume_session" in fix_claude  # Claude resumes its own session (then is limited)
    assert "resume_session" not in fix_second
    assert fix_second["fresh_session"] == f"session 'work' is claude's: {name} starts a fresh one"
    assert (root / "prompt.txt").read_text() == "Now fix it as planned\n"  # the step's prompt
    state = json.loads((root / ".loops" / ".running" / "sessions.state.json").read_text())
    assert state["session_agents"] == {"work": "claude"}  # the second agent made no session


CODEX = ("codex", "codex: {model: gpt-5-codex}\nrate_limit: {ladder: [1], max_wait: 120}")


def test_claude_s_usage_limit_sends_the_step_to_codex_which_completes_the_run(
    fake_openai: FakeOpenAI,
    claude_code_env: dict[str, str],
    fake_anthropic: FakeAnthropic,
    loop_project: LoopProject,
) -> None:
    root = loop_project.root
    (root / "calc.sh").write_text("echo $((2+3))\n")
    resets, agent = _claude_limited(fake_anthropic)
    fake_openai.reply_shell("sed -i 's/2+3/2+2/' calc.sh")
    fake_openai.reply_text("Fixed calc.sh.")
    name, declared = CODEX
    loop_project.write(
        "fallback", FIX_CALC_LOOP.format(first="claude", second=name, declared=declared)
    )

    done = llproc.console(root, "run", "fallback", "--json", timeout=180)

    assert done.returncode == ExitCode.OK, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["final_state"] == "done"
    assert outcome["iterations"] == 1
    assert (root / "calc.sh").read_text() == "echo $((2+2))\n"
    # Codex was handed the step's own prompt, by the model the loop gives.
    assert fake_openai.requests[0].model == "gpt-5-codex"
    assert fake_openai.requests[0].user_texts[-1] == "Fix the planted bug in calc.sh"
    events = llproc.events(root, "fallback")
    assert [e.get("agent") for e in _of(events, "action_start")] == ["claude", "codex", None]
    (switch,) = _of(events, "agent_switch")
    assert (switch["from"], switch["to"], switch["reason"]) == ("claude", "codex", "usage_limit")
    shown = datetime.fromtimestamp(resets).strftime("%H:%M")
    assert f"↪ claude's usage limit (resets {shown}): on with codex" in done.stderr
    assert outcome["agent_switches"][0]["to"] == "codex"
    report = json.loads(llproc.console(root, "report", "fallback", "--json").stdout)
    assert report["agents"]["codex"]["cost_usd"] > 0
    assert report["agent_switches"][0]["to"] == "codex"
    text = llproc.console(root, "report", "fallback").stdout
    assert "codex" in text
    assert agent.requests


def test_with_claude_and_codex_limited_the_run_waits_then_goes_on(
    fake_openai: FakeOpenAI,
    claude_code_env: dict[str, str],
    fake_anthropic: FakeAnthropic,
    loop_project: LoopProject,
) -> None:
    root = loop_project.root
    (root / "calc.sh").write_text("echo $((2+3))\n")
    _claude_limited(fake_anthropic)
    # Codex's first answer: its own usage limit, no reset time (the ladder's 1 s); then it
    # does the work.
    fake_openai.reply_usage_limit()
    fake_openai.reply_shell("sed -i 's/2+3/2+2/' calc.sh")
    fake_openai.reply_text("Fixed calc.sh.")
    name, declared = CODEX
    loop_project.write(
        "fallback", FIX_CALC_LOOP.format(first="claude", second=name, declared=declared)
    )

    done = llproc.console(root, "run", "fallback", "--json", timeout=180)

    assert done.returncode == ExitCode.OK, done.stderr
    assert json.loads(done.stdout)["final_state"] == "done"
    assert (root / "calc.sh").read_text() == "echo $((2+2))\n"
    events = llproc.events(root, "fallback")
    (wait,) = _of(events, "rate_limit_wait")
    assert wait["agent"] == "every agent"
    assert "⏳ waiting for every agent's usage limit" in done.stderr
    # Claude is still limited (for an hour): after the wait the step runs on codex again.
    starts = [e.get("agent") for e in _of(events, "action_start")]
    assert starts == ["claude", "codex", "codex", None]


def test_claude_s_own_retries_of_a_usage_limit_are_capped_so_the_switch_is_quick(
    claude_code_env: dict[str, str],
    fake_anthropic: FakeAnthropic,
    loop_project: LoopProject,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As on a user's machine: no CLAUDE_CODE_MAX_RETRIES (Claude Code's default is 10).
    monkeypatch.delenv("CLAUDE_CODE_MAX_RETRIES")
    root = loop_project.root
    (root / "calc.sh").write_text("echo $((2+3))\n")
    (root / "mine.sh").write_text(MINE)
    _, agent = _claude_limited(fake_anthropic)
    name, declared = SECOND
    loop_project.write(
        "fallback", FIX_CALC_LOOP.format(first="claude", second=name, declared=declared)
    )

    done = llproc.console(root, "run", "fallback", "--json", timeout=300)

    assert done.returncode == ExitCode.OK, done.stderr
    assert "↪ claude's usage limit" in done.stderr
    # The first call and at most two retries of it (ll-loop caps them), not eleven.
    assert 1 <= len(agent.requests) <= 3, len(agent.requests)


# The list the other agents' own-retry tests run: the agent first, then `mine`.


def fallback_project(root: Any, first: str, declared: str) -> str:
    """A project whose `calc.sh` has the planted bug that `mine` fixes, and the loop that
    runs *first*, then `mine`: the loop's text."""
    (root / "calc.sh").write_text("echo $((2+3))\n")
    (root / "mine.sh").write_text(MINE)
    return FIX_CALC_LOOP.format(first=first, second="mine", declared=f"{declared}\n{SECOND[1]}")


def test_codex_s_usage_limit_gives_way_after_one_request_with_its_own_retry_settings(
    fake_openai: FakeOpenAI, loop_project: LoopProject
) -> None:
    root = loop_project.root
    # Codex's own defaults, as on a user's machine: no request_max_retries or
    # stream_max_retries (the suite's config sets both to 0).
    config = Path(os.environ["CODEX_HOME"]) / "config.toml"
    kept = [line for line in config.read_text().splitlines() if "_max_retries" not in line]
    config.write_text("\n".join(kept) + "\n")
    fake_openai.default_reply = Reply(status=429, body=usage_limit_body())
    loop_project.write("fallback", fallback_project(root, *CODEX))

    done = llproc.console(root, "run", "fallback", "--json", timeout=180)

    assert done.returncode == ExitCode.OK, done.stderr
    assert "↪ codex's usage limit" in done.stderr
    assert (root / "calc.sh").read_text() == "echo $((2+2))\n"
    # Codex 0.171 does not retry a 429 itself: one request, then ll-loop's switch.
    assert len(fake_openai.requests) == 1, [r.path for r in fake_openai.requests]
    starts = [e.get("agent") for e in _of(llproc.events(root, "fallback"), "action_start")]
    assert starts == ["codex", "mine", None]
