"""State and event files of a run under `.loops/.running/`: atomic saves, an append-only log."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from little_loops.fsm.errors import CorruptStateError, LoopDefinitionError, LoopRuntimeError
from little_loops.fsm.runs.atomic import json_bytes, remove_leftover_temp_files, write_atomic
from little_loops.fsm.runs.layout import (
    RunFiles,
    default_loops_dir,
    running_dir,
    state_files,
    validate_loop_name,
)
from little_loops.fsm.runs.liveness import live_status
from little_loops.fsm.runs.state import (
    LoopState,
    StateShapeError,
    json_type,
    parse_state,
)
from little_loops.fsm.timefmt import iso_now

# Seconds between fsynced state saves of a run (every save is atomic; see save_state). An
# fsync of the file and of its folder costs milliseconds, as much as a whole quick action.
DURABLE_INTERVAL_S = 1.0

__all__ = [
    "DURABLE_INTERVAL_S",
    "LoopState",
    "RunInfo",
    "StatePersistence",
    "display_path",
    "get_loop_history",
    "list_running_loops",
]


def display_path(path: Path) -> str:
    """`path` relative to the current directory when it is inside it, as users typed it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


class StatePersistence:
    """The state file and event log of one loop under `<loops_dir>/.running/`.

    The state file is replaced atomically on every save. The event log is append-only: each
    event is one JSON line written with one write() on an O_APPEND descriptor, so a crash can
    at worst leave a torn *last* line, which `read_events` skips and the next append trims.
    """

    def __init__(self, loop_name: str, loops_dir: Path | None = None) -> None:
        self.loop_name = validate_loop_name(loop_name)
        self.loops_dir = Path(loops_dir) if loops_dir is not None else default_loops_dir()
        files = RunFiles(loop_name, self.loops_dir)
        self.running_dir = files.running_dir
        self.state_file = files.state
        self.events_file = files.events
        self._events_fd: int | None = None
        self._events_id: tuple[int, int, int] | None = None  # (pid, st_dev, st_ino)
        self._lock = threading.Lock()
        self._durable_at: float | None = None  # time.monotonic() of the last fsynced save

    def initialize(self) -> None:
        """Create `.running/` if needed and remove temp files a killed save left behind."""
        self.running_dir.mkdir(parents=True, exist_ok=True)
        remove_leftover_temp_files(self.state_file)

    # -- state -------------------------------------------------------------------------------

    def save_state(self, state: LoopState, *, durable: bool | None = None) -> None:
        """Write `state` atomically, stamping `updated_at`. Old file intact if anything fails.

        Every save is atomic. It is also fsynced (durable across a power cut) when `durable`
        is True, and when None if the last durable save is DURABLE_INTERVAL_S old or more:
        a loop of quick actions pays for one fsync a second, not two per state.
        """
        state.updated_at = iso_now()
        data = json_bytes(state.to_dict(), indent=2) + b"\n"
        now = time.monotonic()
        if durable is None:
            durable = self._durable_at is None or now - self._durable_at >= DURABLE_INTERVAL_S
        self.running_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(self.state_file, data, durable=durable)
        if durable:
            self._durable_at = now

    def load_state(self) -> LoopState | None:
        """The saved state, or None when there is none; CorruptStateError if it is unreadable."""
        where = display_path(self.state_file)
        try:
            raw = self.state_file.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise LoopRuntimeError(f"{where}: cannot read state file: {exc.strerror}") from None
        try:
            data = json.loads(_decode(raw))
            state = parse_state(data)
            if state.loop_name != self.loop_name:
                raise StateShapeError(f"it belongs to loop {state.loop_name!r}")
        except (StateShapeError, ValueError, RecursionError) as exc:
            raise CorruptStateError(
                f"{where}: corrupt state file ({_describe(exc)}); delete it, or start the loop"
                f" over with 'll-loop run {self.loop_name}'"
            ) from None
        return state

    def clear_state(self) -> None:
        """Delete the state file (no error if absent)."""
        self.state_file.unlink(missing_ok=True)

    # -- events ------------------------------------------------------------------------------

    def append_event(self, event: dict[str, Any]) -> None:
        """Append `event` as one JSON line; it is in the file (not a buffer) when this returns."""
        line = json_bytes(event) + b"\n"
        with self._lock:
            fd = self._open_events()
            view = memoryview(line)
            while view:  # a regular file takes it in one write(); loop only for safety
                written = os.write(fd, view)
                view = view[written:]

    def read_events(self) -> list[dict[str, Any]]:
        """All events, oldest first. A torn last line (a crash mid-append) is skipped.

        A bad line anywhere else cannot come from this writer (see the class docstring), so it
        is reported as a CorruptStateError naming the file and line rather than hidden.
        """
        try:
            raw = self.events_file.read_bytes()
        except FileNotFoundError:
            return []
        lines = raw.split(b"\n")
        events: list[dict[str, Any]] = []
        last = len(lines) - 1
        for number, chunk in enumerate(lines, start=1):
            if not chunk.strip():
                continue
            try:
                event = json.loads(_decode(chunk))
                if not isinstance(event, dict):
                    raise StateShapeError(f"expected a JSON object, found {json_type(event)}")
            except (StateShapeError, ValueError, RecursionError) as exc:
                if number - 1 == last:
                    break  # torn tail: no newline after it, the writer died mid-line
                raise CorruptStateError(
                    f"{display_path(self.events_file)}:{number}: corrupt event line"
                    f" ({_describe(exc)})"
                ) from None
            events.append(event)
        return events

    def clear_events(self) -> None:
        """Delete the event log (no error if absent)."""
        with self._lock:
            self._close_events()
            self.events_file.unlink(missing_ok=True)

    def clear_all(self) -> None:
        """Delete both files."""
        self.clear_state()
        self.clear_events()

    def close(self) -> None:
        """Close the event log descriptor (appending again reopens it)."""
        with self._lock:
            self._close_events()

    def __enter__(self) -> StatePersistence:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _open_events(self) -> int:
        """The append descriptor, reopened after a fork or if the file was removed or replaced."""
        if self._events_fd is not None and self._events_id is not None:
            try:
                st = os.stat(self.events_file)
                if (os.getpid(), st.st_dev, st.st_ino) == self._events_id:
                    return self._events_fd
            except FileNotFoundError:
                pass
            self._close_events()
        self.running_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.events_file, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        _trim_torn_tail(fd)
        st = os.fstat(fd)
        self._events_fd, self._events_id = fd, (os.getpid(), st.st_dev, st.st_ino)
        return fd

    def _close_events(self) -> None:
        if self._events_fd is not None:
            # After a fork the descriptor is the parent's copy: closing ours is still right.
            with contextlib.suppress(OSError):
                os.close(self._events_fd)
        self._events_fd, self._events_id = None, None


def _trim_torn_tail(fd: int) -> None:
    """Drop a partial last line left by a crash so the next event starts on a line of its own."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    # Walk back to the last newline; events are small, so this is one read in practice.
    end = size
    while end > 0:
        start = max(0, end - 65536)
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


def _decode(raw: bytes) -> str:
    text = raw.decode("utf-8")
    if not text.strip():
        raise StateShapeError("empty")
    return text


def _describe(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid or truncated JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        return "a number with too many digits"
    return str(exc)


@dataclass(frozen=True)
class RunInfo:
    """One state file found under `.running/`: its state (or why it could not be read)."""

    loop_name: str
    state_file: Path
    state: LoopState | None
    error: str | None = None

    @property
    def alive(self) -> bool:
        """The process that wrote the state still runs."""
        return self.state is not None and live_status(self.state).alive

    @property
    def crashed(self) -> bool:
        """Marked running but its process is gone (killed, rebooted): resumable."""
        return self.state is not None and live_status(self.state).crashed


def list_running_loops(loops_dir: Path | None = None) -> list[RunInfo]:
    """Every run with a state file under `<loops_dir>/.running/`, by name; never raises on one."""
    running = running_dir(loops_dir)
    infos = []
    for name, path in state_files(running):
        try:
            state = StatePersistence(name, running.parent).load_state()
        except (LoopRuntimeError, LoopDefinitionError) as exc:
            infos.append(RunInfo(name, path, None, str(exc)))
            continue
        if state is not None:  # it may have been cleared since the glob
            infos.append(RunInfo(name, path, state))
    return infos


def get_loop_history(loop_name: str, loops_dir: Path | None = None) -> list[dict[str, Any]]:
    """The events of the last run of `loop_name`, oldest first."""
    return StatePersistence(loop_name, loops_dir).read_events()
