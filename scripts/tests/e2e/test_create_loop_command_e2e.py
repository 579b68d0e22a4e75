"""/ll:create-loop in the real Claude Code CLI, which talks to the scripted Messages API.

Claude Code loads this checkout as the plugin `ll` (`--plugin-dir`), or the command file
copied into a project's `.claude/commands/ll/`; the fake plays the model's turns.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.fake_anthropic import FakeAnthropic, RecordedRequest, Route, is_claude_code_turn
from support.slowdown import scaled

REPO = Path(__file__).resolve().parents[3]
COMMAND = REPO / "commands" / "create_loop.md"
COMMAND_OPENING = "You are helping the user write a loop file for `ll-loop`"
LOOP = (
    "name: demo\ninitial: a\nstates:\n"
    "  a:\n    action: 'true'\n    next: done\n"
    "  done:\n    terminal: true\n"
)

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("claude_code_env")]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder; `ll-loop` of this checkout is on PATH for the Bash tool."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def run_claude(project: Path, prompt: str, *, plugin: bool = True) -> str:
    """`claude -p PROMPT` in *project*, with this checkout as a plugin; its stdout."""
    argv = ["claude", "-p", prompt, "--max-turns", "5"]
    if plugin:
        argv[1:1] = ["--plugin-dir", str(REPO)]
    done = subprocess.run(
        argv,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=scaled(120),
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return done.stdout.strip()


def agent(fake: FakeAnthropic) -> Route:
    return fake.route("agent", is_claude_code_turn)


def results(request: RecordedRequest) -> list[tuple[bool, str]]:
    """(is_error, text) of each tool result the request sends back to the model."""
    out = []
    for block in request.tool_results:
        content = block.get("content")
        text = content if isinstance(content, str) else json.dumps(content)
        out.append((bool(block.get("is_error")), text))
    return out


def test_the_command_is_ll_create_loop_and_gets_the_arguments(
    fake_anthropic: FakeAnthropic, project: Path
) -> None:
    turns = agent(fake_anthropic).reply_text("FAKE-DONE")
    assert run_claude(project, "/ll:create-loop fix ruff errors in src/") == "FAKE-DONE"
    (turn,) = turns.requests
    assert COMMAND_OPENING in turn.all_user_text
    assert "fix ruff errors in src/" in turn.all_user_text


def test_the_file_name_is_not_the_command_name(
    fake_anthropic: FakeAnthropic, project: Path
) -> None:
    turns = agent(fake_anthropic)
    out = run_claude(project, "/ll:create_loop x")
    assert out == "Unknown command: /ll:create_loop. Did you mean /ll:create-loop?"
    assert turns.requests == []


def test_allowed_tools_let_it_write_and_validate_but_not_run(
    fake_anthropic: FakeAnthropic, project: Path
) -> None:
    turns = agent(fake_anthropic)
    turns.reply_tool(
        {"file_path": str(project / ".loops/demo.yaml"), "content": LOOP}, name="Write"
    )
    turns.reply_tool({"command": "ll-loop validate .loops/demo.yaml"}, name="Bash")
    turns.reply_tool({"command": "ll-loop run .loops/demo.yaml"}, name="Bash")
    turns.reply_text("FAKE-DONE")
    assert run_claude(project, "/ll:create-loop a demo loop") == "FAKE-DONE"
    assert (project / ".loops/demo.yaml").read_text() == LOOP
    written, validated, ran = results(turns.requests[-1])
    assert written[0] is False
    assert validated == (False, ".loops/demo.yaml: ok")
    assert ran[0] is True  # `ll-loop run` needs the user's permission
    assert not (project / ".loops/.running").exists()


def test_without_the_command_nothing_is_pre_approved(
    fake_anthropic: FakeAnthropic, project: Path
) -> None:
    turns = agent(fake_anthropic)
    turns.reply_tool(
        {"file_path": str(project / ".loops/demo.yaml"), "content": LOOP}, name="Write"
    )
    turns.reply_text("FAKE-DONE")
    run_claude(project, "write a demo loop", plugin=False)
    assert not (project / ".loops/demo.yaml").exists()
    ((is_error, _),) = results(turns.requests[-1])
    assert is_error


def test_a_copy_in_claude_commands_ll_is_ll_create_loop_too(
    fake_anthropic: FakeAnthropic, project: Path
) -> None:
    target = project / ".claude" / "commands" / "ll" / "create-loop.md"
    target.parent.mkdir(parents=True)
    shutil.copy(COMMAND, target)
    turns = agent(fake_anthropic).reply_text("FAKE-DONE")
    assert run_claude(project, "/ll:create-loop lint", plugin=False) == "FAKE-DONE"
    (turn,) = turns.requests
    assert COMMAND_OPENING in turn.all_user_text
