"""Shared fixtures: small factories for loop projects and processes."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import llproc
from support.fake_anthropic import FakeAnthropic
from support.project import LoopProject


@pytest.fixture(autouse=True)
def _sandboxed_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """As root (a container, CI), Claude Code runs only with IS_SANDBOX=1 and `ll-loop run`
    checks that before a run's first step: every test runs as in such a sandbox (as the e2e
    tests' real Claude Code does); the tests of that check take it away."""
    if os.geteuid() == 0:
        monkeypatch.setenv("IS_SANDBOX", "1")


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A scripted Messages API on 127.0.0.1, with ANTHROPIC_BASE_URL and a fake key set."""
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-test-key")
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        yield fake


@pytest.fixture
def loop_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> LoopProject:
    """An empty loop project in tmp_path, made the current directory."""
    (tmp_path / ".loops").mkdir()
    monkeypatch.chdir(tmp_path)
    return LoopProject(tmp_path, capsys)


@pytest.fixture
def marker() -> Iterator[str]:
    """A `sleep` argument no other process has, to find (and clean up) a test's actions."""
    value = f"30.{uuid.uuid4().int % 10**12:012d}"
    yield value
    llproc.kill_marked(value)
