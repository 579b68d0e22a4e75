"""Fixtures for the end-to-end tests: the real Claude Code CLI against the fake API."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.claude_code import claude_code_or_skip
from support.fake_anthropic import FakeAnthropic, Reply
from support.fake_openai import FakeOpenAI
from support.npm_cli import CODEX, cli_or_skip

# Keeps an API-error test to about a second: Claude Code's default is 10 retries with
# exponential backoff, which takes minutes against a server that always answers 5xx.
CLAUDE_CODE_MAX_RETRIES = "1"
# What Claude Code's side requests (none seen with 2.1.197 in -p mode) get by default.
SIDE_REPLY_TEXT = "OK"


@pytest.fixture(scope="session")
def claude_code() -> Path:
    """The pinned Claude Code CLI (installed into .cache/claude-code on first use)."""
    return claude_code_or_skip()


@pytest.fixture
def claude_code_env(
    claude_code: Path,
    fake_anthropic: FakeAnthropic,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, str]:
    """The environment Claude Code runs in, applied to os.environ (so the runner's
    children inherit it) and returned: the pinned claude first on PATH, a fresh HOME, the
    fake API, no retries to speak of, no nonessential traffic, IS_SANDBOX=1 as root."""
    for name in list(os.environ):
        # Nothing from a developer's own Claude Code session may steer the CLI elsewhere.
        if name.startswith(("CLAUDE", "ANTHROPIC_")):
            monkeypatch.delenv(name)
    home = tmp_path_factory.mktemp("claude-home")
    env = {
        "PATH": f"{claude_code.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "ANTHROPIC_BASE_URL": fake_anthropic.url,
        "ANTHROPIC_API_KEY": "sk-ant-fake-test-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": CLAUDE_CODE_MAX_RETRIES,
    }
    if os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"  # else claude refuses --dangerously-skip-permissions
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    fake_anthropic.default_reply = Reply("message", [{"type": "text", "text": SIDE_REPLY_TEXT}])
    return env


# The real Codex CLI against the scripted Responses API (support/fake_openai.py).
CONFIG = """\
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "{url}"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""


@pytest.fixture(scope="session")
def codex_cli() -> Path:
    return cli_or_skip(CODEX)


@pytest.fixture
def fake_openai(
    codex_cli: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeOpenAI]:
    """The fake API, and a fresh HOME and CODEX_HOME whose config.toml points Codex at it."""
    with FakeOpenAI() as fake:
        home = tmp_path_factory.mktemp("codex-home")
        codex_home = home / ".codex"
        codex_home.mkdir()
        (codex_home / "config.toml").write_text(CONFIG.format(url=fake.url))
        for name in list(os.environ):
            if name.startswith(("OPENAI_", "CODEX_", "ANTHROPIC_")):
                monkeypatch.delenv(name)
        monkeypatch.setenv("PATH", f"{codex_cli.parent}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("CODEX_HOME", str(codex_home))
        monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-test-key")
        yield fake
