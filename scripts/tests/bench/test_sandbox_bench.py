"""The sandbox row of `scripts/dev bench` (scripts/bench/sandbox.py) at a small size: it runs
the same steps without and with bubblewrap and gives both per-step costs."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import pytest
from support.paths import REPO
from support.programs import needs_bwrap

pytestmark = needs_bwrap


@pytest.fixture
def sandbox(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(REPO / "scripts" / "bench"))
    for name in ("sandbox", "run"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return importlib.import_module("sandbox")


def test_the_sandbox_benchmark_runs(sandbox: Any) -> None:
    (row,) = sandbox.bench_sandbox(3, 1)
    assert row.details["steps"] == 3
    assert len(row.details["plain_seconds"]) == len(row.details["sandboxed_seconds"]) == 1
    assert "ms/step (+" in row.measured
    assert "ms/step (no sandbox)" in row.baseline
