"""An action's output as it is shown: its files followed as they grow, and a failed one's tail."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from little_loops.fsm.facts.layout import stderr_file
from little_loops.fsm.facts.runfile import NotOurFile, open_run_stream
from little_loops.fsm.facts.safetext import one_line

TAIL_LINES = 20  # the most lines of a failed action's output shown, stdout and stderr in all
_READ_LIMIT = 1024 * 1024  # the most read of one file at one poll (the rest comes next time)
Readable = Callable[[str], list[str]]  # one line of a transcript as the lines a person reads


class _Followed:
    __slots__ = ("before", "label", "offset", "path", "pending", "readable")

    def __init__(self, path: Path, label: str, readable: Readable | None) -> None:
        self.path, self.label, self.readable = path, label, readable
        self.before = signature(path)  # the last action's file, until the runner truncates it
        self.offset = 0
        self.pending = b""


class OutputTail:
    """The new lines of one action's stdout (`output_path`) and stderr files, in order read.

    Made when the action starts: until a file changes it still holds the previous action's
    output, which is not shown (`from_start`: what the files hold is shown). `readable`:
    how stdout's lines read as text, when it is a transcript (the action kind's
    `spec.readable`). Stderr's lines are labelled.
    """

    def __init__(
        self, output_path: str, readable: Readable | None = None, from_start: bool = False
    ) -> None:
        out = Path(output_path)
        self.paths = (out, stderr_file(out))
        self._files = (_Followed(out, "", readable), _Followed(self.paths[1], "stderr │ ", None))
        if from_start:
            for followed in self._files:
                followed.before = None

    def poll(self, final: bool = False) -> list[str]:
        """The lines written since the last poll; `final` (the action ended): all the rest."""
        out, err = self.poll_each(final)
        return out + [self._files[1].label + line for line in err]

    def poll_each(self, final: bool = False) -> tuple[list[str], list[str]]:
        """Like `poll`, stdout's lines and stderr's apart, without labels."""
        found: list[list[str]] = []
        for followed in self._files:
            if not final and followed.before is not None:
                if signature(followed.path) == followed.before:
                    found.append([])
                    continue
                followed.before = None
            found.append(_new_lines(followed, final))
        return found[0], found[1]


def _new_lines(followed: _Followed, final: bool) -> list[str]:
    data = b""
    with contextlib.suppress(OSError, NotOurFile), open_run_stream(followed.path) as handle:
        if handle.seek(0, os.SEEK_END) < followed.offset:  # emptied: the state ran again
            followed.offset, followed.pending = 0, b""
        handle.seek(followed.offset)
        data = handle.read() if final else handle.read(_READ_LIMIT)
    followed.offset += len(data)
    *complete, followed.pending = (followed.pending + data).split(b"\n")
    if final and followed.pending:
        complete.append(followed.pending)
        followed.pending = b""
    shown: list[str] = []
    for raw in complete:
        text = raw.decode("utf-8", errors="replace")
        if followed.readable is not None:
            shown += followed.readable(text)
        elif text.strip():
            shown.append(text)
    return shown


def signature(path: Path | str) -> tuple[int, int] | None:
    """Size and modification time of *path*, to tell when it changes; None when missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


def output_tail(output: str, stderr: str, width: int) -> list[str]:
    """The last lines of a failed action's stdout, then of its stderr, labelled: at most
    TAIL_LINES in all (stderr's last lines first to be kept), each escaped and cut to *width*."""
    err = [line for line in stderr.splitlines() if line.strip()]
    out = [line for line in output.splitlines() if line.strip()]
    keep_err = min(len(err), max(TAIL_LINES - len(out), TAIL_LINES // 2))
    keep_out = min(len(out), TAIL_LINES - keep_err)
    out, err = out[len(out) - keep_out :], err[len(err) - keep_err :]
    shown = [("stdout", line) for line in out] + [("stderr", line) for line in err]
    return [shorten_line(f"{label} │ {one_line(line)}", width) for label, line in shown]


def shorten_line(text: str, width: int) -> str:
    """*text* cut to *width* characters with `…`."""
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"
