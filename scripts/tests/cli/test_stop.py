"""`ll-loop stop`: a running loop and its action's processes are gone within 5 s."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
from support import llproc
from support.fakerun import fake_run
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.cli.stop import stop_command
from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.processes.pids import process_start_ticks
from little_loops.fsm.runs.control import GRACE_SECONDS

SLOW = """\
    name: slow
    initial: a
    states:
      a:
        action: echo one
        capture: one
        next: b
      b:
        action: sleep {marker} & sleep {marker}; echo never
        next: done
      done:
        terminal: true
"""


def test_stop_ends_a_foreground_loop_and_its_grandchild(
    loop_project: LoopProject, marker: str
) -> None:
    loop_project.write("slow", SLOW.format(marker=marker))
    proc = llproc.start(loop_project.root, "run", "slow")
    llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 2, what="both sleeps")
    started = time.monotonic()
    result = llproc.ll_loop(loop_project.root, "stop", "slow")
    _, err = llproc.finish(proc, GRACE_SECONDS)
    took = time.monotonic() - started
    # The loop stopped by itself within the grace period (the message says "stopped", not
    # "killed"); the rest is starting `ll-loop stop`, which load slows down.
    assert took < GRACE_SECONDS + scaled(1)
    assert result.returncode == ExitCode.OK, result.stderr
    assert result.stderr.startswith(
        f"stopping loop 'slow' (pid {proc.pid})...\nloop 'slow' stopped in "
    )
    assert result.stderr.endswith(" in state 'b'; continue with: ll-loop resume slow\n")
    assert proc.returncode == ExitCode.STOPPED
    assert "Loop stopped in b (1 iteration, " in err
    assert llproc.sleepers(marker) == []
    state = llproc.state(loop_project.root, "slow")
    assert (state["status"], state["terminated_by"]) == ("stopped", "stopped")
    llproc.events(loop_project.root, "slow")  # every line is JSON


def test_stop_escalates_to_sigkill_when_the_loop_does_not_stop(
    loop_project: LoopProject, marker: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # A "loop" that ignores SIGTERM and has an action in its own session.
    action = ["bash", "-c", f"sleep {marker} & sleep {marker}"]
    stubborn = fake_run(loop_project.loops, "slow", ignore_term=True, child=action)
    try:
        llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 2, what="both sleeps")
        running = loop_project.loops / ".running"
        state = {
            "loop_name": "slow",
            "status": "running",
            "current_state": "b",
            "iteration": 1,
            "started_at": "2026-01-15T10:30:00.000+00:00",
            "pid": stubborn.pid,
            "pid_start": process_start_ticks(stubborn.pid),
        }
        (running / "slow.state.json").write_text(json.dumps(state))
        started = time.monotonic()
        assert stop_command("slow", grace=0.5) == ExitCode.OK
        assert time.monotonic() - started < 0.5 + scaled(1.5)
        assert stubborn.wait(timeout=scaled(2)) == -9
        assert "loop 'slow' killed (it did not stop within 0.5s) in " in capsys.readouterr().err
        llproc.wait_for(lambda: llproc.sleepers(marker) == [], 2, "the action's group")
        assert llproc.state(loop_project.root, "slow")["status"] == "stopped"
    finally:
        stubborn.kill()
        stubborn.wait()


def test_a_stale_pid_is_reported_not_signalled(loop_project: LoopProject) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    running = loop_project.loops / ".running"
    running.mkdir()
    state = {
        "loop_name": "slow",
        "status": "running",
        "current_state": "b",
        "iteration": 1,
        "started_at": "2026-01-15T10:30:00.000+00:00",
        "pid": gone.pid,
    }
    (running / "slow.state.json").write_text(json.dumps(state))
    result = loop_project.run("stop", "slow")
    assert result.code == ExitCode.FAILED
    assert result.err == (
        f"ll-loop: loop 'slow' is not running (stale pid {gone.pid}; last status: running);"
        " resume it with 'll-loop resume slow'\n"
    )
    assert llproc.state(loop_project.root, "slow")["status"] == "running"  # left as it was


def test_stop_of_a_finished_or_never_run_loop(loop_project: LoopProject) -> None:
    loop_project.write(
        "ok",
        """\
        name: ok
        initial: done
        states:
          done:
            terminal: true
        """,
    )
    never = loop_project.run("stop", "ok")
    assert (never.code, never.err) == (
        ExitCode.FAILED,
        "ll-loop: loop 'ok' is not running (it has no saved run)\n",
    )
    loop_project.run("run", "ok")
    done = loop_project.run("stop", "ok")
    assert (done.code, done.err) == (
        ExitCode.FAILED,
        "ll-loop: loop 'ok' is not running (last status: completed)\n",
    )


def test_stop_of_a_crashed_run_ends_the_action_it_left_running(
    loop_project: LoopProject, marker: str
) -> None:
    loop_project.write("slow", SLOW.format(marker=marker))
    proc = llproc.start(loop_project.root, "run", "slow")
    llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 2, what="the sleeping action")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=scaled(5))
    assert len(llproc.sleepers(marker)) == 2  # the action's own session outlives the loop
    result = loop_project.run("stop", "slow")
    assert result.code == ExitCode.FAILED
    assert f"is not running (stale pid {proc.pid}; last status: running)" in result.err
    assert "process(es) its action left running (pids " in result.err
    assert llproc.sleepers(marker) == []


def test_a_new_run_after_a_crash_ends_the_old_action_first(
    loop_project: LoopProject, marker: str
) -> None:
    loop_project.write("slow", SLOW.format(marker=marker))
    proc = llproc.start(loop_project.root, "run", "slow")
    llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 2, what="the sleeping action")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=scaled(5))
    loop_project.write("slow", SLOW.format(marker=marker).replace("sleep", "echo"))
    result = loop_project.run("run", "slow")
    assert result.code == ExitCode.OK, result.err
    assert "process(es) the crashed run's action left running" in result.err
    assert llproc.sleepers(marker) == []
