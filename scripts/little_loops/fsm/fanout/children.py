"""A branch's child process: started in its own session, read from its files, ended whole."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from little_loops.fsm.facts.layout import PARENT_ENV as PARENT_ENV
from little_loops.fsm.facts.layout import PARENT_MARKER_ENV, RUN_MARKER_ENV, run_files
from little_loops.fsm.processes.containment import CONTAINMENT, Contained
from little_loops.fsm.processes.pids import pid_alive
from little_loops.fsm.processes.proctree import live_processes, tree_of

STOP_GRACE = 10.0  # seconds a child has, after SIGTERM, to end its action and save its state


@dataclass
class Child:
    """One child `ll-loop` process: ours (*contained* set) or one a resume found alive."""

    pid: int
    contained: Contained | None = None

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """Our process of it, when we started it."""
        return None if self.contained is None else self.contained.process

    def poll(self) -> int | None:
        """Its exit code once it has ended (-1: ended, code unknown: not our child), else None."""
        if self.contained is not None:
            return self.contained.process.poll()
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
        # No sweep: its siblings, started while it runs, are no orphans of its.
        contained = CONTAINMENT.start(
            argv, cwd=cwd, env=env, streams=(subprocess.DEVNULL, fd, fd), sweep=False
        )
    finally:
        os.close(fd)
    return Child(contained.pid, contained)


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
    if child.contained is not None:
        child.contained.end_leader_first(grace)
        return
    # A child a resume found alive: not ours to wait for; its recorded tree is ended.
    below = tree_of({child.pid}, live_processes(), child.pid)
    CONTAINMENT.end_recorded([child.pid, *below], grace)
