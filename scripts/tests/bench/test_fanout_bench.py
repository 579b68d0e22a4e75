"""The fan-out row of `scripts/dev bench` (scripts/bench/fanout.py) at a small size: a map of
`true` children, all at once and one at a time, against sequential sub-loop runs."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import pytest
from support.paths import REPO


@pytest.fixture
def fanout(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(REPO / "scripts" / "bench"))
    for name in ("fanout", "run"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return importlib.import_module("fanout")


def test_the_fan_out_benchmark_runs_every_branch_and_gives_the_overhead(fanout: Any) -> None:
    all_at_once, one_at_a_time = fanout.bench_fanout(3, 1)
    assert all_at_once.details["items"] == 3
    runs = ("fan", "fan1", "seq", "runs", "worktrees")
    assert [len(all_at_once.details[f"{k}_seconds"]) for k in runs] == [1] * 5
    assert "ms/branch" in all_at_once.measured
    assert "KiB/branch" in all_at_once.measured
    assert "3 sequential sub-loop runs" in all_at_once.baseline
    assert "ms/branch: a process " in one_at_a_time.measured
    assert len(one_at_a_time.details["process_worktree_fanout_ms"]) == 3
    assert isinstance(one_at_a_time.details["overhead_seconds_per_branch"], float)
