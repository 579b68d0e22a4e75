"""Per-action overhead of DefaultActionRunner against bare `subprocess.run(["bash", "-c", "true"])`.

Runs N actions of `true` each way, alternating, several rounds, as `ll-loop run` does: with
a working directory and the output streamed to a file. Prints the median wall time and the
median CPU time of this process (not of bash) per action, each way: the CPU time is the
runner's own bookkeeping, the part a busy machine blurs least.
Target: the runner costs at most 1.25x the bare call.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from little_loops.fsm.actions.request import ActionRequest
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.processes.descendants import adopt_orphans


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(n: int, action: Callable[[], None]) -> tuple[float, float]:
    """Wall and CPU seconds of this process for *n* calls of *action*."""
    wall, used = time.perf_counter(), cpu()
    for _ in range(n):
        action()
    return time.perf_counter() - wall, cpu() - used


def bare() -> None:
    subprocess.run(["bash", "-c", "true"], check=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("-n", type=int, default=500, help="actions per measurement (500)")
    parser.add_argument("--rounds", type=int, default=5, help="measurements each way (5)")
    args = parser.parse_args(argv)
    adopt_orphans()  # as `ll-loop run` does: each action then pays for the sweep of strays
    with tempfile.TemporaryDirectory(prefix="ll-bench-runner-") as tmp:
        root = Path(tmp)
        request = ActionRequest("true", 60, "shell", output_file=root / ".running/spin.work.out")
        with DefaultActionRunner(cwd=root) as runner:

            def action() -> None:
                result = runner.execute(request)
                if result.exit_code != 0:
                    raise SystemExit(f"runner_overhead: `true` failed: {result}")

            sides: dict[str, list[tuple[float, float]]] = {"bare": [], "runner": []}
            for i in range(args.rounds):
                b, r = timed(args.n, bare), timed(args.n, action)
                sides["bare"].append(b)
                sides["runner"].append(r)
                print(
                    f"round {i + 1}: bare {b[0]:.3f}s  runner {r[0]:.3f}s  ratio {r[0] / b[0]:.3f}",
                    file=sys.stderr,
                )
    per = {
        side: tuple(statistics.median(t[k] for t in times) / args.n * 1000 for k in (0, 1))
        for side, times in sides.items()
    }
    pairs = zip(sides["bare"], sides["runner"], strict=True)
    ratio = statistics.median(r[0] / b[0] for b, r in pairs)
    for side, (wall, used) in per.items():
        print(f"{side:>6}: {wall:.3f} ms per action, {used:.3f} ms CPU of this process")
    print(f"runner_overhead: {args.n} x `true`, median ratio runner/bare = {ratio:.3f}")
    return 0 if ratio <= 1.25 else 1


if __name__ == "__main__":
    raise SystemExit(main())
