"""Shared fixtures: small factories for loop projects and processes."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.fake_anthropic import FakeAnthropic

from little_loops.cli import main_loop


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A scripted Messages API on 127.0.0.1, with ANTHROPIC_BASE_URL and a fake key set."""
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-test-key")
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        yield fake


@dataclass
class RunResult:
    """What one `ll-loop ...` call returned and printed."""

    code: int
    out: str
    err: str


class LoopProject:
    """A project folder (the current directory during the test) with a `.loops/` folder."""

    def __init__(self, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.root = root
        self.loops = root / ".loops"
        self._capsys = capsys

    def write(self, name: str, text: str) -> Path:
        """Write `.loops/NAME.yaml` (NAME may carry its own suffix) from dedented *text*."""
        path = self.loops / (name if name.endswith((".yaml", ".yml")) else f"{name}.yaml")
        path.write_text(textwrap.dedent(text))
        return path

    def run(self, *argv: str) -> RunResult:
        """Run `ll-loop ARGV...` in-process and capture its output."""
        self._capsys.readouterr()
        code = main_loop(list(argv))
        captured = self._capsys.readouterr()
        return RunResult(code, captured.out, captured.err)


@pytest.fixture
def loop_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> LoopProject:
    """An empty loop project in tmp_path, made the current directory."""
    (tmp_path / ".loops").mkdir()
    monkeypatch.chdir(tmp_path)
    return LoopProject(tmp_path, capsys)
