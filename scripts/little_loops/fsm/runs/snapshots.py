"""The state file of a running loop, kept current off the critical path by a writer thread.

The event log is the record; the state file is a snapshot of it for readers (and a shortcut
for `load_state`). A run offers the newest snapshot after each event; the writer thread
writes it at most once every LAG_S seconds, so a loop of quick actions pays for a handful
of file replaces a second, not one per step, and a loop whose action runs for a while has
a state file at most LAG_S behind. The start, the end and each rotation of the log are
written at once, by the run's own thread.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from little_loops.fsm.runs.eventlog import Position
from little_loops.fsm.runs.state import StateShapeError, parse_state
from little_loops.fsm.runs.store import StatePersistence

LAG_S = 0.05  # how far behind the run the state file may be while it runs


class SnapshotWriter:
    """Writes the snapshots of one run, newest last (an older one never replaces a newer).

    `offer` only stores a reference (no lock, no wake-up: it runs at every event); the
    thread looks every LAG_S seconds and writes the newest one it has not written yet.
    """

    def __init__(self, persistence: StatePersistence, lag_s: float = LAG_S) -> None:
        self.persistence = persistence
        self.lag_s = lag_s
        self._write = threading.Lock()  # one file replace at a time, in order
        self._latest: tuple[int, dict[str, Any], Position] | None = None
        self._offered = 0  # the number of the newest snapshot offered or written
        self._written = 0  # the number of the newest snapshot in the file
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def offer(self, state: dict[str, Any], position: Position) -> None:
        """The run is at *state* (a state file's fields, never changed afterwards) with the
        log ending at *position*: write it within LAG_S."""
        self._offered += 1
        self._latest = (self._offered, state, position)  # one reference: atomic
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="ll-loop snapshots", daemon=True)
            self._thread.start()

    def write_now(self, state: dict[str, Any], position: Position, *, durable: bool) -> None:
        """Write *state* before returning (a pending older one is then never written)."""
        self._offered += 1
        self._store(self._offered, state, position, durable=durable)

    def close(self) -> None:
        """Stop the thread and write the newest snapshot if it is not in the file yet."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            thread.join()
        self._flush()

    def _run(self) -> None:
        while not self._stop.wait(self.lag_s):
            self._flush()

    def _flush(self) -> None:
        latest = self._latest
        if latest is not None and latest[0] > self._written:
            number, state, position = latest
            # Best effort: the log holds the run; a failed snapshot is retried with the next.
            with contextlib.suppress(OSError, StateShapeError):
                self._store(number, state, position, durable=False)

    def _store(
        self, number: int, state: dict[str, Any], position: Position, *, durable: bool
    ) -> None:
        with self._write:
            if number <= self._written:
                return  # this one, or a newer one, is already in the file
            self.persistence.save_state(parse_state(state), durable=durable, position=position)
            self._written = number
