"""`ll-loop run --background`: detached start, pid and log; failures reported by the parent."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from support import llproc
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.cli import background
from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.processes.pids import pid_alive
from little_loops.fsm.runs.background import START_WAIT_SECONDS, start_detached

SLOW = """\
    name: slow
    initial: a
    states:
      a:
        action: echo started; sleep {marker}
        next: done
      done:
        terminal: true
"""


def test_background_start_status_and_stop(loop_project: LoopProject, marker: str) -> None:
    loop_project.write("slow", SLOW.format(marker=marker))
    result = loop_project.run("run", "slow", "--background", "-n", "3")
    assert result.code == ExitCode.OK, result.err
    pid = int(result.out)
    assert result.err == (
        f"started loop 'slow' in the background (pid {pid})\n"
        "  follow: ll-loop status slow --follow (or tail -f .loops/.running/slow.log)\n"
        "  status: ll-loop status slow\n"
        "  stop:   ll-loop stop slow\n"
    )
    assert llproc.state(loop_project.root, "slow")["pid"] == pid
    assert os.getsid(pid) == pid  # its own session: closing this terminal does not end it
    llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 1, what="the action")
    status = loop_project.run("status", "slow")
    assert f"status:    running (pid {pid})" in status.out.splitlines()
    assert "iteration: 1/3" in status.out.splitlines()  # the forwarded -n

    stop = loop_project.run("stop", "slow")
    assert stop.code == ExitCode.OK
    assert not pid_alive(pid)
    assert llproc.sleepers(marker) == []
    assert llproc.state(loop_project.root, "slow")["status"] == "stopped"
    log = (loop_project.loops / ".running" / "slow.log").read_text()
    assert "--- ll-loop run slow --background at " in log
    assert "[1/3] a → echo started; sleep " in log
    assert "Loop stopped in a (1 iteration, " in log


def test_background_json(loop_project: LoopProject) -> None:
    loop_project.write(
        "quick",
        """\
        name: quick
        initial: done
        states:
          done:
            action: echo hi
            terminal: true
        """,
    )
    result = loop_project.run("run", "quick", "--background", "--json")
    assert result.code == ExitCode.OK, result.err
    data = json.loads(result.out)
    assert data == {"loop": "quick", "pid": data["pid"], "log": ".loops/.running/quick.log"}
    assert "started loop 'quick' in the background" in result.err


def test_a_run_that_fails_at_once_is_reported_by_the_parent(
    loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The parent watches the child's start for START_WAIT_SECONDS of an idle machine; on a
    # loaded one the child takes longer to fail, so the watch is scaled the same way.
    def watched(*args: Any, **kwargs: Any) -> Any:
        return start_detached(*args, **{**kwargs, "wait": scaled(START_WAIT_SECONDS)})

    monkeypatch.setattr(background, "start_detached", watched)
    loop_project.write(
        "broken",
        """\
        name: broken
        initial: a
        states:
          a:
            action: exit 3
            on_success: done
          done:
            terminal: true
        """,
    )
    result = loop_project.run("run", "broken", "--background")
    assert result.code == ExitCode.FAILED
    assert result.out == ""
    lines = result.err.splitlines()
    assert lines[0] == (
        "ll-loop: error: the background run of loop 'broken' exited with code 1;"
        " its output (.loops/.running/broken.log):"
    )
    assert lines[1] == "  [1/50] a → exit 3"
    assert lines[-1].startswith("  Loop failed in a: no valid transition from 'a'")


def test_invalid_loop_is_refused_before_starting(loop_project: LoopProject) -> None:
    loop_project.write("bad", "name: bad\ninitial: a\nstates: {}\n")
    result = loop_project.run("run", "bad", "--background")
    assert result.code == ExitCode.USAGE
    assert result.err.startswith("ll-loop: error: .loops/bad.yaml")
    assert not (loop_project.loops / ".running" / "bad.log").exists()


def test_scope_conflict_is_refused_by_the_parent(loop_project: LoopProject, marker: str) -> None:
    loop_project.write("slow", SLOW.format(marker=marker))
    first = loop_project.run("run", "slow", "--background")
    pid = int(first.out)
    try:
        second = loop_project.run("run", "slow", "--background")
        assert second.code == ExitCode.FAILED
        assert second.err == (
            f"ll-loop: error: loop 'slow' is already running (pid {pid}); wait with --queue"
            " or stop it with 'll-loop stop slow'\n"
        )
    finally:
        assert loop_project.run("stop", "slow").code == ExitCode.OK


def test_resume_in_the_background_goes_on_with_the_run_flags(
    loop_project: LoopProject, marker: str
) -> None:
    loop_project.write("slow", SLOW.format(marker=marker))
    started = loop_project.run("run", "slow", "--background", "-n", "3")
    assert started.code == ExitCode.OK, started.err
    llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 1, what="the action")
    assert loop_project.run("stop", "slow").code == ExitCode.OK

    resumed = loop_project.run("resume", "slow", "--background")
    assert resumed.code == ExitCode.OK, resumed.err
    pid = int(resumed.out)
    assert resumed.err.startswith(f"started loop 'slow' in the background (pid {pid})\n")
    assert os.getsid(pid) == pid
    llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 1, what="the action, again")
    status = loop_project.run("status", "slow").out.splitlines()
    assert f"status:    running (pid {pid})" in status
    assert "iteration: 1/3" in status  # the saved -n 3, and the same pass as before

    again = loop_project.run("resume", "slow", "--background")
    assert again.code == ExitCode.FAILED
    assert f"loop 'slow' is still running (pid {pid}); stop it first" in again.err

    assert loop_project.run("stop", "slow").code == ExitCode.OK
    assert not pid_alive(pid)
    log = (loop_project.loops / ".running" / "slow.log").read_text()
    assert "--- ll-loop resume slow --background at " in log
    assert "ll-loop: resuming loop 'slow' at state 'a' (iteration 1, " in log


def test_resume_in_the_background_of_a_finished_run_is_refused(loop_project: LoopProject) -> None:
    loop_project.write("quick", SLOW.format(marker="0").replace("name: slow", "name: quick"))
    assert loop_project.run("run", "quick").code == ExitCode.OK
    result = loop_project.run("resume", "quick", "--background")
    assert result.code == ExitCode.FAILED
    assert result.out == ""
    assert result.err == (  # refused by this command, not by a detached child in the log
        "ll-loop: error: loop 'quick' completed; nothing to resume,"
        " start it again with 'll-loop run quick'\n"
    )
    assert not (loop_project.loops / ".running" / "quick.log").exists()
