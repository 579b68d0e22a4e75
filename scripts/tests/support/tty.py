"""`ll-loop` run on a real terminal (a pty): what a user sees, colours and all."""

from __future__ import annotations

import errno
import os
import pty
import subprocess
import sys
import time

from support.project import LoopProject
from support.slowdown import scaled


def run_on_a_tty(project: LoopProject, *args: str, env: dict[str, str]) -> tuple[int, str]:
    """Run `ll-loop ARGS...` with stdin, stdout and stderr on a pty; return code and output."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "little_loops.cli", *args],
        cwd=project.root,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={k: v for k, v in {**os.environ, "TERM": "xterm", **env}.items() if v},
        start_new_session=True,
    )
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + scaled(15)
    while time.monotonic() < deadline:
        try:
            data = os.read(master, 4096)
        except OSError as exc:  # EIO: the other side is closed
            if exc.errno != errno.EIO:
                raise
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=scaled(5)), b"".join(chunks).decode("utf-8", errors="replace")
