"""`ll-loop report` of a 10,000-step run: as text, as JSON and as an HTML page (target < 1 s)."""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from long_run import make_run
from run import LL_LOOP, Row, ms, peak_rss, timed

STEPS = 10_000
TARGET_S = 1.0
FORMS = {
    "report": ["report", "long"],
    "report --json": ["report", "long", "--json"],
    "report --html": ["report", "long", "--html", "report.html"],
}


def bench_report(rounds: int = 3) -> list[Row]:
    """Each form of `ll-loop report` of a STEPS-step run, against the same after 100 steps."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="ll-bench-report-") as tmp:
        short, long = Path(tmp, "short"), Path(tmp, "long")
        make_run(short, 100)
        make_run(long, STEPS)
        for name, argv in FORMS.items():
            base = statistics.median(timed([LL_LOOP, *argv], short) for _ in range(rounds))
            took = statistics.median(timed([LL_LOOP, *argv], long) for _ in range(rounds))
            _, kib = peak_rss([LL_LOOP, *argv], long)
            rows.append(
                Row(
                    f"`ll-loop {name}` of a {STEPS:,}-step run",
                    f"{ms(took)}, peak RSS {kib / 1024:.1f} MiB",
                    f"{ms(base)} (after 100 steps)",
                    "-",
                    f"< {TARGET_S:g} s",
                    took < TARGET_S,
                    {"seconds": took, "after_100_seconds": base, "peak_rss_kib": kib},
                )
            )
    return rows
