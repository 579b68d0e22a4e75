"""Processes an action detaches from its group (setsid, double fork, env -i, set -m) end with it.

Each way of detaching is tried with each way an action can end: `ll-loop stop`, the
state's `timeout:`, Ctrl-C (SIGINT to ll-loop, as a terminal sends it) and the action
simply exiting. The detached `sleep` must be gone when ll-loop is done with the action.
Before ll-loop became a child subreaper, most of them lived on after every one of these.
"""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from support import llproc
from support.project import LoopProject
from support.slowdown import scaled

from little_loops.fsm.facts.outcomes import ExitCode

# Each way an action can start a process that leaves the action's process group.
DETACHED = {
    "setsid": "setsid sleep {marker} &",
    "setsid -f": "setsid -f sleep {marker}",
    "nohup setsid": "nohup setsid sleep {marker} >/dev/null 2>&1 &",
    "double fork": "( setsid sleep {marker} & )",
    "setsid env -i": "setsid env -i sleep {marker} &",  # the child has no LL_LOOP_RUN marker
    "set -m; disown": "set -m; sleep {marker} & disown",
}

LOOP = """\
name: detach
initial: a
states:
  a:
    action: |
      {detach}
      {then}
    timeout: {timeout}
    next: done
  done:
    terminal: true
"""


def write(loop_project: LoopProject, variety: str, marker: str, then: str, timeout: float) -> None:
    detach = DETACHED[variety].format(marker=marker)
    loop_project.write("detach", LOOP.format(detach=detach, then=then, timeout=timeout))


def start_and_wait_for_it(loop_project: LoopProject, marker: str) -> subprocess.Popen[str]:
    proc = llproc.start(loop_project.root, "run", "detach")
    llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 1, 10, "the detached sleep")
    return proc


@pytest.mark.parametrize("variety", DETACHED)
def test_stop_ends_what_the_action_detached(
    loop_project: LoopProject, marker: str, variety: str
) -> None:
    write(loop_project, variety, marker, "sleep 60", 60)
    proc = start_and_wait_for_it(loop_project, marker)
    result = llproc.ll_loop(loop_project.root, "stop", "detach")
    llproc.finish(proc)
    assert result.returncode == ExitCode.OK, result.stderr
    assert proc.returncode == ExitCode.STOPPED
    assert llproc.sleepers(marker) == []


@pytest.mark.parametrize("variety", DETACHED)
def test_a_timeout_ends_what_the_action_detached(
    loop_project: LoopProject, marker: str, variety: str
) -> None:
    write(loop_project, variety, marker, "sleep 60", 1.5)
    proc = start_and_wait_for_it(loop_project, marker)
    _, err = llproc.finish(proc, 15)
    assert "action timed out after 1.5s" in err
    assert llproc.sleepers(marker) == []


@pytest.mark.parametrize("variety", DETACHED)
def test_ctrl_c_ends_what_the_action_detached(
    loop_project: LoopProject, marker: str, variety: str
) -> None:
    write(loop_project, variety, marker, "sleep 60", 60)
    proc = start_and_wait_for_it(loop_project, marker)
    proc.send_signal(signal.SIGINT)
    _, err = llproc.finish(proc)
    assert proc.returncode == ExitCode.INTERRUPTED, err
    assert "Loop interrupted in a" in err
    assert llproc.sleepers(marker) == []


@pytest.mark.parametrize("variety", DETACHED)
def test_what_an_action_detached_ends_when_it_exits(
    loop_project: LoopProject, marker: str, variety: str
) -> None:
    # The action ends only once the detached process exists (however slow the machine).
    exists = f"until pgrep -xf 'sleep {marker}' >/dev/null; do sleep 0.02; done"
    write(loop_project, variety, marker, exists, 60)
    result = llproc.ll_loop(loop_project.root, "run", "detach")
    assert result.returncode == ExitCode.OK, result.stderr
    assert llproc.sleepers(marker) == []


def test_a_resumed_run_ends_what_its_action_detached(
    loop_project: LoopProject, marker: str
) -> None:
    write(loop_project, "double fork", marker, "sleep 60", 60)
    proc = start_and_wait_for_it(loop_project, marker)
    assert llproc.ll_loop(loop_project.root, "stop", "detach").returncode == ExitCode.OK
    llproc.finish(proc)
    assert llproc.sleepers(marker) == []
    resumed = llproc.start(loop_project.root, "resume", "detach")
    llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 1, 10, "the detached sleep again")
    assert llproc.ll_loop(loop_project.root, "stop", "detach").returncode == ExitCode.OK
    llproc.finish(resumed)
    assert resumed.returncode == ExitCode.STOPPED
    assert llproc.sleepers(marker) == []


def test_orphans_that_end_while_the_action_runs_are_reaped(loop_project: LoopProject) -> None:
    # 200 double-forked processes end at once; ll-loop, their subreaper, must not keep
    # 200 zombies until the action ends. The action counts them (its parent is ll-loop).
    zombies = "ps -o stat= --ppid $PPID | grep -c '^Z' || true"
    # They end within a moment; ll-loop reaps every REAP_EVERY_SECONDS (1 s) while it waits.
    settle = scaled(2.5)
    action = f"for i in $(seq 200); do ( /bin/true & ); done; sleep {settle:.2f}; {zombies}"
    loop_project.write(
        "zombies",
        f"name: zombies\ninitial: a\nstates:\n  a:\n    action: {action!r}\n"
        "    capture: count\n    next: done\n  done:\n    terminal: true\n",
    )
    result = llproc.ll_loop(loop_project.root, "run", "zombies")
    assert result.returncode == ExitCode.OK, result.stderr
    count = llproc.state(loop_project.root, "zombies")["captured"]["count"]["output"]
    assert int(count) < 10, count


def test_a_closed_terminal_stops_the_run_and_ends_what_the_action_detached(
    loop_project: LoopProject, marker: str
) -> None:
    write(loop_project, "double fork", marker, "sleep 60", 60)
    proc = start_and_wait_for_it(loop_project, marker)
    proc.send_signal(signal.SIGHUP)  # what the kernel sends when the terminal goes away
    _, err = llproc.finish(proc)
    assert proc.returncode == ExitCode.INTERRUPTED, err
    assert "the terminal went away (SIGHUP); stopping the action and saving state" in err
    assert llproc.sleepers(marker) == []
    assert llproc.state(loop_project.root, "detach")["status"] == "interrupted"


def test_under_nohup_a_hangup_is_ignored(loop_project: LoopProject, marker: str) -> None:
    # The action goes on until the test has sent SIGHUP (and made `go`).
    then = "until [ -e go ]; do sleep 0.02; done"
    loop_project.write("detach", LOOP.format(detach=f"sleep {marker} &", then=then, timeout=60))
    proc = subprocess.Popen(
        ["nohup", sys.executable, "-m", "little_loops.cli", "run", "detach"],
        cwd=loop_project.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    llproc.wait_for(lambda: len(llproc.sleepers(marker)) == 1, 10, "the action")
    proc.send_signal(signal.SIGHUP)
    (loop_project.root / "go").touch()
    _, err = llproc.finish(proc)
    assert proc.returncode == ExitCode.OK, err
    assert "SIGHUP" not in err
