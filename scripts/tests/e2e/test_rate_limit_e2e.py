"""Claude's rate, overload and usage limits: the real Claude Code CLI and the LLM judge against
the scripted Messages API, run by the `ll-loop` console script. A limit is waited out and the
step runs again; it is never routed as a verdict."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from support import llproc
from support.fake_anthropic import FakeAnthropic, Reply, Route, error_reply, is_claude_code_turn
from support.fake_anthropic import is_judge as is_judge_request
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.runs.control import GRACE_SECONDS

pytestmark = pytest.mark.e2e

LOOP = """\
    name: limited
    initial: work
    rate_limit: {ladder: [0.5, 1], max_wait: 60}
    states:
      work:
        action_type: prompt
        action: "Say hello"
        on_success: done
        on_failure: failed
        on_error: broken
      done:
        terminal: true
      failed:
        terminal: true
      broken:
        terminal: true
"""
SUCCESS = {"verdict": "success", "confidence": 0.9, "reason": "it said hello"}


def routes(fake: FakeAnthropic) -> tuple[Route, Route]:
    return fake.route("agent", is_claude_code_turn), fake.route("judge", is_judge_request)


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind]


def run(project: LoopProject) -> tuple[dict[str, Any], str, list[dict[str, Any]]]:
    project.write("limited", LOOP)
    done = llproc.console(project.root, "run", "limited", "--json", timeout=120)
    assert done.returncode == ExitCode.OK, done.stderr
    return json.loads(done.stdout), done.stderr, llproc.events(project.root, "limited")


def no_verdict_on_a_limit(events: list[dict[str, Any]]) -> None:
    """Only the good answer was judged and routed: the limits gave no verdict."""
    assert [e["verdict"] for e in of(events, "evaluate")] == ["success"]
    assert [(r["to"], r["verdict"]) for r in of(events, "route")] == [("done", "success")]


def test_claude_code_answering_429_then_529_until_a_time(
    claude_code_env: dict[str, str], fake_anthropic: FakeAnthropic, loop_project: LoopProject
) -> None:
    agent, judge = routes(fake_anthropic)
    start = time.time()
    # One whole session (Claude Code tries twice) of each at least, then until the time.
    for status, until in ((429, start + 3), (529, start + 5)):
        refused = error_reply(status, headers={"retry-after": "0"})
        agent.reply(refused).reply(refused).reply_until(until, refused)
    agent.reply_text("Hello.")
    judge.reply_tool(SUCCESS)

    outcome, stderr, events = run(loop_project)

    assert (outcome["terminated_by"], outcome["final_state"]) == ("terminal", "done")
    limits = [w["limit"] for w in of(events, "rate_limit_wait")]
    assert "rate_limit" in limits
    assert "overloaded" in limits
    assert limits.index("overloaded") > limits.index("rate_limit")
    assert not any(w.get("judge") for w in of(events, "rate_limit_wait"))
    no_verdict_on_a_limit(events)
    assert time.time() - start >= 5  # it waited until the API answered normally
    assert outcome["waited_ms"]["rate_limit"] > 0
    assert "waiting for Claude's rate limit (0.5s)" in stderr
    assert "waiting for Claude's overload" in stderr
    assert outcome["iterations"] == 1


def test_a_usage_limit_with_a_reset_time_is_waited_for(
    claude_code_env: dict[str, str], fake_anthropic: FakeAnthropic, loop_project: LoopProject
) -> None:
    agent, judge = routes(fake_anthropic)
    resets = math.ceil(time.time() + scaled(3))  # Claude Code has started by then
    message = f"Claude AI usage limit reached|{resets}"
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": message}}
    agent.reply_until(resets, error_reply(429, body, headers={"retry-after": "0"}))
    agent.default_reply = Reply("message", [{"type": "text", "text": "Hello."}])
    judge.reply_tool(SUCCESS)

    outcome, stderr, events = run(loop_project)

    assert outcome["final_state"] == "done"
    (wait,) = of(events, "rate_limit_wait")  # one wait: until the reset, not a ladder
    assert wait["limit"] == "usage_limit"
    shown = datetime.fromtimestamp(resets).strftime("%H:%M")
    assert wait["resets"] == shown
    assert f"waiting for Claude's usage limit (resets {shown})" in stderr
    # Claude Code ran again only once the limit had reset.
    (again,) = of(events, "action_start")[1:]
    assert datetime.fromisoformat(again["ts"]).timestamp() >= resets
    no_verdict_on_a_limit(events)


def test_the_judges_429_is_waited_out_and_judged_again(
    claude_code_env: dict[str, str], fake_anthropic: FakeAnthropic, loop_project: LoopProject
) -> None:
    agent, judge = routes(fake_anthropic)
    agent.reply_text("Hello.")
    # More refusals than the judge's own three attempts.
    for _ in range(4):
        judge.reply_error(429, headers={"retry-after": "0"})
    judge.reply_tool(SUCCESS)

    outcome, stderr, events = run(loop_project)

    assert outcome["final_state"] == "done"
    waits = of(events, "rate_limit_wait")
    assert [(w["limit"], w["judge"]) for w in waits] == [("rate_limit", True)]
    assert len(agent.requests) == 1  # Claude Code's answer stood: only the judge ran again
    assert len(of(events, "action_start")) == 1
    no_verdict_on_a_limit(events)
    assert "waiting for the judge's rate limit (0.5s)" in stderr


def test_a_limit_past_max_wait_ends_the_run_without_a_verdict(
    claude_code_env: dict[str, str], fake_anthropic: FakeAnthropic, loop_project: LoopProject
) -> None:
    agent, _judge = routes(fake_anthropic)
    agent.default_reply = error_reply(529, headers={"retry-after": "0"})
    loop_project.write("limited", LOOP.replace("max_wait: 60", "max_wait: 1"))

    done = llproc.console(loop_project.root, "run", "limited", "--json", timeout=120)

    assert done.returncode == ExitCode.FAILED
    outcome = json.loads(done.stdout)
    assert outcome["final_state"] == "work"  # not routed to `broken` by on_error
    assert outcome["error"].startswith(
        "Claude's overload did not lift within rate_limit.max_wait (1s): API Error: 529"
    )
    events = llproc.events(loop_project.root, "limited")
    assert of(events, "evaluate") == []
    assert [w["seconds"] for w in of(events, "rate_limit_wait")] == [0.5, 0.5]
    assert Path(loop_project.root / ".loops").is_dir()


def test_status_shows_the_wait_stop_ends_it_and_resume_finishes_it(
    claude_code_env: dict[str, str], fake_anthropic: FakeAnthropic, loop_project: LoopProject
) -> None:
    agent, judge = routes(fake_anthropic)
    wait = scaled(10)  # Claude Code has started by then
    resets = math.ceil(time.time() + wait)
    message = f"Claude AI usage limit reached|{resets}"
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": message}}
    agent.reply_until(resets, error_reply(429, body, headers={"retry-after": "0"}))
    agent.default_reply = Reply("message", [{"type": "text", "text": "Hello."}])
    judge.reply_tool(SUCCESS)
    # The reset is within max_wait however loaded the machine (it is 10 s on an idle one).
    loop_project.write("limited", LOOP.replace("max_wait: 60", f"max_wait: {60 + wait:.0f}"))
    log = loop_project.root / ".loops" / ".running" / "limited.events.jsonl"
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "ll-loop"), "run", "limited"],
        cwd=loop_project.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        llproc.wait_for(
            lambda: log.exists() and '"rate_limit_wait"' in log.read_text(),
            timeout=60,
            what="the usage-limit wait",
        )
        shown = datetime.fromtimestamp(resets).strftime("%H:%M")
        status = llproc.console(loop_project.root, "status", "limited").stdout
        (line,) = [line for line in status.splitlines() if line.startswith("waiting:")]
        assert line.split(None, 1)[1].startswith(
            f"for Claude's usage limit in state work, resets {shown} ("
        )
        stop = llproc.console(loop_project.root, "stop", "limited")
        assert proc.wait(timeout=scaled(5)) == ExitCode.STOPPED
        assert llproc.stop_seconds(stop) < scaled(1.0, at_most=GRACE_SECONDS)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    done = llproc.console(loop_project.root, "resume", "limited", "--json", timeout=120)

    assert done.returncode == ExitCode.OK, done.stderr
    events = llproc.events(loop_project.root, "limited")
    # The resumed run finished the same wait: Claude Code ran again only after the reset.
    assert len(of(events, "rate_limit_wait")) == 1
    again = of(events, "action_start")[-1]
    assert datetime.fromisoformat(again["ts"]).timestamp() >= resets
    no_verdict_on_a_limit(events)
