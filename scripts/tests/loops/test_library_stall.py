"""fix-tests stops on the same failure three times in a row instead of burning its budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import llproc
from support.fake_claude import fake_claude

from little_loops.fsm.facts.outcomes import ExitCode


def test_a_fix_that_changes_nothing_stops_fix_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = fake_claude(tmp_path, monkeypatch, 0.01)  # answers, edits nothing
    project = tmp_path / "project"
    project.mkdir()
    command = "echo 'FAILED test_x - assert 1 == 2'; exit 1"
    result = llproc.console(project, "run", "library:fix-tests", command, "--json")
    assert result.returncode == ExitCode.STALL, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["stall"]["detector"] == "same_result"
    assert len(calls.read_text().splitlines()) == 2  # two fixes, then the third failure stops it
