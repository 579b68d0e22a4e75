"""The per-step cost of `sandbox: bwrap`: a shell step of `true` under bubblewrap, and without."""

from __future__ import annotations

import statistics
import subprocess
import sys

from run import ENV, Row

# The same n steps run in-process by the code `ll-loop run` uses, with the sandbox off and
# on, alternating: prints the seconds of each pair.
STEPS = """\
import sys, tempfile, time
from pathlib import Path
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.schema import FSMLoop, StateConfig
from little_loops.fsm.engine.config import ExecutorConfig
from little_loops.fsm.persistence import PersistentExecutor

n, rounds = int(sys.argv[1]), int(sys.argv[2])
root = Path(tempfile.mkdtemp(prefix="ll-bench-sandbox-"))


def steps(sandbox):
    work = StateConfig(action="true", on_success="$current", on_failure="$current")
    fsm = FSMLoop(name="spin", initial="w", states={"w": work}, max_iterations=n, sandbox=sandbox)
    config = ExecutorConfig(workdir=root, loops_dir=root / ".loops")
    start = time.perf_counter()
    runner = DefaultActionRunner(cwd=root)
    result = PersistentExecutor(
        fsm, loops_dir=root / ".loops", action_runner=runner, config=config
    ).run()
    assert result.iterations == n and result.terminated_by == "max_iterations", result
    return time.perf_counter() - start


for _ in range(rounds):
    print(steps(None), steps("bwrap"))
"""


def bench_sandbox(n: int = 200, rounds: int = 3) -> list[Row]:
    """n steps of `true` without and with `sandbox: bwrap`, alternating *rounds* times."""
    pairs = subprocess.run(
        [sys.executable, "-c", STEPS, str(n), str(rounds)],
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    times = [(float(a), float(b)) for a, b in (p.split() for p in pairs if p)]
    plain, confined = [t[0] for t in times], [t[1] for t in times]
    per_plain = statistics.median(plain) / n
    per_confined = statistics.median(confined) / n
    return [
        Row(
            f"sandbox: a shell step of `true` under `sandbox: bwrap` ({n} steps)",
            f"{per_confined * 1000:.2f} ms/step (+{(per_confined - per_plain) * 1000:.2f} ms)",
            f"{per_plain * 1000:.2f} ms/step (no sandbox)",
            f"{per_confined / per_plain:.2f}x",
            "(none)",
            None,
            {"plain_seconds": plain, "sandboxed_seconds": confined, "steps": n},
        )
    ]
