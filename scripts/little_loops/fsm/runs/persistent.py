"""Run a loop with its state and events saved under .loops/.running/, so it can be resumed."""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.engine.events import nested
from little_loops.fsm.engine.executor import (
    EventCallback,
    ExecutionResult,
    ExecutorConfig,
    FSMExecutor,
)
from little_loops.fsm.facts.errors import CorruptStateError, LoopRuntimeError, RunLogError
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.layout import RunFiles
from little_loops.fsm.facts.outcomes import Outcome, Status, outcome_of
from little_loops.fsm.facts.runfile import display_path
from little_loops.fsm.processes.pids import process_start_ticks
from little_loops.fsm.runs.announce import Announcer
from little_loops.fsm.runs.approvals import answers_for, remove_answer
from little_loops.fsm.runs.archive import ArchivedRun, archive_run
from little_loops.fsm.runs.atomic import json_bytes, remove_leftover_temp_files, write_atomic
from little_loops.fsm.runs.eventlog import SEGMENT_BYTES, Position
from little_loops.fsm.runs.journal import SAVED_KEY, Journal
from little_loops.fsm.runs.liveness import run_alive
from little_loops.fsm.runs.orphans import RUN_MARKER_ENV, kill_orphaned_actions, run_marker
from little_loops.fsm.runs.place import RunPlace, describe
from little_loops.fsm.runs.resuming import resumable_state
from little_loops.fsm.runs.snapshots import SnapshotWriter
from little_loops.fsm.runs.state import FILE_NAMES, LoopState
from little_loops.fsm.runs.store import StatePersistence

# The events are fsynced (durable across a power cut, not only a crash) at the start and
# the end of a run and at most this many seconds apart; an fsync costs as much as a quick
# action. (The state file is a snapshot kept by snapshots.SnapshotWriter.)
DURABLE_INTERVAL_S = 1.0
CONTEXT = "context"  # the state file's key of the loop's context (the guards add to it)
# The first and the last event of a run (or of a resumed part of one).
_BOUNDARIES = frozenset({Event.LOOP_START, Event.LOOP_COMPLETE})
# Events after which a run does nothing outside its process before the next event: each
# waits to be written with the next one (one write() per action, not one per event), and
# the changes they made go with that one. A crash loses at most them, and a resume redoes
# them the same way: it enters the state again (no action had started) or judges the
# recorded action again. An event that records money spent is written at once.
_HELD = frozenset({Event.STATE_ENTER, Event.EVALUATE, Event.ROUTE})


class PersistentExecutor:
    """An FSMExecutor whose progress survives Ctrl-C, `ll-loop stop`, crashes and reboots.

    Every event is appended to `<name>.events.jsonl` before the run does anything outside
    its process (_HELD events go with the next write), with the changes it made to the
    run's state (journal), so the log alone says where the run is:
    a state entered (its action runs again on resume), an action finished (resume evaluates
    it), a route taken (resume enters the next state). The state file is a snapshot of it
    (snapshots.SnapshotWriter), at most a few hundredths of a second behind.
    """

    def __init__(
        self,
        fsm: FSMLoop,
        persistence: StatePersistence | None = None,
        loops_dir: Path | None = None,
        *,
        loop_path: str | None = None,
        place: RunPlace | None = None,
        **executor_kwargs: Any,
    ) -> None:
        """*place*: the run's id and worktree (runs/place.py); the files are named by it."""
        self.fsm = fsm
        self.place = place
        key = fsm.name if place is None else place.key(fsm.name)
        self.ref = key  # how messages name the run: `NAME`, or `NAME@ID` in a worktree
        self.persistence = persistence or StatePersistence(key, loops_dir)
        self.loop_path = loop_path
        self._user_callback: EventCallback | None = executor_kwargs.pop("event_callback", None)
        self._on_note: Callable[[str], None] | None = executor_kwargs.pop("on_note", None)
        # Called when the run's files were removed under it (to restore the scope lock).
        self._on_files_lost: Callable[[], None] | None = executor_kwargs.pop("on_files_lost", None)
        executor_kwargs.setdefault("output_dir", self.persistence.running_dir)
        executor_kwargs.setdefault("worktree", None if place is None else place.path)
        config = replace(
            executor_kwargs.pop("config", None) or ExecutorConfig(),
            before_wait=self._flush,
            answers=answers_for(self.persistence.loop_name, self.persistence.loops_dir),
            answer_kept=partial(
                remove_answer, self.persistence.loop_name, self.persistence.loops_dir
            ),
            output_key=self.persistence.loop_name,
        )
        self.executor = FSMExecutor(
            fsm, event_callback=self._on_event, config=config, **executor_kwargs
        )
        self._orphans: list[int] = []
        self._own_start: tuple[int, int | None] | None = None
        self._journal = Journal((*FILE_NAMES, (CONTEXT, CONTEXT)))
        self._full: dict[str, Any] = {}  # the state file as of the last event (never changed)
        self._context: dict[str, Any] | None = None  # the context as last saved (_context_copy)
        self._synced_at = 0.0  # time.monotonic() of the last fsync of the log
        self._snapshots = SnapshotWriter(self.persistence)
        self._announcer = Announcer(fsm, self.persistence.loops_dir, self._on_note or _ignore)

    def request_shutdown(self, reason: str = Outcome.INTERRUPTED) -> None:
        """Stop the run gracefully (kills the running action); its state stays resumable.

        Once the run has ended, it skips the notifications still to come instead."""
        self.executor.request_shutdown(reason)
        self._announcer.cancel()

    def run(self, clear_previous: bool = True) -> ExecutionResult:
        """Start the loop from its initial state (forgetting any earlier run by default)."""
        self.persistence.initialize()
        try:
            previous = self.persistence.load_state()
        except CorruptStateError:
            previous = None  # a fresh run replaces an unreadable state file
        self._end_orphans(previous)
        if clear_previous:
            if previous is not None and previous.status == Status.RUNNING:
                self._archive(dict(previous.to_dict()))  # it crashed: it never archived itself
            self.persistence.clear_all()
        self._keep_definition()
        return self._run()

    def resume(self, on_restored: Callable[[LoopState], None] | None = None) -> ExecutionResult:
        """Continue the saved run: captures, prev, iteration count and elapsed time intact.

        *on_restored* is called with the saved run once it has been restored, just before
        the run goes on (nothing is written before then if the run cannot be resumed)."""
        saved = self.resumable_state()
        self._end_orphans(saved)
        self.executor.restore(saved.snapshot())
        if on_restored is not None:
            on_restored(saved)
        self._keep_definition()
        return self._run()

    def resumable_state(self) -> LoopState:
        """The saved run, if it can be resumed now; else LoopRuntimeError says why not."""
        return resumable_state(self.fsm, self.persistence)

    def _end_orphans(self, previous: LoopState | None) -> None:
        """A crashed run's action may still be running (it has its own session): end it."""
        if (
            previous is not None
            and previous.status == Status.RUNNING
            and previous.pid is not None
            and previous.pid != os.getpid()
            and not run_alive(previous, self.persistence.loops_dir)
        ):
            self._orphans = kill_orphaned_actions(self.fsm.name, previous.pid)

    def _run(self) -> ExecutionResult:
        # Actions inherit the marker from this process's environment (cheaper than an env
        # per action), so a crash's leftovers can be found; it is restored afterwards.
        before = os.environ.get(RUN_MARKER_ENV)
        os.environ[RUN_MARKER_ENV] = run_marker(self.fsm.name, os.getpid())
        try:
            result = self.executor.run()
        finally:
            self._snapshots.close()
            self.persistence.close()
            if before is None:
                os.environ.pop(RUN_MARKER_ENV, None)
            else:
                os.environ[RUN_MARKER_ENV] = before
        if self._full.get("status") not in (None, Status.RUNNING):
            archived = self._archive(self._full)  # it ended, however: into .loops/.history/
            # Saved and archived: only now are `notify:` and telemetry told (docs/notifications.md).
            self._announcer.announce(self._full, archived, self.persistence.iter_events)
        return result

    def _keep_definition(self) -> None:
        """Keep the loop the run runs, as data, among its files: its report draws every
        state and transition from it, whatever the loop came from (`library:NAME`, a path).
        A failure is a note: the run itself does not need it."""
        persistence = self.persistence
        files = RunFiles(persistence.loop_name, persistence.loops_dir, persistence.running_dir)
        remove_leftover_temp_files(files.definition)  # this run holds the loop's lock
        try:
            write_atomic(files.definition, json_bytes(self.fsm.to_dict()) + b"\n", durable=False)
        except (OSError, LoopRuntimeError) as exc:
            if self._on_note is not None:
                why = f"{exc.strerror}, errno {exc.errno}" if isinstance(exc, OSError) else exc
                self._on_note(f"{display_path(files.definition)}: cannot be written ({why})")

    def _archive(self, state: dict[str, Any]) -> ArchivedRun | None:
        """Keep the run's files in the archive; a failure is a note, never the run's outcome."""
        settings = self.fsm.archive
        files = RunFiles(self.persistence.loop_name, self.persistence.loops_dir)
        try:
            definition = self.fsm.to_dict()
            return archive_run(files, state, settings.keep, settings.max_age_days, definition)
        except (OSError, LoopRuntimeError) as exc:
            if self._on_note is not None:
                why = f"{exc.strerror}, errno {exc.errno}" if isinstance(exc, OSError) else exc
                self._on_note(f"the run could not be archived in .loops/.history/ ({why})")
            return None

    def _state(self, status: Status, result: dict[str, Any] | None = None) -> LoopState:
        snap = self.executor.snapshot()
        pid = os.getpid()
        state = LoopState.from_snapshot(
            self.fsm.name,
            snap,
            status=status,
            pid=pid,
            pid_start=self._start_ticks(pid),
            context=copy.deepcopy(self.fsm.context),  # the guards add to its lists in place
            loop_path=self.loop_path,
            scope=self.fsm.effective_scope(),
            run_id=None if self.place is None else self.place.run_id,
            worktree=None if self.place is None else self.place.to_state(),
        )
        if result is not None:
            state.terminated_by = result.get("terminated_by")
            state.error = result.get("error")
        return state

    def _start_ticks(self, pid: int) -> int | None:
        """This process's start time, read from /proc once (not at every save)."""
        if self._own_start is None or self._own_start[0] != pid:
            self._own_start = (pid, process_start_ticks(pid))
        return self._own_start[1]

    def _on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if nested(event) and kind in _BOUNDARIES:
            kind = f"child_{kind}"  # a sub-loop's start or end: the run goes on
        elif kind == Event.LOOP_START:
            event.update(describe(self.place))  # its id and worktree
        try:
            if kind in _HELD and not event.get("cost_usd"):
                self.persistence.append_event(event, hold=True)
            else:
                self._record(kind, event)
        except OSError as exc:  # a full disk, a read-only file system, a removed folder
            if self._user_callback is not None:
                self._user_callback(event)  # the run is still shown (and its end)
            if kind == Event.LOOP_COMPLETE:
                # The end cannot be written: the run stays resumable from the log; say so,
                # or `status` calling it crashed would be all a user learns.
                if self._on_note is not None:
                    self._on_note(
                        f"{display_path(self.persistence.events_file)}: cannot write the end of"
                        f" the run ({exc.strerror or exc}, errno {exc.errno}); `status` will call"
                        f" it crashed: resume it once that is fixed: ll-loop resume {self.ref}"
                    )
                return
            raise RunLogError(
                f"{display_path(self.persistence.events_file)}: cannot write the run's log"
                f" ({exc.strerror or exc}, errno {exc.errno}); it stops here and can be"
                f" resumed once that is fixed: ll-loop resume {self.ref}"
            ) from None
        if self._user_callback is not None:
            self._user_callback(event)
        if kind == Event.LOOP_START and self._orphans:
            pids, self._orphans = self._orphans, []
            self._on_event({"event": "orphans_killed", "ts": event.get("ts"), "pids": pids})

    def _changes(self, kind: object, event: dict[str, Any]) -> dict[str, Any]:
        """What changed in the run since the last event written, now recorded."""
        if kind in _BOUNDARIES:  # the whole state, with the run's own fields
            status = Status.RUNNING
            if kind == Event.LOOP_COMPLETE:
                status = outcome_of(str(event.get("terminated_by"))).status
            ended = event if kind == Event.LOOP_COMPLETE else None
            fields: dict[str, Any] = dict(self._state(status, ended).to_dict())
            self._full = fields
            journal = self._journal
            return journal.base(fields) if kind == Event.LOOP_START else journal.changes(fields)
        # The executor's fields, slice by slice, and the context (the guards add records).
        parts = self.executor.dumps()
        parts.append({CONTEXT: self._context_copy()})
        delta, changed = self._journal.parts_changes(parts)
        if changed:
            self._full = {**self._full, **changed}
        return delta

    def _context_copy(self) -> dict[str, Any]:
        """A copy of the loop's context (the guards add to its lists in place), made again
        only when it changed: comparing is cheaper than copying it at every event. The
        copy is never changed: the journal and the state file read it."""
        context = self.fsm.context
        if self._context is None or self._context != context:
            self._context = copy.deepcopy(context)
        return self._context

    def _record(self, kind: object, event: dict[str, Any]) -> None:
        """Write *event* (and any held before it) with the changes since the last write."""
        changes = self._changes(kind, event)
        position = self.persistence.append_event(
            {**event, SAVED_KEY: changes} if changes else event
        )
        assert position is not None
        self._keep(position, boundary=kind in _BOUNDARIES)

    def _flush(self) -> None:
        """Write the held events (the run is about to wait: its log must say where it is)."""
        if not self.persistence.log.holding:
            return
        changes = self._changes("flush", {})

        def amend(last: dict[str, Any]) -> dict[str, Any]:
            return {**last, SAVED_KEY: changes} if changes else last

        position = self.persistence.log.flush(amend)
        if position is not None:
            self._keep(position, boundary=False)

    def _keep(self, position: Position, *, boundary: bool) -> None:
        """Make the log durable when it is time, and keep the snapshot current."""
        now = time.monotonic()
        rotate = position[1] >= SEGMENT_BYTES
        if boundary or rotate or now - self._synced_at >= DURABLE_INTERVAL_S:
            self.persistence.log.sync()
            self._synced_at = now
        log = self.persistence.log
        if log.restarted:
            # Someone removed the log (or all of .running/) under the run: the new file holds
            # only what came since, so the whole state goes to a snapshot at once.
            log.restarted = False
            boundary = True
            if self._on_note is not None:
                self._on_note(
                    f"{display_path(self.persistence.events_file)} was removed or replaced"
                    " while the run went on: its earlier events are gone; the run goes on"
                    " and its state is saved again"
                )
            if self._on_files_lost is not None:
                self._on_files_lost()
        if rotate:
            # The snapshot first, so the log it points into is never the one rotated away.
            self._snapshots.write_now(self._full, position, durable=True)
            position = (self.persistence.log.rotate(), 0)
        if boundary or rotate:
            self._snapshots.write_now(self._full, position, durable=True)
        else:
            self._snapshots.offer(self._full, position)


def _ignore(note: str) -> None:
    """The note callback of an executor given none."""
