"""Start a run detached from the terminal, its output in `.running/NAME.log`, and watch it start."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from little_loops.fsm.facts.errors import LoopError
from little_loops.fsm.facts.layout import make_running_dir, run_files
from little_loops.fsm.facts.runfile import open_run_file, open_run_stream
from little_loops.fsm.facts.timefmt import iso_now
from little_loops.fsm.processes.containment import CONTAINMENT, Contained
from little_loops.fsm.processes.launch import Overlay
from little_loops.fsm.runs.locks import acquire_scope, project_root
from little_loops.fsm.runs.start_marker import launcher_env
from little_loops.fsm.runs.store import StatePersistence

START_WAIT_SECONDS = 2.0  # how long the parent watches the child start before reporting
SETTLE_SECONDS = 0.3  # after the child's state shows its pid, how long to watch it fail fast
_TAIL_LINES = 20

# Started children, kept referenced so a long-lived caller (a test) does not get a
# ResourceWarning for a child that is meant to outlive its handle.
_STARTED: list[Contained] = []


@dataclass(frozen=True)
class Started:
    """A detached run: its process, its log, and how it went while it was watched."""

    pid: int
    log: Path
    exit_code: int | None  # None: still running when the watch ended
    log_tail: list[str]  # the last lines it logged, when it failed while watched


def start_detached(
    argv: Sequence[str],
    loop_name: str,
    scope: Sequence[str],
    loops_dir: Path,
    *,
    queue: bool = False,
    wait: float = START_WAIT_SECONDS,
    command: str = "run",
    check_scope: bool = True,
    root: Path | None = None,
) -> Started:
    """Run `argv` (an `ll-loop COMMAND` of `loop_name`, a run key) in a new session, output
    to its log.

    Without `queue` the scope is checked first (unless not *check_scope*: a run in a worktree
    yet to be made), so an overlap is refused here (a ScopeConflictError) rather than in
    the log; its paths are relative to *root* (a worktree's), else to the project. The child
    is watched for up to `wait` seconds.
    """
    if not queue and check_scope:
        own = command == "resume"  # its fan-out's branches may still run
        acquire_scope(loop_name, scope, loops_dir, root=root, own_branches=own).release()
    log = run_files(loop_name, loops_dir).log
    make_running_dir(log.parent)
    with os.fdopen(open_run_file(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "ab") as out:
        out.write(f"--- ll-loop {command} {loop_name} --background at {iso_now()}\n".encode())
        out.flush()
        offset = out.tell()
        # Its own session, never ended here: it is meant to outlive this process.
        child = CONTAINMENT.start(
            argv,
            cwd=project_root(loops_dir),
            env=Overlay(launcher_env()),  # a stop that finds neither is this one's
            streams=(subprocess.DEVNULL, out.fileno(), subprocess.STDOUT),
        )
    _STARTED.append(child)
    code = _watch_start(child, StatePersistence(loop_name, loops_dir), wait)
    tail = _tail(log, offset) if code is not None and code != 0 else []
    return Started(pid=child.pid, log=log, exit_code=code, log_tail=tail)


def _watch_start(child: Contained, persistence: StatePersistence, wait: float) -> int | None:
    """The child's exit code if it ended while watched, else None once it has been under way
    (its state file shows its pid) for SETTLE_SECONDS, or `wait` is up (e.g. it is queued)."""
    proc = child.process
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        code = proc.poll()
        if code is not None:
            return code
        try:
            state = persistence.load_state()
        except LoopError:
            state = None  # being replaced right now, or an old corrupt one: keep watching
        if state is not None and state.pid == proc.pid:
            # Under way. A run that fails in its first moments is still worth reporting here.
            deadline = min(deadline, time.monotonic() + SETTLE_SECONDS)
            while proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            return proc.poll()
        time.sleep(0.05)
    return proc.poll()


def _tail(log: Path, offset: int) -> list[str]:
    try:
        with open_run_stream(log) as handle:
            handle.seek(offset)
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-_TAIL_LINES:]
