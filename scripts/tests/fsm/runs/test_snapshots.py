"""SnapshotWriter: the state file follows the run within LAG_S, newest last, off its thread."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from support.slowdown import scaled

from little_loops.fsm.runs.snapshots import LAG_S, SnapshotWriter
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.store import StatePersistence


def fields(state: str, iteration: int) -> dict[str, Any]:
    return dict(LoopState("fix", state, iteration=iteration).to_dict())


def on_disk(store: StatePersistence) -> dict[str, Any]:
    return json.loads(store.state_file.read_text())


def test_an_offered_snapshot_is_written_within_the_lag(tmp_path: Path) -> None:
    store = StatePersistence("fix", tmp_path)
    writer = SnapshotWriter(store)
    writer.offer(fields("a", 1), (1, 10))
    deadline = time.monotonic() + scaled(10 * LAG_S)
    while not store.state_file.exists() and time.monotonic() < deadline:
        time.sleep(LAG_S / 5)
    data = on_disk(store)
    assert (data["current_state"], data["events_segment"], data["events_offset"]) == ("a", 1, 10)
    writer.offer(fields("b", 2), (1, 20))
    writer.offer(fields("c", 3), (1, 30))  # only the newest is written
    writer.close()
    assert (on_disk(store)["current_state"], on_disk(store)["events_offset"]) == ("c", 30)


def test_an_older_snapshot_never_replaces_a_newer_one(tmp_path: Path) -> None:
    store = StatePersistence("fix", tmp_path)
    writer = SnapshotWriter(store, lag_s=3600)  # the thread never gets to it
    writer.offer(fields("old", 1), (1, 10))
    writer.write_now(fields("new", 2), (1, 20), durable=False)
    writer.close()  # the offered one is older than what is in the file: not written
    assert on_disk(store)["current_state"] == "new"


def test_close_writes_what_is_pending(tmp_path: Path) -> None:
    store = StatePersistence("fix", tmp_path)
    writer = SnapshotWriter(store, lag_s=3600)
    writer.offer(fields("a", 1), (1, 0))
    assert not store.state_file.exists()
    writer.close()
    assert on_disk(store)["current_state"] == "a"
