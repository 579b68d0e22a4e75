"""Helpers for tests that run `ll-loop` as a real process (its own session, like a shell job)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from support.slowdown import scaled


def start(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`ll-loop ARGS...` in `root`, in a new session, with stdout and stderr captured."""
    return subprocess.Popen(
        [sys.executable, "-m", "little_loops.cli", *args],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )


def ll_loop(
    root: Path,
    *args: str,
    timeout: float = 20,
    env: dict[str, str] | None = None,
    prefix: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """Run `ll-loop ARGS...` in `root` to completion (with `env`, instead of this one's),
    under the command *prefix* when given (`strace -f ...`).

    `timeout` is in idle-machine seconds, scaled by the machine's slowdown (as everywhere here).
    """
    return subprocess.run(
        [*prefix, sys.executable, "-m", "little_loops.cli", *args],
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=scaled(timeout),
        env=env,
    )


def console(cwd: Path, *args: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    """Run the installed `ll-loop` console script (next to this Python) in `cwd`."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "ll-loop"), *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=scaled(timeout),
    )


def stop_seconds(stop: subprocess.CompletedProcess[str]) -> float:
    """How long the run took to end once `ll-loop stop` asked, as the stop command says (its
    own start-up, which a loaded machine slows down, not counted)."""
    took = re.search(r"' stopped in ([0-9.]+)s in state ", stop.stderr)
    assert took is not None, stop.stderr
    return float(took[1])


def wait_for(check: Callable[[], bool], timeout: float = 5, what: str = "condition") -> None:
    """Poll `check` every 20 ms until it is true; fail the test after `timeout` idle-machine
    seconds (scaled)."""
    limit = scaled(timeout)
    deadline = time.monotonic() + limit
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {limit:.3g}s waiting for {what}")
        time.sleep(0.02)


def finish(proc: subprocess.Popen[str], timeout: float = 10) -> tuple[str, str]:
    """Wait for `proc` to exit and return its stdout and stderr; after `timeout` (idle-machine
    seconds, scaled) kill its process group and fail the test: a hang must not outlive it."""
    limit = scaled(timeout)
    try:
        return proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            if os.getpgid(proc.pid) == proc.pid:  # started in its own session, as by start()
                os.killpg(proc.pid, signal.SIGKILL)
            proc.kill()
        _, err = proc.communicate()
        raise AssertionError(f"still running after {limit:.3g}s; stderr: {err[-2000:]}") from None


def read_stderr_until(proc: subprocess.Popen[str], text: str, timeout: float = 10) -> str:
    """Read `proc`'s stderr (nothing else may have read it yet) until it has printed *text*;
    return what was read. The rest is left for `finish` or `communicate`."""
    assert proc.stderr is not None
    fd, seen = proc.stderr.fileno(), b""
    limit = scaled(timeout)
    deadline = time.monotonic() + limit
    while text.encode() not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no {text!r} on stderr within {limit:.3g}s: {seen!r}")
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError(f"stderr ended before {text!r}: {seen!r}")
            seen += chunk
    return seen.decode()


def state(root: Path, name: str) -> dict[str, Any]:
    """The parsed state file of loop `name` ({} while there is none or it is being replaced)."""
    try:
        data = json.loads((root / ".loops" / ".running" / f"{name}.state.json").read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def events(root: Path, name: str) -> list[dict[str, Any]]:
    """Every line of the event log, each parsed as JSON (a bad line fails the test)."""
    path = root / ".loops" / ".running" / f"{name}.events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def side_effects(root: Path) -> list[str]:
    """The lines a test's actions appended to `side.txt` in *root* ([] before the first)."""
    path = root / "side.txt"
    return path.read_text().splitlines() if path.exists() else []


def marker_processes(marker: str) -> list[int]:
    """Pids whose command line contains `marker` (zombies have none, so they do not count)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
    return found


def sleepers(marker: str) -> list[int]:
    """Pids of live `sleep MARKER` processes."""
    wanted = b"sleep\0" + marker.encode() + b"\0"
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if (entry / "cmdline").read_bytes() == wanted:
                found.append(int(entry.name))
    return found


def kill_marked(marker: str) -> None:
    """Clean-up: SIGKILL whatever a failed test left running."""
    for pid in marker_processes(marker):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
