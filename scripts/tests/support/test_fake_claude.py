"""The shared fake `claude`: found first on PATH, it runs its script with claude's argv."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from support.fake_claude import REPORT, fake_claude, shell_claude


def test_a_shell_claude_is_the_claude_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = shell_claude(tmp_path, monkeypatch, 'echo "args: $*"')
    assert shutil.which("claude") == str(path)
    done = subprocess.run(["claude", "-p", "hi"], capture_output=True, text=True, check=True)
    assert done.stdout == "args: -p hi\n"


def test_the_report_claude_logs_its_argv_and_prints_its_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = fake_claude(tmp_path, monkeypatch, cost=0.5)
    done = subprocess.run(["claude", "-p", "x"], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == {**REPORT, "total_cost_usd": 0.5}
    assert [json.loads(line) for line in log.read_text().splitlines()] == [["-p", "x"]]
