"""State and event files of a run under `.loops/.running/`: atomic saves, an append-only log."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from little_loops.fsm.facts.errors import CorruptStateError, LoopDefinitionError, LoopRuntimeError
from little_loops.fsm.facts.layout import (
    RunFiles,
    default_loops_dir,
    make_running_dir,
    running_dir,
    state_files,
    validate_loop_name,
)
from little_loops.fsm.facts.runfile import display_path, read_run_file
from little_loops.fsm.facts.timefmt import iso_now
from little_loops.fsm.runs.atomic import json_bytes, remove_leftover_temp_files, write_atomic
from little_loops.fsm.runs.eventlog import EventLog, Position, describe
from little_loops.fsm.runs.journal import replay, without_changes
from little_loops.fsm.runs.liveness import live_status
from little_loops.fsm.runs.state import (
    LoopState,
    StateShapeError,
    parse_state,
)

__all__ = [
    "LoopState",
    "RunInfo",
    "StatePersistence",
    "display_path",
    "get_loop_history",
    "list_running_loops",
]


class StatePersistence:
    """The state file and event log of one loop under `<loops_dir>/.running/`.

    The event log (eventlog.EventLog) is the record of the run: every event that changes
    the run carries the changes (journal). The state file is a snapshot of the run that
    says how far into the log it is; `load_state` applies the changes of the events after
    it. The snapshot is replaced atomically, so a reader never sees half of one.
    """

    def __init__(
        self,
        loop_name: str,
        loops_dir: Path | None = None,
        *,
        folder: Path | None = None,
        parts_listed: frozenset[str] | None = None,
    ) -> None:
        """*folder*: read an archived run's files there instead of the current run's;
        *parts_listed*: the rotated parts there, listed by a reader of many runs (RunFiles)."""
        self.loop_name = validate_loop_name(loop_name)
        self.loops_dir = Path(loops_dir) if loops_dir is not None else default_loops_dir()
        files = RunFiles(loop_name, self.loops_dir, folder, parts_listed)
        self.running_dir = files.running_dir
        self.state_file = files.state
        self.events_file = files.events
        self.log = EventLog(files, display_path(files.events))
        # Why the last load_state could not apply the events after the snapshot, if so.
        self.replay_error: str | None = None

    def initialize(self) -> None:
        """Create `.running/` if needed and remove temp files a killed save left behind."""
        make_running_dir(self.running_dir)
        remove_leftover_temp_files(self.state_file)

    # -- state -------------------------------------------------------------------------------

    def save_state(
        self, state: LoopState, *, durable: bool = False, position: Position | None = None
    ) -> None:
        """Write `state` atomically as the snapshot at events *position*, stamping `updated_at`.

        *position* is where the events after this snapshot begin (the end of the log when
        None). `durable` also fsyncs it, so it survives a power cut. The old file is intact
        if anything fails.
        """
        state.updated_at = iso_now()
        if position is None:
            position = self.log_end()
        data: dict[str, Any] = dict(state.to_dict())
        data["events_segment"], data["events_offset"] = position
        make_running_dir(self.running_dir)
        write_atomic(self.state_file, json_bytes(data, indent=2) + b"\n", durable=durable)

    def log_end(self) -> Position:
        """Where the next event will be written: (current part, its size)."""
        try:
            size = os.stat(self.events_file).st_size
        except FileNotFoundError:
            size = 0
        return self.log.current_part(), size

    def load_state(self) -> LoopState | None:
        """The run: its snapshot and the changes of every event after it, or None when
        there is none; CorruptStateError if it is unreadable."""
        where = display_path(self.state_file)
        try:
            raw = read_run_file(self.state_file)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise LoopRuntimeError(f"{where}: cannot read state file: {exc.strerror}") from None
        try:
            data = json.loads(_decode(raw))
            state = parse_state(data)  # the snapshot itself must be sound
            _check_owner(state, self.loop_name)
        except (StateShapeError, ValueError, RecursionError) as exc:
            raise CorruptStateError(self._corrupt(where, exc)) from None
        self.replay_error = None
        position = _position(data)
        return state if position is None else self._replayed(state, data, position)

    def _replayed(self, snapshot: LoopState, data: dict[str, Any], position: Position) -> LoopState:
        """The *snapshot* (parsed from *data*) with the changes of the events after
        *position*; the snapshot alone, and `replay_error` saying why, when those events
        cannot be read or applied (a log edited or damaged by hand)."""
        data = dict(data)  # replay replaces values, never changes them in place
        try:
            last = replay(data, self.log.events(position))
            if last is not None:
                data["updated_at"] = last
            state = parse_state(data)
            _check_owner(state, self.loop_name)
        except CorruptStateError as exc:
            self.replay_error = str(exc)
            return snapshot
        except (StateShapeError, ValueError, RecursionError) as exc:
            shown = display_path(self.events_file)
            self.replay_error = (
                f"{shown}: cannot apply the events after the snapshot ({describe(exc)})"
            )
            return snapshot
        return state

    def _corrupt(self, where: str, exc: Exception) -> str:
        return (
            f"{where}: corrupt state file ({describe(exc)}); delete it, or start the loop"
            f" over with 'll-loop run {self.loop_name}'"
        )

    def clear_state(self) -> None:
        """Delete the state file (no error if absent)."""
        self.state_file.unlink(missing_ok=True)

    # -- events ------------------------------------------------------------------------------

    def append_event(self, event: dict[str, Any], *, hold: bool = False) -> Position | None:
        """Append `event` as one JSON line (in the file when this returns, unless held: see
        EventLog.append); where the log ends."""
        return self.log.append(event, hold=hold)

    def read_events(self) -> list[dict[str, Any]]:
        """All events kept, oldest first, as users see them. A torn last line is skipped;
        a bad line anywhere else is a CorruptStateError naming the file and line."""
        return [without_changes(event) for event in self.log.events()]

    def iter_events(self) -> Iterator[dict[str, Any]]:
        """`read_events`, streamed: one event at a time, the log never read whole."""
        return (without_changes(event) for event in self.log.events())

    def tail_events(self, count: int) -> list[dict[str, Any]]:
        """The last *count* events, as users see them, read from the end of the log."""
        return [without_changes(event) for event in self.log.tail(count)]

    def clear_events(self) -> None:
        """Delete the event log, every part of it (no error if absent)."""
        self.log.clear()

    def clear_all(self) -> None:
        """Delete both files."""
        self.clear_state()
        self.clear_events()

    def close(self) -> None:
        """Close the event log descriptor (appending again reopens it)."""
        self.log.close()

    def __enter__(self) -> StatePersistence:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _check_owner(state: LoopState, key: str) -> None:
    """A state file belongs to the run its file is named by (a copied file would not)."""
    if state.key != key:
        what = state.ref if state.worktree is not None else state.loop_name
        raise StateShapeError(f"it belongs to loop {what!r}")


def _position(data: dict[str, Any]) -> Position | None:
    """Where the events after a snapshot begin; None for a state file without one (written
    by an ll-loop that saved the whole state at every step: nothing to replay)."""
    segment, offset = data.get("events_segment"), data.get("events_offset")
    if type(segment) is not int or type(offset) is not int or segment < 1 or offset < 0:
        return None
    return segment, offset


def _decode(raw: bytes) -> str:
    text = raw.decode("utf-8")
    if not text.strip():
        raise StateShapeError("empty")
    return text


@dataclass(frozen=True)
class RunInfo:
    """One state file found under `.running/`: its state (or why it could not be read).

    *loop_name* is the run's key: the loop's name, or `<name>@<id>` for a worktree run."""

    loop_name: str
    state_file: Path
    state: LoopState | None
    error: str | None = None

    @property
    def _loops_dir(self) -> Path:
        return self.state_file.parent.parent  # <loops_dir>/.running/<name>.state.json

    @property
    def alive(self) -> bool:
        """The process that wrote the state still runs."""
        return self.state is not None and live_status(self.state, self._loops_dir).alive

    @property
    def crashed(self) -> bool:
        """Marked running but its process is gone (killed, rebooted): resumable."""
        return self.state is not None and live_status(self.state, self._loops_dir).crashed


def list_running_loops(loops_dir: Path | None = None) -> list[RunInfo]:
    """Every run with a state file under `<loops_dir>/.running/`, by name; never raises on one."""
    running = running_dir(loops_dir)
    found = (running_loop(name, path) for name, path in state_files(running))
    return [info for info in found if info is not None]


def running_loop(
    name: str, path: Path, parts_listed: frozenset[str] | None = None
) -> RunInfo | None:
    """The run *name* whose state file is *path* (under `.running/`, whose rotated event
    parts are *parts_listed* when a reader of many runs listed them), as the list of runs
    shows it: None when it has been cleared since it was listed; never raises."""
    try:
        state = StatePersistence(name, path.parent.parent, parts_listed=parts_listed).load_state()
    except (LoopRuntimeError, LoopDefinitionError) as exc:
        return RunInfo(name, path, None, str(exc))
    return None if state is None else RunInfo(name, path, state)


def get_loop_history(loop_name: str, loops_dir: Path | None = None) -> list[dict[str, Any]]:
    """The events of the last run of `loop_name`, oldest first."""
    return StatePersistence(loop_name, loops_dir).read_events()
