"""Tell a loop's `notify:` command and webhook that a run ended, with the run's JSON summary."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from little_loops.fsm.definition.model.typed import NotifyConfig
from little_loops.fsm.facts.layout import archive_dir
from little_loops.fsm.facts.outcomes import NOTIFY_OUTCOMES, outcome_of, outcome_word
from little_loops.fsm.processes.containment import CONTAINMENT, Contained
from little_loops.fsm.runs.archive import ArchivedRun, run_id_base
from little_loops.fsm.runs.atomic import json_bytes
from little_loops.fsm.runs.webhook import post_json, where

_KILL_GRACE_S = 2.0  # after SIGTERM, how long a timed-out command's tree gets before SIGKILL
_WAIT_STEP_S = 0.05  # how often the wait for the command looks whether it ended or was cancelled
MAX_SHOWN = 64 * 1024  # of the command's output, at most its last this many bytes are shown


@dataclass(frozen=True)
class RunSummary:
    """What a notification says about a run that ended (the JSON on stdin / in the POST)."""

    run_id: str
    loop: str
    outcome: str  # the `notify: on:` word: done, failed, budget, stopped ...
    terminated_by: str
    status: str
    exit_code: int
    duration_ms: int
    cost_usd: float
    last_state: str
    passes: int
    started_at: str
    ended_at: str
    error: str | None
    report_path: str | None  # the archive entry, relative to the project; None when not kept
    report_command: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def json(self) -> bytes:
        return json_bytes(self.to_dict(), indent=2) + b"\n"


def summarize(
    loop: str, state: dict[str, Any], archived: ArchivedRun | None, loops_dir: Path
) -> RunSummary:
    """The summary of the run whose final state file is *state* (archived as *archived*)."""
    outcome = outcome_of(state.get("terminated_by"))
    run_id = archived.run_id if archived else run_id_base(str(state.get("started_at", "")))
    report = report_command = None
    if archived is not None:
        entry = archive_dir(loops_dir, loop) / run_id
        report = f"{entry.relative_to(loops_dir.parent)}/"
        report_command = f"ll-loop report {loop} --run {run_id}"
    cost = state.get("cost_usd")
    return RunSummary(
        run_id=run_id,
        loop=loop,
        outcome=outcome_word(outcome),
        terminated_by=str(outcome),
        status=str(outcome.status),
        exit_code=int(outcome.exit_code),
        duration_ms=_whole(state.get("elapsed_ms")),
        cost_usd=round(float(cost), 6) if isinstance(cost, int | float) else 0.0,
        last_state=str(state.get("current_state", "")),
        passes=_whole(state.get("iteration")),
        started_at=str(state.get("started_at", "")),
        ended_at=str(state.get("updated_at", "")),
        error=state.get("error") if isinstance(state.get("error"), str) else None,
        report_path=report,
        report_command=report_command,
    )


def _whole(value: object) -> int:
    return value if type(value) is int else 0


def wanted(config: NotifyConfig, summary: RunSummary) -> bool:
    """Whether *config* notifies of the outcome in *summary* (no `on:`: every outcome)."""
    if config.on is None:
        return True
    return any(NOTIFY_OUTCOMES.get(word) == summary.terminated_by for word in config.on)


class Notifier:
    """Sends one run's notifications; `cancel()` (a Ctrl-C meanwhile) skips what is left."""

    def __init__(self, config: NotifyConfig, cwd: Path, on_note: Callable[[str], None]) -> None:
        self.config = config
        self.cwd = cwd
        self.on_note = on_note
        self.cancelled = threading.Event()

    def cancel(self) -> None:
        self.cancelled.set()

    def send(self, summary: RunSummary) -> None:
        """Run the command, then post to the webhook, if the outcome is one to notify of.

        Nothing here raises or changes the run: a failure is one note."""
        if not wanted(self.config, summary):
            return
        body = summary.json()
        if self.config.command is not None and not self.cancelled.is_set():
            self._run_command(self.config.command, summary, body)
        if self.config.webhook is not None and not self.cancelled.is_set():
            self._post(self.config.webhook, body)

    def _post(self, url: str, body: bytes) -> None:
        config = self.config
        done = post_json(
            url, body, timeout=config.timeout, retries=config.retries, cancelled=self.cancelled
        )
        if done.cancelled:
            self.on_note(f"notify: the webhook {where(url)} was given up (interrupted)")
        elif not done.delivered:
            tries = f"{done.tries} tries" if done.tries > 1 else "1 try"
            self.on_note(
                f"notify: the webhook {where(url)} was not reached after {tries}"
                f" ({done.problem}); the run's outcome is unchanged"
            )

    def _run_command(self, command: str, summary: RunSummary, body: bytes) -> None:
        env = {
            **os.environ,
            "LL_LOOP_OUTCOME": summary.outcome,
            "LL_LOOP_EXIT_CODE": str(summary.exit_code),
            "LL_LOOP_NAME": summary.loop,
            "LL_LOOP_RUN_ID": summary.run_id,
        }
        with tempfile.TemporaryFile() as output:
            try:
                # Its own session: a Ctrl-C at the terminal is ours to handle, and its end
                # ends everything it started. Its output goes to a file, never our stdout or
                # stderr: what it leaves running must not hold our pipe (`ll-loop run | cat`).
                child = CONTAINMENT.start(
                    ["bash", "-c", command],
                    cwd=self.cwd,
                    env=env,
                    streams=(subprocess.PIPE, output.fileno(), output.fileno()),
                )
            except (OSError, ValueError) as exc:
                self.on_note(f"notify: the command could not start ({exc})")
                return
            try:
                code = _finish(child, body, self.config.timeout, self.cancelled)
            except (OSError, ValueError) as exc:
                self.on_note(f"notify: the command failed ({exc})")
                return
            finally:
                _show_output(output)
        if code is None and self.cancelled.is_set():
            self.on_note("notify: the command was stopped (interrupted)")
        elif code is None:
            self.on_note(
                f"notify: the command took longer than {self.config.timeout:g}s and was stopped"
            )
        elif code != 0:
            self.on_note(f"notify: the command exited with {code}; the run's outcome is unchanged")


def _finish(
    child: Contained, body: bytes, timeout: float, cancelled: threading.Event
) -> int | None:
    """Feed *body* to *child*, wait for it to exit, then end its process group (what it left
    running in the background: SIGTERM, SIGKILL after a grace); its exit code, or None when
    it was stopped (a timeout or a cancel)."""
    threading.Thread(target=_feed, args=(child.process.stdin, body), daemon=True).start()
    deadline = time.monotonic() + timeout
    exited = child.exited()
    while not exited and not cancelled.is_set() and time.monotonic() < deadline:
        cancelled.wait(_WAIT_STEP_S)
        exited = child.exited()
    code = child.end(_KILL_GRACE_S)  # the exited child is not reaped yet: its group is ours
    return code if exited else None


def _show_output(output: IO[bytes]) -> None:
    """Copy what the command wrote (its last MAX_SHOWN bytes) to our stderr."""
    with contextlib.suppress(OSError, ValueError):
        size = output.seek(0, os.SEEK_END)
        output.seek(max(0, size - MAX_SHOWN))
        shown = output.read(MAX_SHOWN)
        if size > MAX_SHOWN:
            shown = (
                b"[ll-loop: the first %d bytes of its output were not kept]\n" % (size - MAX_SHOWN)
                + shown
            )
        sys.stderr.flush()  # what we printed before it comes first
        fd = _stderr_fd()
        while shown:
            shown = shown[os.write(fd, shown) :]


def _stderr_fd() -> int:
    """Our stderr's file descriptor (2 unless it was replaced, e.g. by a test harness)."""
    try:
        return sys.stderr.fileno()
    except (OSError, ValueError, AttributeError):
        return 2


def _feed(stdin: IO[bytes] | None, body: bytes) -> None:
    """Write the summary to the command's stdin and close it (a command may not read it)."""
    if stdin is None:
        return
    with contextlib.suppress(OSError):
        stdin.write(body)
    with contextlib.suppress(OSError):
        stdin.close()
