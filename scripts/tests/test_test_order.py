"""The suite's order: the longest tests (reliability, then end-to-end) first, so that none is
left to run alone at the end of a run spread over workers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_reliability_then_end_to_end_tests_come_first() -> None:
    modules = [
        "scripts/tests/cli/test_init.py",
        "scripts/tests/e2e/test_budget_e2e.py",
        "scripts/tests/reliability/test_reliability_kill_replay.py",
        "scripts/tests/support/test_forkserver.py",
    ]
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        + modules,
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    order = [m for line in listed if "::" in line for m in modules if line.startswith(m)]
    runs = [m for i, m in enumerate(order) if i == 0 or order[i - 1] != m]
    assert runs == [modules[2], modules[1], modules[0], modules[3]], runs
