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
import time

from little_loops.fsm.runs.eventlog import Position
from little_loops.fsm.runs.state import LoopState
from little_loops.fsm.runs.store import StatePersistence

LAG_S = 0.05  # how far behind the run the state file may be while it runs


class SnapshotWriter:
    """Writes the snapshots of one run, newest last (an older one never replaces a newer)."""

    def __init__(self, persistence: StatePersistence, lag_s: float = LAG_S) -> None:
        self.persistence = persistence
        self.lag_s = lag_s
        self._wake = threading.Condition()
        self._write = threading.Lock()  # one file replace at a time, in order
        self._pending: tuple[int, LoopState, Position] | None = None
        self._offered = 0  # the number of the newest snapshot offered or written
        self._written = 0  # the number of the newest snapshot in the file
        self._thread: threading.Thread | None = None
        self._closing = False

    def offer(self, state: LoopState, position: Position) -> None:
        """The run is at *state* with the log ending at *position*: write it soon."""
        with self._wake:
            self._offered += 1
            self._pending = (self._offered, state, position)
            if self._thread is None or not self._thread.is_alive():
                self._closing = False
                self._thread = threading.Thread(
                    target=self._run, name="ll-loop snapshots", daemon=True
                )
                self._thread.start()
            self._wake.notify()

    def write_now(self, state: LoopState, position: Position, *, durable: bool) -> None:
        """Write *state* before returning (and drop any older pending one)."""
        with self._wake:
            self._offered += 1
            number, self._pending = self._offered, None
        self._store(number, state, position, durable=durable)

    def close(self) -> None:
        """Write what is pending and stop the thread."""
        with self._wake:
            self._closing = True
            self._wake.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        self._flush()

    def _run(self) -> None:
        last = 0.0
        while True:
            with self._wake:
                while self._pending is None and not self._closing:
                    self._wake.wait()
                if self._pending is None:
                    return
            wait = last + self.lag_s - time.monotonic()
            if wait > 0 and not self._closing:
                time.sleep(wait)
            self._flush()
            last = time.monotonic()

    def _flush(self) -> None:
        with self._wake:
            pending, self._pending = self._pending, None
        if pending is not None:
            number, state, position = pending
            # Best effort: the log holds the run; a failed snapshot is retried with the next.
            with contextlib.suppress(OSError):
                self._store(number, state, position, durable=False)

    def _store(self, number: int, state: LoopState, position: Position, *, durable: bool) -> None:
        with self._write:
            if number < self._written:
                return  # a newer snapshot is already in the file
            self.persistence.save_state(state, durable=durable, position=position)
            self._written = number
