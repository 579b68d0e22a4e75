"""Shared fixtures: small factories for loop projects and processes."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import bytecode, llproc, slowdown
from support.fake_anthropic import FakeAnthropic
from support.project import LoopProject


def pytest_sessionstart(session: pytest.Session) -> None:
    """Before the first test: the package's bytecode for the processes the tests start, and
    the machine's slowdown, measured once (see support/bytecode.py and support/slowdown.py)."""
    bytecode.compile_package()
    slowdown.factor()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    how = "set by" if os.environ.get(slowdown.ENV, "").strip() else "measured; set it with"
    terminalreporter.write_line(
        f"test deadlines were scaled by x{slowdown.factor():.2f} ({how} {slowdown.ENV})"
    )


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
