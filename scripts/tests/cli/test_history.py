"""`ll-loop history` (cli/history.py): one line per event of a run."""

from __future__ import annotations

import json

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
