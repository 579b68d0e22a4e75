"""Hear an agent CLI say on stderr that it retries a rate-limited call itself (spec.OwnRetry)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from little_loops.fsm.processes.pipes import Tail

if TYPE_CHECKING:
    from little_loops.fsm.actions.spec import OwnRetry

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_MAX_LINE = 64 * 1024  # bytes of one stderr line looked at (the start of a longer one)
_MAX_LINES = 40  # lines of one message of the CLI (an error it quotes); more: not its message
_SHOWN = 300  # characters of the message kept for the step's error


class RetryWatch:
    """Reads an agent's stderr line by line; `heard` is its message once it has retried
    more than `OwnRetry.allowed` times."""

    __slots__ = ("_begins", "_ends", "_lines", "_partial", "allowed", "count", "heard")

    def __init__(self, own: OwnRetry) -> None:
        self._begins = re.compile(own.begins)
        self._ends = re.compile(own.ends) if own.ends is not None else None
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
            self._line(_ANSI.sub("", raw[:_MAX_LINE].decode("utf-8", "replace")).rstrip("\r"))
            if self.heard is not None:
                return

    def _line(self, line: str) -> None:
        begun = self._begins.search(line)
        if begun is not None:
            self._lines = []
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
            if self.count > self.allowed:
                self.heard = " ".join(part for part in said if part)[:_SHOWN]


class HeardTail(Tail):
    """A stderr `Tail` whose chunks a `RetryWatch` also reads."""

    __slots__ = ("watch",)

    def __init__(self, limit: int, watch: RetryWatch) -> None:
        super().__init__(limit)
        self.watch = watch

    def add(self, data: bytes) -> None:
        super().add(data)
        self.watch.feed(data)
