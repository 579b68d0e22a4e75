"""The reuse benchmark (scripts/bench/reuse.py) at a small size: its loops validate, and
each plain form is what its reuse form resolves to."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest
from support.paths import REPO

from little_loops.fsm.definition.reading.loopdoc import load_loop

BENCH = REPO / "scripts" / "bench"


@pytest.fixture
def reuse(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(BENCH))
    for name in ("reuse", "run"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return importlib.import_module("reuse")


def test_the_plain_forms_are_the_resolved_loops(reuse: Any, tmp_path: Path) -> None:
    reused, plain = reuse.write_pairs(tmp_path, 2)
    for r, p in zip(reused, plain, strict=True):
        resolved = load_loop(tmp_path / r).data
        resolved["name"] = resolved["name"].replace("reuse", "plain")
        assert load_loop(tmp_path / p).data == resolved


def test_the_benchmark_runs(reuse: Any) -> None:
    rows = reuse.bench_reuse(rounds=1, count=3)
    assert [row.target for row in rows] == ["<= 1.3x", "(none)"]
