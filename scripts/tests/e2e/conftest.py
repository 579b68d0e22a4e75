"""Fixtures for the end-to-end tests: the real Claude Code CLI against the fake API."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.claude_code import claude_code_or_skip
from support.fake_anthropic import FakeAnthropic, Reply

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
