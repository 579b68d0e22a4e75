"""A branch's child process: started in its own session, read from its files, ended whole."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from little_loops.fsm.facts.layout import PARENT_MARKER_ENV, RUN_MARKER_ENV, run_files
from little_loops.fsm.processes.pids import pid_alive
from little_loops.fsm.processes.proctree import live_processes, tree_of

STOP_GRACE = 10.0  # seconds a child has, after SIGTERM, to end its action and save its state
# Tells a child the pid of the fan-out that started it: it runs under that run's scope lock
# (runs/locks.py lets it in only when that pid is its parent process and holds a claim).
PARENT_ENV = "LL_LOOP_FANOUT_PARENT"


@dataclass
class Child:
    """One child `ll-loop` process: ours (*process* set) or one a resume found alive."""

    pid: int
    process: subprocess.Popen[bytes] | None = None

    def poll(self) -> int | None:
        """Its exit code once it has ended (-1: ended, code unknown: not our child), else None."""
        if self.process is not None:
            return self.process.poll()
        return None if pid_alive(self.pid) else -1


def start(argv: list[str], cwd: Path, log: Path) -> Child:
    """Start *argv* in *cwd* in a session of its own (a Ctrl-C at the terminal reaches the
    parent, which ends it), its output appended to *log*, told it runs under our scope lock.
    It is a run of its own, not an action of the parent's: it carries the parent's run
    marker as its parent's, so a resume of a parent killed meanwhile waits for it, and a
    stop of that dead parent ends it."""
    env = {k: v for k, v in os.environ.items() if k != RUN_MARKER_ENV}
    if RUN_MARKER_ENV in os.environ:
        env[PARENT_MARKER_ENV] = os.environ[RUN_MARKER_ENV]
    env[PARENT_ENV] = str(os.getpid())
    log.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    try:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            start_new_session=True,
            env=env,
        )
    finally:
        os.close(fd)
    return Child(process.pid, process)


def find_running(commands: list[list[str]]) -> int | None:
    """The live process whose command line is one of *commands* (a child a crashed parent
    started, before it wrote anything of its own), or None."""
    wanted = {"\0".join(argv) for argv in commands}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            line = (entry / "cmdline").read_bytes().decode("utf-8", "surrogateescape")
        except OSError:
            continue
        if line.rstrip("\0") in wanted and pid_alive(int(entry.name)):
            return int(entry.name)
    return None


def saved(loops_dir: Path, key: str) -> dict[str, Any]:
    """The child run's state file as data ({} when it has none yet, or it cannot be read)."""
    try:
        data = json.loads(run_files(key, loops_dir).state.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def spent_by(state: dict[str, Any]) -> float:
    """What the child run has spent so far, by its state file."""
    cost = state.get("cost_usd")
    return float(cost) if isinstance(cost, int | float) and cost >= 0 else 0.0


def stop(child: Child, grace: float = STOP_GRACE) -> None:
    """End *child* and its whole process tree: SIGTERM (it stops its action and saves its
    state), then after *grace* seconds SIGKILL to every process still below it."""
    below = set(tree_of({child.pid}, live_processes(), child.pid))
    with contextlib.suppress(OSError):
        os.killpg(child.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    below |= set(tree_of({child.pid}, live_processes(), child.pid))
    for pid in sorted(below):
        if pid_alive(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.killpg(child.pid, signal.SIGKILL)
    if child.process is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.process.wait(timeout=grace)
