"""A sandboxed agent whose shell tool reads a planted `~/.ssh/id_rsa`: the real Claude Code
and Codex, against their scripted APIs. The read is refused inside and said in the step's
output tail, and the key's bytes reach neither the model nor the run's records."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support import llproc
from support.fake_anthropic import FakeAnthropic, is_claude_code_turn
from support.fake_openai import FakeOpenAI
from support.programs import needs_bwrap

pytestmark = [
    pytest.mark.e2e,
    needs_bwrap,
]

KEY = "-----BEGIN OPENSSH PRIVATE KEY----- planted for the agent"
NOTE = "ll-loop sandbox: read refused, a secret place is hidden"
LOOP = """\
name: peek
initial: peek
sandbox: bwrap
{agent}
states:
  peek:
    action_type: prompt
    action: Read the key.
    next: done
  done:
    terminal: true
"""
READ = 'cat "$HOME/.ssh/id_rsa"; true'


def _plant() -> Path:
    home = Path(os.environ["HOME"])
    (home / ".ssh").mkdir(exist_ok=True)
    key = home / ".ssh" / "id_rsa"
    key.write_text(KEY + "\n")
    return key


def _run(root: Path, agent: str) -> tuple[dict[str, Any], str]:
    """Run `peek` in *root*; its step's action_complete event and what ll-loop printed."""
    (root / ".loops").mkdir(parents=True, exist_ok=True)
    (root / ".loops" / "peek.yaml").write_text(LOOP.format(agent=agent))
    done = llproc.ll_loop(root, "run", "peek", "--verbose", timeout=240)
    assert done.returncode == 0, done.stderr
    history = llproc.ll_loop(root, "history", "peek", "--json")
    events = json.loads(history.stdout)
    (complete,) = [e for e in events if e["event"] == "action_complete"]
    assert KEY not in history.stdout
    for path in (root / ".loops").rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path
    return complete, done.stderr


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.mark.usefixtures("claude_code_env")
def test_claude_code_cannot_read_a_planted_key(
    fake_anthropic: FakeAnthropic, project: Path
) -> None:
    key = _plant()
    agent = fake_anthropic.route("agent", is_claude_code_turn)
    agent.reply_tool({"command": READ}, name="Bash")
    agent.reply_text("Done.")
    complete, _ = _run(project, "")
    assert NOTE in str(complete.get("stderr")), complete
    bodies = json.dumps([r.body for r in agent.requests])
    assert "Permission denied" in bodies  # the tool's result the model was sent
    assert KEY not in bodies
    assert key.read_text() == KEY + "\n"


def test_codex_cannot_read_a_planted_key(fake_openai: FakeOpenAI, project: Path) -> None:
    key = _plant()
    fake_openai.reply_shell(READ)
    fake_openai.reply_text("Done.")
    complete, _ = _run(project, "agent: codex\ncodex: {model: gpt-5-codex}")
    assert NOTE in str(complete.get("stderr")), complete
    bodies = json.dumps([r.body for r in fake_openai.requests])
    assert "Permission denied" in bodies
    assert KEY not in bodies
    assert key.read_text() == KEY + "\n"
