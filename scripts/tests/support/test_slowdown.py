"""The slowdown measurement is handed from the process that starts pytest-xdist workers to them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from support import slowdown
from support.paths import REPO

# A fresh process, as a worker starts: what it takes over, and what its environment keeps.
CHILD = """\
import json, os
from support import slowdown
slowdown.take_over()
before = slowdown.measured()
slowdown.refresh()
print(json.dumps([before, slowdown.measured(), slowdown.HANDED in os.environ]))
"""


def child(env: dict[str, str]) -> list[object]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD],
        env={**env, "PYTHONPATH": str(REPO / "scripts" / "tests")},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result: list[object] = json.loads(out)
    return result


def test_a_worker_starts_from_the_measurement_handed_to_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(slowdown.ENV, raising=False)
    monkeypatch.setattr(slowdown, "_measured", [3.25])
    monkeypatch.setattr(slowdown, "_measured_at", time.monotonic())
    slowdown.hand_over()
    handed = os.environ.pop(slowdown.HANDED)
    env = {k: v for k, v in os.environ.items() if k != slowdown.ENV}
    # Fresh: taken over, not measured again, and gone from the environment.
    assert child({**env, slowdown.HANDED: handed}) == [[3.25], [3.25], False]
    # Too old to count (refresh measures again), or nothing handed: measured.
    old = f"3.25 {time.monotonic() - slowdown.MAX_AGE_S - 1}"
    before, after, kept = child({**env, slowdown.HANDED: old})
    assert before == [3.25]
    assert isinstance(after, list)
    assert len(after) == 2
    assert not kept
    before, after, _ = child({**env, slowdown.HANDED: "not a number"})
    assert before == []
    assert isinstance(after, list)
    assert len(after) == 1
