"""`ll-loop run NAME --background`: start the run detached, its output in `.running/NAME.log`."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from little_loops.cli.options import RunOptions
from little_loops.fsm.errors import LoopError
from little_loops.fsm.runs.layout import run_files
from little_loops.fsm.runs.locks import acquire_scope, project_root
from little_loops.fsm.runs.outcomes import ExitCode
from little_loops.fsm.runs.store import StatePersistence, display_path
from little_loops.fsm.timefmt import iso_now

START_WAIT_SECONDS = 2.0  # how long the parent watches the child start before reporting
SETTLE_SECONDS = 0.3  # after the child's state shows its pid, how long to watch it fail fast
_TAIL_LINES = 20

# Started children, kept referenced so a long-lived caller (a test) does not get a
# ResourceWarning for a child that is meant to outlive the Popen object.
_STARTED: list[subprocess.Popen[bytes]] = []


def log_file(loop_name: str, loops_dir: Path) -> Path:
    """Where a background run's stdout and stderr go (appended)."""
    return run_files(loop_name, loops_dir).log


def child_argv(loop_path: Path, options: RunOptions) -> list[str]:
    """The command line of the detached run: `run` with every option but --background."""
    return [sys.executable, "-m", "little_loops.cli", "run", str(loop_path), *options.argv()]


def start_background(
    loop_path: Path,
    loop_name: str,
    scope: Sequence[str],
    options: RunOptions,
    loops_dir: Path,
    *,
    wait: float = START_WAIT_SECONDS,
) -> int:
    """Start the loop in a new session and report its pid; a failed start is reported here.

    Without `--queue` the scope is checked first, so an overlap is refused by this command
    (exit 1) rather than in the log. The child's pid goes to stdout (a JSON object with
    `--json`); how to follow, inspect and stop it goes to stderr.
    """
    if not options.queue:
        acquire_scope(loop_name, scope, loops_dir).release()
    log = log_file(loop_name, loops_dir)
    log.parent.mkdir(parents=True, exist_ok=True)
    argv = child_argv(loop_path.resolve(), options)
    with log.open("ab") as out:
        out.write(f"--- ll-loop run {loop_name} --background at {iso_now()}\n".encode())
        out.flush()
        offset = out.tell()
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=project_root(loops_dir),
            start_new_session=True,
        )
    _STARTED.append(proc)
    code = _watch_start(proc, StatePersistence(loop_name, loops_dir), wait)
    shown = display_path(log)
    if code is not None and code != ExitCode.OK:
        print(
            f"ll-loop: error: the background run of loop '{loop_name}' exited with code {code};"
            f" its output ({shown}):",
            file=sys.stderr,
        )
        for line in _tail(log, offset):
            print(f"  {line}", file=sys.stderr)
        return code
    if options.as_json:
        print(json.dumps({"loop": loop_name, "pid": proc.pid, "log": shown}))
    else:
        print(proc.pid)
    how = " and already finished" if code == ExitCode.OK else ""
    print(
        f"started loop '{loop_name}' in the background (pid {proc.pid}){how}\n"
        f"  follow: tail -f {shown}\n"
        f"  status: ll-loop status {loop_name}\n"
        f"  stop:   ll-loop stop {loop_name}",
        file=sys.stderr,
    )
    return ExitCode.OK


def _watch_start(
    proc: subprocess.Popen[bytes], persistence: StatePersistence, wait: float
) -> int | None:
    """The child's exit code if it ended while watched, else None once it has been under way
    (its state file shows its pid) for SETTLE_SECONDS, or `wait` is up (e.g. it is queued)."""
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
        with log.open("rb") as handle:
            handle.seek(offset)
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-_TAIL_LINES:]
