"""Per-state `claude:` options and `session: continue`, with the real Claude Code CLI.

Each test runs `ll-loop run` as a process; Claude Code talks to the scripted Messages API,
and the tests read what it sent: the model, the tools offered, the earlier turns.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support import llproc
from support.fake_anthropic import FakeAnthropic, Route, is_claude_code
from support.slowdown import scaled

from little_loops.fsm.facts.layout import run_files
from little_loops.fsm.runs.store import get_loop_history

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("claude_code_env")]

OPTIONS_LOOP = """\
    name: options
    initial: plan
    claude:
      model: claude-loop-default
      tools: [Read]
    states:
      plan:
        action_type: prompt
        action: "Plan the change"
        claude:
          model: claude-state-model
          tools: [Bash, Read]
        next: write
      write:
        action_type: prompt
        action: "Write the change"
        next: chat
      chat:
        action_type: prompt
        action: "Just answer"
        claude:
          tools: []
        next: permissive
      permissive:
        action_type: prompt
        action: "Check with rules"
        claude:
          tools: null
          allowed_tools: [Read]
        next: done
      done:
        terminal: true
"""


def _project(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / ".loops").mkdir(exist_ok=True)
    (tmp_path / ".loops" / f"{name}.yaml").write_text(textwrap.dedent(text))
    return tmp_path


def _agent(fake: FakeAnthropic) -> Route:
    # In -p mode Claude Code 2.1.197 sends only the agent's turns (no side requests).
    return fake.route("agent", is_claude_code)


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind]


def test_claude_options_reach_the_api_request(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    agent = _agent(fake_anthropic)
    for answer in ("planned", "written", "answered", "checked"):
        agent.reply_text(answer)
    project = _project(tmp_path, "options", OPTIONS_LOOP)

    run = llproc.ll_loop(project, "run", "options", timeout=120)

    assert run.returncode == 0, run.stderr
    plan, write, chat, permissive = agent.requests
    # The state's own options win over the loop's, key by key.
    assert plan.body["model"] == "claude-state-model"
    assert sorted(plan.tool_names) == ["Bash", "Read"]
    # A state without `claude:` runs with the loop's.
    assert write.body["model"] == "claude-loop-default"
    assert write.tool_names == ["Read"]
    # `tools: []` offers none at all; the model is still the loop's.
    assert chat.body["model"] == "claude-loop-default"
    assert chat.tool_names == []
    # allowed_tools is a permission rule: while permissions are skipped (the default) it
    # restricts nothing, so every built-in tool is offered (`tools: null` unset the loop's).
    assert {"Bash", "Edit", "Read", "Write"} <= set(permissive.tool_names)
    # Each action's cost is recorded per model, as Claude Code reports it.
    events = get_loop_history("options", project / ".loops")
    costs = {e["state"]: e for e in _of(events, "action_complete")}
    assert list(costs["plan"]["models"]) == ["claude-state-model"]
    assert list(costs["write"]["models"]) == ["claude-loop-default"]
    assert costs["plan"]["models"]["claude-state-model"] == costs["plan"]["cost_usd"]


def test_model_flag_overrides_every_claude_state(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    agent = _agent(fake_anthropic)
    for answer in ("planned", "written", "answered", "checked"):
        agent.reply_text(answer)
    project = _project(tmp_path, "options", OPTIONS_LOOP)

    run = llproc.ll_loop(project, "run", "options", "--model", "claude-from-cli", timeout=120)

    assert run.returncode == 0, run.stderr
    assert [r.body["model"] for r in agent.requests] == ["claude-from-cli"] * 4
    # Only the model changed: the tools are still each state's.
    assert sorted(agent.requests[0].tool_names) == ["Bash", "Read"]
    assert agent.requests[2].tool_names == []


# `fix` runs twice (the check fails once); with `session: continue`, its second pass
# resumes the session of the first.
SESSION_LOOP = """\
    name: session
    initial: fix
    states:
      fix:
        action_type: prompt
        action: "Fix attempt ${{state.iteration}}"
        session: continue
        next: check
      check:
        action: '{check}'
        on_success: done
        on_failure: fix
      done:
        terminal: true
"""
FAIL_ONCE = "test -f tried || { touch tried; exit 1; }"


def test_session_continue_sends_the_earlier_turns(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    agent = _agent(fake_anthropic)
    agent.reply_text("FIRST-ATTEMPT-7731: changed foo.py")
    agent.reply_text("SECOND-ATTEMPT: changed bar.py too")
    project = _project(tmp_path, "session", SESSION_LOOP.format(check=FAIL_ONCE))

    run = llproc.ll_loop(project, "run", "session", timeout=120)

    assert run.returncode == 0, run.stderr
    first, second = agent.requests
    assert "Fix attempt 1" in first.all_user_text
    assert "FIRST-ATTEMPT-7731" not in json.dumps(first.messages)
    # The second pass is the same conversation: the first prompt and answer come first.
    assert "Fix attempt 1" in second.all_user_text
    assistant = [m for m in second.messages if m.get("role") == "assistant"]
    assert "FIRST-ATTEMPT-7731" in json.dumps(assistant)
    assert second.user_text.strip().endswith("Fix attempt 2")
    events = get_loop_history("session", project / ".loops")
    starts = [e for e in _of(events, "action_start") if e["state"] == "fix"]
    completes = [e for e in _of(events, "action_complete") if e["state"] == "fix"]
    session_id = completes[0]["session_id"]
    assert "resume_session" not in starts[0]
    assert starts[1]["resume_session"] == session_id
    # The session ids are saved with the run (a resume goes on with them).
    saved = json.loads(run_files("session", project / ".loops").state.read_text())
    assert saved["sessions"] == {"fix": completes[1]["session_id"]}


def test_a_session_claude_cannot_resume_starts_fresh_with_a_note(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    agent = _agent(fake_anthropic)
    agent.reply_text("FIRST-ATTEMPT-7731")
    agent.reply_text("SECOND-ATTEMPT")
    # The check also deletes Claude Code's saved sessions (as on another machine).
    check = f'rm -rf "$HOME/.claude/projects"; {FAIL_ONCE}'
    project = _project(tmp_path, "session", SESSION_LOOP.format(check=check))

    run = llproc.ll_loop(project, "run", "session", timeout=120)

    assert run.returncode == 0, run.stderr
    first, second = agent.requests  # the failed resume made no API call
    assert "FIRST-ATTEMPT-7731" not in json.dumps(second.messages)
    assert second.user_text.strip().endswith("Fix attempt 2")
    events = get_loop_history("session", project / ".loops")
    (lost,) = _of(events, "session_lost")
    first_id = _of(events, "action_complete")[0]["session_id"]
    assert lost["session_id"] == first_id
    assert lost["note"] == (
        f"claude cannot resume session {first_id}: state 'fix' starts a fresh one"
    )
    assert lost["note"] in run.stderr
    assert _of(events, "loop_complete")[0]["terminated_by"] == "terminal"


def test_every_option_is_a_flag_of_the_pinned_claude(claude_code: Path) -> None:
    import re
    import subprocess

    from little_loops.fsm.actions.claude_options import (
        CLAUDE_OPTIONS,
        EFFORT_LEVELS,
        PERMISSION_MODES,
    )

    shown = subprocess.run(
        [str(claude_code), "--help"], capture_output=True, text=True, timeout=scaled(60), check=True
    ).stdout
    help_text = " ".join(shown.split())
    hidden = {"--max-turns"}  # works (the options loop above would fail) but is not listed
    for name, option in CLAUDE_OPTIONS.items():
        if option.flag is not None and option.flag not in hidden:
            assert re.search(rf"(^|[ ,]){re.escape(option.flag)}[ ,]", help_text), name
    assert f"({', '.join(EFFORT_LEVELS)})" in help_text
    modes = re.search(r"--permission-mode <mode> .*?\(choices: ([^)]*)\)", help_text)
    assert modes is not None
    assert modes.group(1).replace('"', "").split(", ") == list(PERMISSION_MODES)


def test_max_turns_and_the_other_flags_are_accepted(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    agent = _agent(fake_anthropic)
    agent.reply_text("done")
    project = _project(
        tmp_path,
        "flags",
        """\
        name: flags
        initial: work
        states:
          work:
            action_type: prompt
            action: "Work"
            claude:
              max_turns: 2
              effort: low
              fallback_model: claude-haiku-4-5
              append_system_prompt: "SYSTEM-NOTE-5521"
              disallowed_tools: [Write]
              permission_mode: bypassPermissions
              extra_args: ["--add-dir", "."]
            next: done
          done:
            terminal: true
        """,
    )

    run = llproc.ll_loop(project, "run", "flags", timeout=120)

    assert run.returncode == 0, run.stderr
    (turn,) = agent.requests
    assert "SYSTEM-NOTE-5521" in json.dumps(turn.body["system"])
    assert "Write" not in turn.tool_names
    assert "Edit" in turn.tool_names
    assert turn.body["output_config"]["effort"] == "low"


def test_sessions_survive_a_crash_and_resume(fake_anthropic: FakeAnthropic, tmp_path: Path) -> None:
    agent = _agent(fake_anthropic)
    agent.reply_text("FIRST-ATTEMPT-7731: changed foo.py")
    agent.reply_text("SECOND-ATTEMPT")
    # The first check kills ll-loop itself (kill -9: nothing is saved on the way out).
    crash_once = 'if [ ! -f crashed ]; then touch crashed; kill -9 "$PPID"; sleep 5; fi'
    project = _project(tmp_path, "session", SESSION_LOOP.format(check=f"{crash_once}; {FAIL_ONCE}"))

    crashed = llproc.ll_loop(project, "run", "session", timeout=120)
    assert crashed.returncode == -9, crashed.stderr
    resumed = llproc.ll_loop(project, "resume", "session", timeout=120)

    assert resumed.returncode == 0, resumed.stderr
    first, second = agent.requests
    assistant = [m for m in second.messages if m.get("role") == "assistant"]
    assert "FIRST-ATTEMPT-7731" in json.dumps(assistant)
    events = get_loop_history("session", project / ".loops")
    first_id = _of(events, "action_complete")[0]["session_id"]
    fix_starts = [e for e in _of(events, "action_start") if e["state"] == "fix"]
    assert fix_starts[-1]["resume_session"] == first_id
