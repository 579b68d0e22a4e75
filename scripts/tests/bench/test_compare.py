"""`scripts/dev bench --compare REV` (scripts/bench/compare.py) runs at a small size: both
sides go through every bench in alternating rounds and come out as one table."""

from __future__ import annotations

import importlib
import subprocess
import sys
from typing import Any

import pytest
from support.paths import REPO

BENCH = REPO / "scripts" / "bench"


@pytest.fixture
def compare(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(BENCH))
    for name in ("compare", "graphs", "long_run", "run"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return importlib.import_module("compare")


def worktrees() -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(REPO), "worktree", "list", "--porcelain"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line for line in out.splitlines() if line.startswith("worktree ")]


def test_both_sides_run_every_bench_in_each_round_and_make_one_table(compare: Any) -> None:
    before = worktrees()
    sizes = compare.Sizes(steps=10, captures=20, ring=50, long_steps=30, output_bytes=100_000)
    result = compare.compare("HEAD", 2, sizes)
    assert worktrees() == before  # the checkout of HEAD is gone again
    labels = [bench.label for bench in compare.benches(sizes)]
    assert list(result["figures"]) == labels
    for label in labels:
        for side in ("HEAD", "working tree"):
            figures = result["figures"][label][side]
            assert len(figures) == 2, (label, side)
            assert all(wall > 0 or label.startswith("per-step") for wall, _ in figures)
    text, _ = compare.table(result)
    rows = text.splitlines()
    assert rows[0].startswith("| benchmark (median of 2 rounds) | HEAD | working tree |")
    assert [row.split(" | ")[0].removeprefix("| ") for row in rows[2:]] == labels


def test_a_revision_git_does_not_know_is_one_line(compare: Any) -> None:
    with pytest.raises(SystemExit, match=r"^bench: cannot check out 'no-such-rev-xyz': "):
        compare.compare("no-such-rev-xyz", 1)
