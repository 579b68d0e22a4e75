"""The Codex agent end to end: the real Codex CLI (npm @openai/codex) against the scripted
Responses API on 127.0.0.1, run by the `ll-loop` console script."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import llproc
from support.doc_blocks import all_blocks
from support.fake_openai import SHELL_TOOL, FakeOpenAI
from support.project import LoopProject

from little_loops.fsm.actions import codex
from little_loops.fsm.facts.outcomes import ExitCode

pytestmark = pytest.mark.e2e

MODEL = "gpt-5-codex"  # the model docs/agents/codex.md's loops name

DOC = "docs/agents/codex.md"


def doc_loop(name: str) -> str:
    """The loop `name` of docs/agents/codex.md: the page's examples are what runs here."""
    return next(
        b.text for b in all_blocks() if b.doc == DOC and b.text.startswith(f"name: {name}\n")
    )


FIX = doc_loop("fix-calc")


def run(project: LoopProject, name: str, text: str) -> dict[str, Any]:
    project.write(name, text)
    done = llproc.console(project.root, "run", name, "--json", timeout=120)
    assert done.returncode == ExitCode.OK, done.stderr + done.stdout
    return dict(json.loads(done.stdout))


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind]


def test_codex_fixes_a_planted_bug_with_its_shell_tool(
    fake_openai: FakeOpenAI, loop_project: LoopProject
) -> None:
    (loop_project.root / "calc.py").write_text("ANSWER = 41\n")
    fake_openai.reply_shell("sed -i 's/41/42/' calc.py && cat calc.py")
    fake_openai.reply_text("Fixed: ANSWER is 42.")
    out = run(loop_project, "fix-calc", FIX)
    assert out["final_state"] == "done"
    first, second = fake_openai.requests[:2]
    assert first.model == MODEL
    assert first.user_texts[-1] == "--fix calc.py: ANSWER must be 42"  # no flag, the prompt
    assert SHELL_TOOL in first.tool_names
    assert first.body["reasoning"]["effort"] == "low"  # codex: {config: ...} reached Codex
    assert second.function_outputs
    assert "ANSWER = 42" in second.function_outputs[0]
    assert (loop_project.root / "calc.py").read_text() == "ANSWER = 42\n"
    # Under the agent's name: two requests of 1000 input tokens (200 cached) and 50
    # output, priced as gpt-5-codex.
    assert out["usage"]["codex_input_tokens"] == 1600
    assert out["usage"]["codex_cache_read_input_tokens"] == 400
    assert out["usage"]["codex_output_tokens"] == 100
    expected = (1600 * 1.25 + 400 * 0.125 + 100 * 10.0) / 1_000_000
    assert out["cost_usd"] == pytest.approx(expected)
    events = llproc.events(loop_project.root, "fix-calc")
    # The step's output file read as `ll-loop logs` reads a Codex step (the kind's readable).
    path = Path(of(events, "action_start")[0]["output_path"])
    lines = [shown for line in path.read_text().splitlines() for shown in codex.readable(line)]
    assert "→ $ sed -i 's/41/42/' calc.py && cat calc.py" in lines, lines
    assert "← ANSWER = 42" in lines
    assert lines[-2:] == ["Fixed: ANSWER is 42.", "tokens: 1600 in, 100 out"]


SESSION = """\
name: twice
initial: ask
agent: codex
codex: {model: gpt-5-codex}
context: {round: 0}
states:
  ask:
    action: "Say hello"
    action_type: prompt
    session: continue
    evaluate: {type: exit_code}
    next: again
  again:
    action: "Say hello again"
    action_type: prompt
    session: continue
    session_key: ask
    evaluate: {type: exit_code}
    next: done
  done:
    terminal: true
"""


def test_session_continue_sends_the_earlier_turns(
    fake_openai: FakeOpenAI, loop_project: LoopProject
) -> None:
    fake_openai.reply_text("Hello one.").reply_text("Hello two.")
    out = run(loop_project, "twice", SESSION)
    assert out["final_state"] == "done"
    first, second = fake_openai.requests[:2]
    assert "Say hello" in first.user_texts
    assert "Say hello" in second.user_texts
    assert "Say hello again" in second.user_texts
    said = [
        part.get("text")
        for item in second.items
        if item.get("role") == "assistant"
        for part in item.get("content") or []
    ]
    assert "Hello one." in said
    # Each step counts its own turn: 2 x 800 fresh input tokens, not the thread's 3 x 800.
    assert out["usage"]["codex_input_tokens"] == 1600


LIMITED = FIX.replace("name: fix-calc", "name: limited")


def test_a_usage_limit_is_waited_out_and_the_step_runs_again(
    fake_openai: FakeOpenAI, loop_project: LoopProject
) -> None:
    (loop_project.root / "calc.py").write_text("ANSWER = 41\n")
    fake_openai.reply_usage_limit()
    fake_openai.reply_shell("sed -i 's/41/42/' calc.py")
    fake_openai.reply_text("Fixed.")
    out = run(loop_project, "limited", LIMITED)
    assert out["final_state"] == "done"
    events = llproc.events(loop_project.root, "limited")
    waits = [e for e in events if "limit" in e["event"]]
    assert waits, [e["event"] for e in events]
    assert out["waited_ms"].get("rate_limit", 0) > 0
    assert not [e for e in of(events, "route") if e.get("verdict") == "error"]


JUDGED = doc_loop("judged")


def test_the_judge_through_codex_returns_a_schema_checked_verdict(
    fake_openai: FakeOpenAI, loop_project: LoopProject
) -> None:
    verdict = {"verdict": "success", "confidence": 0.9, "reason": "it says done"}
    fake_openai.reply_text(json.dumps(verdict))
    out = run(loop_project, "judged", JUDGED)
    assert out["final_state"] == "done"
    request = fake_openai.requests[0]
    schema = request.output_schema
    assert schema is not None
    assert schema["additionalProperties"] is False
    assert schema["properties"]["verdict"]["enum"] == ["success", "failure", "blocked", "partial"]
    assert "Did the work get done?" in "\n".join(request.user_texts)
    assert "the work is done" in "\n".join(request.user_texts)
    evaluate = of(llproc.events(loop_project.root, "judged"), "evaluate")[0]
    assert evaluate["verdict"] == "success"


AUTO = """\
name: auto
initial: work
agent: codex
states:
  work:
    action: "Write the release notes"
    action_type: prompt
    route:
      success: done
      _: failed
      _error: failed
  done:
    terminal: true
  failed:
    terminal: true
"""


def test_a_codex_state_is_judged_by_codex_when_no_anthropic_key_is_set(
    fake_openai: FakeOpenAI, loop_project: LoopProject
) -> None:
    fake_openai.reply_text("Release notes written.")
    verdict = {"verdict": "success", "confidence": 0.8, "reason": "notes written"}
    fake_openai.reply_text(json.dumps(verdict))
    out = run(loop_project, "auto", AUTO)
    assert out["final_state"] == "done"
    work, judge = fake_openai.requests[:2]
    assert work.output_schema is None
    assert judge.output_schema is not None
    assert "Release notes written." in "\n".join(judge.user_texts)
    evaluate = of(llproc.events(loop_project.root, "auto"), "evaluate")[0]
    assert (evaluate["verdict"], evaluate.get("reason")) == ("success", "notes written")


FAILED_TOOL_LOOP = """\
name: claimed
initial: fix
agent: codex
codex: {model: gpt-5-codex}
states:
  fix:
    action_type: prompt
    action: "Fix calc.py"
    evaluate: {type: exit_code}
    on_success: done
    on_failure: failed
  done:
    terminal: true
  failed:
    terminal: true
"""


def test_the_step_line_says_when_codex_s_own_command_failed_though_it_claimed_success(
    fake_openai: FakeOpenAI, loop_project: LoopProject
) -> None:
    root = loop_project.root
    fake_openai.reply_shell("python3 -c 'import sys; sys.exit(3)'")  # its command fails ...
    fake_openai.reply_shell("true")
    fake_openai.reply_text("Fixed calc.py.")  # ... and it says it fixed it, exit 0
    loop_project.write("claimed", FAILED_TOOL_LOOP)

    done = llproc.console(root, "run", "claimed", timeout=180)

    assert done.returncode == ExitCode.OK, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "✓ success" in line]
    assert "(1 of the agent's own tool call failed)" in line
    (complete,) = [e for e in llproc.events(root, "claimed") if e["event"] == "action_complete"]
    assert complete["tools_failed"] == 1
