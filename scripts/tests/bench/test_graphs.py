"""The validation-size benchmark (scripts/bench/graphs.py) runs at a small size: every case
validates with the exit code it expects, so `scripts/dev bench` does not stop half-way."""

from __future__ import annotations

from typing import Any

import pytest
from support.bench_loops import bench_module


@pytest.fixture
def graphs(monkeypatch: pytest.MonkeyPatch) -> Any:
    return bench_module(monkeypatch, "graphs")


def test_every_case_validates_with_the_exit_code_it_expects(graphs: Any) -> None:
    # bench_graphs runs the real `ll-loop validate` per case and raises on another exit code.
    rows = graphs.bench_graphs(states=40, captures=20)
    assert [row.details["exit"] for row in rows] == [0, 0, 0, 0, 0, 0, 2]
    assert [r.target for r in rows if r.benchmark == "validate size: 20 captures"] == ["< 0.4 s"]
