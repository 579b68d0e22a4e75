"""The append-only event log of a run: one-write appends, rotated parts, streamed and tail reads.

Each event is one JSON line written with one write() on an O_APPEND descriptor, so a crash
can at worst leave a torn *last* line, which readers skip and the next append trims. Past
SEGMENT_BYTES the log is rotated: `<name>.events.jsonl` becomes `<name>.events.<n>.jsonl`
and a new one begins; only the newest SEGMENTS_KEPT rotated parts are kept, so a loop
that runs for a million steps keeps a bounded log. Readers stream it, never load it whole.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from little_loops.fsm.facts.errors import CorruptStateError
from little_loops.fsm.facts.layout import RunFiles, make_running_dir
from little_loops.fsm.facts.runfile import open_run_file, open_run_stream
from little_loops.fsm.runs.atomic import json_bytes
from little_loops.fsm.runs.state import StateShapeError, json_type

SEGMENT_BYTES = 8 * 1024 * 1024  # the events file is rotated once it is this big
# How often an append checks that the file is still the one it has open (someone may have
# deleted `.running/` by hand); a stat() per event would cost as much as the write.
RECHECK_S = 0.25
SEGMENTS_KEPT = 4  # rotated parts kept: with the current one, at most ~40 MiB of events
_BLOCK = 64 * 1024

# Where a reader is: (part number, byte offset). The current file's number is one more
# than the newest rotated part's (1 when none was rotated).
Position = tuple[int, int]


class EventLog:
    """Append to, rotate and read the events of one run."""

    def __init__(self, files: RunFiles, display: str) -> None:
        self.files = files
        self.path = files.events
        self.display = display  # the path as messages show it
        self._fd: int | None = None
        self._id: tuple[int, int, int] | None = None  # (pid, st_dev, st_ino)
        self._part = 0  # the current part's number while the descriptor is open
        self._end = 0  # the size of the current part, with what this writer wrote
        self._checked = 0.0  # time.monotonic() of the last check of the file's identity
        self._held: list[dict[str, Any]] = []  # events waiting to go with the next write
        self._lock = threading.Lock()
        self.restarted = False  # the file was removed or replaced under this writer: a new one

    # -- writing -----------------------------------------------------------------------

    def append(self, event: dict[str, Any], *, hold: bool = False) -> Position | None:
        """Append *event* as one line; it is in the file (not a buffer) when this returns,
        with the lines held before it, all in one write().

        With *hold* the line waits in memory for the next append without it (or `flush`):
        for an event after which the run does nothing outside this process before its next
        event, so a crash loses nothing a resume would not redo the same way. Returns where
        the log ends after the line (where a reader of later events begins), None if held."""
        with self._lock:
            self._held.append(event)
            return None if hold else self._write_held()

    @property
    def holding(self) -> bool:
        """Whether events wait to be written."""
        return bool(self._held)

    def flush(
        self, amend: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    ) -> Position | None:
        """Write the held events now, the last one through *amend*; where the log ends
        (None if nothing was held)."""
        with self._lock:
            if not self._held:
                return None
            if amend is not None:
                self._held[-1] = amend(self._held[-1])
            return self._write_held()

    def _write_held(self) -> Position:
        fd = self._open()
        data = b"".join(json_bytes(event) + b"\n" for event in self._held)
        self._held.clear()
        view = memoryview(data)
        while view:  # a regular file takes it in one write(); loop only for safety
            written = os.write(fd, view)
            view = view[written:]
        self._end += len(data)
        return self._part, self._end

    def sync(self) -> None:
        """fsync what was appended (durable across a power cut)."""
        with self._lock:
            if self._fd is not None:
                os.fsync(self._fd)

    def current_part(self) -> int:
        """The number of the part being written (see Position)."""
        return _current_of(self.files.events_segments())

    def rotate(self) -> int:
        """Move the current part aside and start a new one; drop the oldest parts kept too
        long. Returns the new current part's number."""
        with self._lock:
            old, self._fd, self._id = self._fd, None, None  # kept (and locked) until the new
            number = self.current_part()
            with contextlib.suppress(FileNotFoundError):
                os.replace(self.path, self.files.events_segment(number))
            for part in self.files.events_segments()[:-SEGMENTS_KEPT]:
                self.files.events_segment(part).unlink(missing_ok=True)
            self._open()  # the new part, locked before the old one lets go
            if old is not None:
                with contextlib.suppress(OSError):
                    os.close(old)
            return number + 1

    def clear(self) -> None:
        """Delete every part of the log."""
        with self._lock:
            self._close()
            self._held.clear()
            for number in self.files.events_segments():
                self.files.events_segment(number).unlink(missing_ok=True)
            self.path.unlink(missing_ok=True)

    def close(self) -> None:
        """Write what is held and close the descriptor (appending again reopens it)."""
        with self._lock:
            if self._held:
                with contextlib.suppress(OSError):  # the run already reported why it stopped
                    self._write_held()
            self._close()

    def _open(self) -> int:
        """The append descriptor, reopened after a fork or if the file was removed or replaced
        (by hand, or by another process clearing the log: checked every RECHECK_S)."""
        if self._fd is not None and self._id is not None:
            now = time.monotonic()
            if now - self._checked < RECHECK_S and self._id[0] == os.getpid():
                return self._fd
            self._checked = now
            try:
                st = os.stat(self.path)
                if (os.getpid(), st.st_dev, st.st_ino) == self._id:
                    return self._fd
            except FileNotFoundError:
                pass
            self.restarted = self._id[0] == os.getpid()  # not a forked child's first write
            self._close()
        make_running_dir(self.path.parent)
        fd = open_run_file(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        # Held while this process writes the log: the proof that a pid in the state file is
        # this run's writer, not another program that got the pid (see writer_pids).
        fcntl.flock(fd, fcntl.LOCK_SH)
        _trim_torn_tail(fd)
        st = os.fstat(fd)
        self._fd, self._id = fd, (os.getpid(), st.st_dev, st.st_ino)
        self._end, self._checked = st.st_size, time.monotonic()
        self._part = self.current_part()
        return fd

    def _close(self) -> None:
        if self._fd is not None:
            # After a fork the descriptor is the parent's copy: closing ours is still right.
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd, self._id = None, None

    # -- reading -----------------------------------------------------------------------

    def events(self, since: Position | None = None) -> Iterator[dict[str, Any]]:
        """Every event kept, oldest first, or those after *since*; streamed, part by part."""
        parts = self.files.events_segments()  # once: it looks through the whole folder
        current = _current_of(parts)
        first, offset = since if since is not None else (1, 0)
        if first > current:  # the log was cleared since: nothing of it comes after *since*
            return
        rotated = [n for n in parts if n >= first]
        for number in [*rotated, current]:
            path = self.path if number == current else self.files.events_segment(number)
            start = offset if number == first else 0
            yield from self._read(path, start)

    def tail(self, count: int) -> list[dict[str, Any]]:
        """The last *count* events, oldest first, read from the end of the log."""
        found: list[dict[str, Any]] = []
        parts = [self.path] + [
            self.files.events_segment(n) for n in reversed(self.files.events_segments())
        ]
        for path in parts:
            if len(found) >= count:
                break
            lines, unfinished = _lines_from_end(path, count - len(found) + 1)
            parsed = []
            for index, line in enumerate(lines):
                try:
                    parsed.append(self._parse(line, path, None))
                except CorruptStateError:
                    if unfinished and index == len(lines) - 1:
                        continue  # torn by a crash mid-append
                    raise
            found[:0] = parsed
        return found[-count:] if count > 0 else []

    @staticmethod
    def kept_mib() -> int:
        """About how many MiB of events a run keeps (the current part and the rotated ones)."""
        return (SEGMENTS_KEPT + 1) * SEGMENT_BYTES // (1024 * 1024)

    def first_kept(self) -> int:
        """The number of the oldest part still kept (1 unless older parts were dropped)."""
        parts = self.files.events_segments()
        return parts[0] if parts else self.current_part()

    def _read(self, path: Path, offset: int) -> Iterator[dict[str, Any]]:
        """The events of one part from byte *offset*; a torn last line is skipped."""
        try:
            handle: BinaryIO = open_run_stream(path)
        except FileNotFoundError:
            return
        with handle:
            if offset:
                handle.seek(offset - 1)
                if handle.read(1) != b"\n":  # not where a line begins: another log
                    where = self.display if path == self.path else path.name
                    raise CorruptStateError(f"{where}: no event begins at byte {offset}")
            handle.seek(offset)
            numbered = offset == 0  # line numbers in messages only when counted from the top
            held: tuple[bytes, int] | None = None  # a line is parsed once the next is read
            for number, line in enumerate(handle, start=1):
                if held is not None:
                    yield self._parse(held[0], path, held[1] if numbered else None)
                held = (line, number) if line.strip() else None
            if held is None:
                return
            line, number = held
            try:
                event = self._parse(line, path, number if numbered else None)
            except CorruptStateError:
                if line.endswith(b"\n"):
                    raise
                return  # torn: no newline after it, the writer died mid-line
            yield event

    def _parse(self, line: bytes, path: Path, number: int | None) -> dict[str, Any]:
        try:
            event = json.loads(line.rstrip(b"\n"))  # bytes: JSON's own UTF-8 decoding
            if not isinstance(event, dict):
                raise StateShapeError(f"expected a JSON object, found {json_type(event)}")
        except (StateShapeError, ValueError, RecursionError) as exc:
            # Where, worked out only for a bad line (a log of a million events is read whole).
            where = self.display if path == self.path else str(path.name)
            if number is not None:
                where += f":{number}"
            raise CorruptStateError(f"{where}: corrupt event line ({describe(exc)})") from None
        return event


def _lines_from_end(path: Path, count: int) -> tuple[list[bytes], bool]:
    """Up to *count* non-blank lines at the end of *path*, oldest first, and whether the
    last of them has no newline after it (unfinished: maybe torn by a crash)."""
    try:
        fd = open_run_file(path, os.O_RDONLY)
    except FileNotFoundError:
        return [], False
    try:
        end = os.fstat(fd).st_size
        unfinished = end > 0 and os.pread(fd, 1, end - 1) != b"\n"
        carry, lines = b"", list[bytes]()
        while end > 0 and len(lines) < count:
            start = max(0, end - _BLOCK)
            pieces = (os.pread(fd, end - start, start) + carry).split(b"\n")
            end = start
            # The first piece may be the end of a line that begins before `start`.
            carry = pieces.pop(0) if end > 0 else b""
            lines[:0] = [piece for piece in pieces if piece.strip()]
        return lines[-count:], unfinished
    finally:
        os.close(fd)


def _trim_torn_tail(fd: int) -> None:
    """Drop a partial last line left by a crash so the next event starts on a line of its own."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    # Walk back to the last newline; events are small, so this is one read in practice.
    end = size
    while end > 0:
        start = max(0, end - _BLOCK)
        cut = os.pread(fd, end - start, start).rfind(b"\n")
        if cut >= 0:
            keep = start + cut + 1
            break
        end = start
    else:
        keep = 0
    fragment = os.pread(fd, size - keep, keep)
    try:
        complete = isinstance(json.loads(fragment), dict)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, too deep, too many digits
        complete = False
    if complete:  # only the newline was lost: keep the event
        os.write(fd, b"\n")
    else:
        os.ftruncate(fd, keep)


def describe(exc: Exception) -> str:
    """What is wrong with a JSON document, in words (no Python names)."""
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid or truncated JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        return "a number with too many digits"
    return str(exc)


def _current_of(parts: list[int]) -> int:
    """The number of the part being written, after the rotated *parts* (oldest first)."""
    return parts[-1] + 1 if parts else 1


def writer_pids(path: Path) -> set[int] | None:
    """The processes that hold the writer's lock on the event log at *path* (from
    /proc/locks); an empty set when none does, None when it cannot be known here."""
    try:
        inode = os.stat(path, follow_symlinks=False).st_ino
        with open("/proc/locks", "rb") as handle:
            table = handle.read().decode("ascii", errors="replace")
    except FileNotFoundError:
        return set() if os.path.exists("/proc/locks") else None
    except OSError:
        return None
    holders = set()
    for line in table.splitlines():
        fields = line.split()
        # `1: FLOCK  ADVISORY  READ  4242 fd:01:123456 0 EOF` (a `->` marks a waiter)
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5].endswith(f":{inode}"):
            with contextlib.suppress(ValueError):
                holders.add(int(fields[4]))
    return holders
