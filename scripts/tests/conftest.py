"""Shared fixtures: small factories for loop projects and processes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fake_anthropic import FakeAnthropic
from support.project import LoopProject


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
