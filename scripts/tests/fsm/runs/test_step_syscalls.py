"""What a step of a run asks of the file system, read by strace: it opens its action's own
output files and appends to the event log; it looks up no other path."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from support.bench_loops import SPIN
from support.slowdown import scaled

from little_loops.fsm.runs.eventlog import RECHECK_S

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")

# Every call that names a path (the run's own process, not the actions it starts).
PATH_CALLS = (
    "open,openat,openat2,creat,stat,lstat,newfstatat,statx,access,faccessat,faccessat2,"
    "readlink,readlinkat,unlink,unlinkat,rename,renameat,renameat2,mkdir,mkdirat,"
    "chdir,truncate,utimensat"
)
_NUMBERS = re.compile(r"@[a-z0-9]+|[0-9a-f]{8}|\d+")  # a run id, pid, time, temp name
_CALL = re.compile(r'^(?P<call>\w+)\((?:AT_FDCWD|-?\d+)?,? ?"(?P<path>[^"]*)"')


def traced(tmp_path: Path, steps: int) -> tuple[Counter[tuple[str, str]], float]:
    """The path calls of `ll-loop run spin` (*steps* steps of `true`, in a project of its
    own) by (call, path: numbers and the pid's time stamps as `N`), and its seconds. A call
    on a descriptor (`fstat`: an empty path) is not a path's."""
    root = tmp_path / f"spin-{steps}"
    (root / ".loops").mkdir(parents=True)
    (root / ".loops/spin.yaml").write_text(SPIN.format(n=steps))
    trace = tmp_path / f"trace-{steps}"
    argv = ["strace", "-qq", "-o", str(trace), "-e", f"trace={PATH_CALLS}"]
    argv += [sys.executable, "-m", "little_loops.cli", "run", "spin", "--quiet"]
    began = time.monotonic()
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=scaled(120))
    seconds = time.monotonic() - began
    assert done.returncode == 3, done.stderr  # max_iterations: exactly *steps* actions ran
    calls: Counter[tuple[str, str]] = Counter()
    for line in trace.read_text().splitlines():
        found = _CALL.match(line)
        if found and found["path"]:
            path = _NUMBERS.sub("N", found["path"].removeprefix(f"{root}/"))
            calls[(found["call"], path)] += 1
    return calls, seconds


def test_a_step_opens_its_action_s_output_files_and_looks_up_no_other_path(
    tmp_path: Path,
) -> None:
    """Each of 40 more steps opens the action's `.out` and `.err` once (O_NOFOLLOW, the
    action's own) and nothing else: no module, no state file, no folder looked up again.
    The event log's identity is checked by a stat at most every RECHECK_S (time, not steps).
    """
    few, _ = traced(tmp_path, 10)
    many, seconds = traced(tmp_path, 50)
    outputs = {".loops/.running/spin.work.out", ".loops/.running/spin.work.err"}
    for path in outputs:  # one open a step (the first step's may make the folder first)
        assert many[("openat", path)] - few[("openat", path)] == 40, (few, many)
    grown = {
        key: many[key] - few.get(key, 0)
        for key in many
        if many[key] > few.get(key, 0) and key[1] not in outputs
    }
    events = ("newfstatat", ".loops/.running/spin.events.jsonl")
    allowed = int(seconds / RECHECK_S) + 1
    assert grown.get(events, 0) <= allowed, grown
    grown.pop(events, None)
    assert grown == {}, f"paths looked up again as the run went on: {grown}"
