"""Running a loop in this process: the scope is claimed and given back, the flags recorded."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from little_loops.fsm.runs.foreground import ForegroundRun, Told, run_in_foreground
from little_loops.fsm.runs.locks import read_scope_locks
from little_loops.fsm.runs.overrides import RunFlags, load_overrides
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.validate.loopfile import load_and_validate

LOOP = """\
name: once
initial: a
max_iterations: 1
states:
  a:
    action: "true"
    next: a
  done:
    terminal: true
"""


def test_run_then_resume_with_the_flags_recorded(tmp_path: Path) -> None:
    path = tmp_path / "once.yaml"
    path.write_text(LOOP)
    fsm = load_and_validate(path)
    loops = tmp_path / ".loops"
    events: list[dict[str, Any]] = []
    notes: list[str] = []
    flags = RunFlags(max_iterations=1, llm_model="m")
    told = Told(events.append, notes.append)
    first = run_in_foreground(ForegroundRun(fsm, "once.yaml", loops, flags), told)
    assert first.terminated_by == "max_iterations"
    assert load_overrides("once", loops) == flags
    assert read_scope_locks(loops) == []  # given back
    assert notes == []
    assert events[0]["event"] == "loop_start"
    restored: list[LoopState] = []
    more = RunFlags(max_iterations=2, llm_model="m")
    again = run_in_foreground(
        ForegroundRun(dataclasses.replace(fsm, max_iterations=2), "once.yaml", loops, more, True),
        Told(events.append, notes.append, restored.append),
    )
    assert [s.iteration for s in restored] == [1]
    assert again.terminated_by == "max_iterations"
    assert load_overrides("once", loops) == more
    assert read_scope_locks(loops) == []
