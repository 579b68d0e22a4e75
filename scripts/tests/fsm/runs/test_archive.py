"""The run archive's own rules: ids, the atomic swap, and what a failed write leaves."""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import pytest

from little_loops.fsm.facts.layout import RunFiles, archive_dir, make_running_dir
from little_loops.fsm.runs import archive
from little_loops.fsm.runs.archive import (
    archive_run,
    archived_definition,
    list_runs,
    run_id_base,
)

STATE: dict[str, Any] = {
    "status": "completed",
    "terminated_by": "terminal",
    "started_at": "2026-01-15T10:30:00.001+00:00",
    "updated_at": "2026-01-15T10:30:02.500+00:00",
    "elapsed_ms": 2499,
    "iteration": 2,
    "current_state": "done",
    "cost_usd": 0.25,
}


@pytest.fixture
def files(tmp_path: Path) -> RunFiles:
    loops = tmp_path / ".loops"
    running = make_running_dir(loops / ".running")
    (running / "demo.state.json").write_text("{}")
    (running / "demo.events.jsonl").write_text('{"event": "loop_start"}\n')
    return RunFiles("demo", loops)


def test_the_id_is_the_start_second_and_the_same_run_keeps_it(files: RunFiles) -> None:
    assert run_id_base(STATE["started_at"]) == "20260115-103000"
    first = archive_run(files, STATE, keep=5)
    again = archive_run(files, {**STATE, "iteration": 3}, keep=5)
    other = archive_run(files, {**STATE, "started_at": "2026-01-15T10:30:00.900+00:00"}, keep=5)
    assert first is not None
    assert again is not None
    assert other is not None
    assert first.run_id == again.run_id == "20260115-103000"
    assert other.run_id == "20260115-103000-2"
    runs, warnings = list_runs(files.loops_dir, "demo")
    assert [(r.run_id, r.passes) for r in runs] == [
        ("20260115-103000", 3),
        ("20260115-103000-2", 2),
    ]
    assert warnings == []


def test_a_failed_write_leaves_the_old_entry_and_no_partial_folder(
    files: RunFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive_run(files, STATE, keep=5)
    folder = archive_dir(files.loops_dir, "demo")
    before = sorted(p.name for p in (folder / "20260115-103000").iterdir())

    def full(source: Path, target: Path, limit: int | None) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(target))

    monkeypatch.setattr(archive, "_copy", full)
    with pytest.raises(OSError, match="No space left"):
        archive_run(files, {**STATE, "iteration": 9}, keep=5)
    assert sorted(p.name for p in folder.iterdir()) == ["20260115-103000"]
    assert sorted(p.name for p in (folder / "20260115-103000").iterdir()) == before
    (run,), _ = list_runs(files.loops_dir, "demo")
    assert run.passes == 2


def test_the_archive_keeps_the_loop_the_run_kept_at_its_start(files: RunFiles) -> None:
    """A crashed run is archived by the next run of its loop, whose file may have changed
    since: the entry keeps the loop the crashed run ran, not the one given."""
    ran = {"name": "demo", "initial": "a", "states": {"a": {"terminal": True}}}
    files.definition.write_text(json.dumps(ran))
    archive_run(files, STATE, keep=5, definition={"name": "demo", "states": {"changed": {}}})
    entry = archive_dir(files.loops_dir, "demo") / "20260115-103000"
    assert archived_definition(entry) == ran
    files.definition.unlink()  # a run from before runs kept it: the one given
    archive_run(files, STATE, keep=5, definition={"name": "demo", "states": {"given": {}}})
    assert archived_definition(entry) == {"name": "demo", "states": {"given": {}}}
