"""The loops `scripts/dev bench` measures, read from scripts/bench/run.py (written there once),
for the tests that hold what those benchmarks measure without timing it."""

from __future__ import annotations

import ast
import importlib
import sys
from types import ModuleType

import pytest

from support.paths import REPO

BENCH = REPO / "scripts" / "bench"


def _bench_constant(name: str) -> str:
    """The string constant *name* of scripts/bench/run.py, read without running that module."""
    tree = ast.parse((BENCH / "run.py").read_text())
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


def bench_module(monkeypatch: pytest.MonkeyPatch, name: str) -> ModuleType:
    """scripts/bench/NAME.py, imported fresh as the bench imports it (its folder on the path,
    its sibling `run` its own), for this test only."""
    monkeypatch.syspath_prepend(str(BENCH))
    for module in (name, "run"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    return importlib.import_module(name)
