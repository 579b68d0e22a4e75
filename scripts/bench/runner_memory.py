"""Peak memory of DefaultActionRunner while an action prints 1 GB on stdout.

The action runs through the runner in a child Python process; the child reports its own
peak RSS (ru_maxrss) before and after, and this script reports the children's peak as the
kernel saw it (RUSAGE_CHILDREN). Run once writing the full output to a file, once discarding it.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from little_loops.fsm.actions.request import ActionRequest
from little_loops.fsm.actions.runners import DefaultActionRunner

size, keep, out_dir = int(sys.argv[1]), sys.argv[2] == "keep", Path(sys.argv[3])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
action = f"head -c {size} /dev/zero | tr '\\0' x"
out_file = out_dir / "big.out"
with DefaultActionRunner(cwd=out_dir, keep_output=keep) as runner:
    started = time.monotonic()
    result = runner.execute(ActionRequest(action, 600, False, output_file=out_file))
    seconds = time.monotonic() - started
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({
    "exit_code": result.exit_code,
    "seconds": round(seconds, 2),
    "tail_chars": len(result.output),
    "truncated": result.truncated,
    "file_bytes": out_file.stat().st_size if result.output_path else None,
    "rss_before_kib": before,
    "rss_peak_kib": after,
}))
"""


def measure(size: int, keep: bool) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="ll-runner-memory-") as out_dir:
        mode = "keep" if keep else "discard"
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(size), mode, out_dir],
            capture_output=True,
            text=True,
            check=True,
        )
    report: dict[str, object] = json.loads(proc.stdout)
    report["mode"] = mode
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bytes", type=int, default=1_000_000_000, help="output size (1 GB)")
    args = parser.parse_args(argv)
    failed = False
    for keep in (True, False):
        report = measure(args.bytes, keep)
        kernel_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        peak = report["rss_peak_kib"]
        before = report["rss_before_kib"]
        assert isinstance(peak, int)
        assert isinstance(before, int)
        print(
            f"runner_memory [{report['mode']}]: {args.bytes:,} bytes in {report['seconds']}s, "
            f"exit {report['exit_code']}, peak RSS {peak / 1024:.1f} MiB "
            f"(+{(peak - before) / 1024:.1f} MiB over the idle interpreter; "
            f"RUSAGE_CHILDREN so far {kernel_peak / 1024:.1f} MiB), "
            f"tail {report['tail_chars']:,} chars, truncated={report['truncated']}, "
            f"file {report['file_bytes']}"
        )
        failed |= report["exit_code"] != 0 or (peak - before) > 64 * 1024
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
