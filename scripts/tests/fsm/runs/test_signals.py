"""Ctrl-C and SIGTERM during a run: graceful first, immediate second; handlers in-process."""

from __future__ import annotations

import os
import signal
import time

import pytest
from support import llproc
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.runs.signals import ShutdownSignals

STUBBORN = """\
    name: stubborn
    initial: a
    states:
      a:
        action: trap '' TERM INT; touch started; sleep {marker}
        next: done
      done:
        terminal: true
"""


@pytest.mark.parametrize(
    ("signum", "code", "status"),
    [
        (signal.SIGINT, ExitCode.INTERRUPTED, "interrupted"),
        (signal.SIGTERM, ExitCode.STOPPED, "stopped"),
    ],
)
def test_first_signal_stops_gracefully(
    loop_project: LoopProject, marker: str, signum: int, code: int, status: str
) -> None:
    loop_project.write("stubborn", STUBBORN.format(marker=marker).replace("trap '' TERM INT; ", ""))
    proc = llproc.start(loop_project.root, "run", "stubborn")
    llproc.wait_for(lambda: (loop_project.root / "started").exists(), what="the action")
    os.kill(proc.pid, signum)
    _, err = proc.communicate(timeout=scaled(5))
    assert proc.returncode == code
    assert f"Loop {status} in a (1 iteration, " in err
    assert llproc.state(loop_project.root, "stubborn")["status"] == status
    assert llproc.sleepers(marker) == []
    assert not (loop_project.loops / ".running" / "stubborn.lock").exists()  # scope released


def test_second_ctrl_c_exits_at_once(loop_project: LoopProject, marker: str) -> None:
    # The action ignores SIGTERM: a graceful stop would wait the runner's 2 s grace period.
    loop_project.write("stubborn", STUBBORN.format(marker=marker))
    proc = llproc.start(loop_project.root, "run", "stubborn")
    llproc.wait_for(lambda: (loop_project.root / "started").exists(), what="the action")
    os.kill(proc.pid, signal.SIGINT)
    # The first is handled (it says so), and the action has 2 s to end: the second comes now.
    first = llproc.read_stderr_until(proc, "(Ctrl-C again to exit at once)")
    assert proc.poll() is None  # still waiting for the stubborn action
    sent = time.monotonic()
    os.kill(proc.pid, signal.SIGINT)
    _, rest = llproc.finish(proc, 5)
    err = first + rest
    assert time.monotonic() - sent < scaled(1, at_most=1.5)  # not at the end of the grace
    assert proc.returncode == ExitCode.INTERRUPTED
    assert "(Ctrl-C again to exit at once)" in err
    assert "ll-loop: SIGINT again: exiting now" in err
    llproc.wait_for(lambda: llproc.sleepers(marker) == [], 2, "the action killed")
    # It could not save its end: the run shows as crashed and can be resumed.
    assert llproc.state(loop_project.root, "stubborn")["status"] == "running"
    llproc.events(loop_project.root, "stubborn")


def test_handlers_request_shutdown_and_restore() -> None:
    reasons: list[str] = []
    before = signal.getsignal(signal.SIGTERM)
    with ShutdownSignals(reasons.append) as handlers:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.01)  # the handler runs at the next bytecode boundary
        assert handlers.received == signal.SIGTERM
    assert reasons == ["stopped"]
    assert signal.getsignal(signal.SIGTERM) == before
