"""Per-action overhead of DefaultActionRunner against bare `subprocess.run(["bash", "-c", "true"])`.

Runs N actions of `true` each way, alternating, several rounds, and prints the median ratio.
Target: the runner costs at most 1.25x the bare call.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from little_loops.fsm.actions.runners import DefaultActionRunner


def bare(n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        subprocess.run(["bash", "-c", "true"], check=False)
    return time.perf_counter() - start


def runner(n: int) -> float:
    r = DefaultActionRunner()
    start = time.perf_counter()
    for _ in range(n):
        result = r.run("true", 60, False)
        if result.exit_code != 0:
            raise SystemExit(f"runner_overhead: `true` failed: {result}")
    elapsed = time.perf_counter() - start
    r.close()
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=500, help="actions per measurement (500)")
    parser.add_argument("--rounds", type=int, default=5, help="measurements each way (5)")
    args = parser.parse_args(argv)
    ratios = []
    for i in range(args.rounds):
        b, r = bare(args.n), runner(args.n)
        ratios.append(r / b)
        print(
            f"round {i + 1}: bare {b:.3f}s  runner {r:.3f}s  ratio {r / b:.3f}",
            file=sys.stderr,
        )
    ratio = statistics.median(ratios)
    print(f"runner_overhead: {args.n} x `true`, median ratio runner/bare = {ratio:.3f}")
    return 0 if ratio <= 1.25 else 1


if __name__ == "__main__":
    raise SystemExit(main())
