"""`ll-loop watch` with hundreds and thousands of runs (ended ones, and one live): how long a
refresh of the list reads, and the longest the view's screen thread is kept from keys and
drawing, headless at 100x30 (Textual's test harness) in a fresh process."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from run import ENV, LL_LOOP, Row, ms

ENDED = "name: x\ninitial: done\nstates:\n  done:\n    terminal: true\n"
LIVE = """\
    name: live
    initial: wait
    states:
      wait:
        action: sleep 600
        next: done
      done:
        terminal: true
"""
WATCH_SECONDS = 8.0  # how long the view is watched, the live run's clock moving on
TARGET_BLOCKED_SECONDS = 0.25

# Prints: seconds until every run is listed, the longest gap between two 10 ms ticks of the
# screen's loop while watched (its thread kept from keys and drawing), and the seconds of a
# refresh with the live run's clock moved on (the runs read as the view reads them then).
PROBE = """\
import asyncio, sys, time
from pathlib import Path
from little_loops.cli.watch import board
from little_loops.cli.watch.app import BoardScreen, WatchApp

count, watched, loops = int(sys.argv[1]), float(sys.argv[2]), Path(".loops").resolve()

async def main() -> tuple[float, float]:
    app = WatchApp(loops)
    async with app.run_test(size=(100, 30)) as pilot:
        began = last = time.perf_counter()
        listed, longest = None, 0.0
        while time.perf_counter() - began < watched or listed is None:
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            longest, last = max(longest, now - last - 0.01), now
            screen = next(s for s in app.screen_stack if isinstance(s, BoardScreen))
            if listed is None and len(screen.rows) >= count:
                listed = now - began
        return listed, longest

listed, longest = asyncio.run(main())
reader = board.BoardReader(loops) if hasattr(board, "BoardReader") else None
read = (lambda: reader.rows()) if reader else (lambda: board.board_rows(loops))
read()
start = time.perf_counter()
read()  # the clock moved on: what a refresh reads
print(listed, longest, time.perf_counter() - start)
"""


def many_runs(root: Path, count: int) -> None:
    """A project of *count* ended runs (copies of a real one) and one live run."""
    loops = root / ".loops"
    loops.mkdir()
    (loops / "x.yaml").write_text(ENDED)
    (loops / "live.yaml").write_text(textwrap.dedent(LIVE))
    subprocess.run([LL_LOOP, "run", "x"], cwd=root, env=ENV, check=True, capture_output=True)
    running = loops / ".running"
    saved = json.loads((running / "x.state.json").read_text())
    for number in range(count - 1):
        key = f"r{number}"
        (running / f"{key}.state.json").write_text(json.dumps({**saved, "loop_name": key}))
        shutil.copyfile(running / "x.events.jsonl", running / f"{key}.events.jsonl")
    subprocess.run(
        [LL_LOOP, "run", "live", "--background"], cwd=root, env=ENV, check=True,
        capture_output=True,
    )  # fmt: skip


def watch_many(root: Path, count: int) -> tuple[float, float, float]:
    """(seconds until listed, longest screen-thread block, seconds of a clock refresh)."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(count + 1), str(WATCH_SECONDS)], cwd=root, env=ENV,
        check=True, capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    return float(out[0]), float(out[1]), float(out[2])


def measured(count: int) -> tuple[float, float, float]:
    """`watch_many` in a project of *count* runs made for it."""
    with tempfile.TemporaryDirectory(prefix="ll-bench-watch-") as tmp:
        root = Path(tmp)
        many_runs(root, count)
        try:
            return watch_many(root, count)
        finally:
            subprocess.run([LL_LOOP, "stop", "live"], cwd=root, env=ENV, capture_output=True)


def bench_watch_many(counts: tuple[int, ...]) -> list[Row]:
    """A row per count; the baseline: the same with the live run alone (what the machine's
    load alone keeps the screen from)."""
    _, alone, _ = measured(1)
    rows = []
    for count in counts:
        listed, blocked, refresh = measured(count)
        rows.append(
            Row(
                f"`ll-loop watch` over {count:,} runs, one live ({WATCH_SECONDS:g} s watched)",
                f"screen blocked at most {ms(blocked)}; a refresh reads {ms(refresh)};"
                f" all listed after {ms(listed)}",
                f"{ms(alone)} (the live run alone)",
                "-",
                f"blocked < {ms(TARGET_BLOCKED_SECONDS)} over the baseline",
                blocked - alone < TARGET_BLOCKED_SECONDS,
                {
                    "blocked_seconds": blocked,
                    "alone_blocked_seconds": alone,
                    "refresh_seconds": refresh,
                    "listed_seconds": listed,
                },
            )
        )
    return rows
