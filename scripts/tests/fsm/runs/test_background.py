"""Starting a run detached: its log, its pid, a failed start reported with the log's end."""

from __future__ import annotations

import sys
from pathlib import Path

from little_loops.fsm.facts.layout import run_files
from little_loops.fsm.runs.background import start_detached


def test_a_child_that_fails_at_once_is_reported_with_its_output(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"]
    started = start_detached(argv, "x", ["."], tmp_path / ".loops", wait=5)
    assert started.exit_code == 3
    assert started.log == run_files("x", tmp_path / ".loops").log
    assert started.log_tail == ["boom"]
    assert started.log.read_text().startswith("--- ll-loop run x --background at ")


def test_a_child_still_running_when_the_watch_ends(tmp_path: Path, marker: str) -> None:
    started = start_detached(["sleep", marker], "x", ["."], tmp_path / ".loops", wait=0.2)
    assert (started.exit_code, started.log_tail) == (None, [])
    assert started.pid > 0
