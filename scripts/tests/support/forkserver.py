"""`ll-loop` runs forked from a Python that has already imported it: no interpreter start-up.

Starting an `ll-loop` process costs about twenty times `python -c pass` (its imports), which
tests that run thousands of loops to check what bash does with a value pay again and again.
`ll_loop()` here runs the same command, with the same arguments, directory, environment and
standard streams, as `llproc.ll_loop()`, in a child forked from a server process that
imported the command modules once (one server per concurrent caller, started on first use).
The child is a real process of its own: it runs `main_loop` as `python -m little_loops.cli`
would, exits through the interpreter (atexit handlers, flushes), and a timeout kills it.

Use it only where what is tested is the command's behaviour, not how a process starts: the
modules a command imports, start-up time, signals sent before the command starts, and what
Python reads of the environment as it starts (`PYTHON*` variables, the locale of its
streams) are the server's in every child here (see `llproc` for those tests).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import locale
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from support.slowdown import scaled

# What the server imports before its first fork: the modules `run`, `resume` and `validate`
# of a shell loop load (a command's other lazy imports happen in its child, as in a fresh
# process).
WARM = (
    "ctypes",
    "little_loops.cli",
    "little_loops.cli.resume",
    "little_loops.cli.run",
    "little_loops.cli.session",
    "little_loops.cli.validate",
    "little_loops.fsm.engine.kinds.action",
    "little_loops.fsm.engine.kinds.guards",
    "little_loops.fsm.engine.kinds.terminal",
    "little_loops.fsm.runs.foreground",
    "little_loops.fsm.runs.preflight",
    "little_loops.fsm.runs.persistent",
    "little_loops.fsm.runs.spend_check",
    "little_loops.fsm.runs.start_marker",
    "little_loops.fsm.validate.loopfile",
)

# One request a line on stdin: {"argv", "cwd", "env", "out", "err", "hold"}; two replies a
# line on stdout: the child's pid, then its exit code as subprocess reports it. EOF ends the
# server. With "hold" (a FIFO's path), the child waits for a byte there before it runs the
# command: a tracer attaches to it first (see `ll_loop(attach=...)`).
SERVER = """\
import importlib, json, os, sys, tempfile, time
for name in sys.argv[1:]:
    importlib.import_module(name)
from little_loops.cli import main_loop
MAIN = os.path.join(os.path.dirname(sys.modules["little_loops.cli"].__file__), "__main__.py")
reply = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        reply.close()
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        os.dup2(os.open(request["out"], flags, 0o600), 1)
        os.dup2(os.open(request["err"], flags, 0o600), 2)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        time.tzset()
        tempfile.tempdir = None  # found again from TMPDIR and the like
        if request.get("hold"):
            with open(request["hold"], "rb") as hold:
                hold.read(1)
        sys.argv = [MAIN, *request["argv"]]
        raise SystemExit(main_loop(request["argv"]))
    print(pid, file=reply)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), file=reply)
"""


class _Server:
    """One server process and the folder its children's output goes to."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="ll-forkserver-"))
        with (self.folder / "server-stderr").open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", SERVER, *WARM],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                bufsize=0,
            )
        self.child: int | None = None  # the pid of the command running now

    def _line(self, deadline: float) -> str | None:
        """The server's next reply line; None once *deadline* (monotonic) has passed."""
        assert self.proc.stdout is not None
        seen = b""
        while not seen.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                return None
            chunk = self.proc.stdout.read(1)
            if not chunk:
                said = (self.folder / "server-stderr").read_text(errors="replace")[-2000:]
                raise AssertionError(f"the fork server ended (exit {self.proc.wait()}): {said}")
            seen += chunk
        return seen.decode()

    def run(
        self,
        argv: list[str],
        cwd: Path,
        env: dict[str, str],
        timeout: float,
        attach: Callable[[int], None] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        assert self.proc.stdin is not None
        out, err = self.folder / "out", self.folder / "err"
        request = {"argv": argv, "cwd": str(cwd), "env": env, "out": str(out), "err": str(err)}
        hold = self.folder / "hold"
        if attach is not None:
            hold.unlink(missing_ok=True)
            os.mkfifo(hold, 0o600)
            request["hold"] = str(hold)
        self.proc.stdin.write(json.dumps(request).encode() + b"\n")
        started = self._line(time.monotonic() + scaled(60))
        if started is None:
            raise AssertionError("the fork server did not fork within its deadline")
        self.child = int(started)
        if attach is not None:
            attach(self.child)  # the child waits at the FIFO until then (if it raises, the
            with hold.open("wb") as go:  # caller closes this server, killing the child)
                go.write(b"x")
        ended = self._line(time.monotonic() + timeout)
        if ended is None:  # as subprocess.run: kill the child, then raise
            os.kill(self.child, signal.SIGKILL)
            self._line(time.monotonic() + scaled(60))
            self.child = None
            raise subprocess.TimeoutExpired(
                ["ll-loop", *argv], timeout, _text(out.read_bytes()), _text(err.read_bytes())
            )
        self.child = None
        return subprocess.CompletedProcess(
            ["ll-loop", *argv], int(ended), _text(out.read_bytes()), _text(err.read_bytes())
        )

    def close(self) -> None:
        """End the server (and the command it runs, if any: a test interrupted)."""
        if self.child is not None:
            with contextlib.suppress(OSError):
                os.kill(self.child, signal.SIGKILL)
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def _text(data: bytes) -> str:
    """*data* as `subprocess.run(text=True)` gives it: the locale's encoding, universal
    newlines."""
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


_idle: list[_Server] = []
_every: list[_Server] = []
_lock = threading.Lock()


@atexit.register
def _close_all() -> None:
    for server in _every:
        server.close()


def ll_loop(
    root: Path,
    *args: str,
    timeout: float = 20,
    env: dict[str, str] | None = None,
    attach: Callable[[int], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`ll-loop ARGS...` in *root* to completion, as `llproc.ll_loop` (with *env* instead of
    this process's environment; *timeout* in idle-machine seconds, scaled). With *attach*,
    the child is held before the command begins until `attach(pid)` has returned (a tracer
    such as strace attaches to it there: support/killwrite.py)."""
    # What subprocess.run refuses, before any process starts.
    if not Path(root).is_dir():
        raise FileNotFoundError(f"no such directory: {root}")
    given = dict(os.environ if env is None else env)
    if any("\0" in text for text in (*args, *given, *given.values())):
        raise ValueError("embedded null byte")
    with _lock:
        server = _idle.pop() if _idle else None
    if server is None or server.proc.poll() is not None:
        server = _Server()
        with _lock:
            _every.append(server)
    try:
        done = server.run(list(args), root, given, scaled(timeout), attach)
    except BaseException:
        server.close()
        raise
    with _lock:
        _idle.append(server)
    return done
