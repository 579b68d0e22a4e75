"""Ctrl-C, SIGTERM and SIGHUP during a run: the first stops gracefully, a second exits at once."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

from little_loops.fsm.facts.outcomes import Outcome
from little_loops.fsm.processes.proctree import signal_children

# The outcome (terminated_by reason and exit code) of each signal.
REASONS: dict[int, Outcome] = {
    signal.SIGINT: Outcome.INTERRUPTED,
    signal.SIGTERM: Outcome.STOPPED,
    signal.SIGHUP: Outcome.INTERRUPTED,  # the terminal was closed
}

_FIRST_NOTE: dict[int, str] = {
    signal.SIGINT: "\nll-loop: interrupted; stopping the action and saving state"
    " (Ctrl-C again to exit at once)\n",
    signal.SIGTERM: "ll-loop: stop requested; stopping the action and saving state\n",
    signal.SIGHUP: "ll-loop: the terminal went away (SIGHUP); stopping the action and saving"
    " state\n",
}


class ShutdownSignals:
    """While active, SIGINT, SIGTERM and SIGHUP (a closed terminal; left ignored under nohup)
    call `request_shutdown("interrupted"|"stopped")`.

    A second signal kills the action's process group and exits the process at once with
    130 (SIGINT) or 143 (SIGTERM); the state file then says `running` with a dead pid,
    which `ll-loop resume` treats as crashed. The previous handlers are restored on exit.
    """

    def __init__(self, request_shutdown: Callable[[str], None]) -> None:
        self.request_shutdown = request_shutdown
        self.received: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> ShutdownSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in REASONS:
                if signal.getsignal(signum) == signal.SIG_IGN and signum == signal.SIGHUP:
                    continue  # started under nohup: a closed terminal is not a stop
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        outcome = REASONS[signum]
        if self.received is not None:
            signal_children(os.getpid(), signal.SIGKILL)
            _note(f"\nll-loop: {signal.Signals(signum).name} again: exiting now\n")
            os._exit(outcome.exit_code)
        self.received = signum
        _note(_FIRST_NOTE[signum])
        self.request_shutdown(str(outcome))


def _note(text: str) -> None:
    # os.write, not print: the handler may interrupt a write to the same buffered stream.
    with contextlib.suppress(OSError):
        os.write(2, text.encode())
