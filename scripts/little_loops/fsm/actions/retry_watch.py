"""Hear an agent CLI say on stderr that it retries a refused call itself (spec.OwnRetry)."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

from little_loops.fsm.processes.pipes import Tail

if TYPE_CHECKING:
    from little_loops.fsm.actions.spec import OwnRetry

_ANSI = r"\x1b\[[0-9;]*[A-Za-z]"  # (compiled when first used, by re's cache)
_MAX_LINE = 64 * 1024  # bytes of one stderr line looked at (the start of a longer one)
_MAX_LINES = 40  # lines of one message of the CLI (an error it quotes); more: not its message
_SHOWN = 300  # characters of the message kept for the step's error


class RetryWatch:
    """Reads an agent's stderr line by line; `heard` is its message once it has retried
    more than `OwnRetry.allowed` times, or once a retry `OwnRetry.at_once` names; `due`
    is when a refusal it may retry (`OwnRetry.maybe`) is heard if it still runs (`expire`)."""

    __slots__ = (
        "_at_once",
        "_begins",
        "_ends",
        "_lines",
        "_maybe",
        "_maybe_said",
        "_now",
        "_settle",
        "_partial",
        "_retried",
        "allowed",
        "count",
        "due",
        "heard",
        "quiet",
    )

    def __init__(self, own: OwnRetry) -> None:
        self._begins = re.compile(own.begins)
        self._ends = re.compile(own.ends) if own.ends is not None else None
        self._at_once = re.compile(own.at_once) if own.at_once is not None else None
        self._now = False  # the open message is one `at_once` names
        self._maybe = re.compile(own.maybe) if own.maybe is not None else None
        self._maybe_said: str | None = None
        self._settle = own.settle
        self._retried = re.compile(own.retried) if own.retried is not None else None
        self.quiet = re.compile(own.quiet.encode()) if own.quiet is not None else None
        self.due: float | None = None  # time.monotonic() at which `_maybe_said` is heard
        self.allowed = own.allowed
        self.count = 0
        self.heard: str | None = None
        self._partial = bytearray()
        self._lines: list[str] | None = None  # the open message's lines

    def feed(self, data: bytes) -> None:
        """Take in a chunk of stderr."""
        if self.heard is not None:
            return
        self._partial += data
        *lines, rest = self._partial.split(b"\n")
        self._partial = bytearray(rest[:_MAX_LINE])
        for raw in lines:
            self._line(re.sub(_ANSI, "", raw[:_MAX_LINE].decode("utf-8", "replace")).rstrip("\r"))
            if self.heard is not None:
                return

    def progress(self) -> None:
        """The CLI printed its output (stdout) after a refusal it may retry: it went on."""
        if self.heard is None:
            self._maybe_said = self.due = None

    def expire(self, now: float) -> bool:
        """Hear a refusal it may retry once it still runs at `due`; whether one is heard."""
        if self.heard is None and self.due is not None and now >= self.due:
            self.heard = self._maybe_said
        return self.heard is not None

    def _line(self, line: str) -> None:
        if self._maybe is not None and self._maybe_line(line):
            return
        if self.due is not None and self._retried is not None and self._retried.search(line):
            self.due = None  # it sent the call again: its answer may take any time
            return
        begun = self._begins.search(line)
        if begun is not None:
            self._lines = []
            self._now = self._at_once is not None and self._at_once.search(line) is not None
        if self._lines is None:
            return
        said = begun.groupdict().get("said") if begun is not None else None
        self._lines.append((said or line).strip())  # the part that says it, if named
        if len(self._lines) > _MAX_LINES:
            self._lines = None
            return
        if begun is not None if self._ends is None else self._ends.search(line):
            said, self._lines = self._lines, None
            self.count += 1
            if self.count > self.allowed or self._now:
                self.heard = " ".join(part for part in said if part)[:_SHOWN]

    def _maybe_line(self, line: str) -> bool:
        """Take a line `OwnRetry.maybe` names, if it is one: the first sets `due`, a second
        (it retried) is heard at once."""
        found = self._maybe.search(line) if self._maybe is not None else None
        if found is None or self._begins.search(line) is not None:
            return False
        said = (found.groupdict().get("said") or line).strip()[:_SHOWN]
        if self._maybe_said is not None:
            self.heard = said
        else:
            self._maybe_said = said
            self.due = time.monotonic() + self._settle
        return True


class HeardTail(Tail):
    """A stderr `Tail` whose chunks a `RetryWatch` also reads (stdout's: that it went on).
    With the watch's `quiet`, stderr's whole lines matching it are read by the watch
    but neither kept nor passed on to the file; a line longer than _MAX_LINE is kept."""

    __slots__ = ("_held", "_passing", "quiet", "stdout", "watch")

    def __init__(self, limit: int, watch: RetryWatch, *, stdout: bool = False) -> None:
        super().__init__(limit)
        self.watch = watch
        self.stdout = stdout
        self.quiet = None if stdout else watch.quiet
        self._held = bytearray()  # the start of a line not yet ended (quiet only)
        self._passing = False  # the rest of a line too long to hold goes on as it comes

    def add(self, data: bytes) -> bytes:
        if self.stdout:
            self.watch.progress()
        else:
            self.watch.feed(data)
        if self.quiet is not None:
            data = self._unquiet(data)
        return super().add(data)

    def flush(self) -> bytes:
        """The last line, unended, unless it is quiet."""
        if not self._held:
            return b""
        line, self._held = bytes(self._held), bytearray()
        assert self.quiet is not None
        return b"" if self.quiet.match(line) else super().add(line)

    def text(self) -> str:
        if self._held:  # a pipe still open when the step ended: its last line is kept
            self.flush()
        return super().text()

    def _unquiet(self, data: bytes) -> bytes:
        assert self.quiet is not None
        if self._passing:
            end = data.find(b"\n")
            if end < 0:
                return data
            self._passing = False
            head, data = data[: end + 1], data[end + 1 :]
        else:
            head = b""
        self._held += data
        *lines, rest = self._held.split(b"\n")
        quiet = self.quiet.match
        kept = [bytes(line) + b"\n" for line in lines if len(line) > _MAX_LINE or not quiet(line)]
        self._held = bytearray(rest)
        if len(self._held) > _MAX_LINE:
            kept.append(bytes(self._held))
            self._held, self._passing = bytearray(), True
        return head + b"".join(kept)
