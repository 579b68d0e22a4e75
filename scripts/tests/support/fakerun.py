"""A process holding a run's event log as ll-loop's writer does: a live run for tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from little_loops.fsm.facts.layout import run_files

_HOLD = """\
import fcntl, os, signal, subprocess, sys, time
events, ignore_term, child = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
os.makedirs(os.path.dirname(events), exist_ok=True)
fd = os.open(events, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_SH)
if ignore_term:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if child:
    subprocess.Popen(child, start_new_session=True)
print("ready", flush=True)
time.sleep(60)
"""


def fake_run(
    loops_dir: Path, loop: str, *, ignore_term: bool = False, child: list[str] | None = None
) -> subprocess.Popen[str]:
    """Start a process holding *loop*'s event log under *loops_dir*; returns once it does.

    With *ignore_term* it ignores SIGTERM; *child* is started in a session of its own, as
    an action is."""
    events = run_files(loop, loops_dir).events
    argv = [sys.executable, "-c", _HOLD, str(events), "1" if ignore_term else "0", *(child or [])]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    return proc
