"""The pull-request rule keeps the current `pr:` state's pull request across a resume, and
reads a damaged record as none (the state pushes and looks again, which is harmless)."""

from __future__ import annotations

import pytest

from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.engine.rules.pulls import PullRecord, PullRequests


def test_the_record_is_dumped_and_restored() -> None:
    rule = PullRequests()
    rule.record = PullRecord(
        "open", 3, "https://x/pull/3", "a" * 40, looks=2, waited_s=1.5, green=["lint", "test"]
    )
    snap = ExecutorSnapshot(current_state="open", iteration=1, **rule.dump())
    again = PullRequests()
    again.restore(snap)
    assert again.of("open") == rule.record
    assert again.of("other") is None
    again.left()
    assert again.dump() == {"pr": None}


@pytest.mark.parametrize(
    "saved",
    [
        None,
        "open",
        {"state": "open"},
        {"state": "open", "number": "x", "url": "u", "head": "h"},
        {"state": "open", "number": 0, "url": "u", "head": "h"},
        {"state": "open", "number": 1, "url": "u", "head": "h", "waited_s": -1},
        {"state": "open", "number": 1e400, "url": "u", "head": "h"},
        {"state": "open", "number": 1, "url": "u", "head": "h", "green": 5},
    ],
)
def test_a_damaged_record_is_none(saved: object) -> None:
    assert PullRecord.from_dict(saved) is None
