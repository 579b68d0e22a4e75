"""The loops `scripts/dev bench` measures, read from scripts/bench/run.py (written there once),
for the tests that hold what those benchmarks measure without timing it."""

from __future__ import annotations

import ast

from support.paths import REPO


def _bench_constant(name: str) -> str:
    """The string constant *name* of scripts/bench/run.py, read without running that module."""
    tree = ast.parse((REPO / "scripts" / "bench" / "run.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
            name
        ]:
            value = ast.literal_eval(node.value)
            assert isinstance(value, str)
            return value
    raise LookupError(f"scripts/bench/run.py has no constant {name}")


# Two shell states, each action with a reference, and a terminal: what validate is timed on.
HELLO = _bench_constant("HELLO")
# One state running `true` until max_iterations ({n}): what the per-step benches run.
SPIN = _bench_constant("SPIN")
