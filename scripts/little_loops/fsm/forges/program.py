"""Run a forge's CLI once: no prompt, a deadline, its output kept to a bounded tail."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from little_loops.fsm.forges.forge import ForgeError
from little_loops.fsm.processes.containment import CONTAINMENT

TIMEOUT = 120.0  # seconds one call of the forge's CLI may take (a stuck network, a prompt)
OUTPUT_BYTES = 1024 * 1024  # of a call's stdout kept: its last bytes (a job log can be huge)
ERROR_BYTES = 16 * 1024  # of its stderr kept: the last bytes


class NotInstalled(ForgeError):
    """The forge's CLI is not on PATH."""


@dataclass(frozen=True)
class Ran:
    """What one call returned: its exit code, stdout and stderr (their tails, as text)."""

    code: int
    out: str
    err: str

    def problem(self) -> str:
        """The CLI's own words for the failure, on one line."""
        lines = [line.strip() for line in self.err.splitlines() if line.strip()]
        return "; ".join(lines[-3:]) or f"exit code {self.code}, no message"


def run_program(
    argv: Sequence[str],
    where: Path,
    env: Mapping[str, str],
    stdin: str = "",
    out_bytes: int = OUTPUT_BYTES,
) -> Ran:
    """Run *argv* in *where* with *env* and *stdin*; NotInstalled when its program is not on
    PATH, ForgeError when it cannot be started or does not finish within TIMEOUT (it is
    ended then, with what it started)."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryFile() as given,
    ):
        given.write(stdin.encode())
        given.seek(0)
        try:
            child = CONTAINMENT.start(
                argv, cwd=where, env=env, streams=(given.fileno(), out.fileno(), err.fileno())
            )
        except FileNotFoundError:
            raise NotInstalled(f"{argv[0]} is not on PATH") from None
        except (OSError, ValueError) as exc:
            raise ForgeError(f"`{argv[0]}` cannot be run: {exc}") from None
        try:
            child.process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            child.end(0.0)
            raise ForgeError(f"`{' '.join(argv[:3])}` did not finish in {TIMEOUT:.0f}s") from None
        except BaseException:  # e.g. Ctrl-C: never leave it running
            child.end(0.0)
            raise
        code = child.reap()
        return Ran(code, _tail(out, out_bytes), _tail(err, ERROR_BYTES))


def _tail(stream: IO[bytes], limit: int) -> str:
    """The last *limit* bytes written to the temporary file *stream*, as text."""
    fileno = stream.fileno()
    size = os.fstat(fileno).st_size
    os.lseek(fileno, max(0, size - limit), os.SEEK_SET)
    data = os.read(fileno, limit)
    return data.decode(errors="replace").replace("\r\n", "\n")
