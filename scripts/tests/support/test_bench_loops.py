"""The bench's loops, as the tests read them."""

from __future__ import annotations

import yaml

from support.bench_loops import HELLO, SPIN


def test_the_bench_loops_are_read_whole_from_the_bench() -> None:
    hello = yaml.safe_load(HELLO)
    assert hello["name"] == "hello"
    actions = [s["action"] for s in hello["states"].values() if "action" in s]
    assert len(actions) == 2
    assert all("${context." in action for action in actions)
    spin = yaml.safe_load(SPIN.format(n=7))
    assert (spin["name"], spin["max_iterations"]) == ("spin", 7)
