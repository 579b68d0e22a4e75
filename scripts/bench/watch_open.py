"""How long `ll-loop watch NAME` takes to show a run: the list and the run's screen drawn,
headless at 80x24 (Textual's test harness), in a fresh process: from the view's start (its
modules imported) and from the process's start (Python and Textual's imports included)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from run import ENV

# Prints the seconds from the view's start until the run's screen is drawn, the same from
# the process's start, and the seconds of reading the run (the list's rows and the run's
# screen) alone.
OPEN = """\
import time
began = time.perf_counter()
import asyncio, sys
from pathlib import Path
from little_loops.cli.watch.app import WatchApp
from little_loops.cli.watch.board import board_rows
from little_loops.cli.watch.detail import load_view
imported = time.perf_counter()

name, loops = sys.argv[1], Path(".loops").resolve()

async def main() -> None:
    app = WatchApp(loops, name)
    async with app.run_test(size=(80, 24)) as pilot:
        while True:
            text = "\\n".join(s.text for s in app.screen._compositor.render_strips())
            if "recent steps" in text:
                return
            await pilot.pause(0.005)

asyncio.run(main())
now = time.perf_counter()
start = time.perf_counter()
board_rows(loops)
load_view(name, loops)
print(now - imported, now - began, time.perf_counter() - start)
"""


def open_seconds(root: Path, name: str) -> tuple[float, float, float]:
    """Seconds until NAME's screen is drawn from the view's start and from the process's,
    and seconds of reading the run, in *root*."""
    out = subprocess.run(
        [sys.executable, "-c", OPEN, name], cwd=root, env=ENV, check=True,
        capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    return float(out[0]), float(out[1]), float(out[2])
