"""The bench's per-step row (scripts/bench/run.py STEPS_IN_PROCESS) counts steps only: a
warm-up run pays for the imports a step's first use makes, and each round takes the median
of several runs, a run of N steps less a run of 1 (the run's start and end)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from typing import Any

import pytest
from support.paths import REPO

BENCH = REPO / "scripts" / "bench"

# Runs STEPS_IN_PROCESS (argv[1]) with argv[2:], counting the executor's runs and, for each
# module imported once the script has begun, which run was going on (0: before any).
WRAPPER = """\
import sys
from little_loops.fsm.persistence import PersistentExecutor
script, sys.argv = sys.argv[1], ["-c", *sys.argv[2:]]
started = [0]
imports = []
def hook(event, args):
    if event == "import" and args[0] not in sys.modules:
        imports.append((started[0], args[0]))
run = PersistentExecutor.run
def counted(self, *a, **k):
    started[0] += 1
    return run(self, *a, **k)
PersistentExecutor.run = counted
sys.addaudithook(hook)
exec(compile(script, "steps", "exec"), {"__name__": "__main__"})
print("runs", started[0], "imports", *sorted({run for run, _ in imports}), file=sys.stderr)
"""


@pytest.fixture
def bench_run(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.delitem(sys.modules, "run", raising=False)
    return importlib.import_module("run")


def test_the_counted_steps_import_nothing_and_each_round_is_a_median_of_runs(
    bench_run: Any,
) -> None:
    n, rounds, runs = 6, 2, 3
    proc = subprocess.run(
        [sys.executable, "-c", WRAPPER, bench_run.STEPS_IN_PROCESS, str(n), str(rounds), str(runs)],
        env=bench_run.ENV,
        capture_output=True,
        text=True,
        check=True,
    )
    counts = proc.stderr.split()
    assert counts[:2] == ["runs", str(2 + rounds * runs * 2)]  # a warm-up of 2, then 2 per run
    imported_in = [int(run) for run in counts[3:]]
    assert imported_in, counts  # the hook sees the imports
    assert max(imported_in) <= 2, counts  # only the warm-up (runs 1 and 2) imports
    lines = proc.stdout.splitlines()
    assert len(lines) == rounds
    for line in lines:
        steps, *seconds, imported = line.split()
        assert (int(steps), imported) == (n - 1, "0")
        assert all(float(s) > 0 for s in seconds)


def test_the_row_reads_each_round_as_milliseconds_per_step(bench_run: Any) -> None:
    figures = bench_run.steps_in_process(4, 2, 2, bench_run.ENV)
    assert len(figures) == 2
    assert all(isinstance(wall, float) and isinstance(cpu, float) for wall, cpu in figures)
