"""A sandboxed agent step cannot plant its agent's own settings (hooks, `notify`, MCP servers,
plugins), which would run unconfined the next time the agent runs outside: the real Claude
Code, Codex, Gemini CLI and opencode, whose shell tool tries, against their scripted APIs.
The write is refused and said, nothing changes outside, and the session is still continued
and kept where the agent keeps it."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from support import llproc
from support.fake_anthropic import FakeAnthropic, is_claude_code_turn
from support.fake_gemini import FakeGemini, gemini_env, gemini_home
from support.fake_openai import FakeOpenAI
from support.fake_openai_chat import FakeOpenAIChat
from support.npm_cli import GEMINI_CLI, OPENCODE, cli_or_skip
from support.programs import needs_bwrap

from little_loops.fsm.actions.refusals import NOTE_PREFIX

pytestmark = [
    pytest.mark.e2e,
    needs_bwrap,
]

PLANTED = "Planted, first turn."  # the model's answer the continued session sends back
# `plant` runs twice, its second run resuming its first session (`count` sends it back once).
LOOP = """\
name: plant
initial: plant
sandbox: bwrap
{agent}
states:
  plant:
    action_type: prompt
    action: Plant the settings.
    session: continue
    next: count
  count:
    action: test -f .second || {{ touch .second; exit 1; }}
    on_success: done
    on_failure: plant
  done:
    terminal: true
"""
HOOK = '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned"}]}]}}'


def _planting(targets: Sequence[Path]) -> str:
    """The shell command the scripted model has the agent's shell tool run: append a hook
    to each of *targets*, making its folder first."""
    lines = [f"mkdir -p '{t.parent}'; echo '{HOOK}' >> '{t}' 2>&1" for t in targets]
    return "; ".join(lines) + "; true"


def _before(targets: Sequence[Path]) -> dict[Path, str | None]:
    return {t: t.read_text() if t.exists() else None for t in targets}


def _run(root: Path, agent: str, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Run the loop `plant` to `done` in *root*; its events."""
    (root / ".loops").mkdir(parents=True, exist_ok=True)
    loop = LOOP.format(agent=agent)
    (root / ".loops" / "plant.yaml").write_text(loop)
    env = dict(os.environ if env is None else env)
    done = llproc.ll_loop(root, "run", "plant", timeout=240, env=env)
    assert done.returncode == 0, done.stderr
    assert "Loop completed: done" in done.stderr
    history = llproc.ll_loop(root, "history", "plant", "--json", env=env)
    return list(json.loads(history.stdout))


def _refused(events: list[dict[str, Any]], before: dict[Path, str | None]) -> None:
    """Each planting was refused inside and said in the step's output tail; nothing changed
    outside."""
    first, second = [e for e in events if e["event"] == "action_complete" and e["state"] == "plant"]
    assert f"{NOTE_PREFIX}write refused, read-only here" in str(first.get("stderr"))
    # The second run plants nothing: the agent itself meets no refusal in its own folder.
    assert NOTE_PREFIX not in str(second.get("stderr")), second
    after = {t: t.read_text() if t.exists() else None for t in before}
    assert after == before
    starts = [e for e in events if e["event"] == "action_start"]
    assert all(s["sandbox"] == {"backend": "bwrap", "network": True} for s in starts)


def _continued(bodies: Sequence[Any]) -> None:
    """The second run of `plant` sent its first run's answer back: its session went on."""
    assert any(PLANTED in json.dumps(body) for body in bodies[2:])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.mark.usefixtures("claude_code_env")
@pytest.mark.parametrize("shell", ["bash", "zsh"])  # its shell tool runs $SHELL's
def test_claude_code_cannot_plant_its_settings_from_the_sandbox(
    fake_anthropic: FakeAnthropic, project: Path, shell: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = shutil.which(shell)
    if found is None:
        pytest.skip(f"{shell} is not installed")
    monkeypatch.setenv("SHELL", found)
    home = Path(os.environ["HOME"])
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text('{"permissions": {}}\n')
    (home / ".claude.json").write_text('{"numStartups": 1}\n')  # its state and MCP servers
    targets = [
        home / ".claude" / "settings.json",
        home / ".claude.json",
        home / ".claude" / "CLAUDE.md",
        home / ".claude" / "commands" / "evil.md",
        home / ".claude" / "plugins" / "evil" / "hooks.json",
    ]
    before = _before(targets)
    agent = fake_anthropic.route("agent", is_claude_code_turn)
    agent.reply_tool({"command": _planting(targets)}, name="Bash")
    agent.reply_text(PLANTED)
    agent.reply_text("Went on.")
    events = _run(project, "")
    _refused(events, before)
    _continued([r.body for r in agent.requests])
    # Its sessions were written through the sandbox to the real ~/.claude.
    assert list((home / ".claude" / "projects").rglob("*.jsonl"))


def test_codex_cannot_plant_its_settings_from_the_sandbox(
    fake_openai: FakeOpenAI, project: Path
) -> None:
    codex_home = Path(os.environ["CODEX_HOME"])
    targets = [
        codex_home / "config.toml",  # its `notify` command, hooks and MCP servers
        codex_home / "AGENTS.md",
        codex_home / "rules" / "evil.rules",
        codex_home / "skills" / "evil" / "SKILL.md",
    ]
    before = _before(targets)
    fake_openai.reply_shell(_planting(targets))
    fake_openai.reply_text(PLANTED)
    fake_openai.reply_text("Went on.")
    events = _run(project, "agent: codex\ncodex: {model: gpt-5-codex}")
    _refused(events, before)
    _continued([r.body for r in fake_openai.requests])
    assert list((codex_home / "sessions").rglob("*.jsonl"))  # in the real $CODEX_HOME


def test_gemini_cli_cannot_plant_its_settings_from_the_sandbox(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = cli_or_skip(GEMINI_CLI)
    for name in list(os.environ):
        if name.startswith(("GEMINI_", "GOOGLE_")):
            monkeypatch.delenv(name)
    home = gemini_home(tmp_path / "home")
    targets = [
        home / ".gemini" / "settings.json",  # its hooks and MCP servers
        home / ".gemini" / ".env",
        home / ".gemini" / "GEMINI.md",
        home / ".gemini" / "extensions" / "evil" / "gemini-extension.json",
    ]
    before = _before(targets)
    with FakeGemini() as fake:
        fake.reply_call({"command": _planting(targets)})
        fake.reply_text(PLANTED)
        fake.reply_text("Went on.")
        (tmp_path / "gemini-tmp").mkdir()
        env = {**os.environ, **gemini_env(fake, home, tmp_path / "gemini-tmp")}
        env["TMPDIR"] = "/tmp"  # the sandbox's own /tmp: the test's folder is not seen there
        env["PATH"] = f"{cli.parent}{os.pathsep}{os.environ['PATH']}"
        events = _run(project, "agent: gemini\ngemini: {model: gemini-2.5-flash}", env)
        _refused(events, before)
        _continued([r.body for r in fake.requests])
    assert list((home / ".gemini" / "tmp").rglob("session-*"))  # its sessions, in the real home


def test_opencode_cannot_plant_its_settings_from_the_sandbox(project: Path, tmp_path: Path) -> None:
    from e2e.test_opencode_e2e import MODEL, PROVIDER, opencode_env

    cli = cli_or_skip(OPENCODE)
    home = tmp_path / "home"
    targets = [
        home / ".config" / "opencode" / "opencode.json",  # its plugins, MCP servers, agents
        home / ".config" / "opencode" / "plugin" / "evil.js",
        home / ".cache" / "opencode" / "bin" / "rg",
    ]
    with FakeOpenAIChat() as fake:
        env = opencode_env(cli, fake, project, home)
        config = json.loads(env["OPENCODE_CONFIG_CONTENT"])
        config["permission"] = {"external_directory": "allow"}  # its own asking, off
        env["OPENCODE_CONFIG_CONTENT"] = json.dumps(config)
        before = _before(targets)
        fake.reply_tool("bash", {"command": _planting(targets), "description": "plant"})
        fake.reply_text(PLANTED)
        fake.reply_text("Went on.")
        events = _run(project, f"agent: opencode\nopencode: {{model: {PROVIDER}/{MODEL}}}", env)
        _refused(events, before)
        _continued([r.body for r in fake.requests])
    assert list((home / ".local" / "share" / "opencode").glob("opencode.db*"))
