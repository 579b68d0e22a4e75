"""`ll-loop history` (cli/history.py): one line per event of a run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.loops import ONE_STEP
from support.project import LoopProject

from little_loops.cli.history import format_event, history_command


def test_format_event() -> None:
    enter = {"ts": "2026-01-01T00:00:00", "event": "state_enter", "state": "a", "iteration": 1}
    assert format_event(enter) == "2026-01-01T00:00:00 state_enter     a (iteration 1)"
    route = {"ts": "t", "event": "route", "from": "a", "to": "b", "reason": "next"}
    assert format_event(route) == "t route           a → b (next)"
    assert format_event({"ts": "t", "event": "weird", "x": 1}) == 't weird           {"x": 1}'
    assert "\n" not in format_event({"ts": "t", "event": "state_enter", "state": "a\nb"})


def test_history_of_a_run(loop_project: LoopProject, capsys: pytest.CaptureFixture[str]) -> None:
    loop_project.write("one", ONE_STEP)
    assert loop_project.run("run", "one").code == 0
    capsys.readouterr()
    assert history_command("one", loops_dir=loop_project.loops) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[1] == "loop_start"
    assert lines[-1].split()[1] == "loop_complete"
    assert history_command("one", tail=2, as_json=True, loops_dir=loop_project.loops) == 0
    events = json.loads(capsys.readouterr().out)
    assert [e["event"] for e in events] == ["route", "loop_complete"]


def test_tail_reads_its_count_without_the_run_options_module(tmp_path: Path) -> None:
    # `history --tail N` is what a watcher runs again and again: it parses its count as
    # every count flag does, without importing the run options (and the loop model with them).
    probe = (
        "import contextlib, io, sys\n"
        "from little_loops.cli import main_loop\n"
        "err = io.StringIO()\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):\n"
        "    try:\n"
        "        code = main_loop(sys.argv[1:])\n"
        "    except SystemExit as exc:\n"
        "        code = exc.code\n"
        "print(code, 'little_loops.cli.options' in sys.modules, err.getvalue().splitlines()[-1])\n"
    )
    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops/quiet.yaml").write_text(ONE_STEP.replace("name: one", "name: quiet"))

    def run(count: str) -> str:
        argv = [sys.executable, "-c", probe, "history", "quiet", "--tail", count]
        return subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True).stdout.strip()

    assert run("3") == "1 False ll-loop: loop 'quiet' has no events yet"
    # Its messages are the run flags' own.
    assert run("0") == (
        "2 False ll-loop history: error: argument --tail: must be at least 1, got 0"
    )
    assert run("x") == (
        "2 False ll-loop history: error: argument --tail: expected a whole number, got 'x'"
    )
