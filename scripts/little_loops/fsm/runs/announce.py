"""Tell the world a run ended: the loop's `notify:` command and webhook, its OpenTelemetry trace."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.runs.locks import project_root
from little_loops.fsm.runs.telemetry_env import wanted

if TYPE_CHECKING:  # notify.py is loaded by a run that notifies or exports a trace
    from little_loops.fsm.runs.archive import ArchivedRun
    from little_loops.fsm.runs.notify import Notifier


class Announcer:
    """Announces one run's end, after its state is saved and archived (so never changing it).

    `cancel()` is for a signal that arrives meanwhile (the first Ctrl-C): the notifications
    still to come are skipped. Before `announce()` begins it does nothing, so a Ctrl-C that
    ends the run itself is still announced, as `interrupted`."""

    def __init__(self, fsm: FSMLoop, loops_dir: Path, on_note: Callable[[str], None]) -> None:
        self.fsm = fsm
        self.loops_dir = loops_dir
        self.on_note = on_note
        self._notifier: Notifier | None = None

    def cancel(self) -> None:
        if self._notifier is not None:
            self._notifier.cancel()

    def announce(
        self,
        state: dict[str, Any],
        archived: ArchivedRun | None,
        events: Callable[[], Iterable[dict[str, Any]]],
    ) -> None:
        """Notify and export the run whose final state is *state*; *events* reads its log."""
        config = self.fsm.notify
        env = os.environ
        if config is None and not wanted(env):
            return
        from little_loops.fsm.runs.notify import Notifier, summarize

        summary = summarize(self.fsm.name, state, archived, self.loops_dir)
        if config is not None:
            self._notifier = Notifier(config, project_root(self.loops_dir), self.on_note)
            self._notifier.send(summary)
        if wanted(env) and not (self._notifier and self._notifier.cancelled.is_set()):
            from little_loops.fsm.runs import telemetry  # its trace model: only when asked

            try:
                problem = telemetry.export_run(events(), summary, env)
            except Exception as exc:  # a third-party exporter: whatever it raises is a note
                problem = f"the trace of the run could not be exported ({exc})"
            if problem is not None:
                self.on_note(f"telemetry: {problem}")
