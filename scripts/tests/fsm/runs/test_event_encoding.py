"""An event line is encoded by one C encoder made once (issue 42, a lean step), not by a
JSONEncoder that builds a new one for each of a step's five events; the lines are the same.
Counted over real runs of bash."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.runs.atomic import json_bytes
from little_loops.fsm.runs.persistent import PersistentExecutor


def encoders_made(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, steps: int) -> int:
    """How many compact encoders (a line's, not the indented state file's) a run made."""
    made = 0
    iterencode = json.JSONEncoder.iterencode

    def counted(self: json.JSONEncoder, o: Any, _one_shot: bool = False) -> Any:
        nonlocal made
        made += self.indent is None
        return iterencode(self, o, _one_shot)

    work = StateConfig(action="true", on_success="$current", on_failure="$current")
    fsm = FSMLoop(name="spin", initial="w", states={"w": work}, max_iterations=steps)
    runner = DefaultActionRunner(cwd=tmp_path)
    with monkeypatch.context() as patch:
        patch.setattr(json.JSONEncoder, "iterencode", counted)
        result = PersistentExecutor(
            fsm, loops_dir=tmp_path / str(steps), action_runner=runner
        ).run()
    assert result.iterations == steps
    lines = (tmp_path / str(steps) / ".running/spin.events.jsonl").read_text().splitlines()
    assert sum('"event":"action_start"' in line for line in lines) == steps
    return made


def test_a_step_builds_no_json_encoder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert encoders_made(monkeypatch, tmp_path, 3) == encoders_made(monkeypatch, tmp_path, 13)


@pytest.mark.parametrize(
    "value",
    [
        {"event": "route", "ts": "2026-01-01T00:00:00.000+00:00", "from": "a", "to": "b"},
        {"a": [1, 2.5, None, True, False, -0.0, 10**30], "b": {"c": {}, "d": []}},
        {"text": 'é \u2028 \x00 " \\ \n 日本', 1: "int key", "f": 1e-300},
        {"nan": math.nan, "inf": math.inf, "ninf": -math.inf},
        "a bare string",
        7,
        [],
    ],
)
def test_a_line_is_what_json_dumps_makes(value: Any) -> None:
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    assert json_bytes(value) == expected


def test_a_lone_surrogate_is_escaped_and_a_stranger_refused_as_before() -> None:
    assert json_bytes({"s": "\udcff"}) == b'{"s":"\\udcff"}'
    with pytest.raises(TypeError, match="not JSON serializable"):
        json_bytes({"x": object()})
