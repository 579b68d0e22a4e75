"""A `maintain` loop run for a million steps, then `status` and `history` of it.

The run is made by the code `ll-loop run` uses (PersistentExecutor: the events, their
changes, the snapshots, the rotation of the log), in a child process, with an action
runner that answers in-process instead of starting bash: a million bash calls would take
half an hour, and what is measured here is what a long run leaves on disk. Then the real
`ll-loop status`, `history --tail 5` and `history` run on it, timed and with their peak
RSS, next to the same commands after a 100-step run; and `ll-loop watch` drawn on it.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run import ENV, LL_LOOP, MIB, Row, ms, peak_rss, project, timed

LONG = """\
name: long
initial: check
maintain: true
max_iterations: {n}
states:
  check:
    action: "true"
    on_success: ok
    on_failure: ok
  ok:
    terminal: true
    on_maintain: check
"""

# Runs .loops/long.yaml to its end in this project with an instant action runner.
RUN_LONG = """\
from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.validate.loopfile import load_and_validate
from little_loops.fsm.persistence import PersistentExecutor

class Instant:
    def run(self, action, timeout, is_slash_command):
        return ActionResult("ok\\n", "", 0, 0)

fsm = load_and_validate(".loops/long.yaml")
result = PersistentExecutor(
    fsm, loops_dir=".loops", action_runner=Instant(), loop_path=".loops/long.yaml"
).run()
assert result.terminated_by == "max_iterations", result
"""

COMMANDS = {
    "status": ["status", "long"],
    "history --tail 5": ["history", "long", "--tail", "5"],
    "history": ["history", "long"],
}
TARGETS = {  # (seconds, MiB): the targets; `history` of all kept events: memory only
    "status": (0.2, 50),
    "history --tail 5": (0.2, 50),
    "history": (None, 100),
}


def make_run(root: Path, steps: int) -> float:
    """Run the long loop for *steps* steps in *root*; the seconds it took."""
    project(root, {"long": LONG.format(n=steps)})
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", RUN_LONG], cwd=root, env=ENV, check=True)
    return time.perf_counter() - start


def measure(root: Path, argv: list[str], rounds: int) -> tuple[float, int]:
    """Median seconds and peak RSS (KiB) of `ll-loop ARGV` in *root*."""
    seconds = statistics.median(timed([LL_LOOP, *argv], root) for _ in range(rounds))
    code, kib = peak_rss([LL_LOOP, *argv], root)
    if code != 0:
        raise SystemExit(f"bench: ll-loop {' '.join(argv)} exited {code}")
    return seconds, kib


def bench_long_run(steps: int, rounds: int = 3) -> list[Row]:
    """`status` and `history` after *steps* steps, against the same after 100 steps."""
    with tempfile.TemporaryDirectory(prefix="ll-bench-long-") as tmp:
        short, long = Path(tmp, "short"), Path(tmp, "long")
        make_run(short, 100)
        made = make_run(long, steps)
        running = long / ".loops" / ".running"
        log_bytes = sum(p.stat().st_size for p in running.glob("long.events*.jsonl"))
        rows = []
        for name, argv in COMMANDS.items():
            base_s, base_kib = measure(short, argv, rounds)
            took, kib = measure(long, argv, rounds)
            limit_s, limit_mib = TARGETS[name]
            met = kib <= limit_mib * 1024 and (limit_s is None or took < limit_s)
            target = f"< {limit_s} s, " if limit_s is not None else ""
            rows.append(
                Row(
                    f"after a {steps:,}-step maintain run: `ll-loop {name}`",
                    f"{ms(took)}, peak RSS {kib / 1024:.1f} MiB",
                    f"{ms(base_s)}, {base_kib / 1024:.1f} MiB (after 100 steps)",
                    "-",
                    f"{target}<= {limit_mib} MiB",
                    met,
                    {
                        "seconds": took,
                        "peak_rss_kib": kib,
                        "after_100_seconds": base_s,
                        "after_100_peak_rss_kib": base_kib,
                        "log_bytes_kept": log_bytes,
                        "log_mib_kept": round(log_bytes / MIB, 1),
                        "run_seconds": round(made, 1),
                    },
                )
            )
        rows.append(_watch_row(short, long, steps, rounds))
    return rows


WATCH_TARGET_SECONDS = 1.0


def _watch_row(short: Path, long: Path, steps: int, rounds: int) -> Row:
    """`ll-loop watch long` drawn after *steps* steps, against 100: from the view's start
    (the target) and from the process's (Python and Textual imported: the same for any run)."""
    from watch_open import open_seconds

    base = statistics.median(open_seconds(short, "long")[0] for _ in range(rounds))
    measured = [open_seconds(long, "long") for _ in range(rounds)]
    took, whole, reading = (statistics.median(m[i] for m in measured) for i in range(3))
    return Row(
        f"after a {steps:,}-step maintain run: `ll-loop watch long` drawn (80x24, headless)",
        f"{ms(took)}; {ms(whole)} with start-up; reading the run {ms(reading)}",
        f"{ms(base)} (after 100 steps)",
        "-",
        f"< {WATCH_TARGET_SECONDS:g} s",
        took < WATCH_TARGET_SECONDS,
        {
            "seconds": took,
            "with_startup_seconds": whole,
            "reading_seconds": reading,
            "after_100_seconds": base,
        },
    )
