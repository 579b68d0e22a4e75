"""Loops that run the real Claude Code CLI, which talks to the scripted Messages API.

The same fake server answers Claude Code's agent turns (route "agent") and the LLM
judge's calls (route "judge"); anything else Claude Code asks gets a harmless "OK".
"""

from __future__ import annotations

import math
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support import llproc
from support.claude_code import CLAUDE_CODE_VERSION
from support.fake_anthropic import (
    FakeAnthropic,
    Route,
    error_reply,
    is_claude_code_turn,
    is_judge,
)
from support.slowdown import scaled

from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.definition.model.typed import DEFAULT_LLM_MODEL, FSMLoop
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.engine.executor import ExecutionResult, FSMExecutor
from little_loops.fsm.runs.persistent import PersistentExecutor
from little_loops.fsm.runs.store import get_loop_history

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("claude_code_env")]


# One Claude step that runs the tests through Claude Code's Bash tool.
WATCH = textwrap.dedent("""\
    name: watch
    initial: work
    states:
      work:
        action_type: prompt
        action: "Run the tests"
        evaluate:
          type: exit_code
        on_success: done
        on_failure: done
      done:
        terminal: true
""")


def _loop(yaml_text: str) -> FSMLoop:
    return FSMLoop.from_dict(load_text(textwrap.dedent(yaml_text), "e2e.yaml").data)


def _routes(fake: FakeAnthropic) -> tuple[Route, Route]:
    return fake.route("agent", is_claude_code_turn), fake.route("judge", is_judge)


def _run(fsm: FSMLoop, project: Path) -> tuple[ExecutionResult, list[dict[str, Any]]]:
    events: list[dict[str, Any]] = []
    with DefaultActionRunner(cwd=project) as runner:
        result = FSMExecutor(fsm, events.append, runner).run()
    return result, events


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind]


def _path(events: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    return [(e["from"], e["to"], e["verdict"]) for e in _of(events, "route")]


def test_slash_command_judged_by_default_llm(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude" / "commands").mkdir(parents=True)
    (project / ".claude" / "commands" / "greet.md").write_text(
        "---\ndescription: Greet the team\n---\n"
        "Greet the team in one line and sign it GREETER-7731.\n"
    )
    agent, judge = _routes(fake_anthropic)
    agent.reply_text("Hello, team! -- GREETER-7731")
    judge.reply_tool({"verdict": "success", "confidence": 0.9, "reason": "the team was greeted"})
    fsm = _loop("""
        name: greet
        initial: greet
        states:
          greet:
            action: "/greet"
            on_success: done
            on_failure: greet
          done:
            terminal: true
    """)

    loops_dir = project / ".loops"
    with DefaultActionRunner(cwd=project) as runner:
        result = PersistentExecutor(fsm, loops_dir=loops_dir, action_runner=runner).run()

    assert (result.terminated_by, result.final_state, result.iterations) == ("terminal", "done", 1)
    events = get_loop_history("greet", loops_dir)
    assert _path(events) == [("greet", "done", "success")]
    (evaluated,) = _of(events, "evaluate")
    assert evaluated["type"] == "llm_structured"
    assert (evaluated["verdict"], evaluated["confidence"]) == ("success", 0.9)
    assert evaluated["reason"] == "the team was greeted"
    (action,) = _of(events, "action_complete")
    assert action["exit_code"] == 0
    # The action's output is the `result` text of Claude Code's final report.
    assert action["output"] == "Hello, team! -- GREETER-7731"

    # Claude Code itself expanded the command file into the prompt it sent.
    (turn,) = agent.requests
    assert turn.headers["user-agent"].startswith(f"claude-cli/{CLAUDE_CODE_VERSION} ")
    assert turn.body["stream"] is True
    assert "<command-name>/greet</command-name>" in turn.all_user_text
    assert "Greet the team in one line and sign it GREETER-7731." in turn.all_user_text
    # ... and the judge saw what Claude Code printed.
    (verdict_call,) = judge.requests
    assert verdict_call.body["model"] == DEFAULT_LLM_MODEL
    assert "<action_output>\nHello, team! -- GREETER-7731\n</action_output>" in (
        verdict_call.user_text
    )
    assert fake_anthropic.unrouted == []


def test_prompt_action_judged_by_explicit_evaluator(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    agent, judge = _routes(fake_anthropic)
    agent.reply_text(
        "Two of the three tests still fail.", usage={"input_tokens": 900, "output_tokens": 9}
    )
    judge.reply_tool({"verdict": "partial", "confidence": 0.75, "reason": "1 of 3 fixed"})
    fsm = _loop("""
        name: tests
        initial: work
        llm:
          model: claude-judge-test
        states:
          work:
            action_type: prompt
            action: "Fix the failing tests in ${context.suite}"
            evaluate:
              type: llm_structured
              prompt: "Are all tests passing now?"
            route:
              success: done
              partial: review
              failure: work
          review:
            terminal: true
          done:
            terminal: true
        context:
          suite: tests/unit
    """)

    result, events = _run(fsm, tmp_path)

    assert (result.terminated_by, result.final_state) == ("terminal", "review")
    assert _path(events) == [("work", "review", "partial")]
    (evaluated,) = _of(events, "evaluate")
    assert (evaluated["verdict"], evaluated["confidence"]) == ("partial", 0.75)
    (turn,) = agent.requests
    assert turn.user_text.endswith("Fix the failing tests in tests/unit")
    (verdict_call,) = judge.requests
    assert verdict_call.body["model"] == "claude-judge-test"
    assert verdict_call.user_text == (
        "Are all tests passing now?\n\n"
        "<action_output>\nTwo of the three tests still fail.\n</action_output>"
    )


def test_fix_loop_converges_through_claude_code_tools(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    status = tmp_path / "status.txt"
    status.write_text("broken\n")
    agent, judge = _routes(fake_anthropic)
    # The scripted model reads the file, edits it, then says it is done: Claude Code
    # runs both tools itself (permissions skipped) and sends their results back.
    agent.reply_tool({"file_path": str(status)}, name="Read", text="Let me look at it.")
    agent.reply_tool(
        {"file_path": str(status), "old_string": "broken", "new_string": "fixed"}, name="Edit"
    )
    agent.reply_text("status.txt now says fixed.")
    fsm = _loop("""
        name: fix-status
        initial: check
        max_iterations: 3
        states:
          check:
            action: "grep -q fixed status.txt"
            on_success: done
            on_failure: fix
          fix:
            action_type: prompt
            action: "Make status.txt say fixed"
            next: check
          done:
            terminal: true
    """)

    result, events = _run(fsm, tmp_path)

    assert (result.terminated_by, result.final_state, result.iterations) == ("terminal", "done", 2)
    assert status.read_text() == "fixed\n"
    assert _path(events) == [
        ("check", "fix", "failure"),
        ("fix", "check", None),
        ("check", "done", "success"),
    ]
    assert [e["exit_code"] for e in _of(events, "action_complete")] == [1, 0, 0]
    first, after_read, after_edit = agent.requests
    # The tools the script calls are the ones Claude Code offers, with these inputs.
    assert {"Read", "Edit", "Write", "Bash"} <= set(first.tool_names)
    edit_schema = first.tool("Edit")["input_schema"]
    assert set(edit_schema["required"]) == {"file_path", "old_string", "new_string"}
    assert [r["content"] for r in after_read.tool_results] == ["1\tbroken\n2\t"]
    assert "has been updated successfully" in after_edit.tool_results[-1]["content"]
    assert judge.requests == []  # `next:` routes without evaluating
    # Claude Code's JSON report: its answer is the output, its cost and tokens are spend.
    fix_done = _of(events, "action_complete")[1]
    assert fix_done["output"] == "status.txt now says fixed."
    assert fix_done["cost_usd"] > 0
    assert fix_done["usage"]["input_tokens"] > 0
    assert result.cost_usd == fix_done["cost_usd"]
    assert result.usage["claude_output_tokens"] == fix_done["usage"]["output_tokens"]


def test_api_down_ends_the_run_with_the_api_error(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    agent, judge = _routes(fake_anthropic)
    overloaded = error_reply(529, headers={"retry-after": "0"})
    agent.default_reply = judge.default_reply = overloaded
    fsm = _loop("""
        name: overloaded
        initial: work
        rate_limit: {ladder: [0.2], max_wait: 0.2}
        states:
          work:
            action_type: prompt
            action: "Say hello"
            on_success: done
            on_failure: work
          done:
            terminal: true
    """)

    result, events = _run(fsm, tmp_path)

    # An overload is waited out (rate_limit:), never judged: past max_wait the run ends.
    assert (result.terminated_by, result.final_state) == ("error", "work")
    assert (result.error or "").startswith(
        "Claude's overload did not lift within rate_limit.max_wait (0.2s): API Error: 529 fake 529."
    )
    action = _of(events, "action_complete")[-1]
    # Claude Code reports API errors in its JSON (is_error) and exits 1, after its one
    # allowed retry.
    assert action["exit_code"] == 1
    assert action["output"].startswith("API Error: 529 fake 529.")
    assert len(agent.requests) == 4  # two sessions (one wait), each tried twice
    assert _of(events, "evaluate") == []
    assert judge.requests == []  # a failed Claude Code call is not sent to the judge


def test_judge_error_takes_the_error_route(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    agent, judge = _routes(fake_anthropic)
    agent.reply_text("Done.")
    judge.reply_error(400)
    fsm = _loop("""
        name: judged
        initial: work
        states:
          work:
            action_type: prompt
            action: "Do it"
            route:
              success: done
              failure: work
              _error: probe
          probe:
            action: "true"
            on_success: done
          done:
            terminal: true
    """)

    result, events = _run(fsm, tmp_path)

    assert (result.terminated_by, result.final_state) == ("terminal", "done")
    assert _path(events) == [("work", "probe", "error"), ("probe", "done", "success")]
    evaluated = _of(events, "evaluate")[0]
    assert evaluated["verdict"] == "error"
    assert evaluated["error"] == "API error 400: fake 400"
    assert len(judge.requests) == 1  # a 400 is not retried


def test_unknown_slash_command_is_printed_not_sent(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    agent, judge = _routes(fake_anthropic)
    fsm = _loop("""
        name: missing-command
        initial: work
        states:
          work:
            action: "/ll:not-there"
            on_success: done
            on_error: missing
          missing:
            terminal: true
          done:
            terminal: true
    """)

    result, events = _run(fsm, tmp_path)

    # Claude Code answers a command it has no file for by itself, with exit 0 and no API
    # call; ll-loop turns that into an error verdict without paying for a judge call.
    (action,) = _of(events, "action_complete")
    assert (action["exit_code"], action["output"]) == (0, "Unknown command: /ll:not-there")
    assert action["error"] == (
        "claude does not know the slash command /ll:not-there (is there a "
        ".claude/commands file for it in the loop's project?)"
    )
    assert agent.requests == []
    assert judge.requests == []
    # `missing` is terminal, reached on the verdict error: the run is a failure saying why.
    assert (result.terminated_by, result.final_state) == ("terminal_failure", "missing")
    assert result.error == f"reached from state 'work' on the verdict error: {action['error']}"


def test_idle_timeout_ends_a_session_whose_api_call_hangs(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    agent, judge = _routes(fake_anthropic)
    # The model runs one tool, then the API goes quiet: Claude Code streamed the first
    # turn and its tool result, then prints nothing while it waits.
    agent.reply_tool({"command": "echo probe-1234"}, name="Bash", text="Checking first.")
    # On a loaded machine Claude Code's own start can be quiet for seconds: the idle limit
    # is scaled as every deadline of the suite is, and the hang outlasts it many times.
    idle = math.ceil(scaled(3))
    agent.reply_hang(20 * idle)
    fsm = _loop(f"""
        name: stuck
        initial: work
        states:
          work:
            action_type: prompt
            action: "Check and report"
            idle_timeout: {idle}
            on_success: done
            on_failure: work
            on_error: gave-up
          gave-up:
            terminal: true
          done:
            terminal: true
    """)

    result, events = _run(fsm, tmp_path)

    assert (result.terminated_by, result.final_state) == ("terminal_failure", "gave-up")
    (action,) = _of(events, "action_complete")
    assert action["exit_code"] == 124
    assert action["error"] == f"action printed nothing for {idle:.1f}s (idle_timeout)"
    # Claude's words before it went quiet are the output; its tokens so far are counted.
    assert action["output"] == "Checking first."
    assert action["usage"]["input_tokens"] > 0
    assert idle * 1000 <= action["duration_ms"] < scaled(20_000) + idle * 1000
    assert len(agent.requests) == 2
    assert judge.requests == []


def test_the_terminal_shows_what_claude_is_doing(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    import os
    import pty
    import subprocess
    import sys

    agent, _judge = _routes(fake_anthropic)
    agent.reply_tool({"command": "sleep 1.5; echo tests-ok", "description": "run"}, name="Bash")
    agent.reply_text("The tests pass.")
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "watch.yaml").write_text(WATCH)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        # `run`: a loop named `watch` is not the `watch` command (the live view)
        [sys.executable, "-m", "little_loops.cli", "run", "watch", "--no-color"],
        cwd=tmp_path,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**os.environ, "TERM": "xterm", "COLUMNS": "100"},
        start_new_session=True,
    )
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the terminal's other side is closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=scaled(30)) == 0
    screen = b"".join(chunks).decode("utf-8", errors="replace")
    # While Claude Code ran the tool, the spinner line named it.
    assert " · Bash: sleep 1.5; echo tests-ok\x1b[K" in screen
    assert "Loop completed: done (1 iteration, " in screen
    transcript = (tmp_path / ".loops" / ".running" / "watch.work.out").read_text()
    assert '"tool_use_result"' in transcript or '"tool_result"' in transcript


def test_logs_shows_a_claude_session_as_text_not_json(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    import subprocess

    agent, _judge = _routes(fake_anthropic)
    agent.reply_tool({"command": "echo tests-ok", "description": "run"}, name="Bash")
    agent.reply_text("The tests pass.")
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "watch.yaml").write_text(WATCH)

    def ll_loop(*args: str) -> subprocess.CompletedProcess[str]:
        return llproc.ll_loop(tmp_path, *args, timeout=60)

    run = ll_loop("run", "watch", "-v")
    assert run.returncode == 0, run.stderr
    # -v showed the session as it went, as text.
    assert '→ Bash {"command": "echo tests-ok", "description": "run"}' in run.stderr
    assert '"type"' not in run.stderr
    logs = ll_loop("logs", "watch")
    assert logs.returncode == 0, logs.stderr
    lines = logs.stdout.splitlines()
    assert lines[0] == "==> .loops/.running/watch.work.out (state work, Claude session) <=="
    assert '→ Bash {"command": "echo tests-ok", "description": "run"}' in lines
    assert "← tests-ok" in lines
    assert lines[lines.index("answer:") + 1] == "The tests pass."
    assert any(re.fullmatch(r"cost: \$\d+\.\d{4} \(\d+ turns\)", line) for line in lines)
    assert '"type"' not in logs.stdout  # not the raw stream-json
    raw = (tmp_path / ".loops" / ".running" / "watch.work.out").read_text()
    assert '"type":"result"' in raw.replace(" ", "")


def test_the_step_line_says_when_claude_s_own_tool_call_failed_though_it_claimed_success(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    agent, _judge = _routes(fake_anthropic)
    # Its command fails (Claude Code marks the result is_error) ... then it says "Fixed".
    agent.reply_tool({"command": "python3 -c 'import sys; sys.exit(3)'"}, name="Bash")
    agent.reply_text("Fixed calc.py.")
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "watch.yaml").write_text(WATCH)

    run = llproc.ll_loop(tmp_path, "run", "watch", timeout=120)

    assert run.returncode == 0, run.stderr
    (line,) = [line for line in run.stderr.splitlines() if "✓ success" in line]
    assert "(1 of the agent's own tool call failed)" in line
    (complete,) = [e for e in llproc.events(tmp_path, "watch") if e["event"] == "action_complete"]
    assert complete["tools_failed"] == 1
