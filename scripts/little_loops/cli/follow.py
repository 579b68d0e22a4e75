"""`ll-loop status NAME --follow`: a run's progress display, read from its event log as it grows."""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from little_loops.fsm.engine.events import nested
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.runfile import NotOurFile, open_run_stream

FOLLOW_POLL_SECONDS = 0.1


class _LogReader:
    """The complete new lines of a run's event log, across rotations, from its first part."""

    def __init__(self, store: Any) -> None:
        self.log = store.log
        first = self.log.files.events_segments()
        self.part = first[0] if first else 1
        self.offset = 0
        self.pending = b""

    def new_events(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        while True:
            current = self.log.current_part()
            files = self.log.files
            path = self.log.path if self.part >= current else files.events_segment(self.part)
            data = b""
            with contextlib.suppress(OSError, NotOurFile), open_run_stream(path) as handle:
                handle.seek(self.offset)
                data = handle.read()
            self.offset += len(data)
            *lines, self.pending = (self.pending + data).split(b"\n")
            for line in lines:
                with contextlib.suppress(ValueError):
                    event = json.loads(line)
                    if isinstance(event, dict):
                        found.append(event)
            if self.part >= current:
                return found
            # That part was rotated away (finished): go on with the next one.
            self.part, self.offset, self.pending = self.part + 1, 0, b""


def follow_command(loop_name: str, loops_dir: Path, *, no_color: bool = False) -> int:
    """Show NAME's run as `run` would, until it ends; exit with the run's exit code."""
    from little_loops.cli.display import ProgressDisplay, use_color, use_live
    from little_loops.fsm.facts.outcomes import OUTCOMES, ExitCode, Status
    from little_loops.fsm.runs.liveness import run_alive
    from little_loops.fsm.runs.store import StatePersistence

    store = StatePersistence(loop_name, loops_dir)
    reader = _LogReader(store)
    err = sys.stderr
    display: ProgressDisplay | None = None
    ended: int | None = None  # the exit code of the last loop_complete seen
    try:
        while True:
            # Whether the run still lives is read before its events: none can be missed.
            saved = store.load_state()
            live = saved is not None and saved.status == Status.RUNNING
            live = live and saved is not None and run_alive(saved, loops_dir)
            for event in reader.new_events():
                top = not nested(event)  # a sub-loop's start or end is not the run's
                if display is None or (top and event.get("event") == Event.LOOP_START):
                    if display is not None:
                        display.close()
                    display = ProgressDisplay(
                        err,
                        max_iterations=int(event.get("max_iterations") or 0),
                        loop_name=loop_name,
                        color=use_color(err, no_color),
                        live=use_live(err),
                    )
                    ended = None
                display(event)
                if top and event.get("event") == Event.LOOP_COMPLETE:
                    outcome = OUTCOMES.get(str(event.get("terminated_by")))
                    ended = outcome.exit_code if outcome is not None else ExitCode.FAILED
            if not live:
                if ended is not None:
                    return ended
                print(
                    f"ll-loop: loop '{loop_name}' is not running and its log has no end;"
                    f" see 'll-loop status {loop_name}'",
                    file=err,
                )
                return ExitCode.FAILED
            time.sleep(FOLLOW_POLL_SECONDS)
    finally:
        if display is not None:
            display.close()
