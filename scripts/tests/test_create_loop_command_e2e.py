"""/ll:create-loop in the real Claude Code CLI, against the scripted fake Messages API.

Needs the `claude` executable: $LL_CLAUDE, or the pinned copy the end-to-end tests install
into .cache/claude-code; the tests skip with the reason when there is none.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.fake_anthropic import FakeAnthropic, RecordedRequest

REPO = Path(__file__).resolve().parents[2]
COMMAND = REPO / "commands" / "create_loop.md"
PINNED = REPO / ".cache" / "claude-code" / "node_modules" / ".bin" / "claude"
LOOP = (
    "name: demo\ninitial: a\nstates:\n"
    "  a:\n    action: 'true'\n    next: done\n"
    "  done:\n    terminal: true\n"
)

pytestmark = pytest.mark.e2e


def claude_or_skip() -> Path:
    candidate = Path(os.environ.get("LL_CLAUDE") or PINNED)
    if not candidate.exists():
        pytest.skip(f"no Claude Code CLI at {candidate} (set LL_CLAUDE to its path)")
    return candidate


def run_claude(
    fake: FakeAnthropic, home: Path, project: Path, prompt: str, *, plugin: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        ANTHROPIC_BASE_URL=fake.url,
        ANTHROPIC_API_KEY="sk-ant-fake-test-key",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        CLAUDE_CODE_MAX_RETRIES="1",
        IS_SANDBOX="1",
        # `ll-loop` of this checkout, for the Bash tool.
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    argv = [str(claude_or_skip()), "-p", prompt, "--max-turns", "5"]
    if plugin:
        argv[1:1] = ["--plugin-dir", str(REPO)]
    return subprocess.run(
        argv,
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def model_calls(fake: FakeAnthropic) -> list[RecordedRequest]:
    return [r for r in fake.requests if r.path.split("?")[0] == "/v1/messages"]


def tool_results(request: RecordedRequest) -> list[tuple[bool, str]]:
    """(is_error, text) of every tool result the request sends back to the model."""
    out = []
    for message in request.body["messages"]:
        if not isinstance(message["content"], list):
            continue
        for block in message["content"]:
            if block.get("type") == "tool_result":
                content = block.get("content")
                text = content if isinstance(content, str) else json.dumps(content)
                out.append((bool(block.get("is_error")), text))
    return out


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return home, project


def test_the_command_is_ll_create_loop_and_gets_the_arguments(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    with FakeAnthropic() as fake:
        fake.reply_text("FAKE-DONE")
        done = run_claude(fake, home, project, "/ll:create-loop fix ruff errors in src/")
    assert done.stdout.strip() == "FAKE-DONE"
    (call,) = model_calls(fake)
    sent = json.dumps(call.body)
    assert "You are helping the user write a loop file for `ll-loop`" in sent
    assert "fix ruff errors in src/" in sent


def test_the_file_name_is_not_the_command_name(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    with FakeAnthropic() as fake:
        done = run_claude(fake, home, project, "/ll:create_loop x")
    assert done.stdout.strip() == "Unknown command: /ll:create_loop. Did you mean /ll:create-loop?"
    assert model_calls(fake) == []


def test_allowed_tools_let_it_write_and_validate_but_not_run(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    with FakeAnthropic() as fake:
        fake.reply_tool(
            {"file_path": str(project / ".loops/demo.yaml"), "content": LOOP}, name="Write"
        )
        fake.reply_tool({"command": "ll-loop validate .loops/demo.yaml"}, name="Bash")
        fake.reply_tool({"command": "ll-loop run .loops/demo.yaml"}, name="Bash")
        fake.reply_text("FAKE-DONE")
        done = run_claude(fake, home, project, "/ll:create-loop a demo loop")
    assert done.stdout.strip() == "FAKE-DONE"
    assert (project / ".loops/demo.yaml").read_text() == LOOP
    results = tool_results(model_calls(fake)[-1])
    assert len(results) == 3
    assert results[1] == (False, ".loops/demo.yaml: ok")
    assert results[2][0] is True  # `ll-loop run` needs the user's permission
    assert not (project / ".loops/.running").exists()


def test_without_the_command_nothing_is_pre_approved(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    with FakeAnthropic() as fake:
        fake.reply_tool(
            {"file_path": str(project / ".loops/demo.yaml"), "content": LOOP}, name="Write"
        )
        fake.reply_text("FAKE-DONE")
        run_claude(fake, home, project, "write a demo loop", plugin=False)
    assert not (project / ".loops/demo.yaml").exists()
    ((is_error, _),) = tool_results(model_calls(fake)[-1])
    assert is_error


def test_a_copy_in_claude_commands_ll_is_ll_create_loop_too(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    target = project / ".claude" / "commands" / "ll" / "create-loop.md"
    target.parent.mkdir(parents=True)
    shutil.copy(COMMAND, target)
    with FakeAnthropic() as fake:
        fake.reply_text("FAKE-DONE")
        done = run_claude(fake, home, project, "/ll:create-loop lint", plugin=False)
    assert done.stdout.strip() == "FAKE-DONE"
    (call,) = model_calls(fake)
    assert "You are helping the user write a loop file" in json.dumps(call.body)
